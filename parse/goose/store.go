package goose

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/agentsandbox/sandbox/parse/discover"
	"github.com/agentsandbox/sandbox/parse/internal/emit"
	"github.com/agentsandbox/sandbox/parse/internal/hostpath"
	"github.com/agentsandbox/sandbox/parse/internal/sqlitestore"
)

// errNotGoose is a SQLite database that is not Goose's.
var errNotGoose = fmt.Errorf("%w: no sessions and messages tables of Goose", discover.ErrNotMine)

// sessionInfo is what the sessions table (and the session's messages) say
// of one session.
type sessionInfo struct {
	ID, Name, Cwd, Type string
	Created, Updated    time.Time
}

// store is a Goose sessions.db opened read-only.
type store struct {
	db       *sqlitestore.DB
	sessCols map[string]bool
	msgCols  map[string]bool
	msgs     *sql.Stmt
}

// stores are the databases opened in this process.
var stores sqlitestore.Cache[*store]

// openStore opens the Goose database at path, once per process while it
// does not change (every session of it shares the handle).
func openStore(path string) (*store, error) {
	return stores.Open(path, 2, func(db *sqlitestore.DB) (*store, error) {
		s := &store{db: db}
		return s, s.check()
	})
}

// check reads the schema: Goose's sessions and messages tables (schema
// versions 1 to 13 all have the columns read here; the others are read
// when they are there).
func (s *store) check() error {
	need := map[string][]string{
		"sessions": {"id", "working_dir"},
		"messages": {"session_id", "role", "content_json", "created_timestamp"},
	}
	for _, t := range []string{"sessions", "messages"} {
		cols, err := s.db.Columns(t)
		if err != nil {
			return fmt.Errorf("%s: %w", s.db.Path, sqlitestore.Err(err))
		}
		for _, c := range need[t] {
			if !cols[c] {
				return fmt.Errorf("%s: %w", s.db.Path, errNotGoose)
			}
		}
		if t == "sessions" {
			s.sessCols = cols
		} else {
			s.msgCols = cols
		}
	}
	order := "rowid"
	if s.msgCols["timestamp"] {
		order = "timestamp, rowid"
	}
	q := fmt.Sprintf("SELECT rowid, role, content_json, created_timestamp, %s FROM messages WHERE session_id = ? ORDER BY %s", col(s.msgCols, "metadata_json"), order)
	var err error
	if s.msgs, err = s.db.Prepare(q); err != nil {
		return fmt.Errorf("%s: %w", s.db.Path, sqlitestore.Err(err))
	}
	return nil
}

// col is a column's name when the table has it, else NULL.
func col(cols map[string]bool, c string) string {
	if cols[c] {
		return c
	}
	return "NULL"
}

// sessions lists the sessions last active at or after since (all when
// since is zero), oldest first. A session's times are its messages' when
// it has any (created_timestamp, Unix seconds), else its row's.
func (s *store) sessions(since time.Time) ([]sessionInfo, error) {
	q := fmt.Sprintf(`SELECT s.id, %s, %s, s.working_dir, %s, %s, %s, m.first, m.last FROM sessions s
		LEFT JOIN (SELECT session_id, MIN(created_timestamp) AS first, MAX(created_timestamp) AS last FROM messages GROUP BY session_id) m
		ON m.session_id = s.id ORDER BY s.rowid`,
		"s."+col(s.sessCols, "name"), "s."+col(s.sessCols, "description"), "s."+col(s.sessCols, "session_type"),
		"s."+col(s.sessCols, "created_at"), "s."+col(s.sessCols, "updated_at"))
	q = strings.ReplaceAll(q, "s.NULL", "NULL")
	rows, err := s.db.Query(q)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.db.Path, sqlitestore.Err(err))
	}
	defer rows.Close()
	var out []sessionInfo
	for rows.Next() {
		var id string
		var nm, desc, typ, cwd sql.NullString
		var created, updated any
		var first, last sql.NullInt64
		if err := rows.Scan(&id, &nm, &desc, &cwd, &typ, &created, &updated, &first, &last); err != nil {
			return out, fmt.Errorf("%s: sessions table: %w", s.db.Path, sqlitestore.Err(err))
		}
		si := sessionInfo{ID: id, Name: nm.String, Type: typ.String, Created: when(created), Updated: when(updated)}
		if si.Name == "" {
			si.Name = desc.String
		}
		if hostpath.Abs(cwd.String) {
			si.Cwd = hostpath.Clean(cwd.String)
		}
		if f := emit.UnixTime(first.Int64); !f.IsZero() && (si.Created.IsZero() || f.Before(si.Created)) {
			si.Created = f
		}
		if l := emit.UnixTime(last.Int64); l.After(si.Updated) {
			si.Updated = l
		}
		if si.Updated.IsZero() {
			si.Updated = si.Created
		}
		if !since.IsZero() && si.Updated.Before(since) {
			continue
		}
		out = append(out, si)
	}
	if err := rows.Err(); err != nil {
		return out, fmt.Errorf("%s: %w", s.db.Path, sqlitestore.Err(err))
	}
	return out, nil
}

