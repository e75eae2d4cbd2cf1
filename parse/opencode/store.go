package opencode

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"
	_ "modernc.org/sqlite" // the pure-Go SQLite driver, registered as "sqlite"
)

// sQLiteMagic is how every SQLite database file begins.
var sQLiteMagic = []byte("SQLite format 3\x00")

// maxRecord bounds one stored record (a row's data, a legacy JSON file): a
// larger one is reported and skipped, so memory stays bounded whatever the
// store holds.
const maxRecord = 1 << 30

// ErrNotOpencode is a SQLite database that is not opencode's.
var ErrNotOpencode = errors.New("not an opencode database (no session, message and part tables)")

// SessionInfo is what a store says of one session without reading its
// messages.
type SessionInfo struct {
	ID, ParentID, Directory, Title, Version string
	Created, Updated                        time.Time
	// Revert is the session's pending revert (raw JSON), if any.
	Revert string
	// file is the legacy session file.
	file string
}

// DB is an opencode SQLite database opened read-only.
type DB struct {
	Path string
	db   *sql.DB
	// cols are the session table's columns, which differ across versions.
	cols map[string]bool
	// msgs and parts read one session's rows; prepared once, since
	// preparing costs more than running them on a small session.
	msgs, parts *sql.Stmt
	// Note says how the database was opened when it was not the plain way
	// (a write-ahead log read through a private copy).
	Note    string
	cleanup func()
	sig     string
	// kids maps a session to those started from it, listed once.
	kidsOnce sync.Once
	kids     map[string][]SessionInfo
}

// Descendants returns the sessions started from id (opencode's subagent
// sessions, whose parent_id is id), and theirs, in the database's order. The
// database's sessions are listed once per handle for it; a loop of parents
// (a damaged database) is walked once.
func (d *DB) Descendants(id string) []SessionInfo {
	d.kidsOnce.Do(func() {
		all, _ := d.Sessions(time.Time{})
		d.kids = childrenOf(all)
	})
	return descendants(id, d.kids)
}

// childrenOf maps each session id to the sessions whose parent it is.
func childrenOf(all []SessionInfo) map[string][]SessionInfo {
	kids := map[string][]SessionInfo{}
	for _, s := range all {
		if s.ParentID != "" && s.ParentID != s.ID {
			kids[s.ParentID] = append(kids[s.ParentID], s)
		}
	}
	return kids
}

// descendants walks kids from id, breadth first.
func descendants(id string, kids map[string][]SessionInfo) []SessionInfo {
	seen := map[string]bool{id: true}
	var out []SessionInfo
	queue := []string{id}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, k := range kids[cur] {
			if !seen[k.ID] {
				seen[k.ID] = true
				out = append(out, k)
				queue = append(queue, k.ID)
			}
		}
	}
	return out
}

// inPlace says whether a database with a log is first read in place (tests
// turn it off to exercise the private copy a read-only directory needs).
var inPlace = true

var (
	dbMu    sync.Mutex
	dbCache = map[string]*DB{}
)

// OpenDB opens the opencode database at path read-only, once per process:
// every session of it shares the handle. A database with no write-ahead log
// is opened immutable, so one in use or on a read-only medium reads; one
// whose -wal file holds changes not yet checkpointed is opened read-only
// through SQLite itself (which reads the log), or, when that cannot be done
// in place, through a private copy of the database and its log. A file that
// is not an opencode database (or not a database) is an error naming it.
func OpenDB(path string) (*DB, error) {
	dbMu.Lock()
	defer dbMu.Unlock()
	sig := signature(path)
	if d, ok := dbCache[path]; ok && d.sig == sig {
		return d, nil
	}
	// A database that changed since it was opened (a long-running process
	// that looks again) is opened anew: an immutable handle must never see
	// its file change. The old handle stays with whoever still reads it.
	d, err := openDB(path)
	if err != nil {
		return nil, err
	}
	d.sig = sig
	dbCache[path] = d
	return d, nil
}

