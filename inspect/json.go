package inspect

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"iter"

	"github.com/agentsandbox/sandbox/internal/jsonreport"
)

// WriteJSON writes in as every JSON report is written, byte for byte, but
// encodes the timeline and the files one element at a time: the report of
// a session of a gigabyte is hundreds of megabytes, which encoding/json
// would build whole, then indent into a second copy, before writing any.
// The rest of the document is encoded with both arrays empty and the
// elements are spliced in where their "[]" stands.
func WriteJSON(out io.Writer, in *Inspection) error {
	timeline, files := in.Timeline, in.Files
	in.Timeline, in.Files = []Entry{}, []FileView{}
	var doc bytes.Buffer
	err := jsonreport.NewEncoder(&doc, "").Encode(in)
	in.Timeline, in.Files = timeline, files
	if err != nil {
		return err
	}
	rest := doc.Bytes()
	w := bufio.NewWriterSize(out, 1<<20)
	var elem bytes.Buffer
	enc := jsonreport.NewEncoder(&elem, "    ")
	for _, arr := range []struct {
		key string
		all iter.Seq[any]
	}{
		{"timeline", func(yield func(any) bool) {
			for e := range in.Entries() {
				if !yield(e) {
					return
				}
			}
		}},
		{"files", func(yield func(any) bool) {
			for i := range files {
				if !yield(&files[i]) {
					return
				}
			}
		}},
	} {
		// Top-level keys alone are indented by two spaces.
		marker := []byte("\n  \"" + arr.key + "\": []")
		k := bytes.Index(rest, marker)
		if k < 0 {
			return fmt.Errorf("internal error: no %q in the inspection's JSON", arr.key)
		}
		w.Write(rest[:k+len(marker)-1]) // up to its "["
		n := 0
		var err error
		for v := range arr.all {
			elem.Reset()
			if err = enc.Encode(v); err != nil {
				break
			}
			if n > 0 {
				w.WriteByte(',')
			}
			n++
			w.WriteString("\n    ")
			w.Write(bytes.TrimSuffix(elem.Bytes(), []byte("\n")))
		}
		if err == nil {
			err = in.Err()
		}
		if err != nil {
			return err
		}
		if n > 0 {
			w.WriteString("\n  ")
		}
		w.WriteByte(']')
		rest = rest[k+len(marker):]
	}
	w.Write(rest)
	return w.Flush()
}
