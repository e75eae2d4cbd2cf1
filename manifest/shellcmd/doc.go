// Package shellcmd reads a shell command, as a coding agent ran it, for the
// changes it makes to files that no tool call records: redirections, rm, mv,
// cp, tee, sed -i, formatters, git commands that rewrite the work tree, and
// scripts in other languages that write.
//
// Parse turns a script into Effects in execution order. A path is reported
// only when the command names it with a literal word (quotes removed, no
// expansion of any kind), or with a variable whose value the script makes
// certain: in the body of a for loop over literal words, read once per
// word, its variable; after NAME=WORD with a literal WORD that nothing
// else in the script assigns, NAME. A target that is not literal — a
// glob, any other $VAR, $(…), ~, a brace expansion, or files a command
// chooses itself such as git checkout BRANCH — is listed in Result.Vague,
// so that no write is ever silently ignored and no path is ever invented.
//
// The script is parsed with mvdan.cc/sh/v3/syntax, the parser behind shfmt,
// rather than scanned by hand: quoting, heredocs (quoted or not, inside
// $(…)), command substitutions, subshells, lists, pipes and functions are
// what a hand-written scanner gets wrong, and a wrong reading here either
// loses a deletion or turns the text of a commit message into a file.
//
// A script that does not parse as bash (a broken command, zsh or PowerShell
// syntax) still yields a conservative Result: Err is set and the verbs found
// in its text are reported as Vague entries, never as paths.
package shellcmd
