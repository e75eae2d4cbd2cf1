package recover

import (
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"

	"github.com/agentsandbox/sandbox/manifest"
)

func TestApplyGeminiEdit(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		e        manifest.Edit
		want     string
		err      bool
	}{
		{"one", "a\nb\n", manifest.Edit{Old: "a", New: "x"}, "x\nb\n", false},
		{"two refused", "a a\n", manifest.Edit{Old: "a", New: "x"}, "", true},
		{"allow_multiple", "a a\n", manifest.Edit{Old: "a", New: "x", ReplaceAll: true}, "x x\n", false},
		{"expected matches", "a a\n", manifest.Edit{Old: "a", New: "x", Expected: 2, ReplaceAll: true}, "x x\n", false},
		{"expected differs", "a a a\n", manifest.Edit{Old: "a", New: "x", Expected: 2, ReplaceAll: true}, "", true},
		{"crlf old_string", "a\nb\n", manifest.Edit{Old: "a\r\nb", New: "c"}, "c\n", false},
		// Deleting text keeps the newline after it (unlike Claude Code),
		// and the final newline is kept as the file had it.
		{"delete keeps newline", "a\nb\n", manifest.Edit{Old: "a", New: ""}, "\nb\n", false},
		{"final newline kept", "a\nb\n", manifest.Edit{Old: "b\n", New: "c"}, "a\nc\n", false},
		{"no final newline added", "a\nb", manifest.Edit{Old: "b", New: "c\n"}, "a\nc", false},
		{"dollar literal", "a\n", manifest.Edit{Old: "a", New: "$&$1"}, "$&$1\n", false},
		{"not found", "a\n", manifest.Edit{Old: "z", New: "y"}, "", true},
		{"empty old", "a\n", manifest.Edit{Old: "", New: "y"}, "", true},
		// The flexible strategy: whole lines, indentation ignored, the
		// replacement re-indented like the match.
		{"flexible", "if a {\n\t\treturn 1\n}\n", manifest.Edit{Old: "    return 1", New: "    return 2"}, "if a {\n\t\treturn 2\n}\n", false},
		{"flexible lines", "  a\n    b\nc\n", manifest.Edit{Old: "a\n  b", New: "x\n  y"}, "  x\n    y\nc\n", false},
		{"flexible twice refused", " a\n  a\n", manifest.Edit{Old: "a ", New: "b"}, "", true},
	} {
		got, _, err := applyGeminiEdit(tc.in, tc.e)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("%s: got %q, %v; want %q (error %v)", tc.name, got, err, tc.want, tc.err)
		}
	}
}

func TestApplyPiEdit(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		edits    []manifest.Edit
		want     string
		fuzzy    bool
		err      bool
		preserve bool
	}{
		{"exact", "a\nb\n", []manifest.Edit{{Old: "a", New: "x"}}, "x\nb\n", false, false, false},
		{"crlf kept", "a\r\nb\r\n", []manifest.Edit{{Old: "a\nb", New: "c\nd"}}, "c\r\nd\r\n", false, false, false},
		{"bom kept", "\uFEFFa\n", []manifest.Edit{{Old: "a", New: "b"}}, "\uFEFFb\n", false, false, false},
		{"not unique", "a\na\n", []manifest.Edit{{Old: "a", New: "b"}}, "", false, true, false},
		// The fuzzy pass: smart quotes and trailing spaces; the whole file
		// takes the normalisation, as pi does.
		{"fuzzy", "say \u201chi\u201d  \nkeep \u2014 dash\n", []manifest.Edit{{Old: `say "hi"`, New: `say "yo"`}}, "say \"yo\"\nkeep - dash\n", true, false, false},
		{"several in the original", "a\nb\nc\n", []manifest.Edit{{Old: "c", New: "z"}, {Old: "a", New: "y"}}, "y\nb\nz\n", false, false, false},
		{"overlap", "abc\n", []manifest.Edit{{Old: "ab", New: "x"}, {Old: "bc", New: "y"}}, "", false, true, false},
		{"no change", "a\n", []manifest.Edit{{Old: "a", New: "a"}}, "", false, true, false},
		{"missing", "a\n", []manifest.Edit{{Old: "q", New: "a"}}, "", false, true, false},
		// Since edits[]: after a fuzzy match only the lines changed take the
		// normalisation; the others keep their bytes.
		{"fuzzy keeps other lines", "say \u201chi\u201d  \nkeep \u2014 dash  \n", []manifest.Edit{{Old: `say "hi"`, New: `say "yo"`}}, "say \"yo\"\nkeep \u2014 dash  \n", true, false, true},
		{"fuzzy two edits", "a\u2019\nb\nc\u2019 \n", []manifest.Edit{{Old: "a'", New: "A"}, {Old: "c'", New: "C"}}, "A\nb\nC\n", true, false, true},
		// Before edits[], uniqueness was counted in the normalised text even
		// for an exact match; since, in the text matched.
		{"old: unique only exactly", "x \nx\n", []manifest.Edit{{Old: "x\n", New: "y\n"}}, "", false, true, false},
	} {
		got, fuzzy, err := applyPiEdit(tc.in, tc.edits, tc.preserve)
		if (err != nil) != tc.err || got != tc.want || (err == nil && fuzzy != tc.fuzzy) {
			t.Errorf("%s: got %q fuzzy=%v, %v; want %q fuzzy=%v (error %v)", tc.name, got, fuzzy, err, tc.want, tc.fuzzy, tc.err)
		}
	}
}

