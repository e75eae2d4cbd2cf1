// Package jsonreport writes sandbox's JSON reports: indented by two spaces,
// HTML unescaped, a newline at the end, as json.Encoder with SetIndent
// writes them, but fast on reports of hundreds of megabytes.
package jsonreport

import (
	"bytes"
	"encoding/json"
	"io"
)

// NewEncoder returns an encoder that writes as every JSON report is
// written: indented by two spaces (each line after the first starting with
// prefix), HTML left unescaped, a newline at the end: what a json.Encoder
// with SetIndent writes, but indented by Indent rather than by
// encoding/json, which runs its validating scanner over its own output
// again to indent it (half the time of writing a large report).
func NewEncoder(w io.Writer, prefix string) *Encoder {
	e := &Encoder{w: w, prefix: prefix}
	e.enc = json.NewEncoder(&e.compact)
	e.enc.SetEscapeHTML(false)
	return e
}

// Encoder is NewEncoder's encoder.
type Encoder struct {
	w       io.Writer
	prefix  string
	enc     *json.Encoder // into compact
	compact bytes.Buffer
	out     []byte
}

// Encode writes v's JSON, indented, and a newline.
func (e *Encoder) Encode(v any) error {
	e.compact.Reset()
	if err := e.enc.Encode(v); err != nil {
		return err
	}
	e.out = Indent(e.out[:0], bytes.TrimSuffix(e.compact.Bytes(), []byte("\n")), e.prefix, "  ")
	e.out = append(e.out, '\n')
	_, err := e.w.Write(e.out)
	return err
}
