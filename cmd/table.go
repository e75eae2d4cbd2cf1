package cmd

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/term"
)

// writeTable prints rows (the first is the header) as gh does: aligned on
// a terminal, cut to its width by shortening one column (elastic, a path:
// its end is kept) unless wide; tab-separated and whole when piped.
func (a *app) writeTable(rows [][]string, elastic int, wide bool) error {
	if !isTerminal(a.stdout) {
		for _, r := range rows {
			if _, err := fmt.Fprintln(a.stdout, strings.Join(r, "\t")); err != nil {
				return err
			}
		}
		return nil
	}
	const gap = 2
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	total := 0
	for _, w := range widths {
		total += w + gap
	}
	cols := a.termWidth()
	if !wide && cols > 0 && total-gap > cols && elastic >= 0 && elastic < len(widths) {
		// Never below the header's width, nor below 12.
		widths[elastic] = max(widths[elastic]-(total-gap-cols), utf8.RuneCountInString(rows[0][elastic]), 12)
	}
	var b strings.Builder
	for _, r := range rows {
		b.Reset()
		for i, c := range r {
			if i == elastic {
				c = cutFront(c, widths[i])
			}
			b.WriteString(c)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)+gap))
			}
		}
		line := strings.TrimRight(b.String(), " ")
		if !wide && cols > 0 && utf8.RuneCountInString(line) > cols {
			// Still too wide for this terminal: the row ends at its edge
			// rather than wrap (--wide shows it whole).
			line = string([]rune(line)[:cols-1]) + "…"
		}
		if _, err := io.WriteString(a.stdout, line+"\n"); err != nil {
			return err
		}
	}
	return nil
}

// cutFront shortens s to n runes by cutting its front: a path keeps its
// end, which names it.
func cutFront(s string, n int) string {
	r := []rune(s)
	if len(r) <= n || n < 2 {
		return s
	}
	return "…" + string(r[len(r)-n+1:])
}

// termWidth is the width of the terminal stdout is, or COLUMNS.
func (a *app) termWidth() int {
	if f, ok := a.stdout.(*os.File); ok {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
			return w
		}
	}
	n, _ := strconv.Atoi(a.env.Get("COLUMNS"))
	return n
}
