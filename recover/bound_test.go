package recover

import (
	"path"
	"regexp"
	"strings"
	"testing"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/manifest/shellcmd"
)

// shellOp is a shell call in /w that succeeded, read by the shell parser.
func shellOp(seq int, script string) manifest.Op {
	op := manifest.Op{Seq: seq, Kind: manifest.KindShell, Tool: "Bash", Cwd: "/w", Command: script, Outcome: manifest.OutcomeApplied,
		Provenance: manifest.Provenance{Transcript: "t.jsonl", Line: seq + 1}}
	shellcmd.Fill(&op, shellcmd.Parse(script), "/w", func(cwd, p string) string {
		if path.IsAbs(p) {
			return path.Clean(p)
		}
		return path.Join(cwd, p)
	})
	return op
}

func writeOp(seq int, p, text string) manifest.Op {
	return manifest.Op{Seq: seq, Kind: manifest.KindWrite, Tool: "Write", Cwd: "/w", Paths: []string{p}, Content: &text,
		Outcome: manifest.OutcomeApplied, Provenance: manifest.Provenance{Transcript: "t.jsonl", Line: seq + 1}}
}

// unsettled are the words that may keep a git reset --hard put after a
// script from running in /w, or make it another command: a cd, an exit, a
// function or alias named git, a script the parser does not follow.
var unsettled = regexp.MustCompile(`cd|exit|exec|return|break|continue|git|alias|function|\(\)|eval|source|\.|bash|sh|trap|set|shopt|IFS|env|xargs|nohup|sudo|command|builtin|time|timeout|nice|stdbuf|\\|'|"|\$|<|>|&|\|`)

// FuzzShellGrades runs the replay on files written in /w, then any script
// and a second one, and checks that it never panics; and that whatever a
// simple script did before it, a git reset --hard run last leaves no file
// under /w exact (a file the script moved out of /w, mv * /, is not in the
// tree the reset changes).
func FuzzShellGrades(f *testing.F) {
	for _, s := range [][2]string{
		{"git stash", "git stash pop"},
		{"git stash && npm test; git stash pop", "rm a.txt"},
		{"rm \"$f.txt\"; for f in *.md; do rm \"src/$f\"; done", "git checkout a.txt"},
		{"find . -name '*.md' -delete", "git stash drop; git stash apply stash@{1}"},
		{"mv a.txt src/; cp src/b.txt c.md", "tar -xzf x.tgz -C src"},
		{"cat <<'EOF' > a.txt\nhi\nEOF", "git -C src stash; git stash pop"},
		// Scripts the git reset --hard check reads (nothing in them can keep
		// the reset from running in /w).
		{"rm x; mv src lib", "0"},
		{"touch new; mkdir -p lib", "0"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, s1, s2 string) {
		if len(s1)+len(s2) > 4096 {
			return
		}
		ops := []manifest.Op{writeOp(0, "/w/a.txt", "a\n"), writeOp(1, "/w/src/b.txt", "b\n"), writeOp(2, "/w/c.md", "c\n"),
			shellOp(3, s1), writeOp(4, "/w/src/d.md", "d\n"), shellOp(5, s2)}
		inline, _ := reconstruct(ops, noBase, ReconstructOptions{})
		if shellcmd.Parse(s1).Err != nil {
			return
		}
		// The same script written to a file and run from it grades every
		// file as run inline (the script file itself a dot file, which no
		// glob of the script matches). A carriage return is read apart: a
		// command line takes it as a blank (CRLF), bash in a file as part
		// of a word, so such a file is not read; and a file knows its own
		// directory, "$(dirname "$0")".
		ran := append(ops[:3:3], writeOp(3, "/w/.r.sh", s1), shellOp(3, "bash .r.sh"), writeOp(4, "/w/src/d.md", "d\n"), shellOp(5, s2))
		byScript, _ := reconstruct(ran, noBase, ReconstructOptions{})
		for _, a := range inline {
			for _, b := range byScript {
				if !strings.Contains(s1, "\r") && !strings.Contains(s1, "dirname") && a.Path == b.Path && (a.Confidence != b.Confidence || a.Final.Exists != b.Final.Exists || a.Final.Text != b.Final.Text) {
					t.Errorf("%s: %s %v inline, %s %v run from a file", a.Path, a.Confidence, a.Final.Exists, b.Confidence, b.Final.Exists)
				}
			}
		}
		if unsettled.MatchString(s1) {
			return
		}
		ops = append(ops[:4:4], shellOp(3, s1+"\ngit reset --hard"))
		files, _ := reconstruct(ops, noBase, ReconstructOptions{})
		for _, r := range files {
			if r.Confidence == Exact && r.Final.Exists && strings.HasPrefix(r.Path, "/w/") {
				t.Errorf("%s is exact after %q then git reset --hard", r.Path, s1)
			}
		}
	})
}

// TestBoundMakes checks that a file the session deleted stays deleted
// after a command that only removes or edits files it does not name, and
// may be back after one that makes files (an archive, a reset).
func TestBoundMakes(t *testing.T) {
	for script, want := range map[string]Confidence{
		`rm "$f.txt"`:                Exact,
		`sed -i s/a/b/ "$f.txt"`:     Exact,
		`find . -name '*.o' -delete`: Exact,
		`git clean -fd`:              Exact,
		`tar xf /tmp/x.tar`:          Unrecoverable,
		`git reset --hard`:           Unrecoverable,
		`echo x > "$f.txt"`:          Unrecoverable,
	} {
		ops := []manifest.Op{writeOp(0, "/w/a.txt", "a\n"), shellOp(1, "rm a.txt"), shellOp(2, script)}
		files, _ := reconstruct(ops, noBase, ReconstructOptions{})
		if len(files) != 1 || files[0].Confidence != want || want == Exact && files[0].Final.Exists {
			t.Errorf("rm a.txt; %s: %+v, want %s", script, files[0], want)
		}
	}
}
