package shellcmd

import (
	"strings"
	"testing"
)

// TestLoops: a for loop over literal words is read once per word, with
// its variable bound to the word; any other loop, or a body that may
// assign the variable otherwise, leaves the variable Vague.
func TestLoops(t *testing.T) {
	words := func(n int) string { return strings.TrimSpace(strings.Repeat("w ", n)) }
	runCases(t, []parseCase{
		{`for f in a.go b.go; do rm "$f"; done`, "delete \"rm\" \"a.go\"\ndelete \"rm\" \"b.go\""},
		{`for f in a b; do rm $f ${f}; done`, "delete \"rm\" \"a\" \"a\"\ndelete \"rm\" \"b\" \"b\""},
		{`for f in 'a b' "c"; do rm "$f"; done`, "delete \"rm\" \"a b\"\ndelete \"rm\" \"c\""},
		// Unquoted, a value with a blank is split: that word is Vague.
		{`for f in 'a b' c; do rm $f; done`, "write \"rm\"\ndelete \"rm\" \"c\"\nvague \"$f\""},
		// Joined to other text at a slash, and at nothing else.
		{`for f in a b; do cp "$f" "backup/$f"; done`, "copy \"cp\" \"a\" \"backup/a\"\ncopy \"cp\" \"b\" \"backup/b\""},
		{`for d in x y; do rm -r "$d/build/"; done`, "delete \"rm -r\" \"x/build\" +recursive\ndelete \"rm -r\" \"y/build\" +recursive"},
		{`for f in a; do rm "$f.bak" $f-old; done`, "write \"rm\" spec=\"a.bak\" spec=\"a-old\" +bound\nvague \"\\\"$f.bak\\\"\"\nvague \"$f-old\""},
		{`for d in a b; do for f in x y; do rm "$d/$f"; done; done`, "delete \"rm\" \"a/x\"\ndelete \"rm\" \"a/y\"\ndelete \"rm\" \"b/x\"\ndelete \"rm\" \"b/y\""},
		{`for f in a b; do echo hi > "out/$f"; done`, "create \"echo\" \"out/a\" content=3B:\"hi\"\ncreate \"echo\" \"out/b\" content=3B:\"hi\""},
		// A command named by a variable may be read or eval.
		{`for c in rm; do $c x; rm "$c"; done`, "write \"rm\" +cond\nvague \"\\\"$c\\\"\""},
		// Cond where the body puts it, or everywhere when it may break off.
		{`for f in a b; do if [ -f "$f" ]; then rm "$f"; fi; done`, "delete \"rm\" \"a\" +cond\ndelete \"rm\" \"b\" +cond"},
		{`for f in a b; do rm "$f" || break; done`, "delete \"rm\" \"a\" +cond\ndelete \"rm\" \"b\" +cond"},
		{`test -d x && for f in a; do rm "$f"; done; ls`, `delete "rm" "a" +cond`},
		// A turn that moves leaves the next where it ended.
		{`for d in a b; do cd "$d"; rm x; cd ..; done; rm y`, "delete \"rm\" \"a/x\"\ndelete \"rm\" \"b/x\"\ndelete \"rm\" \"y\""},
		{`for d in a b; do cd $d; rm x; done`, "delete \"rm\" \"a/x\"\nwrite \"rm\"\nvague \"(. or a)/b/x\""},
		// A new shell does not see the variable; eval and $(…) do.
		{`for f in a b; do bash -c 'rm "$f"'; done`, "write \"rm\"\nwrite \"rm\"\nvague \"\\\"$f\\\"\""},
		{`for f in a b; do bash -c "rm $f"; done`, "delete \"rm\" \"a\"\ndelete \"rm\" \"b\""},
		{`for f in a; do x=$(rm "$f"); done`, `delete "rm" "a"`},
		// Words that may be none, or other words: the variable is Vague.
		{`for f in *.go; do gofmt -w "$f"; done`, "write \"gofmt -w\" glob=\"*.go\" +recursive +cond\nvague \"\\\"$f\\\"\""},
		{`for f in a.go b?.go; do rm "$f"; done`, "delete \"rm\" glob=\"a.go\" glob=\"b?.go\" +cond\nvague \"\\\"$f\\\"\""},
		{`for f in {a,b}.go; do rm "$f"; done`, "delete \"rm\" \"a.go\"\ndelete \"rm\" \"b.go\""},
		{`for f in $(ls); do rm "$f"; done`, "write \"rm\" +cond\nvague \"\\\"$f\\\"\""},
		{`for f in a "$X"; do rm "$f"; done`, "write \"rm\" +cond\nvague \"\\\"$f\\\"\""},
		{`for f in ~/a; do rm "$f"; done`, "write \"rm\" +cond\nvague \"\\\"$f\\\"\""},
		{`for f; do rm "$f"; done`, "write \"rm\" +cond\nvague \"\\\"$f\\\"\""},
		{`for f in; do rm "$f"; done`, "write \"rm\" +cond\nvague \"\\\"$f\\\"\""},
		{`select f in a b; do rm "$f"; done`, "write \"rm\" +cond\nvague \"\\\"$f\\\"\""},
		{`for ((i=0; i<2; i++)); do rm "$i"; done`, "write \"rm\" +cond\nvague \"\\\"$i\\\"\""},
		{"for f in " + words(maxLoopWords+1) + "; do rm \"$f\"; done", "write \"rm\" +cond\nvague \"\\\"$f\\\"\""},
		// A body, or a function, that may assign the variable otherwise.
		{`for f in a b; do f=c; rm "$f"; done`, "write \"rm\" +cond\nvague \"\\\"$f\\\"\""},
		{`for f in a b; do read -r f; rm "$f"; done`, "write \"rm\" +cond\nvague \"\\\"$f\\\"\""},
		{`for f in a b; do for f in c; do :; done; rm "$f"; done`, "write \"rm\" +cond\nvague \"\\\"$f\\\"\""},
		{`for f in a b; do eval "x=1"; rm "$f"; done`, "write \"rm\" +cond\nvague \"\\\"$f\\\"\""},
		{`g() { f=z; }; for f in a b; do g; rm "$f"; done`, "write \"rm\" +cond\nvague \"\\\"$f\\\"\""},
		{`IFS=,; for f in a b; do rm $f; done`, "write \"rm\" +cond\nvague \"$f\""},
		{`for RANDOM in a b; do rm "$RANDOM"; done`, "write \"rm\" +cond\nvague \"\\\"$RANDOM\\\"\""},
		// Only the plain expansion: no operator, no other variable.
		{`for f in a.js; do rm "${f%.js}.ts" "$g"; done`, "write \"rm\"\nwrite \"rm\" spec=\"/*.ts\" +bound\nvague \"\\\"${f%.js}.ts\\\"\"\nvague \"\\\"$g\\\"\""},
		// After the loop the variable is not read.
		{`for f in a b; do :; done; rm "$f"`, "write \"rm\"\nvague \"\\\"$f\\\"\""},
		{`IFS= read -r x < list; for f in a; do rm $f; done`, `delete "rm" "a"`},
	})
	r := Parse("for f in " + words(maxLoopWords) + "; do rm \"$f\"; done")
	if len(r.Effects) != maxLoopWords || len(r.Vague) != 0 {
		t.Errorf("a loop over %d words: %d effects, Vague %q", maxLoopWords, len(r.Effects), r.Vague)
	}
}

