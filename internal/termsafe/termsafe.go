// Package termsafe makes text safe to print on a terminal: file names,
// agent text and file content from a transcript must never drive it.
package termsafe

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// unsafeRune reports whether r must not reach a terminal as it is: control
// characters (a newline in a path could forge a line of the plan the user
// approves, an escape sequence could rewrite the screen), and the invisible
// marks that reorder text.
func unsafeRune(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0, r == utf8.RuneError:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// Printable returns s as one safe field of human output: s itself when it is
// plain text, else quoted with Go escapes (%q) so every byte is visible and
// inert. --json carries the raw value.
func Printable(s string) string {
	if !utf8.ValidString(s) {
		return strconv.Quote(s)
	}
	for _, r := range s {
		if unsafeRune(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// Inert returns one line of content (a diff line) with every unsafe rune
// but the tab written as its escape, so file content cannot drive the
// terminal.
func Inert(line string) string {
	clean := utf8.ValidString(line)
	for _, r := range line {
		if r != '\t' && unsafeRune(r) {
			clean = false
			break
		}
	}
	if clean {
		return line
	}
	var b strings.Builder
	for i := 0; i < len(line); {
		r, n := utf8.DecodeRuneInString(line[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x` + strconv.FormatUint(uint64(line[i]), 16))
		case r != '\t' && unsafeRune(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(line[i : i+n])
		}
		i += n
	}
	return b.String()
}

// InertLines is Inert for text of several lines (an error message that
// quotes a file's lines): each line made safe, the line breaks kept.
func InertLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = Inert(l)
	}
	return strings.Join(lines, "\n")
}
