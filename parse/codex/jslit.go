package codex

import (
	"strconv"
	"strings"
)

// jsPatchLiterals returns the JavaScript string literals of a code-mode
// script that hold a patch envelope. Template literals with ${…}
// interpolation cannot be known statically and are skipped.
func jsPatchLiterals(src string) []string {
	var out []string
	for i := 0; i < len(src); i++ {
		q := src[i]
		if q != '"' && q != '\'' && q != '`' {
			if q == '/' && i+1 < len(src) && src[i+1] == '/' {
				for i < len(src) && src[i] != '\n' {
					i++
				}
			}
			continue
		}
		var b strings.Builder
		j := i + 1
		interp := false
		for ; j < len(src) && src[j] != q; j++ {
			c := src[j]
			if c == '\n' && q != '`' {
				break
			}
			if q == '`' && c == '$' && j+1 < len(src) && src[j+1] == '{' {
				interp = true
			}
			if c != '\\' || j+1 >= len(src) {
				b.WriteByte(c)
				continue
			}
			j++
			switch e := src[j]; e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '0':
				b.WriteByte(0)
			case 'u':
				if j+4 < len(src) {
					if src[j+1] == '{' {
						end := strings.IndexByte(src[j:], '}')
						if end > 0 {
							if n, err := strconv.ParseUint(src[j+2:j+end], 16, 32); err == nil {
								b.WriteRune(rune(n))
								j += end
								continue
							}
						}
					} else if n, err := strconv.ParseUint(src[j+1:j+5], 16, 32); err == nil {
						b.WriteRune(rune(n))
						j += 4
						continue
					}
				}
				b.WriteByte('u')
			case 'x':
				if j+2 < len(src) {
					if n, err := strconv.ParseUint(src[j+1:j+3], 16, 8); err == nil {
						b.WriteRune(rune(n))
						j += 2
						continue
					}
				}
				b.WriteByte('x')
			case '\n':
			default:
				b.WriteByte(e)
			}
		}
		if s := b.String(); !interp && strings.Contains(s, "*** Begin Patch") {
			out = append(out, s)
		}
		i = j
	}
	return out
}
