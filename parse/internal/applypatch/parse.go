package applypatch

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/agentsandbox/sandbox/manifest"
)

const (
	beginMarker  = "*** Begin Patch"
	endMarker    = "*** End Patch"
	addMarker    = "*** Add File: "
	deleteMarker = "*** Delete File: "
	updateMarker = "*** Update File: "
	moveMarker   = "*** Move to: "
	eofMarker    = "*** End of File"
)

// ParseError is a patch that Codex would refuse. Line is the 1-based line of
// the (trimmed) patch text at fault, or 0 for an envelope error.
type ParseError struct {
	Line int
	Msg  string
}

func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("invalid patch hunk on line %d: %s", e.Line, e.Msg)
	}
	return "invalid patch: " + e.Msg
}

// Parse parses an apply_patch envelope. An envelope with no hunks parses (Codex
// only refuses it when applying, with "No files were modified.").
func Parse(text string) (*manifest.Patch, error) {
	lines := splitLines(strings.TrimFunc(text, unicode.IsSpace))
	if err := checkBoundaries(lines); err != nil {
		// Lenient mode: a model that passed a heredoc wrapper as the patch.
		if len(lines) >= 4 && isHeredocOpen(lines[0]) && strings.HasSuffix(lines[len(lines)-1], "EOF") {
			inner := lines[1 : len(lines)-1]
			if checkBoundaries(inner) == nil {
				return parseHunks(inner, 2)
			}
		}
		return nil, err
	}
	return parseHunks(lines, 1)
}

// splitLines splits like Rust's str::lines: on "\n", dropping one "\r" before
// each, with no empty element after a final newline.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	out := strings.Split(s, "\n")
	if out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	for i, l := range out {
		out[i] = strings.TrimSuffix(l, "\r")
	}
	return out
}

func isHeredocOpen(l string) bool {
	return l == "<<EOF" || l == "<<'EOF'" || l == `<<"EOF"`
}

func checkBoundaries(lines []string) error {
	if len(lines) == 0 || strings.TrimFunc(lines[0], unicode.IsSpace) != beginMarker {
		return &ParseError{Msg: "The first line of the patch must be '*** Begin Patch'"}
	}
	if strings.TrimFunc(lines[len(lines)-1], unicode.IsSpace) != endMarker {
		return &ParseError{Msg: "The last line of the patch must be '*** End Patch'"}
	}
	return nil
}

// parseHunks parses lines[1:len-1] of an envelope whose boundaries are
// checked; first is the patch line number of lines[0].
func parseHunks(lines []string, first int) (*manifest.Patch, error) {
	p := &manifest.Patch{Hunks: []manifest.Hunk{}}
	body := lines[1 : len(lines)-1]
	lineNo := first + 1
	for len(body) > 0 {
		h, n, err := parseOneHunk(body, lineNo)
		if err != nil {
			return nil, err
		}
		p.Hunks = append(p.Hunks, h)
		body = body[n:]
		lineNo += n
	}
	return p, nil
}

func parseOneHunk(lines []string, lineNo int) (manifest.Hunk, int, error) {
	head := strings.TrimFunc(lines[0], unicode.IsSpace)
	switch {
	case strings.HasPrefix(head, addMarker):
		h := manifest.Hunk{Kind: manifest.HunkAdd, Path: head[len(addMarker):], Line: lineNo}
		// The added lines are measured first, so that the contents are
		// built in one buffer of their size, not regrown line by line.
		size, n := 0, 1
		for _, l := range lines[1:] {
			if !strings.HasPrefix(l, "+") {
				break
			}
			size += len(l) // less its '+', plus its newline
			n++
		}
		var b strings.Builder
		b.Grow(size)
		for _, l := range lines[1:n] {
			b.WriteString(l[1:])
			b.WriteByte('\n')
		}
		h.Contents = b.String()
		return h, n, nil
	case strings.HasPrefix(head, deleteMarker):
		return manifest.Hunk{Kind: manifest.HunkDelete, Path: head[len(deleteMarker):], Line: lineNo}, 1, nil
	case strings.HasPrefix(head, updateMarker):
		h := manifest.Hunk{Kind: manifest.HunkUpdate, Path: head[len(updateMarker):], Line: lineNo}
		rest := lines[1:]
		n := 1
		if len(rest) > 0 {
			// Codex matches the move marker on the raw line, only right after the header.
			if mp, ok := strings.CutPrefix(rest[0], moveMarker); ok {
				h.MovePath = mp
				rest = rest[1:]
				n++
			}
		}
		for len(rest) > 0 {
			if strings.TrimFunc(rest[0], unicode.IsSpace) == "" {
				rest = rest[1:]
				n++
				continue
			}
			if strings.HasPrefix(rest[0], "***") {
				break
			}
			c, used, err := parseChunk(rest, lineNo+n, len(h.Chunks) == 0)
			if err != nil {
				return h, 0, err
			}
			h.Chunks = append(h.Chunks, c)
			rest = rest[used:]
			n += used
		}
		if len(h.Chunks) == 0 && h.MovePath == "" {
			return h, 0, &ParseError{Line: lineNo, Msg: fmt.Sprintf("Update file hunk for path '%s' is empty", h.Path)}
		}
		return h, n, nil
	}
	return manifest.Hunk{}, 0, &ParseError{Line: lineNo, Msg: fmt.Sprintf(
		"'%s' is not a valid hunk header. Valid hunk headers: '*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'", head)}
}

func parseChunk(lines []string, lineNo int, allowMissingContext bool) (manifest.Chunk, int, error) {
	var c manifest.Chunk
	c.OldLines, c.NewLines = []string{}, []string{}
	start := 0
	switch {
	case lines[0] == "@@":
		start = 1
	case strings.HasPrefix(lines[0], "@@ "):
		ctx := lines[0][3:]
		c.Context = &ctx
		start = 1
	case !allowMissingContext:
		return c, 0, &ParseError{Line: lineNo, Msg: fmt.Sprintf("Expected update hunk to start with a @@ context marker, got: '%s'", lines[0])}
	}
	if start >= len(lines) {
		return c, 0, &ParseError{Line: lineNo + 1, Msg: "Update hunk does not contain any lines"}
	}
	parsed := 0
	for _, l := range lines[start:] {
		if strings.TrimFunc(l, unicode.IsSpace) == eofMarker {
			if parsed == 0 {
				return c, 0, &ParseError{Line: lineNo + 1, Msg: "Update hunk does not contain any lines"}
			}
			c.EOF = true
			parsed++
			break
		}
		if l == "" {
			c.OldLines = append(c.OldLines, "")
			c.NewLines = append(c.NewLines, "")
			parsed++
			continue
		}
		switch l[0] {
		case ' ':
			c.OldLines = append(c.OldLines, l[1:])
			c.NewLines = append(c.NewLines, l[1:])
		case '+':
			c.NewLines = append(c.NewLines, l[1:])
		case '-':
			c.OldLines = append(c.OldLines, l[1:])
		default:
			if parsed == 0 {
				return c, 0, &ParseError{Line: lineNo + start, Msg: fmt.Sprintf(
					"Unexpected line found in update hunk: '%s'. Every line should start with ' ' (context line), '+' (added line), or '-' (removed line)", l)}
			}
			return c, parsed + start, nil
		}
		parsed++
	}
	return c, parsed + start, nil
}
