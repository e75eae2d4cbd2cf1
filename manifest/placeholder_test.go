package manifest

import (
	"strings"
	"testing"
)

func TestFindPlaceholders(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     []string // the placeholders, in order
		line     int      // the first one's line
	}{
		{"own kind", "token = [REDACTED:github-token]\n", []string{"[REDACTED:github-token]"}, 1},
		{"bracketed", "a\nkey: [REDACTED]\n", []string{"[REDACTED]"}, 2},
		{"bracketed lower", "password: [redacted]", []string{"[redacted]"}, 1},
		{"angle", "x <redacted> y <REDACTED>", []string{"<redacted>", "<REDACTED>"}, 1},
		{"double brace", "{{REDACTED}}", []string{"{{REDACTED}}"}, 1},
		{"bracketed with details", `"text":"[REDACTED_TEXT len=806 sha=d10ca27b]"`, []string{"[REDACTED_TEXT len=806 sha=d10ca27b]"}, 1},
		{"angle name", "API_KEY=<REDACTED_SECRET>", []string{"<REDACTED_SECRET>"}, 1},
		{"token", "API_KEY=REDACTED_API_KEY\n", []string{"REDACTED_API_KEY"}, 1},
		// An upper-case REDACTED_ name is taken for a placeholder even when it is
		// an identifier the session wrote (a known false positive, documented).
		{"token identifier", "x := REDACTED_AT + 1", []string{"REDACTED_AT"}, 1},
		{"token then lower", "REDACTED_key", nil, 0},
		{"token alone", "REDACTED_ = 1", nil, 0},
		{"entire bare", "export OPENAI_API_KEY=REDACTED\n", []string{"REDACTED"}, 1},
		{"entire run", "https://cursor.com/open?REDACTED.REDACTED.REDACTED", []string{"REDACTED", "REDACTED", "REDACTED"}, 1},
		{"entire path", "/Users/alex/.REDACTED.txt", []string{"REDACTED"}, 1},
		{"entire path dir", "/Users/dip/REDACTED/notes.md", []string{"REDACTED"}, 1},
		{"entire quoted", "\n\n\"requestId\":\"REDACTED\"", []string{"REDACTED"}, 3},
		{"stars", "secret: ***REDACTED***", []string{"REDACTED"}, 1},
		{"start of text", "REDACTED", []string{"REDACTED"}, 1},
		{"crlf lines", "a\r\nb\r\nc=REDACTED\r\n", []string{"REDACTED"}, 3},

		{"prose lower", "the redacted file was unredacted later", nil, 0},
		{"title case name", "type Redacted struct{}; <Redacted />; [Redacted]", nil, 0},
		{"identifier", "isRedacted := IS_REDACTED || REDACTEDX || xREDACTED || createRedactedBlob()", nil, 0},
		{"parenthesis", "the key (redacted) was", nil, 0},
		{"markdown emphasis", "it was *redacted*", nil, 0},
		{"lower token", "redacted_at timestamp, redacted_count", nil, 0},
		{"mixed", "ReDaCtEd [ReDaCtEd]", nil, 0},
		{"unclosed lower", "[redacted and more", nil, 0},
		{"lower in path", "/redacted/path/fa3f7eaace/a.go", nil, 0},
		{"nothing", "no secrets here\n", nil, 0},
		{"empty", "", nil, 0},
		{"edacted alone", "EDACTED edacted", nil, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			first := 0
			findPlaceholders(c.in, func(p Placeholder) bool {
				if first == 0 {
					first = p.Line
				}
				got = append(got, p.Text)
				return true
			})
			if strings.Join(got, "|") != strings.Join(c.want, "|") || first != c.line {
				t.Errorf("FindPlaceholders(%q) = %q at line %d, want %q at line %d", c.in, got, first, c.want, c.line)
			}
			if mayHoldPlaceholder(c.in) != (mayHoldPlaceholder(c.in) || len(c.want) > 0) {
				t.Errorf("the prefilter rules out %q", c.in)
			}
			p, ok := FirstPlaceholder(c.in)
			if ok != (len(c.want) > 0) || ok && p.Text != c.want[0] {
				t.Errorf("FirstPlaceholder(%q) = %v, %v", c.in, p, ok)
			}
		})
	}
}

// A placeholder the file already held is its own text; only one the
// session's writes brought in says the transcript was redacted.
func TestIntroducedPlaceholder(t *testing.T) {
	for _, c := range []struct {
		name, start, final string
		want               string
		line               int
	}{
		{"new file", "", "a\nkey = \"[REDACTED]\"\n", "[REDACTED]", 2},
		{"already there", "const mark = \"[REDACTED]\"\n", "// the marker\nconst mark = \"[REDACTED]\"\n", "", 0},
		{"already there, crlf", "x=REDACTED\r\n", "y\r\nx=REDACTED\r\n", "", 0},
		{"a new line beside an old one", "a=REDACTED\n", "a=REDACTED\nb=REDACTED\n", "REDACTED", 2},
		{"the old line changed", "a = \"REDACTED\" // old\n", "a = \"REDACTED\" // new\n", "REDACTED", 1},
		{"none", "key=REDACTED\n", "key=abc\n", "", 0},
		{"prose only", "", "was it redacted?\n", "", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, ok := IntroducedPlaceholder(c.start, c.final)
			if ok != (c.want != "") || p.Text != c.want || p.Line != c.line {
				t.Errorf("IntroducedPlaceholder = %+v, %v; want %q at line %d", p, ok, c.want, c.line)
			}
		})
	}
}

func FuzzFindPlaceholders(f *testing.F) {
	for _, s := range []string{"[REDACTED:kind]", "a\n<redacted>\nREDACTED_API_KEY", "{{REDACTED}}}", "[REDACTED", "xREDACTED_", "REDACTED_"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		last, line := -1, 0
		find(s, func(start, end, l int) bool {
			if start <= last || end <= start || end > len(s) || l < line {
				t.Fatalf("placeholder %d:%d at line %d after %d, line %d", start, end, l, last, line)
			}
			if !strings.Contains(strings.ToUpper(s[start:end]), upperWord) {
				t.Fatalf("placeholder %q without the word", s[start:end])
			}
			if want := strings.Count(s[:start], "\n") + 1; l != want {
				t.Fatalf("placeholder %q at line %d, want %d", s[start:end], l, want)
			}
			last, line = start, l
			return true
		})
		if !mayHoldPlaceholder(s) && last >= 0 {
			t.Fatal("the prefilter ruled out a placeholder")
		}
	})
}

// BenchmarkPlaceholderPrefilter is the cost every recovered file pays: a
// file without the word.
func BenchmarkPlaceholderPrefilter(b *testing.B) {
	text := strings.Repeat("func f(x int) int { return x * 2 } // a line of code with no secret\n", 16<<10)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, ok := IntroducedPlaceholder("", text); ok {
			b.Fatal("found one")
		}
	}
}

// BenchmarkPlaceholderWords is a file full of the word in identifiers
// and prose, none a placeholder: the slow path.
func BenchmarkPlaceholderWords(b *testing.B) {
	text := strings.Repeat("if isRedacted(x) { return errRedacted } // the redacted value\n", 16<<10)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, ok := IntroducedPlaceholder(text, text); ok {
			b.Fatal("found one")
		}
	}
}
