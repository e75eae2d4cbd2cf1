package crush

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"

	"github.com/agentsandbox/sandbox/parse/discover"
	"github.com/agentsandbox/sandbox/parse/internal/emit"
	"github.com/agentsandbox/sandbox/parse/internal/hostpath"
	"github.com/agentsandbox/sandbox/parse/internal/sqlitestore"
)

// errNotCrush is a SQLite database that is not Crush's.
var errNotCrush = fmt.Errorf("%w: no sessions and messages tables of Crush", discover.ErrNotMine)

// sessionInfo is what the sessions table says of one session.
type sessionInfo struct {
	ID, ParentID, Title string
	Created, Updated    time.Time
}

// store is a Crush database opened read-only.
type store struct {
	db *sqlitestore.DB
	// msgCols are the messages table's columns, which grew over versions.
	msgCols map[string]bool
	files   bool // the files table (the history of the files written)
	msgs    *sql.Stmt
	// kids maps a session to those started from it (its sub-agents').
	kidsOnce sync.Once
	kids     map[string][]sessionInfo
}

// stores are the databases opened in this process.
var stores sqlitestore.Cache[*store]

// openStore opens the Crush database at path, once per process while it
// does not change (every session of it shares the handle).
func openStore(path string) (*store, error) {
	return stores.Open(path, 2, func(db *sqlitestore.DB) (*store, error) {
		s := &store{db: db}
		return s, s.check()
	})
}

// check reads the schema: Crush's plural tables, with the columns this
// reader needs.
func (s *store) check() error {
	need := map[string][]string{
		"sessions": {"id", "parent_session_id", "title", "created_at", "updated_at"},
		"messages": {"id", "session_id", "role", "parts", "created_at"},
	}
	for _, t := range []string{"sessions", "messages"} {
		cols, err := s.db.Columns(t)
		if err != nil {
			return fmt.Errorf("%s: %w", s.db.Path, sqlitestore.Err(err))
		}
		for _, c := range need[t] {
			if !cols[c] {
				return fmt.Errorf("%s: %w", s.db.Path, errNotCrush)
			}
		}
		if t == "messages" {
			s.msgCols = cols
		}
	}
	cols, err := s.db.Columns("files")
	if err != nil {
		return fmt.Errorf("%s: %w", s.db.Path, sqlitestore.Err(err))
	}
	s.files = cols["path"] && cols["session_id"]
	q := fmt.Sprintf("SELECT id, role, parts, created_at, %s FROM messages WHERE session_id = ? ORDER BY created_at, rowid", s.col("model"))
	if s.msgs, err = s.db.Prepare(q); err != nil {
		return fmt.Errorf("%s: %w", s.db.Path, sqlitestore.Err(err))
	}
	return nil
}

func (s *store) col(c string) string {
	if s.msgCols[c] {
		return c
	}
	return "NULL"
}

// sessions lists the sessions last updated at or after since (all when
// since is zero), oldest first.
func (s *store) sessions(since time.Time) ([]sessionInfo, error) {
	q := "SELECT id, parent_session_id, title, created_at, updated_at FROM sessions"
	var args []any
	if !since.IsZero() {
		q += " WHERE updated_at >= ?"
		args = append(args, since.Unix())
	}
	rows, err := s.db.Query(q+" ORDER BY created_at, rowid", args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.db.Path, sqlitestore.Err(err))
	}
	defer rows.Close()
	var out []sessionInfo
	for rows.Next() {
		var id string
		var parent, title sql.NullString
		var created, updated sql.NullInt64
		if err := rows.Scan(&id, &parent, &title, &created, &updated); err != nil {
			return out, fmt.Errorf("%s: sessions table: %w", s.db.Path, sqlitestore.Err(err))
		}
		out = append(out, sessionInfo{ID: id, ParentID: parent.String, Title: title.String, Created: emit.UnixTime(created.Int64), Updated: emit.UnixTime(updated.Int64)})
	}
	if err := rows.Err(); err != nil {
		return out, fmt.Errorf("%s: %w", s.db.Path, sqlitestore.Err(err))
	}
	return out, nil
}

// descendants returns the sessions started from id (the sub-agents' of
// its agent tool calls, whose parent_session_id is id), and theirs.
func (s *store) descendants(id string) []sessionInfo {
	s.kidsOnce.Do(func() {
		all, _ := s.sessions(time.Time{})
		s.kids = map[string][]sessionInfo{}
		for _, k := range all {
			if k.ParentID != "" && k.ParentID != k.ID {
				s.kids[k.ParentID] = append(s.kids[k.ParentID], k)
			}
		}
	})
	seen := map[string]bool{id: true}
	var out []sessionInfo
	for queue := []string{id}; len(queue) > 0; queue = queue[1:] {
		for _, k := range s.kids[queue[0]] {
			if !seen[k.ID] {
				seen[k.ID] = true
				out = append(out, k)
				queue = append(queue, k.ID)
			}
		}
	}
	return out
}

