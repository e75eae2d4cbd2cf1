// Package sqlitestore is what the agents that keep their sessions in a
// SQLite database share to read it: opening a database read-only whatever
// state its write-ahead log is in, telling a damaged
// file, and turning a session's rows into a record stream of one JSON
// object per line that the agent's parser reads like any transcript.
package sqlitestore

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
	_ "modernc.org/sqlite" // the pure-Go SQLite driver, registered as "sqlite"

	"github.com/agentsandbox/sandbox/parse/internal/testhook"
)

// Magic is how every SQLite database file begins.
var Magic = []byte("SQLite format 3\x00")

// MaxRecord bounds one stored record (a row's JSON): a larger one is
// reported and skipped, so memory stays bounded whatever the store holds.
const MaxRecord = 1 << 30

// DB is a SQLite database opened read-only.
type DB struct {
	*sql.DB
	// Path is the database as it is called in messages.
	Path string
	// Note says how the database was opened when it was not the plain way
	// (a write-ahead log read through a private copy).
	Note string
	// Sig is the database's Signature when it was opened.
	Sig     string
	cleanup func()
}

// Open opens the database at path read-only. One with no write-ahead log
// is opened immutable, so one in use or on a read-only medium reads; one
// whose -wal file holds changes not yet checkpointed is opened read-only
// through SQLite itself (which reads the log), or, when that cannot be
// done in place, through a private copy of the database and its log. A
// file that is not a database is an error naming it.
func Open(path string) (*DB, error) {
	sig := Signature(path)
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if err := checkMagic(abs); err != nil {
		return nil, err
	}
	wal, _ := os.Stat(abs + "-wal")
	if wal == nil || wal.Size() == 0 {
		return openWith(path, sig, dsn(abs, true), nil, "")
	}
	// Changes not yet checkpointed live in the log, which an immutable open
	// would not read.
	if !testhook.NoWALInPlace {
		if d, err := openWith(path, sig, dsn(abs, false), nil, ""); err == nil {
			return d, nil
		}
	}
	dir, err := os.MkdirTemp("", "sandbox-db-*")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	done := func() { os.RemoveAll(dir) }
	cp := filepath.Join(dir, "copy.db")
	if err := copyFile(abs, cp); err != nil {
		done()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := copyFile(abs+"-wal", cp+"-wal"); err != nil {
		done()
		return nil, fmt.Errorf("%s-wal: %w", path, err)
	}
	u := url.URL{Scheme: "file", Path: cp}
	return openWith(path, sig, u.String()+"?_pragma=query_only(1)", done, "read through a private copy with its -wal file")
}

// Close releases the database (and its private copy, if any).
func (d *DB) Close() {
	d.DB.Close()
	if d.cleanup != nil {
		d.cleanup()
	}
}

// Signature is what tells a database file (and its log) changed: their
// sizes and times, and the file change counter SQLite keeps in the header
// (a change within one tick of the clock that keeps the size still moves
// it). A handle opened immutable must never see its file change: a caller
// that keeps handles opens anew when the signature moved.
func Signature(path string) string {
	var b strings.Builder
	if f, err := os.Open(path); err == nil {
		hdr := make([]byte, 28)
		if _, err := io.ReadFull(f, hdr); err == nil {
			fmt.Fprintf(&b, "%x;", hdr[24:28])
		}
		f.Close()
	}
	for _, p := range []string{path, path + "-wal"} {
		if st, err := os.Stat(p); err == nil {
			fmt.Fprintf(&b, "%d:%d;", st.Size(), st.ModTime().UnixNano())
		} else {
			b.WriteString("-;")
		}
	}
	return b.String()
}

func dsn(path string, immutable bool) string {
	u := url.URL{Scheme: "file", Path: path}
	q := "mode=ro&_pragma=query_only(1)"
	if immutable {
		q += "&immutable=1"
	}
	return u.String() + "?" + q
}

func checkMagic(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	head := make([]byte, len(Magic))
	if _, err := io.ReadFull(f, head); err != nil || !bytes.Equal(head, Magic) {
		return fmt.Errorf("%s: not a SQLite database", path)
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func openWith(name, sig, source string, cleanup func(), note string) (*DB, error) {
	db, err := sql.Open("sqlite", source)
	if err != nil {
		if cleanup != nil {
			cleanup()
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &DB{DB: db, Path: name, Sig: sig, cleanup: cleanup, Note: note}, nil
}

// Err words SQLite's errors about a damaged file.
func Err(err error) error {
	msg := err.Error()
	if strings.Contains(msg, "malformed") || strings.Contains(msg, "not a database") || strings.Contains(msg, "(11)") || strings.Contains(msg, "(26)") {
		return fmt.Errorf("the database is damaged (truncated or corrupt): %w", err)
	}
	return err
}

// Columns returns the columns of a table (none when it is not there).
func (d *DB) Columns(table string) (map[string]bool, error) {
	rows, err := d.Query("SELECT name FROM pragma_table_info(?)", table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		cols[n] = true
	}
	return cols, rows.Err()
}

// Pipe returns the reading end of a record stream that write writes in a
// goroutine, batched: rows are read as the stream is read, and closing it
// stops write (its context is cancelled) and waits for it, so nothing it
// reads is read after Close.
func Pipe(write func(ctx context.Context, w io.Writer) error) io.ReadCloser {
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		// Rows are small: batching them into the pipe saves a hand-over
		// between goroutines per row.
		bw := bufio.NewWriterSize(pw, 32<<10)
		err := write(ctx, bw)
		if err == nil {
			err = bw.Flush()
		}
		pw.CloseWithError(err)
	}()
	return &pipeCloser{PipeReader: pr, cancel: cancel, done: done}
}

type pipeCloser struct {
	*io.PipeReader
	cancel func()
	done   chan struct{}
}

func (p *pipeCloser) Close() error {
	p.cancel()
	err := p.PipeReader.Close()
	<-p.done
	return err
}

// Lines writes a record stream, one JSON object per line.
type Lines struct {
	W   io.Writer
	buf []byte
}

// Line writes one object of key, value pairs: a value is a string, an
// int64, a bool or a json.RawMessage (written as it is).
func (e *Lines) Line(fields ...any) error {
	e.buf = e.buf[:0]
	e.buf = append(e.buf, '{')
	for i := 0; i+1 < len(fields); i += 2 {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.buf = appendString(e.buf, fields[i].(string))
		e.buf = append(e.buf, ':')
		switch v := fields[i+1].(type) {
		case string:
			e.buf = appendString(e.buf, v)
		case int64:
			e.buf = strconv.AppendInt(e.buf, v, 10)
		case bool:
			e.buf = strconv.AppendBool(e.buf, v)
		case json.RawMessage:
			e.buf = append(e.buf, v...)
		}
	}
	e.buf = append(e.buf, '}', '\n')
	_, err := e.W.Write(e.buf)
	return err
}

func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			q, _ := json.Marshal(s) // the rare string that needs escapes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// JSONValue returns data as one line of JSON when it is a JSON value that
// starts with one of open ('{', '['); else why not, in words.
func JSONValue(data []byte, open string) (json.RawMessage, string) {
	t := bytes.TrimSpace(data)
	switch {
	case len(t) == 0:
		return nil, "empty record"
	case len(t) > MaxRecord:
		return nil, fmt.Sprintf("record of %d bytes is larger than the limit of %d", len(t), MaxRecord)
	case !strings.ContainsRune(open, rune(t[0])):
		return nil, "not a JSON " + map[bool]string{true: "object", false: "array"}[open == "{"]
	case !gjson.ValidBytes(t):
		return nil, "not valid JSON (cut short?)"
	}
	if bytes.ContainsAny(t, "\r\n") {
		var b bytes.Buffer
		if json.Compact(&b, t) != nil {
			return nil, "not valid JSON (cut short?)"
		}
		t = b.Bytes()
	}
	return json.RawMessage(t), ""
}