// TestLoopBudget: nested loops are read once per word only while the
// bytes so read stay under maxUnrolled; past it, as any other loop.
func TestLoopBudget(t *testing.T) {
	list := strings.TrimSpace(strings.Repeat("w ", maxLoopWords))
	script := "for a in " + list + "; do for b in " + list + "; do for c in " + list + "; do rm \"$c\"; done; done; done"
	r := Parse(script)
	if n := len(r.Effects); n > maxUnrolled/len("; do rm \"$c\"; done") || n == 0 {
		t.Errorf("%d effects", n)
	}
	if len(r.Vague) != 1 || r.Vague[0] != `"$c"` {
		t.Errorf("Vague %q, want the loop variable once the budget is spent", r.Vague)
	}
}

// TestAssignments: NAME=WORD with a literal WORD binds NAME for what
// follows at the same or a deeper nesting, when nothing else in the
// script assigns NAME.
func TestAssignments(t *testing.T) {
	runCases(t, []parseCase{
		{`f=notes.md; rm "$f"`, `delete "rm" "notes.md"`},
		{`f=notes.md && rm "$f"`, `delete "rm" "notes.md"`},
		{"F='a b.txt'\nrm \"$F\" && rm $F", "delete \"rm\" \"a b.txt\"\nwrite \"rm\"\nvague \"$F\""},
		{`d=build out=dist; rm -r "$d/out" "$out/"`, `delete "rm -r" "build/out" "dist" +recursive`},
		{`d=sub; cd "$d" && rm x`, `delete "rm" "sub/x"`},
		{`f=a; (rm "$f"); x=$(rm "$f")`, "delete \"rm\" \"a\"\ndelete \"rm\" \"a\""},
		{`f=a; if true; then rm "$f"; fi`, `delete "rm" "a" +cond`},
		{`f=a; g() { rm "$f"; }; g`, `delete "rm" "a" +cond`},
		{`f=a; export f; rm $f`, `delete "rm" "a"`},
		{`c=rm; $c a.txt`, ``},
		{`f=a; echo x > "$f"`, `create "echo" "a" content=2B:"x"`},
		// Used before, or out of, where it was assigned.
		{`rm "$f"; f=notes.md`, "write \"rm\"\nvague \"\\\"$f\\\"\""},
		{`if true; then f=a; fi; rm "$f"`, "write \"rm\"\nvague \"\\\"$f\\\"\""},
		{`test -d x && f=a; rm "$f"`, "write \"rm\"\nvague \"\\\"$f\\\"\""},
		{`(f=a); rm "$f"`, "write \"rm\"\nvague \"\\\"$f\\\"\""},
		{`f=a | cat; rm "$f"`, "write \"rm\"\nvague \"\\\"$f\\\"\""},
		{`g() { rm "$f"; }; f=a; g`, "write \"rm\" +cond\nvague \"\\\"$f\\\"\""},
		{`f=a rm "$f"`, "write \"rm\"\nvague \"\\\"$f\\\"\""},
		{`f=a; bash -c 'rm "$f"'`, "write \"rm\"\nvague \"\\\"$f\\\"\""},
		// Assigned more than once, anywhere.
		{`f=a; if true; then f=b; fi; rm "$f"`, "write \"rm\"\nvague \"\\\"$f\\\"\""},
		{`f=a; rm "$f"; f=b; rm "$f"`, "write \"rm\"\nwrite \"rm\"\nvague \"\\\"$f\\\"\""},
		{`f=a; f+=b; rm "$f"`, "write \"rm\"\nvague \"\\\"$f\\\"\""},
		{`f=a; read -r f < x; rm "$f"`, "write \"rm\"\nvague \"\\\"$f\\\"\""},
		{`f=a; ((f++)); rm "$f"`, "write \"rm\"\nvague \"\\\"$f\\\"\""},
		{`f=a; : "${f:=b}"; rm "$f"`, "write \"rm\"\nvague \"\\\"$f\\\"\""},
		{`f=a; for f in b; do :; done; rm "$f"`, "write \"rm\"\nvague \"\\\"$f\\\"\""},
		{`f=a; g() { local f=b; }; rm "$f"`, "write \"rm\"\nvague \"\\\"$f\\\"\""},
		{`f=a; printf -v f %s b; rm "$f"`, "write \"rm\"\nvague \"\\\"$f\\\"\""},
		{`f=a; unset f; rm "$f"`, "write \"rm\"\nvague \"\\\"$f\\\"\""},
		// Anything that may assign a variable it does not name.
		{`f=a; eval "$X"; rm "$f"`, "write \"rm\"\nvague \"\\\"$f\\\"\""},
		{`f=a; source env.sh; rm "$f"`, "run \"source\" \"env.sh\" \".\"\nwrite \"rm\"\nvague \"\\\"$f\\\"\""},
		{`f=a; declare -n r=f; r=b; rm "$f"`, "write \"rm\"\nvague \"\\\"$f\\\"\""},
		{`f=a; read -r "$n"; rm "$f"`, "write \"rm\"\nvague \"\\\"$f\\\"\""},
		{`f=a; $CMD; rm "$f"`, "write \"rm\"\nvague \"\\\"$f\\\"\""},
		// Values that are not literal.
		{`f=$(ls | head -1); rm "$f"`, "write \"rm\"\nvague \"\\\"$f\\\"\""},
		{`f=~/x; rm "$f"`, "write \"rm\"\nvague \"\\\"$f\\\"\""},
		{`f=*.go; rm $f "$f"`, "write \"rm\"\nvague \"$f\"\nvague \"\\\"$f\\\"\""},
		{`f=a; g=$f; rm "$g"`, "write \"rm\"\nvague \"\\\"$g\\\"\""},
		{`f=; rm "$f"`, "write \"rm\"\nvague \"\\\"$f\\\"\""},
		{`PWD=/x; rm "$PWD/a"`, "write \"rm\" spec=\"/*/a\" +bound\nvague \"\\\"$PWD/a\\\"\""},
	})
}