// FuzzApplyPiEdit checks that no input makes pi's edit replay panic or
// accept an exact edit that changes nothing.
func FuzzApplyPiEdit(f *testing.F) {
	f.Add("say \u201chi\u201d  \r\nx\n", "say \"hi\"", "y", true)
	f.Add("\uFEFFa\nb\n", "b", "", false)
	f.Fuzz(func(t *testing.T, in, old, repl string, preserve bool) {
		out, fuzzy, err := applyPiEdit(in, []manifest.Edit{{Old: old, New: repl}}, preserve)
		// Without the fuzzy pass (which normalises the whole file), pi
		// refuses an edit that changes nothing.
		if err == nil && !fuzzy && out == in {
			t.Fatalf("an exact edit that changes nothing was accepted")
		}
	})
}

func TestCheckPiDiff(t *testing.T) {
	before, after := "a\nb\nc\n", "a\nB\nc\n"
	for _, tc := range []struct {
		diff string
		ok   bool
	}{
		{"  1 a\n-2 b\n+2 B\n  3 c", true},
		// Context lines are not checked (some versions misnumber them).
		{"    ...\n  1 zz\n-2 b\n+2 B", true},
		{"-2 x\n+2 B", false},
		{"-2 b\n+2 X", false},
		{"-9 b", false},
	} {
		if got := checkPiDiff(tc.diff, before, after); (got == "") != tc.ok {
			t.Errorf("%q: %q", tc.diff, got)
		}
	}
}

// TestPiFuzzyShortcut checks that the ASCII shortcut of pi's normalisation
// gives what the normalisation gives.
func TestPiFuzzyShortcut(t *testing.T) {
	for _, s := range []string{"a\nb\n", "a \nb", "a\t\n", "x\r", "caf\u00e9 \u201cq\u201d", "", "\n\n", "a\u00a0\n"} {
		slow := s
		if plainASCII(s) {
			lines := strings.Split(norm.NFKC.String(s), "\n")
			for i, l := range lines {
				lines[i] = strings.TrimRight(l, " \t\v\f\r")
			}
			slow = strings.Join(lines, "\n")
		}
		if got := piFuzzy(s); plainASCII(s) && got != slow {
			t.Errorf("%q: shortcut %q, normalisation %q", s, got, slow)
		}
	}
	if plainASCII("a \nb") || plainASCII("a\t") || !plainASCII("a b\nc") || plainASCII("\u00e9") {
		t.Error("plainASCII misjudges")
	}
}

// FuzzApplyGeminiEdit checks that Gemini's replace replay never panics,
// takes the exact strategy exactly when old_string occurs literally, and
// never loses the text's final newline.
func FuzzApplyGeminiEdit(f *testing.F) {
	f.Add("if a {\n\t\treturn 1\n}\n", "    return 1", "    return 2", false)
	f.Add("a a\n", "a", "b", true)
	f.Fuzz(func(t *testing.T, in, old, repl string, all bool) {
		in = lf(in)
		out, flexible, err := applyGeminiEdit(in, manifest.Edit{Old: old, New: repl, ReplaceAll: all})
		if err != nil {
			return
		}
		if exact := strings.Contains(in, lf(old)); exact == flexible {
			t.Fatalf("flexible=%v, but old_string occurs literally: %v", flexible, exact)
		}
		// Gemini adds a final newline the text had and the edit lost; it
		// removes one the edit added (only one: "\n0" with 0 -> "\n" stays "\n").
		if strings.HasSuffix(in, "\n") && !strings.HasSuffix(out, "\n") {
			t.Fatalf("final newline lost: %q -> %q", in, out)
		}
	})
}