// when reads a time column as SQLite gives it: Unix seconds (or
// milliseconds), or text as CURRENT_TIMESTAMP or chrono writes it.
func when(v any) time.Time {
	switch x := v.(type) {
	case int64:
		return emit.UnixTime(x)
	case float64:
		return emit.UnixTime(int64(x))
	case []byte:
		return whenText(string(x))
	case string:
		return whenText(x)
	case time.Time:
		return x.UTC()
	}
	return time.Time{}
}

func whenText(s string) time.Time {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return emit.UnixTime(n)
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

// records returns the record stream of one session: its session line,
// then each message as Goose stores it (its content array and metadata),
// in the order Goose reads them.
func (s *store) records(si sessionInfo) io.ReadCloser {
	return sqlitestore.Pipe(func(ctx context.Context, w io.Writer) error {
		enc := &sqlitestore.Lines{W: w}
		if err := enc.Line("goose", "session", "id", si.ID, "name", si.Name, "type", si.Type,
			"created", si.Created.Unix(), "updated", si.Updated.Unix(), "cwd", si.Cwd); err != nil {
			return err
		}
		rows, err := s.msgs.QueryContext(ctx, si.ID)
		if err != nil {
			return enc.Line("goose", "bad", "bad", "messages table: "+sqlitestore.Err(err).Error())
		}
		defer rows.Close()
		for rows.Next() {
			var row int64
			var role string
			var content, meta sql.RawBytes
			var created sql.NullInt64
			if err := rows.Scan(&row, &role, &content, &created, &meta); err != nil {
				return enc.Line("goose", "bad", "bad", "messages table: "+sqlitestore.Err(err).Error())
			}
			raw, why := sqlitestore.JSONValue(content, "[")
			if why != "" {
				if err := enc.Line("goose", "message", "row", row, "role", role, "created", created.Int64, "bad", why); err != nil {
					return err
				}
				continue
			}
			fields := []any{"goose", "message", "row", row, "role", role, "created", created.Int64, "content", json.RawMessage(raw)}
			if m, why := sqlitestore.JSONValue(meta, "{"); why == "" {
				fields = append(fields, "metadata", json.RawMessage(m))
			}
			if err := enc.Line(fields...); err != nil {
				return err
			}
		}
		if err := rows.Err(); err != nil {
			return enc.Line("goose", "bad", "bad", "messages table: "+sqlitestore.Err(err).Error())
		}
		return nil
	})
}

// ids are the ids of every session of the database: a legacy file it
// imported has its name (the legacy session's id) as id.
func (s *store) ids() map[string]bool {
	out := map[string]bool{}
	rows, err := s.db.Query("SELECT id FROM sessions")
	if err != nil {
		return out
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if rows.Scan(&id) == nil {
			out[id] = true
		}
	}
	return out
}

// dbSessions lists the sessions of the Goose database at path active
// since since; label is how the database is called in messages.
func dbSessions(path, label string, since time.Time, harness string) ([]discover.Candidate, error) {
	st, err := openStore(path)
	if err != nil {
		return nil, err
	}
	sessions, err := st.sessions(since)
	if err != nil {
		return nil, err
	}
	out := make([]discover.Candidate, 0, len(sessions))
	for _, s := range sessions {
		c := discover.Candidate{Name: label + "#" + s.ID, Store: path, Agent: name, ModTime: s.Updated, ID: s.ID, Harness: harness,
			Listed: &discover.Listed{Cwd: s.Cwd, First: s.Created, Last: s.Updated}}
		out = append(out, discover.StoreCandidate(c, func() (io.ReadCloser, error) { return st.records(s), nil }, nil))
	}
	return out, nil
}