// signature is what tells a database file (and its log) changed: their
// sizes and times, and the file change counter SQLite keeps in the header
// (a change within one tick of the clock that keeps the size still moves it).
func signature(path string) string {
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

func openDB(path string) (*DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if err := checkMagic(abs); err != nil {
		return nil, err
	}
	wal, _ := os.Stat(abs + "-wal")
	if wal == nil || wal.Size() == 0 {
		return openWith(path, dsn(abs, true), nil, "")
	}
	// Changes not yet checkpointed live in the log, which an immutable open
	// would not read.
	if inPlace {
		if d, err := openWith(path, dsn(abs, false), nil, ""); err == nil {
			return d, nil
		}
	}
	dir, err := os.MkdirTemp("", "sandbox-opencode-*")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	done := func() { os.RemoveAll(dir) }
	cp := filepath.Join(dir, "opencode.db")
	if err := copyFile(abs, cp); err != nil {
		done()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := copyFile(abs+"-wal", cp+"-wal"); err != nil {
		done()
		return nil, fmt.Errorf("%s-wal: %w", path, err)
	}
	u := url.URL{Scheme: "file", Path: cp}
	return openWith(path, u.String()+"?_pragma=query_only(1)", done, "read through a private copy with its -wal file")
}

func checkMagic(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	head := make([]byte, len(sQLiteMagic))
	if _, err := io.ReadFull(f, head); err != nil || !bytes.Equal(head, sQLiteMagic) {
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

func openWith(name, source string, cleanup func(), note string) (*DB, error) {
	db, err := sql.Open("sqlite", source)
	if err != nil {
		if cleanup != nil {
			cleanup()
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	// Each session read holds two cursors (messages, parts) and sessions
	// are read in parallel: keep those connections open between sessions,
	// since opening one reads the schema again.
	db.SetMaxIdleConns(4*runtime.GOMAXPROCS(0) + 2)
	d := &DB{Path: name, db: db, cleanup: cleanup, Note: note}
	if err := d.check(); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// check reads the schema: opencode's tables must be there, with the columns
// this reader needs.
func (d *DB) check() error {
	need := map[string][]string{
		"session": {"id", "directory", "time_created", "time_updated"},
		"message": {"id", "session_id", "data"},
		"part":    {"id", "message_id", "session_id", "data"},
	}
	for _, t := range []string{"session", "message", "part"} {
		cols, err := d.columns(t)
		if err != nil {
			return fmt.Errorf("%s: %w", d.Path, dbError(err))
		}
		for _, c := range need[t] {
			if !cols[c] {
				return fmt.Errorf("%s: %w", d.Path, ErrNotOpencode)
			}
		}
		if t == "session" {
			d.cols = cols
		}
	}
	var err error
	if d.msgs, err = d.db.Prepare("SELECT id, data FROM message WHERE session_id = ? ORDER BY id"); err != nil {
		return fmt.Errorf("%s: %w", d.Path, dbError(err))
	}
	if d.parts, err = d.db.Prepare("SELECT id, message_id, data FROM part WHERE session_id = ? ORDER BY message_id, id"); err != nil {
		return fmt.Errorf("%s: %w", d.Path, dbError(err))
	}
	return nil
}

// dbError words SQLite's errors about a damaged file.
func dbError(err error) error {
	msg := err.Error()
	if strings.Contains(msg, "malformed") || strings.Contains(msg, "not a database") || strings.Contains(msg, "(11)") || strings.Contains(msg, "(26)") {
		return fmt.Errorf("the database is damaged (truncated or corrupt): %w", err)
	}
	return err
}

func (d *DB) columns(table string) (map[string]bool, error) {
	rows, err := d.db.Query("SELECT name FROM pragma_table_info(?)", table)
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

// Close releases the database (and its private copy, if any).
func (d *DB) Close() {
	d.db.Close()
	if d.cleanup != nil {
		d.cleanup()
	}
}

// Sessions lists the database's sessions last updated at or after since
// (all when since is zero), oldest first.
func (d *DB) Sessions(since time.Time) ([]SessionInfo, error) {
	col := func(c string) string {
		if d.cols[c] {
			return c
		}
		return "NULL"
	}
	q := fmt.Sprintf("SELECT id, %s, directory, %s, %s, time_created, time_updated, %s FROM session",
		col("parent_id"), col("title"), col("version"), col("revert"))
	var args []any
	if !since.IsZero() {
		q += " WHERE time_updated >= ?"
		args = append(args, since.UnixMilli())
	}
	q += " ORDER BY time_created, id"
	rows, err := d.db.Query(q, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", d.Path, dbError(err))
	}
	defer rows.Close()
	var out []SessionInfo
	for rows.Next() {
		var id, dir string
		var parent, title, version, revert sql.NullString
		var created, updated sql.NullInt64
		if err := rows.Scan(&id, &parent, &dir, &title, &version, &created, &updated, &revert); err != nil {
			return out, fmt.Errorf("%s: session table: %w", d.Path, dbError(err))
		}
		out = append(out, SessionInfo{ID: id, ParentID: parent.String, Directory: dir, Title: title.String, Version: version.String,
			Created: ms(created.Int64), Updated: ms(updated.Int64), Revert: revert.String})
	}
	if err := rows.Err(); err != nil {
		return out, fmt.Errorf("%s: %w", d.Path, dbError(err))
	}
	return out, nil
}

func ms(v int64) time.Time {
	if v <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}

// Records returns the record stream of one session (see doc.go): its
// session line, then each message followed by its parts, in id order (ids
// are ascending in time). Rows are read as the stream is read; closing it
// stops the queries.
func (d *DB) Records(s SessionInfo) io.ReadCloser {
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		// Rows are small: batching them into the pipe saves a hand-over
		// between goroutines per row.
		bw := bufio.NewWriterSize(pw, 32<<10)
		err := d.write(ctx, s, bw)
		if err == nil {
			err = bw.Flush()
		}
		pw.CloseWithError(err)
	}()
	return &pipeCloser{PipeReader: pr, cancel: cancel, done: done}
}

// pipeCloser is the reading end of a record stream written by a
// goroutine: Close stops the goroutine and waits for it, so nothing it
// reads is read after Close.
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

func (d *DB) write(ctx context.Context, s SessionInfo, w io.Writer) error {
	enc := &encoder{w: w}
	if err := enc.session(s, d.Path); err != nil {
		return err
	}
	msgs, err := d.msgs.QueryContext(ctx, s.ID)
	if err != nil {
		return enc.bad(d.Path, "message table: "+dbError(err).Error())
	}
	defer msgs.Close()
	parts, err := d.parts.QueryContext(ctx, s.ID)
	if err != nil {
		return enc.bad(d.Path, "part table: "+dbError(err).Error())
	}
	defer parts.Close()
	// A merge of the two ordered cursors: each message, then its parts;
	// parts of a message that is not there are orphans, in id order.
	var pid, pmsg string
	var pdata sql.RawBytes
	havePart := false
	next := func() error {
		if havePart = parts.Next(); havePart {
			if err := parts.Scan(&pid, &pmsg, &pdata); err != nil {
				havePart = false
				return enc.bad(d.Path, "part table: "+dbError(err).Error())
			}
		}
		return nil
	}
	emitPart := func(orphan bool) error {
		if err := enc.part(pid, pmsg, pdata, d.Path, orphan); err != nil {
			return err
		}
		return next()
	}
	if err := next(); err != nil {
		return err
	}
	for msgs.Next() {
		var id string
		var data sql.RawBytes
		if err := msgs.Scan(&id, &data); err != nil {
			return enc.bad(d.Path, "message table: "+dbError(err).Error())
		}
		for havePart && pmsg < id {
			if err := emitPart(true); err != nil {
				return err
			}
		}
		if err := enc.message(id, data, d.Path); err != nil {
			return err
		}
		for havePart && pmsg == id {
			if err := emitPart(false); err != nil {
				return err
			}
		}
	}
	if err := msgs.Err(); err != nil {
		return enc.bad(d.Path, "message table: "+dbError(err).Error())
	}
	for havePart {
		if err := emitPart(true); err != nil {
			return err
		}
	}
	if err := parts.Err(); err != nil {
		return enc.bad(d.Path, "part table: "+dbError(err).Error())
	}
	return nil
}

// encoder writes the record stream, one JSON object per line.
type encoder struct {
	w   io.Writer
	buf []byte
}

func (e *encoder) line(fields ...any) error {
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
	_, err := e.w.Write(e.buf)
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

func (e *encoder) session(s SessionInfo, src string) error {
	fields := []any{"oc", "session", "id", s.ID, "directory", s.Directory, "title", s.Title, "version", s.Version,
		"parent_id", s.ParentID, "created", s.Created.UnixMilli(), "updated", s.Updated.UnixMilli(), "src", src}
	if s.Revert != "" {
		if raw, ok := jsonValue([]byte(s.Revert)); ok {
			fields = append(fields, "revert", raw)
		}
	}
	return e.line(fields...)
}

func (e *encoder) message(id string, data []byte, src string) error {
	raw, ok := jsonValue(data)
	if !ok {
		return e.line("oc", "message", "id", id, "src", src, "bad", describeBad(data))
	}
	return e.line("oc", "message", "id", id, "src", src, "data", raw)
}

func (e *encoder) part(id, msg string, data []byte, src string, orphan bool) error {
	raw, ok := jsonValue(data)
	if !ok {
		return e.line("oc", "part", "id", id, "message_id", msg, "src", src, "bad", describeBad(data))
	}
	if orphan {
		return e.line("oc", "part", "id", id, "message_id", msg, "src", src, "orphan", true, "data", raw)
	}
	return e.line("oc", "part", "id", id, "message_id", msg, "src", src, "data", raw)
}

func (e *encoder) bad(src, why string) error {
	return e.line("oc", "bad", "src", src, "bad", why)
}

// jsonValue returns data as one line of JSON when it is a JSON object.
func jsonValue(data []byte) (json.RawMessage, bool) {
	t := bytes.TrimSpace(data)
	if len(t) == 0 || t[0] != '{' || len(t) > maxRecord || !gjson.ValidBytes(t) {
		return nil, false
	}
	if bytes.ContainsAny(t, "\r\n") {
		var b bytes.Buffer
		if json.Compact(&b, t) != nil {
			return nil, false
		}
		t = b.Bytes()
	}
	return json.RawMessage(t), true
}

func describeBad(data []byte) string {
	t := bytes.TrimSpace(data)
	switch {
	case len(t) == 0:
		return "empty record"
	case len(t) > maxRecord:
		return fmt.Sprintf("record of %d bytes is larger than the limit of %d", len(t), maxRecord)
	case t[0] != '{':
		return "not a JSON object"
	}
	return "not valid JSON (cut short?)"
}

// Legacy is an opencode file store: storage/session/<project>/<id>.json,
// storage/message/<session>/<id>.json, storage/part/<message>/<id>.json.
type Legacy struct {
	Root string // the storage directory
}

// isLegacy reports whether dir looks like a legacy opencode storage
// directory (it has session and message folders).
func isLegacy(dir string) bool {
	return realDir(filepath.Join(dir, "session")) && realDir(filepath.Join(dir, "message"))
}

// realDir says whether p is a directory itself, not a symbolic link to one:
// a link found in a store is never followed.
func realDir(p string) bool {
	st, err := os.Lstat(p)
	return err == nil && st.IsDir()
}

// safeName says whether an id read from a store can name a file of it.
func safeName(id string) bool {
	return id != "" && id != "." && id != ".." && !strings.ContainsAny(id, `/\`+"\x00")
}

// LegacySession is a session file of a legacy store.
type LegacySession struct {
	SessionInfo
	// ModTime is the latest of the session file's and its message folder's
	// modification times: any activity touches one of them.
	ModTime time.Time
	// Err says why the session file could not be read (it is still listed,
	// by the id in its name).
	Err error
	// key is the id in the file's name, which names its message folder.
	key string
}

// Sessions lists the legacy store's sessions, by file name order.
func (l Legacy) Sessions() []LegacySession {
	var out []LegacySession
	projects, _ := os.ReadDir(filepath.Join(l.Root, "session"))
	for _, p := range projects {
		if !p.IsDir() {
			continue
		}
		dir := filepath.Join(l.Root, "session", p.Name())
		files, _ := os.ReadDir(dir)
		for _, f := range files {
			if f.IsDir() || !strings.HasSuffix(f.Name(), ".json") || !f.Type().IsRegular() {
				continue
			}
			file := filepath.Join(dir, f.Name())
			info, err := f.Info()
			if err != nil {
				continue
			}
			s := LegacySession{ModTime: info.ModTime()}
			s.file = file
			s.ID = strings.TrimSuffix(f.Name(), ".json")
			s.key = s.ID
			if m, err := os.Lstat(filepath.Join(l.Root, "message", s.key)); err == nil && m.IsDir() && m.ModTime().After(s.ModTime) {
				s.ModTime = m.ModTime()
			}
			data, err := readLimited(file)
			switch {
			case err != nil:
				s.Err = err
			case !gjson.ValidBytes(data):
				s.Err = fmt.Errorf("%s: %s", file, describeBad(data))
			default:
				doc := gjson.ParseBytes(data)
				if id := doc.Get("id").Str; safeName(id) {
					s.ID = id // the file's own id; its folders are still found by the name
				}
				s.ParentID = doc.Get("parentID").Str
				s.Directory = doc.Get("directory").Str
				s.Title = doc.Get("title").Str
				s.Version = doc.Get("version").Str
				s.Created = ms(doc.Get("time.created").Int())
				s.Updated = ms(doc.Get("time.updated").Int())
				if r := doc.Get("revert"); r.IsObject() {
					s.Revert = r.Raw
				}
			}
			out = append(out, s)
		}
	}
	return out
}

func readLimited(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxRecord+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return data, nil
}

// Records returns the record stream of one legacy session: every message
// file of it and every part file of each message, in id order. A file that
// cannot be read or is not JSON is a "bad" record naming it.
func (l Legacy) Records(s LegacySession) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		bw := bufio.NewWriterSize(pw, 32<<10)
		err := l.write(s, bw)
		if err == nil {
			err = bw.Flush()
		}
		pw.CloseWithError(err)
	}()
	return pr
}

func sortedJSON(dir string) []string {
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		if !e.IsDir() && e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".json") {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}

func (l Legacy) write(s LegacySession, w io.Writer) error {
	enc := &encoder{w: w}
	if err := enc.session(s.SessionInfo, s.file); err != nil {
		return err
	}
	if s.Err != nil {
		if err := enc.bad(s.file, s.Err.Error()); err != nil {
			return err
		}
	}
	key := s.key
	if key == "" {
		key = s.ID
	}
	if !safeName(key) {
		return enc.bad(s.file, "session id "+key+" cannot name a folder: its messages are not read")
	}
	mdir := filepath.Join(l.Root, "message", key)
	if !realDir(mdir) {
		return nil
	}
	for _, name := range sortedJSON(mdir) {
		file := filepath.Join(mdir, name)
		id := strings.TrimSuffix(name, ".json")
		data, err := readLimited(file)
		if err != nil {
			if err := enc.bad(file, err.Error()); err != nil {
				return err
			}
			continue
		}
		if err := enc.message(id, data, file); err != nil {
			return err
		}
		pdir := filepath.Join(l.Root, "part", id)
		if !realDir(pdir) {
			continue
		}
		for _, pname := range sortedJSON(pdir) {
			pfile := filepath.Join(pdir, pname)
			pdata, err := readLimited(pfile)
			if err != nil {
				if err := enc.bad(pfile, err.Error()); err != nil {
					return err
				}
				continue
			}
			if err := enc.part(strings.TrimSuffix(pname, ".json"), id, pdata, pfile, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// streamMark is how every record stream begins.
var streamMark = []byte(`{"oc":"session",`)

// IsStream reports whether b (a transcript's first bytes) is an opencode
// record stream.
func IsStream(b []byte) bool { return bytes.HasPrefix(b, streamMark) }

// Forget closes the database opened at path, if any, and drops it from the
// process's handles: the next OpenDB opens it again. Tests that open many
// databases call it.
func Forget(path string) {
	dbMu.Lock()
	d, ok := dbCache[path]
	delete(dbCache, path)
	dbMu.Unlock()
	if ok {
		d.Close()
	}
}