// workDir is the directory the session worked in, as its rows tell it: the
// working directory a bash call reported; else the project the database
// lies in (dbDir) when every file the session wrote lies in it (files.path
// is absolute), or else the directory they all lie in; else dbDir.
func (s *store) workDir(id, dbDir string) string {
	rows, err := s.db.Query("SELECT parts FROM messages WHERE session_id = ? AND role = 'tool' AND instr(parts, 'working_directory') > 0 ORDER BY created_at, rowid LIMIT 20", id)
	if err == nil {
		defer rows.Close()
		for rows.Next() {
			var parts string
			if rows.Scan(&parts) != nil {
				break
			}
			for _, p := range gjson.Get(parts, "#.data.metadata").Array() {
				if wd := gjson.Get(p.Str, "working_directory").Str; hostpath.Abs(wd) {
					return hostpath.Clean(wd)
				}
			}
		}
	}
	if !s.files {
		return dbDir
	}
	frows, err := s.db.Query("SELECT DISTINCT path FROM files WHERE session_id = ?", id)
	if err != nil {
		return dbDir
	}
	defer frows.Close()
	common, n := "", 0
	for ; frows.Next(); n++ {
		var p string
		if frows.Scan(&p) != nil || !hostpath.Abs(p) {
			return dbDir
		}
		d := path.Dir(hostpath.Clean(p))
		if n == 0 {
			common = d
			continue
		}
		for common != d && !strings.HasPrefix(d, strings.TrimSuffix(common, "/")+"/") {
			up := path.Dir(common)
			if up == common {
				return dbDir
			}
			common = up
		}
	}
	switch {
	case n == 0 || dbDir != "" && (common == dbDir || strings.HasPrefix(common, dbDir+"/")):
		return dbDir
	case common == "/" || common == "." || len(common) == 3 && hostpath.Drive(common):
		return dbDir // only the root in common: no project
	}
	return common
}

// records returns the record stream of one session: its session line,
// then each message, in the order Crush wrote them (created_at, then
// insertion). cwd is the session's working directory (projects.json's
// project, or workDir).
func (s *store) records(si sessionInfo, cwd string) io.ReadCloser {
	return sqlitestore.Pipe(func(ctx context.Context, w io.Writer) error {
		// No line names where the database is: the stream is the same
		// wherever it is read from (its size is in the reports).
		enc := &sqlitestore.Lines{W: w}
		if err := enc.Line("crush", "session", "id", si.ID, "parent_id", si.ParentID, "title", si.Title,
			"created", si.Created.Unix(), "updated", si.Updated.Unix(), "cwd", cwd); err != nil {
			return err
		}
		rows, err := s.msgs.QueryContext(ctx, si.ID)
		if err != nil {
			return enc.Line("crush", "bad", "bad", "messages table: "+sqlitestore.Err(err).Error())
		}
		defer rows.Close()
		for rows.Next() {
			var id, role string
			var parts sql.RawBytes
			var created sql.NullInt64
			var model sql.NullString
			if err := rows.Scan(&id, &role, &parts, &created, &model); err != nil {
				return enc.Line("crush", "bad", "bad", "messages table: "+sqlitestore.Err(err).Error())
			}
			raw, why := sqlitestore.JSONValue(parts, "[")
			if why != "" {
				if err := enc.Line("crush", "message", "id", id, "role", role, "created", created.Int64, "bad", why); err != nil {
					return err
				}
				continue
			}
			if err := enc.Line("crush", "message", "id", id, "role", role, "created", created.Int64, "model", model.String, "parts", json.RawMessage(raw)); err != nil {
				return err
			}
		}
		if err := rows.Err(); err != nil {
			return enc.Line("crush", "bad", "bad", "messages table: "+sqlitestore.Err(err).Error())
		}
		return nil
	})
}

// dbDir is the project a database at p belongs to: the folder holding
// its .crush directory, or "".
func dbDir(p string) string {
	if dir := filepath.Dir(p); filepath.Base(dir) == ".crush" {
		if abs, err := filepath.Abs(filepath.Dir(dir)); err == nil {
			return filepath.ToSlash(abs)
		}
	}
	return ""
}
