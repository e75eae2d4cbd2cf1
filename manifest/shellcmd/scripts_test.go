package shellcmd

import (
	"slices"
	"strings"
	"testing"
)

func TestPlaces(t *testing.T) {
	for _, c := range []struct {
		code string
		want []string
	}{
		{`open('a.go', 'w').write("x")`, []string{"a.go", "x"}},
		{`open("out/data.json", mode="w")`, []string{"out/data.json"}},
		{"import fs from 'fs'\nconst p = require(\"path\")\nfs.writeFileSync(`gen/${n}.ts`, s)", []string{"gen/*.ts"}},
		{`Path(f"src/{name}.py").write_text(t)`, []string{"src/*.py"}},
		{`Path(f"a{{b}}.txt").write_text(t)`, []string{"a{b}.txt"}},
		{`File.write("log/#{d}.txt", "x")`, []string{"log/*.txt"}}, // "x" after a comma: a mode
		{"# don't touch b.go\nos.remove('a.go')", []string{"a.go"}},
		{"// it's here\nfs.rmSync('dist') /* 'nope' */", []string{"dist"}},
		{`s.split('/'); ','.join(x); open('a[1].txt', 'w')`, []string{`a\[1].txt`}},
		{`os.walk('.'); open(p, 'w')`, []string{"."}},
		{`x = '.'; open(p, 'w')`, nil},
		{`requests.get("https://example.com/a"); open('-n', 'w')`, nil},
		{`open('a.txt', encoding='utf-8')`, []string{"a.txt"}},
		{"'''\ndocstring 'quoted'\n'''\nopen('b', 'w')", []string{"b"}},
		{`print("unterminated`, nil},
		{`"a\nb"; 'c\'d'`, []string{"c'd"}},
		{`open('a\x2ego', 'w')`, []string{"a.go"}},
		{`open(f'{n}.go', 'w'); open('{}.md'.format(n), 'w'); open('%s.txt' % n, 'w')`, []string{"*.go", "*.md", "*.txt"}},
		{`glob.glob('*.go'); open(p, 'w')`, []string{"*.go"}},
		{`os.listdir(); open(p, 'w')`, []string{"."}},
	} {
		if got := places(c.code); !slices.Equal(got, c.want) {
			t.Errorf("Places(%q) = %q, want %q", c.code, got, c.want)
		}
	}
}

func TestReadScript(t *testing.T) {
	for _, c := range []struct {
		verb, code string
		operands   []string
		want       string
	}{
		{"bash", "rm a.go\nmv b c\n", nil, "delete \"rm\" \"a.go\"\nmove \"mv\" \"b\" \"c\""},
		{"exec", "#!/usr/bin/env bash\nsed -i s/a/b/ x.go\n", nil, `write "sed -i" "x.go"`},
		{"exec", "rm a\n", nil, `delete "rm" "a"`},
		{"exec", "#!/usr/bin/env -S python3 -u\nopen('a.go', 'w')\n", nil, "write \"python3 script\" spec=\"a.go\" spec=\"a.go/*\" +recursive +bound\nvague \"python3 fix\""},
		{"python3", "import sys\nopen(sys.argv[1], 'w')\n", []string{"/w/a.go"}, "write \"python3 script\" spec=\"/w/a.go\" spec=\"/w/a.go/*\" +recursive +bound\nvague \"python3 fix\""},
		{"python3", "print(open('a.go').read())\n", []string{"a.go"}, ""},
		{"node", "require('fs').unlinkSync(process.argv[2])", nil, "write \"node script\"\nvague \"node fix\""},
		{"source", "cd sub\nrm x\n", nil, `delete "rm" "sub/x"`},
		{"bash", strings.Repeat("rm x\n", MaxScript/5+1), nil, "write \"bash script\" spec=\"*\" +recursive +bound\nvague \"bash fix\""},
		{"bash", "rm -f a.go\r\n", nil, "write \"bash script\" spec=\"*\" +recursive +bound\nvague \"bash fix\""},
		{"bash", "rm \"$1\"\n", []string{"/w/b.go"}, "write \"rm\"\nwrite \"bash script\" spec=\"/w/b.go\" spec=\"/w/b.go/*\" +recursive +bound\nvague \"\\\"$1\\\"\"\nvague \"bash fix\""},
		{"exec", "#!/bin/sh\ncd \"$(dirname \"$0\")\"\nrm x.go\n", nil, `delete "rm" "/w/sub/x.go"`},
		{"perl", "open(my $f, '>', 'b.go');", nil, "write \"perl script\" spec=\"b.go\" spec=\"b.go/*\" +recursive +bound\nvague \"perl fix\""},
	} {
		got := strings.TrimPrefix(strings.ReplaceAll(strings.TrimSpace(describe(ReadScript(c.verb, "/w/sub/fix", c.code, c.operands))), "\n  ", "\n"), "  ")
		if got != c.want {
			t.Errorf("ReadScript(%q, %.80q):\ngot:\n%s\nwant:\n%s", c.verb, c.code, got, c.want)
		}
	}
}

func TestRunsByPath(t *testing.T) {
	for name, want := range map[string]bool{
		"./r.sh": true, "../bin/fix": true, "scripts/gen.py": true, "/tmp/x.sh": true,
		"r.sh": false, "bin/fix": false, "/usr/bin/env": false, "./": false, "./...": false, "./.r": true,
	} {
		if got := runsByPath(name); got != want {
			t.Errorf("runsByPath(%q) = %v", name, got)
		}
	}
	for script, want := range map[string]bool{
		"./r.sh": true, "cd x && ../bin/fix": true, "go test ./...": false, "ls ./": false,
		"cat a/./b": false, "echo ./x": true, "x=./y": true,
	} {
		if got := dotSlash([]byte(script), strings.Index(script, ".")); got != want && strings.Contains(script, "./") {
			t.Errorf("dotSlash(%q) = %v", script, got)
		}
	}
}

// FuzzPlaces checks that any code gives places that are names: no line
// break, control character or option, each at most once.
func FuzzPlaces(f *testing.F) {
	for _, s := range []string{
		`open('a.go', 'w').write("x")`, "fs.writeFileSync(`gen/${n}.ts`, s) // x", `Path(f"src/{n}{{}}.py")`,
		"'''\n'a'\n'''", `"a\"b\\" 'c'`, `File.write("#{x}")`, "/* '",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, code string) {
		got := places(code)
		seen := map[string]bool{}
		for _, p := range got {
			if p == "" || strings.ContainsAny(p, "\n\r\t\x00") || strings.HasPrefix(p, "-") || len(p) > 2*maxPath || seen[p] {
				t.Fatalf("place %q of %q", p, got)
			}
			seen[p] = true
		}
		if len(got) > maxPlaces {
			t.Fatalf("%d places", len(got))
		}
	})
}