// TestLoopsInCorpus reads the loops of entire_d7_c8f8341919 that sed
// files named in the loop's words.
func TestLoopsInCorpus(t *testing.T) {
	const file = "entire_d7_c8f8341919_0_full.jsonl"
	const checkpoint = "cmd/entire/cli/strategy/manual_commit_rewind.go"
	want := map[int][]string{
		// A conditional sed, then two sed on each file.
		1023: func() []string {
			var out []string
			for _, f := range []string{"cmd/entire/cli/agent/claudecode/claude.go", "cmd/entire/cli/agent/geminicli/gemini.go", checkpoint, "cmd/entire/cli/resume_test.go"} {
				out = append(out, `write "sed -i" "`+f+`" +cond`, `write "sed -i" "`+f+`"`, `write "sed -i" "`+f+`"`)
			}
			return out
		}(),
		1146: {
			`write "sed -i" "cmd/entire/cli/integration_test/hooks.go" +cond`,
			`write "sed -i" "cmd/entire/cli/integration_test/auto_commit_checkpoint_fix_test.go" +cond`,
			`write "sed -i" "cmd/entire/cli/integration_test/hooks_test.go" +cond`,
			`write "sed -i" "cmd/entire/cli/integration_test/session_conflict_test.go" +cond`,
			`write "sed -i" "cmd/entire/cli/integration_test/subdirectory_test.go" +cond`,
		},
	}
	found := 0
	for _, c := range loadCorpus(t) {
		lines, ok := want[c.Line]
		if c.File != file || !ok {
			continue
		}
		found++
		if !strings.HasPrefix(c.Command, "for file in ") {
			t.Fatalf("%s:%d is not the loop: %q", c.File, c.Line, c.Command)
		}
		runCases(t, []parseCase{{c.Command, strings.Join(lines, "\n")}})
	}
	if found != len(want) {
		t.Fatalf("found %d of the %d commands in %s", found, len(want), file)
	}
}

// TestLoopBraceBound: a loop whose brace words make more than maxLoopWords
// words is not unrolled.
func TestLoopBraceBound(t *testing.T) {
	if r := Parse(`for f in {1..200} {1..100}; do rm "$f"; done`); len(r.Vague) == 0 {
		t.Fatalf("a loop over 300 words was unrolled: %+v", r.Effects[:1])
	}
	if r := Parse(`for f in {1..200} a b; do rm "$f"; done`); len(r.Effects) != 202 {
		t.Fatalf("a loop over 202 words made %d effects", len(r.Effects))
	}
}
