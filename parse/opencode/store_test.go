package opencode

import (
	"database/sql"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentsandbox/sandbox/fixtures/ocdb"
	"github.com/agentsandbox/sandbox/parse/internal/sqlitestore"
	"github.com/agentsandbox/sandbox/parse/internal/testhook"
)

const walRows = `INSERT INTO project (id, worktree, time_created, time_updated) VALUES ('p', '/w', 1, 1);
INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) VALUES ('ses_old', 'p', 's', '/w', 't', '1', 1763800000000, 1763800000000);`

// openWAL builds a database in WAL mode, as opencode runs it, and keeps a
// writer open that has added a session not yet checkpointed: it lives only
// in the -wal file, as while opencode runs.
func openWAL(t *testing.T, dir string) (string, *sql.DB) {
	t.Helper()
	p := filepath.Join(dir, "opencode.db")
	if err := ocdb.Build(p, walRows); err != nil {
		t.Fatal(err)
	}
	u := url.URL{Scheme: "file", Path: p}
	w, err := sql.Open("sqlite", u.String()+"?_pragma=journal_mode(wal)&_pragma=wal_autocheckpoint(0)")
	if err != nil {
		t.Fatal(err)
	}
	w.SetMaxOpenConns(1)
	if _, err := w.Exec(`INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) VALUES ('ses_new', 'p', 's', '/w', 't', '1', 1763800100000, 1763800100000);
INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_1', 'ses_new', 1763800100000, 1763800100000, '{"role":"user","time":{"created":1763800100000}}');`); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(p + "-wal"); err != nil || st.Size() == 0 {
		t.Fatalf("no -wal file: %v", err)
	}
	return p, w
}

func ids(t *testing.T, d *DB) string {
	t.Helper()
	ss, err := d.Sessions(timeZero)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range ss {
		out = append(out, s.ID)
	}
	return strings.Join(out, " ")
}

// A database opencode is writing to has its newest sessions in the -wal
// file: they are read, and the database is not changed.
func TestReadsTheWriteAheadLog(t *testing.T) {
	p, w := openWAL(t, t.TempDir())
	defer w.Close()
	before, _ := os.ReadFile(p)
	d, err := openDB(p)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.Note != "" {
		t.Fatalf("read through a copy: %s", d.Note)
	}
	if got := ids(t, d); got != "ses_old ses_new" {
		t.Fatalf("sessions %q, want the one in the log too", got)
	}
	rc := d.Records(SessionInfo{ID: "ses_new"})
	data, _ := io.ReadAll(rc)
	rc.Close()
	if !strings.Contains(string(data), `"oc":"message","id":"msg_1"`) {
		t.Fatalf("the log's message is not read:\n%s", data)
	}
	if after, _ := os.ReadFile(p); string(after) != string(before) {
		t.Fatal("reading changed the database file")
	}
}

// On a read-only directory SQLite cannot read the log in place; a private
// copy of the database and its log is read instead.
func TestReadsTheLogOnAReadOnlyDirectory(t *testing.T) {
	if os.Getuid() == 0 {
		t.Skip("root writes through read-only permissions")
	}
	dir := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p, w := openWAL(t, dir)
	defer w.Close()
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o755)
	d, err := openDB(p)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if got := ids(t, d); got != "ses_old ses_new" {
		t.Fatalf("sessions %q, want the one in the log too", got)
	}
}

// The private copy (what a read-only directory gets) reads the log too,
// and goes away with the database.
func TestReadsTheLogThroughACopy(t *testing.T) {
	testhook.NoWALInPlace = true
	defer func() { testhook.NoWALInPlace = false }()
	p, w := openWAL(t, t.TempDir())
	defer w.Close()
	d, err := openDB(p)
	if err != nil {
		t.Fatal(err)
	}
	if d.Note == "" {
		t.Fatal("not read through a copy")
	}
	if got := ids(t, d); got != "ses_old ses_new" {
		t.Fatalf("sessions %q, want the one in the log too", got)
	}
	d.Close()
}

// A database with no log is opened immutable: no lock, nothing written.
func TestImmutableWithoutALog(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "opencode.db")
	if err := ocdb.Build(p, walRows); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o755)
	d, err := openDB(p)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if got := ids(t, d); got != "ses_old" {
		t.Fatalf("sessions %q", got)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("reading left files beside the database: %v", entries)
	}
}

// A SQLite database of another program is not opencode's.
func TestNotOpencode(t *testing.T) {
	p := filepath.Join(t.TempDir(), "other.db")
	u := url.URL{Scheme: "file", Path: p}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE session (x text)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := openDB(p); err == nil || !strings.Contains(err.Error(), "not an opencode database") {
		t.Fatalf("err %v", err)
	}
}

var timeZero = SessionInfo{}.Created

// A database that changed since this process opened it is opened anew, so a
// long-running process (the harness) never reads a changed file through an
// immutable handle.
func TestReopensAChangedDatabase(t *testing.T) {
	p := filepath.Join(t.TempDir(), "opencode.db")
	if err := ocdb.Build(p, walRows); err != nil {
		t.Fatal(err)
	}
	defer Forget(p)
	d, err := OpenDB(p)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := OpenDB(p); again != d {
		t.Fatal("an unchanged database was opened twice")
	}
	if err := ocdb.Exec(p, `INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) VALUES ('ses_more', 'p', 's', '/w', 't', '1', 1763800200000, 1763800200000);`); err != nil {
		t.Fatal(err)
	}
	d2, err := OpenDB(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(t, d2); got != "ses_old ses_more" {
		t.Fatalf("sessions %q after the change", got)
	}
}

// A legacy store is hostile input: an id that is a path and a folder that is
// a symbolic link lead nowhere outside it.
func TestLegacyFollowsNoLink(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(outside, "msg_x.json"), `{"id":"msg_x","role":"user","time":{"created":1}}`)
	write(filepath.Join(root, "session", "p", "ses_a.json"), `{"id":"../../`+filepath.Base(outside)+`","directory":"/w","time":{"created":1,"updated":2}}`)
	write(filepath.Join(root, "session", "p", "ses_b.json"), `{"id":"ses_b","directory":"/w","time":{"created":1,"updated":2}}`)
	if err := os.MkdirAll(filepath.Join(root, "message"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "message", "ses_b")); err != nil {
		t.Fatal(err)
	}
	l := Legacy{Root: root}
	for _, s := range l.Sessions() {
		if s.ID != "ses_a" && s.ID != "ses_b" {
			t.Errorf("id %q taken from the file", s.ID)
		}
		rc := l.Records(s)
		data, _ := io.ReadAll(rc)
		rc.Close()
		if strings.Contains(string(data), "msg_x") {
			t.Errorf("%s: read a message outside the store:\n%s", s.ID, data)
		}
	}
}

// openDB opens the database at path as OpenDB does, but outside the
// process's handles: the test closes it.
func openDB(path string) (*DB, error) {
	db, err := sqlitestore.Open(path)
	if err != nil {
		return nil, err
	}
	d := &DB{Path: path, db: db, Note: db.Note}
	if err := d.check(); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}
