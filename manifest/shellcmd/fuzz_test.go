package shellcmd

import (
	"strings"
	"testing"
)

// FuzzParse checks properties every reading must have, whatever the
// script: no panic; every path taken from the script's own words (its
// variables given the values the script assigns them); no path
// with a NUL or a newline; a prefilter that never drops a script the
// parser finds writing; text inside single quotes, or in a heredoc body
// with a quoted delimiter, never read as a command or a redirection.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"rm -rf build/ && mv a b/ ; cp -r x y",
		"git commit -m \"$(cat <<'EOF'\nfix: x\n\nUnknown <unknown@local>\nEOF\n)\"",
		"sed -i '' 's/a/b/' f && sed -Ei.bak -e 's/x/y/' g",
		"cd sub && (cd deeper; echo x > y) && cat <<EOF > z\nbody $X\nEOF",
		"for f in *.go; do gofmt -w \"$f\"; done 2>/dev/null || true",
		"bash -c 'rm a; eval \"touch b\"' && find . -name x -exec rm {} \\;",
		"python3 - <<'PY'\nopen('x','w').write('y')\nPY",
		"git -C repo checkout -- a.go && git stash pop && xargs rm < list",
		"printf '%s\\n' a b > p.txt; echo -n q >> p.txt; : > empty",
		"if [ -f a ]; then rm a; fi; case $x in y) mv y z;; esac",
		"for f in a 'b c' d/e; do cp \"$f\" \"bak/$f\"; rm $f; bash -c \"rm $f\"; done",
		"f=notes.md; d=sub; cd \"$d\" && rm \"$f\" \"${f}\"/x; if x; then f=y; fi",
		"bun --cwd web run lint:fix && bun x @biomejs/biome@1.9.4 check --apply src && bun run x.ts out && dprint fmt a.ts",
		"biome format --write --line-width 100 'src/**' && deno lint --fix && stylelint --fix -c x a.css && oxlint --fix-suggestions",
		"cd src && rm -f *.o 'a*'? b\\[x].c && mv docs/*.md \"my dir\"/ && git rm -r 'lib/**' && for f in t/*.sh; do sed -i s/a/b/ \"$f\"; done",
	} {
		f.Add(s)
	}
	for _, c := range loadCorpus(f) {
		if r := Parse(c.Command); len(r.Effects) > 0 && len(c.Command) < 4096 {
			f.Add(c.Command)
		}
	}
	f.Fuzz(func(t *testing.T, script string) {
		r := parseScript(script)
		if err := checkResult(script, r); err != nil {
			t.Fatalf("%v\n%+v", err, r)
		}
		if r.Writes() && !mayWrite(script) {
			t.Fatalf("the prefilter drops a script that writes: %+v", r)
		}
		if got := Parse(script); mayWrite(script) && !equalResults(got, r) {
			t.Fatalf("Parse and parseScript differ")
		}
		// Quoted text is an argument, never a command or a redirection.
		quoted := "echo '" + strings.ReplaceAll(script, "'", "") + "'"
		if q := Parse(quoted); len(q.Effects) > 0 || len(q.Vague) > 0 || q.Err != nil {
			t.Fatalf("single-quoted text read as commands: %+v", q)
		}
		var body strings.Builder
		for line := range strings.Lines(script) {
			if strings.TrimRight(line, "\r\n") != "EOF" {
				body.WriteString(line)
			}
		}
		doc := "cat <<'EOF' >/dev/null\n" + body.String() + "\nEOF\n"
		if d := Parse(doc); len(d.Effects) > 0 || len(d.Vague) > 0 || d.Err != nil {
			t.Fatalf("heredoc body read as commands: %+v", d)
		}
	})
}

// equalResults compares two Results, errors by message.
func equalResults(a, b Result) bool {
	if len(a.Effects) != len(b.Effects) || len(a.Vague) != len(b.Vague) || (a.Err == nil) != (b.Err == nil) {
		return false
	}
	for i := range a.Effects {
		x, y := a.Effects[i], b.Effects[i]
		if x.Kind != y.Kind || x.Verb != y.Verb || strings.Join(x.Paths, "\x00") != strings.Join(y.Paths, "\x00") ||
			x.Recursive != y.Recursive || x.IntoDir != y.IntoDir || x.Content != y.Content || x.Cond != y.Cond ||
			strings.Join(x.Patterns, "\x00") != strings.Join(y.Patterns, "\x00") || strings.Join(x.Specs, "\x00") != strings.Join(y.Specs, "\x00") {
			return false
		}
	}
	for i := range a.Vague {
		if a.Vague[i] != b.Vague[i] {
			return false
		}
	}
	return true
}
