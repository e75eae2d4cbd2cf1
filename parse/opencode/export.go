package opencode

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/agentsandbox/sandbox/parse/internal/sqlitestore"
	"github.com/tidwall/gjson"
)

// IsExport reports whether b (a file's first bytes) is the JSON that
// `opencode export [sessionID]` writes: {"info": {"id": "ses_…", …},
// "messages": [{"info": {…}, "parts": […]}, …]}.
func IsExport(b []byte) bool {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 || b[0] != '{' {
		return false
	}
	// The id first: GetBytes reads b in place, where ParseBytes copies it
	// all (the 64 KiB head of every transcript a scan detects).
	id := gjson.GetBytes(b, "info.id").Str
	if len(id) <= 4 || id[:4] != "ses_" {
		return false
	}
	first := ""
	gjson.ParseBytes(b).ForEach(func(k, _ gjson.Result) bool {
		first = k.Str
		return false
	})
	return first == "info"
}

// ExportHead is what the head of an export says of its session.
func ExportHead(b []byte) (id, dir string, created, updated int64) {
	info := gjson.GetBytes(bytes.TrimLeft(b, " \t\r\n"), "info")
	return info.Get("id").Str, info.Get("directory").Str, info.Get("time.created").Int(), info.Get("time.updated").Int()
}

// exportRecords turns an opencode export into the record stream (doc.go),
// as it is read: one message (with its parts) is held at a time, never the
// whole export. name is the file, for the records' src.
//
// Close returns once the goroutine that reads r has stopped: r is often a
// pooled buffer that goes back to its pool, to be read by another file's
// parse, as soon as the caller is done (a ^C in a scan of many exports
// crashed there).
func exportRecords(r io.Reader, name string) io.ReadCloser {
	return sqlitestore.Pipe(func(_ context.Context, w io.Writer) error { return writeExport(r, name, w) })
}

func writeExport(r io.Reader, name string, w io.Writer) error {
	enc := &encoder{Lines: sqlitestore.Lines{W: w}}
	dec := json.NewDecoder(bufio.NewReaderSize(r, 64<<10))
	dec.UseNumber()
	bad := func(err error) error {
		return enc.bad(name, fmt.Sprintf("export: %v (cut short?)", err))
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return bad(errors.New("not a JSON object"))
	}
	headed := false
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return bad(err)
		}
		key, _ := t.(string)
		switch key {
		case "info":
			var info json.RawMessage
			if err := dec.Decode(&info); err != nil {
				return bad(err)
			}
			doc := gjson.ParseBytes(info)
			s := SessionInfo{ID: doc.Get("id").Str, ParentID: doc.Get("parentID").Str, Directory: doc.Get("directory").Str,
				Title: doc.Get("title").Str, Version: doc.Get("version").Str, Created: ms(doc.Get("time.created").Int()),
				Updated: ms(doc.Get("time.updated").Int())}
			if rv := doc.Get("revert"); rv.IsObject() {
				s.Revert = rv.Raw
			}
			if err := enc.session(s, name); err != nil {
				return err
			}
			headed = true
		case "messages":
			if !headed {
				return bad(errors.New(`"messages" before "info"`))
			}
			if t, err := dec.Token(); err != nil || t != json.Delim('[') {
				return bad(errors.New(`"messages" is not an array`))
			}
			for dec.More() {
				var m struct {
					Info  json.RawMessage   `json:"info"`
					Parts []json.RawMessage `json:"parts"`
				}
				if err := dec.Decode(&m); err != nil {
					return bad(err)
				}
				id := gjson.GetBytes(m.Info, "id").Str
				if err := enc.message(id, m.Info, name); err != nil {
					return err
				}
				for _, p := range m.Parts {
					if err := enc.part(gjson.GetBytes(p, "id").Str, id, p, name, false); err != nil {
						return err
					}
				}
			}
			if _, err := dec.Token(); err != nil {
				return bad(err)
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return bad(err)
			}
		}
	}
	return nil
}
