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
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/agentsandbox/sandbox/parse/internal/emit"
	"github.com/agentsandbox/sandbox/parse/internal/sqlitestore"
	"github.com/tidwall/gjson"
	_ "modernc.org/sqlite" // the pure-Go SQLite driver, registered as "sqlite"
)

// maxRecord bounds one stored record (a row's data, a legacy JSON file): a
// larger one is reported and skipped, so memory stays bounded whatever the
// store holds.
const maxRecord = sqlitestore.MaxRecord

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
	db   *sqlitestore.DB
	// cols are the session table's columns, which differ across versions.
	cols map[string]bool
	// msgs and parts read one session's rows; prepared once, since
	// preparing costs more than running them on a small session.
	msgs, parts *sql.Stmt
	// Note says how the database was opened when it was not the plain way
	// (a write-ahead log read through a private copy).
	Note string
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

// dbs are the databases opened in this process.
var dbs sqlitestore.Cache[*DB]

// OpenDB opens the opencode database at path read-only, once per process:
// every session of it shares the handle. A database with no write-ahead log
// is opened immutable, so one in use or on a read-only medium reads; one
// whose -wal file holds changes not yet checkpointed is opened read-only
// through SQLite itself (which reads the log), or, when that cannot be done
// in place, through a private copy of the database and its log. A file that
// is not an opencode database (or not a database) is an error naming it.
func OpenDB(path string) (*DB, error) {
	// Each session read holds two cursors (messages, parts) and sessions
	// are read in parallel.
	return dbs.Open(path, 4, func(db *sqlitestore.DB) (*DB, error) {
		d := &DB{Path: path, db: db, Note: db.Note}
		return d, d.check()
	})
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
		cols, err := d.db.Columns(t)
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
func dbError(err error) error { return sqlitestore.Err(err) }

// Close releases the database (and its private copy, if any).
func (d *DB) Close() { d.db.Close() }

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

func ms(v int64) time.Time { return emit.UnixMilli(v) }

// Records returns the record stream of one session (see doc.go): its
// session line, then each message followed by its parts, in id order (ids
// are ascending in time). Rows are read as the stream is read; closing it
// stops the queries.
func (d *DB) Records(s SessionInfo) io.ReadCloser {
	return sqlitestore.Pipe(func(ctx context.Context, w io.Writer) error { return d.write(ctx, s, w) })
}

func (d *DB) write(ctx context.Context, s SessionInfo, w io.Writer) error {
	enc := &encoder{Lines: sqlitestore.Lines{W: w}}
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
type encoder struct{ sqlitestore.Lines }

func (e *encoder) line(fields ...any) error { return e.Line(fields...) }

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
	raw, why := sqlitestore.JSONValue(data, "{")
	return raw, why == ""
}

// describeBad says why data is not a JSON object.
func describeBad(data []byte) string {
	_, why := sqlitestore.JSONValue(data, "{")
	return why
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
	enc := &encoder{Lines: sqlitestore.Lines{W: w}}
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
func Forget(path string) { dbs.Forget(path) }
