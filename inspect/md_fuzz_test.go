package inspect

import (
	"bufio"
	"bytes"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// FuzzMarkdown checks the Markdown report's escaping on any text, read back
// with a GFM parser: running text (mdText) never becomes HTML, a link, an
// image or code; a code span (mdCode) is one code span and nothing else; a
// fenced block (fence) is one block holding the text exactly.
func FuzzMarkdown(f *testing.F) {
	for _, s := range []string{"plain", "<b>now</b> & ``` x", "![x](https://example.invalid/x.png)", "www.example.com a@b.co",
		"```\n<script>alert(1)</script>\n````", "`edge`", " ``` ", "| a | b |", "line\r\nend\x00", "\xff\xfe", "~~~\n~~~"} {
		f.Add(s)
	}
	md := goldmark.New(goldmark.WithExtensions(extension.GFM))
	parse := func(src []byte) ast.Node { return md.Parser().Parse(text.NewReader(src)) }
	f.Fuzz(func(t *testing.T, s string) {
		// Running text, in a list item as the report writes it.
		src := []byte("- " + mdText(s) + "\n")
		ast.Walk(parse(src), func(n ast.Node, entering bool) (ast.WalkStatus, error) {
			if entering {
				switch n.(type) {
				case *ast.HTMLBlock, *ast.RawHTML, *ast.Link, *ast.Image, *ast.AutoLink, *ast.CodeSpan, *ast.FencedCodeBlock, *ast.CodeBlock:
					t.Fatalf("mdText(%q) = %q reads as %s", s, src, n.Kind())
				}
			}
			return ast.WalkContinue, nil
		})
		// A code span.
		src = []byte("- x " + mdCode(s) + "\n")
		spans := 0
		ast.Walk(parse(src), func(n ast.Node, entering bool) (ast.WalkStatus, error) {
			if entering {
				switch n.(type) {
				case *ast.CodeSpan:
					spans++
					return ast.WalkSkipChildren, nil
				case *ast.HTMLBlock, *ast.RawHTML, *ast.Link, *ast.Image, *ast.AutoLink, *ast.FencedCodeBlock:
					t.Fatalf("mdCode(%q) = %q reads as %s", s, src, n.Kind())
				}
			}
			return ast.WalkContinue, nil
		})
		if spans != 1 {
			t.Fatalf("mdCode(%q) = %q: %d code spans", s, src, spans)
		}
		// A fenced block holds the text as written (up to what Markdown
		// itself normalises: line endings, NUL, invalid UTF-8).
		var buf bytes.Buffer
		w := bufio.NewWriter(&buf)
		fence(w, "diff", s)
		w.WriteString("after\n")
		w.Flush()
		src = buf.Bytes()
		var blocks []string
		ast.Walk(parse(src), func(n ast.Node, entering bool) (ast.WalkStatus, error) {
			if fb, ok := n.(*ast.FencedCodeBlock); ok && entering {
				var b strings.Builder
				for i := 0; i < fb.Lines().Len(); i++ {
					seg := fb.Lines().At(i)
					b.Write(seg.Value(src))
				}
				blocks = append(blocks, b.String())
			}
			return ast.WalkContinue, nil
		})
		norm := strings.NewReplacer("\r\n", "\n", "\r", "\n", "\x00", "\uFFFD").Replace
		want := strings.TrimSuffix(norm(strings.ToValidUTF8(s, "\uFFFD")), "\n") + "\n"
		if len(blocks) != 1 {
			t.Fatalf("fence(%q): %d fenced blocks in %q", s, len(blocks), src)
		}
		if got := norm(blocks[0]); got != want {
			t.Fatalf("fence(%q): the block holds %q, want %q", s, got, want)
		}
	})
}
