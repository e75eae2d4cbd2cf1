package harness

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// A hostile snapshot is built member by member, with a SHA256SUMS that
// lists them as sandbox snapshot would, then tampered with.

type tmem struct {
	name string
	typ  byte // tar.TypeReg when zero
	body string
	link string // a link's target (symlink, hard link)
	size int64  // the size the header claims, when not len(body)
}

func file(name, body string) tmem { return tmem{name: name, body: body} }
func dir(name string) tmem        { return tmem{name: name + "/", typ: tar.TypeDir} }
func symlink(name, target string) tmem {
	return tmem{name: name, typ: tar.TypeSymlink, link: target}
}

// goodMembers is a small valid session.
func goodMembers() []tmem {
	return []tmem{
		file("session.json", `{"id":"hostile","name":"hostile","runtime":"local","project":"/nonexistent","state":"exited","agent_session_id":"abc"}`+"\n"),
		dir("home"), dir("home/.claude"),
		file("home/.claude/note", "kept\n"),
		symlink("home/.claude/link", "note"),
		dir("logs"),
		file("logs/output.log", "hello\n"),
		file("logs/runtime.jsonl", `{"message":"session_created"}`+"\n"),
		file("manifest.json", "{}\n"),
	}
}

// sumsOf is the SHA256SUMS sandbox snapshot writes for members.
func sumsOf(ms []tmem) []string {
	var lines []string
	for _, m := range ms {
		name := strings.TrimSuffix(m.name, "/")
		switch m.typ {
		case 0, tar.TypeReg:
			sum := sha256.Sum256([]byte(m.body))
			lines = append(lines, sumsLine(kindFile, sum[:], name))
		case tar.TypeSymlink:
			sum := sha256.Sum256([]byte(m.link))
			lines = append(lines, sumsLine(kindLink, sum[:], name))
		case tar.TypeDir:
			lines = append(lines, sumsLine(kindDir, nil, name))
		}
	}
	return lines
}

// snapshotOf writes members as a tar.gz, then SHA256SUMS made of sums
// (none when sums is nil), then after.
func snapshotOf(t testing.TB, ms []tmem, sums []string, after ...tmem) []byte {
	t.Helper()
	return gzipped(t, tarOf(t, ms, sums, after...))
}

func gzipped(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// tarOf is snapshotOf before gzip.
func tarOf(t testing.TB, ms []tmem, sums []string, after ...tmem) []byte {
	t.Helper()
	b, err := buildTar(ms, sums, after...)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func buildTar(ms []tmem, sums []string, after ...tmem) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	write := func(m tmem) error {
		typ := m.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		h := &tar.Header{Name: m.name, Typeflag: typ, Linkname: m.link, Mode: 0o644, ModTime: time.Unix(1700000000, 0)}
		if typ == tar.TypeReg {
			h.Size = int64(len(m.body))
			if m.size != 0 {
				h.Size = m.size
			}
		}
		if typ == tar.TypeDir {
			h.Mode = 0o755
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if m.size != 0 {
			// A bomb's header claims more than is written: the stream
			// ends there, as a cut download would.
			_, _ = tw.Write([]byte(m.body))
			tw.Flush()
			return nil
		}
		_, err := tw.Write([]byte(m.body))
		return err
	}
	claims := false
	for _, m := range ms {
		if err := write(m); err != nil {
			return nil, err
		}
		claims = claims || m.size != 0
	}
	if sums != nil && !claims {
		if err := write(file(sumsName, strings.Join(sums, ""))); err != nil {
			return nil, err
		}
	}
	for _, m := range after {
		if err := write(m); err != nil {
			return nil, err
		}
	}
	if !claims {
		if err := tw.Close(); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}

// with returns ms with extra members added, and the members named in drop
// left out.
func with(ms []tmem, extra []tmem, drop ...string) []tmem {
	var out []tmem
	for _, m := range ms {
		skip := false
		for _, d := range drop {
			skip = skip || strings.TrimSuffix(m.name, "/") == d
		}
		if !skip {
			out = append(out, m)
		}
	}
	return append(out, extra...)
}

// canary is a file outside the store that no restore, log or event may
// touch: its bytes and mtime are checked after each case.
type canary struct {
	path  string
	body  []byte
	mtime time.Time
}

func newCanary(t *testing.T) *canary {
	t.Helper()
	p := filepath.Join(t.TempDir(), "canary")
	body := []byte("the host's own file\n")
	if err := os.WriteFile(p, body, 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	return &canary{p, body, old}
}

func (c *canary) check(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile(c.path)
	st, serr := os.Stat(c.path)
	if err != nil || serr != nil || !bytes.Equal(b, c.body) || !st.ModTime().Equal(c.mtime) {
		t.Fatalf("the canary outside the session was touched: %q (mtime %v, want %v) %v %v", b, st.ModTime(), c.mtime, err, serr)
	}
}

// storeIsEmpty checks that a refused restore left nothing in the store.
func storeIsEmpty(t *testing.T, st *Store) {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(st.Root, "sessions"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("a refused restore left %s in the store", e.Name())
	}
}

func TestRestoreRefusesHostileSnapshots(t *testing.T) {
	good := goodMembers()
	cv := newCanary(t)
	forged := func() []byte {
		ms := goodMembers()
		sums := sumsOf(ms)
		ms[3].body = "kepT\n" // one byte, after the checksums were made
		return snapshotOf(t, ms, sums)
	}
	retargeted := func() []byte {
		ms := goodMembers()
		sums := sumsOf(ms)
		ms[4].link = "../../../../etc/passwd" // the link moved after SHA256SUMS
		return snapshotOf(t, ms, sums)
	}
	listed := func(ms []tmem) []byte { return snapshotOf(t, ms, sumsOf(ms)) }
	bigSession := make([]tmem, 0, 40)
	bigSession = append(bigSession, good...)
	for i := range 30 {
		bigSession = append(bigSession, file(fmt.Sprintf("home/f%02d", i), ""))
	}
	zeros := strings.Repeat("\x00", 8<<20)
	cases := []struct {
		name   string
		snap   []byte
		limits RestoreLimits
		want   string // in the error
		limit  bool
	}{
		{"link to /etc", listed(with(good, []tmem{symlink("home/etc", "/etc")})),
			RestoreLimits{}, `member "home/etc": a symbolic link to "/etc": an absolute target`, false},
		{"link to ../../x", listed(with(good, []tmem{symlink("home/x", "../../x")})),
			RestoreLimits{}, `member "home/x": a symbolic link to "../../x": a target that leads out of the session directory`, false},
		{"link to the records", listed(with(good, []tmem{symlink("home/rec", "../session.json")})),
			RestoreLimits{}, `member "home/rec": a symbolic link to "../session.json": a target that leads to session.json, out of home/`, false},
		{"runtime.jsonl is a link", listed(with(good, []tmem{symlink("logs/runtime.jsonl", cv.path)}, "logs/runtime.jsonl")),
			RestoreLimits{}, `member "logs/runtime.jsonl": a symbolic link outside home/`, false},
		{"output.log is a link", listed(with(good, []tmem{symlink("logs/output.log", cv.path)}, "logs/output.log")),
			RestoreLimits{}, `member "logs/output.log": a symbolic link outside home/`, false},
		{"session.json is a link", listed(with(good, []tmem{symlink("session.json", cv.path)}, "session.json")),
			RestoreLimits{}, `member "session.json": a symbolic link outside home/`, false},
		{"home is a link", listed(with(good, []tmem{symlink("home", "/")}, "home", "home/.claude", "home/.claude/note", "home/.claude/link")),
			RestoreLimits{}, `member "home": a symbolic link outside home/`, false},
		{"logs is a link", listed(with(good, []tmem{symlink("logs", "home")}, "logs", "logs/output.log", "logs/runtime.jsonl")),
			RestoreLimits{}, `member "logs": a symbolic link outside home/`, false},
		{"a chain of links, each harmless alone", listed(with(good, []tmem{symlink("home/b", "."), symlink("home/a", "b/b/b/../../../x")})),
			RestoreLimits{}, `member "home/a": a symbolic link to "b/b/b/../../../x": a target that leads out of the session directory`, false},
		{"a loop of links", listed(with(good, []tmem{symlink("home/p", "q"), symlink("home/q", "p")})),
			RestoreLimits{}, `a target that goes through more than 40 links`, false},
		{"a member beneath a link", listed(with(good, []tmem{symlink("home/in", ".claude"), file("home/in/x", "x")})),
			RestoreLimits{}, `member "home/in/x": lies beneath "home/in", a symbolic link`, false},
		{"a member beneath a file", listed(with(good, []tmem{file("home/.claude/note/x", "x")})),
			RestoreLimits{}, `member "home/.claude/note/x": lies beneath "home/.claude/note", a regular file`, false},
		{"a forged byte", forged(),
			RestoreLimits{}, `member "home/.claude/note": has sha256`, false},
		{"a link retargeted after SHA256SUMS", retargeted(),
			RestoreLimits{}, `member "home/.claude/link": a symbolic link to "../../../../etc/passwd", but SHA256SUMS lists another target`, false},
		{"no SHA256SUMS", snapshotOf(t, good, nil),
			RestoreLimits{}, `no SHA256SUMS member: not a sandbox snapshot`, false},
		{"a listed member missing", snapshotOf(t, with(good, nil, "home/.claude/note"), sumsOf(good)),
			RestoreLimits{}, `member "home/.claude/note": is listed in SHA256SUMS but missing from the snapshot`, false},
		{"a member not listed", snapshotOf(t, with(good, []tmem{file("home/extra", "x")}), sumsOf(good)),
			RestoreLimits{}, `member "home/extra": is not listed in SHA256SUMS`, false},
		{"a directory not listed", snapshotOf(t, with(good, []tmem{dir("home/d")}), sumsOf(good)),
			RestoreLimits{}, `member "home/d": is not listed in SHA256SUMS`, false},
		{"listed twice", snapshotOf(t, good, append(sumsOf(good), sumsOf(good[3:4])...)),
			RestoreLimits{}, `member "home/.claude/note": is listed twice in SHA256SUMS`, false},
		{"a file listed as a link", snapshotOf(t, good, append(sumsOf(with(good, nil, "home/.claude/note")), sumsOf([]tmem{symlink("home/.claude/note", "kept\n")})...)),
			RestoreLimits{}, `member "home/.claude/note": a regular file, but SHA256SUMS lists a symbolic link`, false},
		{"a member after SHA256SUMS", snapshotOf(t, good, sumsOf(good), file("home/late", "x")),
			RestoreLimits{}, `member "home/late": comes after SHA256SUMS`, false},
		{"a malformed SHA256SUMS line", snapshotOf(t, good, append(sumsOf(good), "d41d8cd9  home/x\n")),
			RestoreLimits{}, `member "SHA256SUMS": line 10: want`, false},
		{"an absolute name", listed(with(good, []tmem{file("/tmp/escaped", "x")})),
			RestoreLimits{}, `member "/tmp/escaped": an absolute name`, false},
		{"a .. name", listed(with(good, []tmem{file("../../escaped", "x")})),
			RestoreLimits{}, `member "../../escaped": a name with a .. step`, false},
		{"a .. inside a name", listed(with(good, []tmem{file("home/../../escaped", "x")})),
			RestoreLimits{}, `member "home/../../escaped": a name with a .. step`, false},
		{"a name that is not clean", listed(with(good, []tmem{file("home/./x", "x")})),
			RestoreLimits{}, `member "home/./x": a name that is not a clean path`, false},
		{"a hard link", listed(with(good, []tmem{{name: "home/h", typ: tar.TypeLink, link: "/etc/passwd"}})),
			RestoreLimits{}, `member "home/h": a hard link (to "/etc/passwd")`, false},
		{"a device", listed(with(good, []tmem{{name: "home/null", typ: tar.TypeChar}})),
			RestoreLimits{}, `member "home/null": a device`, false},
		{"a fifo", listed(with(good, []tmem{{name: "home/fifo", typ: tar.TypeFifo}})),
			RestoreLimits{}, `member "home/fifo": a fifo`, false},
		{"a duplicate member", listed(with(good, []tmem{file("home/.claude/note", "second\n")})),
			RestoreLimits{}, `member "home/.claude/note": appears twice in the snapshot`, false},
		{"a file beside the records", listed(with(good, []tmem{file("run.sh", "x")})),
			RestoreLimits{}, `member "run.sh": is not part of a session`, false},
		{"home is a file", listed(with(good, []tmem{file("home", "x")}, "home", "home/.claude", "home/.claude/note", "home/.claude/link")),
			RestoreLimits{}, `member "home": must be a directory`, false},
		{"session.json is a directory", listed(with(good, []tmem{dir("session.json")}, "session.json")),
			RestoreLimits{}, `member "session.json": must be a regular file`, false},
		{"no session.json", listed(with(good, nil, "session.json")),
			RestoreLimits{}, `member "session.json": missing`, false},
		{"session.json is not a record", listed(with(good, []tmem{file("session.json", "[1,2]")}, "session.json")),
			RestoreLimits{}, `member "session.json": not a session record`, false},
		{"a bomb that says so", snapshotOf(t, with(good, []tmem{{name: "home/big", body: "", size: 1 << 40}}), nil),
			RestoreLimits{}, `member "home/big": 1099511627776 bytes, which would bring the snapshot beyond the limit of 17179869184 bytes`, true},
		{"a bomb of zeros", listed(with(good, []tmem{file("home/z1", zeros), file("home/z2", zeros), file("home/z3", zeros)})),
			RestoreLimits{MaxBytes: 20 << 20}, `member "home/z3": 8388608 bytes, which would bring the snapshot beyond the limit of 20971520 bytes`, true},
		{"a bomb of members", listed(bigSession),
			RestoreLimits{MaxMembers: 32}, `more than 32 members in the snapshot, the limit`, true},
		{"not gzip", []byte("this is not gzip"),
			RestoreLimits{}, `not a gzipped snapshot`, false},
		{"cut short", goodCut(t),
			RestoreLimits{}, `member "SHA256SUMS": the snapshot is damaged: unexpected EOF`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := &Store{Root: filepath.Join(t.TempDir(), "store")}
			_, err := st.Restore(bytes.NewReader(tc.snap), RestoreOptions{Name: "h", Limits: tc.limits})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v\nwant %s", err, tc.want)
			}
			var se *SnapshotError
			if errors.As(err, &se) && se.Limit != tc.limit {
				t.Errorf("Limit = %v", se.Limit)
			}
			storeIsEmpty(t, st)
			cv.check(t)
		})
	}
}

// goodCut is a valid snapshot cut in the middle.
func goodCut(t *testing.T) []byte {
	ms := goodMembers()
	b := snapshotOf(t, ms, sumsOf(ms))
	return b[:len(b)*2/3]
}

// TestRestoreGoodSnapshot: the crafted session restores whole, its link a
// link, and names that need escaping in SHA256SUMS come back as they were.
func TestRestoreGoodSnapshot(t *testing.T) {
	ms := with(goodMembers(), []tmem{file("home/a\nb\\c\rd", "odd name\n"), symlink("home/up", ".claude/../.claude/note"), dir("home/empty")})
	st := &Store{Root: t.TempDir()}
	sess, err := st.Restore(bytes.NewReader(snapshotOf(t, ms, sumsOf(ms))), RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sess.ID != "hostile" || sess.AgentSessionID != "abc" {
		t.Fatalf("restored %+v", sess)
	}
	home := st.Home("hostile")
	for p, want := range map[string]string{"a\nb\\c\rd": "odd name\n", "up": "kept\n", ".claude/link": "kept\n"} {
		if b, err := os.ReadFile(filepath.Join(home, p)); err != nil || string(b) != want {
			t.Errorf("%q: %q %v", p, b, err)
		}
	}
	if t2, _ := os.Readlink(filepath.Join(home, ".claude", "link")); t2 != "note" {
		t.Errorf("link restored to %q", t2)
	}
	if fi, err := os.Stat(filepath.Join(home, "empty")); err != nil || !fi.IsDir() {
		t.Errorf("empty directory: %v", err)
	}
	b, _ := os.ReadFile(st.RuntimeLog("hostile"))
	if !strings.Contains(string(b), `"message":"session_restored"`) || !strings.HasPrefix(string(b), `{"message":"session_created"}`) {
		t.Errorf("runtime log: %s", b)
	}
	entries, _ := os.ReadDir(filepath.Join(st.Root, "sessions"))
	if len(entries) != 1 {
		t.Errorf("store holds %v", entries)
	}
}

// TestRestoreTwoReadings: a snapshot that changes between the first
// reading (the checks) and the second (the unpacking) is refused, and
// leaves nothing.
func TestRestoreTwoReadings(t *testing.T) {
	ms := goodMembers()
	first := snapshotOf(t, ms, sumsOf(ms))
	ms[3].body = "kepT\n"
	second := snapshotOf(t, ms, sumsOf(goodMembers()))
	st := &Store{Root: t.TempDir()}
	_, err := st.Restore(&swapping{first: first, second: second}, RestoreOptions{})
	if err == nil || !strings.Contains(err.Error(), `the snapshot changed while it was restored`) {
		t.Fatalf("got %v", err)
	}
	storeIsEmpty(t, st)
}

// swapping reads as first, and as second once it is rewound.
type swapping struct {
	first, second []byte
	r             *bytes.Reader
	rewound       bool
}

func (s *swapping) Read(p []byte) (int, error) {
	if s.r == nil {
		s.r = bytes.NewReader(s.first)
	}
	return s.r.Read(p)
}

func (s *swapping) Seek(off int64, whence int) (int64, error) {
	if s.r == nil {
		s.r = bytes.NewReader(s.first)
	}
	if whence == io.SeekStart && s.r.Len() < len(s.first) {
		s.r, s.rewound = bytes.NewReader(s.second), true
	}
	return s.r.Seek(off, whence)
}

// TestSessionFilesNeverFollowLinks: a session's logs, record and lock that
// are links (planted by an agent without isolation, or by hand) are
// refused by every reader and writer of sandbox, and the file they point
// to is left alone.
func TestSessionFilesNeverFollowLinks(t *testing.T) {
	st := hermetic(t)
	cv := newCanary(t)
	runLocal(t, st, "s", "sh", "-c", "echo out")
	dir := st.Dir("s")
	for _, p := range []string{"logs/output.log", "logs/runtime.jsonl"} {
		if err := os.Remove(filepath.Join(dir, p)); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(cv.path, filepath.Join(dir, p)); err != nil {
			t.Fatal(err)
		}
	}
	var le *LinkError
	if _, err := st.OpenSessionFile("s", OutputLogName, os.O_RDONLY); !errors.As(err, &le) || le.Path != OutputLogName {
		t.Errorf("output.log as a link opened: %v", err)
	}
	if lines, err := st.Tail("s", OutputLogName, 0, 5); err == nil || lines != nil {
		t.Errorf("tail of a link: %q %v", lines, err)
	}
	if err := st.Event("s", "poke", map[string]any{"x": 1}); !errors.As(err, &le) {
		t.Errorf("event through a link: %v", err)
	}
	sess, err := st.Load("s")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Run(context.Background(), sess, &RunOptions{Command: []string{"sh", "-c", "echo again"}}); !errors.As(err, &le) {
		t.Errorf("run with its logs as links: %v", err)
	}
	if got := st.lastOutput(sess); got != nil {
		t.Errorf("last output read through a link: %q", got)
	}
	cv.check(t)

	// A record that is a link is not read, and Save replaces the link
	// rather than writing through it.
	rec := filepath.Join(dir, recordName)
	if err := os.Rename(rec, rec+".real"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(cv.path, rec); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Load("s"); !errors.As(err, &le) {
		t.Errorf("record as a link loaded: %v", err)
	}
	if err := st.Save(sess); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(rec); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("Save left %v %v", fi.Mode(), err)
	}
	cv.check(t)

	// logs/ and home/ as links, and a session directory that is one.
	logs := filepath.Join(dir, "logs")
	os.RemoveAll(logs)
	if err := os.Symlink(filepath.Dir(cv.path), logs); err != nil {
		t.Fatal(err)
	}
	if err := st.Event("s", "poke", nil); !errors.As(err, &le) || le.Path != "logs" {
		t.Errorf("event through logs/ as a link: %v", err)
	}
	home := st.Home("s")
	os.RemoveAll(home)
	if err := os.Symlink("/", home); err != nil {
		t.Fatal(err)
	}
	if err := st.makeHome("s"); !errors.As(err, &le) {
		t.Errorf("home/ as a link would be mounted: %v", err)
	}
	if err := os.Symlink(dir, st.Dir("alias")); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Load("alias"); !errors.As(err, &le) {
		t.Errorf("a session directory that is a link: %v", err)
	}
	cv.check(t)
	if _, err := os.Stat(filepath.Join(filepath.Dir(cv.path), "runtime.jsonl")); err == nil {
		t.Error("an event was written beside the canary")
	}
}

// TestSnapshotStaysInside: a snapshot follows no link out of the session;
// the links restore would refuse are left out and reported, and what it
// writes restores as it was.
func TestSnapshotStaysInside(t *testing.T) {
	st := hermetic(t)
	cv := newCanary(t)
	runLocal(t, st, "s", "sh", "-c", `mkdir -p "$HOME/d/e" && echo in > "$HOME/d/e/f" && echo x > "$HOME/a
b" && ln -s e/f "$HOME/d/ok" && ln -s /etc "$HOME/etc" && ln -s ../../../x "$HOME/d/up" && ln -s . "$HOME/b" && ln -s b/b/../../x "$HOME/chain"`)
	dir := st.Dir("s")
	if err := os.Remove(filepath.Join(dir, "logs", "output.log")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(cv.path, filepath.Join(dir, "logs", "output.log")); err != nil {
		t.Fatal(err)
	}
	// The kubernetes runtime's own files go without a word; any other
	// stray file is said.
	for _, n := range []string{"kube-sent.json", "stray.txt"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	res, err := st.Snapshot("s", &buf, nil)
	if err != nil {
		t.Fatal(err)
	}
	var skipped []string
	for _, k := range res.Skipped {
		skipped = append(skipped, k.Path)
	}
	sort.Strings(skipped)
	if strings.Join(skipped, " ") != "home/chain home/d/up home/etc logs/output.log stray.txt" {
		t.Errorf("skipped %q", res.Skipped)
	}
	if bytes.Contains(gunzip(t, buf.Bytes()), []byte("kube-sent.json")) {
		t.Error("the snapshot holds the kubernetes runtime's own file")
	}
	if bytes.Contains(gunzip(t, buf.Bytes()), cv.body) {
		t.Error("the snapshot holds the canary's bytes")
	}
	if _, err := st.Restore(bytes.NewReader(buf.Bytes()), RestoreOptions{Name: "back"}); err != nil {
		t.Fatal(err)
	}
	treesEqual(t, st.Home("s"), st.Home("back"), skipped)
	cv.check(t)
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// treesEqual compares two trees entry by entry (kind, bytes, link
// target), but for the paths in skip (relative to the session directory,
// "home/…"), which the second must not hold.
func treesEqual(t *testing.T, a, b string, skip []string) {
	t.Helper()
	list := func(root string) map[string]string {
		out := map[string]string{}
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			fi, err := os.Lstat(p)
			if err != nil {
				return err
			}
			switch {
			case fi.Mode()&fs.ModeSymlink != 0:
				l, _ := os.Readlink(p)
				out[rel] = "link " + l
			case fi.IsDir():
				out[rel] = "dir"
			default:
				body, _ := os.ReadFile(p)
				out[rel] = fmt.Sprintf("file %x", sha256.Sum256(body))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	la, lb := list(a), list(b)
	for _, s := range skip {
		rel := strings.TrimPrefix(s, "home/")
		if _, ok := lb[rel]; ok {
			t.Errorf("%s was restored though left out", s)
		}
		delete(la, rel)
	}
	for k, v := range la {
		if lb[k] != v {
			t.Errorf("%q: %s, restored as %q", k, v, lb[k])
		}
	}
	for k := range lb {
		if _, ok := la[k]; !ok {
			t.Errorf("%q restored from nowhere", k)
		}
	}
}

func TestSumsLine(t *testing.T) {
	sum := sha256.Sum256([]byte("x"))
	for _, tc := range []struct {
		kind memberKind
		sum  []byte
		name string
	}{
		{kindFile, sum[:], "home/plain"},
		{kindLink, sum[:], "home/a link"},
		{kindDir, nil, "home"},
		{kindFile, sum[:], "home/new\nline\\and\rreturn"},
	} {
		line := sumsLine(tc.kind, tc.sum, tc.name)
		k, s, n, err := parseSumsLine(strings.TrimSuffix(line, "\n"))
		if err != nil || k != tc.kind || !bytes.Equal(s, tc.sum) || n != tc.name || strings.Count(line, "\n") != 1 {
			t.Errorf("%q: %q -> %c %x %q %v", tc.name, line, k, s, n, err)
		}
	}
	for _, bad := range []string{"", "abc  x", "symlink:zz  x", "directory", `\` + strings.Repeat("0", 64) + `  a\q`, strings.Repeat("0", 64) + "  "} {
		if _, _, _, err := parseSumsLine(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// FuzzRestore feeds snapshots, valid, hostile and mangled, to restore. An
// input that is not gzip is gzipped first, so that the fuzzer works on the
// tar structure rather than on deflate's checksums. Whatever the input, a
// restore either fails, leaving no session and nothing beside the store,
// or yields a session whose every file is inside it and matches the
// snapshot's SHA256SUMS (links by their target, and leading nowhere out of
// home/); and the canary beside the store is never touched.
func FuzzRestore(f *testing.F) {
	st := &Store{Root: f.TempDir()}
	sess := &Session{ID: "seed", Name: "seed", Runtime: "local", Project: "/", State: StateExited}
	if err := st.Save(sess); err != nil {
		f.Fatal(err)
	}
	_ = os.MkdirAll(filepath.Join(st.Home("seed"), ".claude"), 0o755)
	_ = os.WriteFile(filepath.Join(st.Home("seed"), ".claude", "t.jsonl"), []byte("{}\n"), 0o644)
	_ = os.Symlink("t.jsonl", filepath.Join(st.Home("seed"), ".claude", "l"))
	var buf bytes.Buffer
	if _, err := st.Snapshot("seed", &buf, nil); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte{0x1f, 0x8b})
	good := goodMembers()
	f.Add(tarOf(f, good, sumsOf(good)))
	for _, extra := range [][]tmem{
		{symlink("home/etc", "/etc")},
		{symlink("home/x", "../../x")},
		{symlink("home/b", "."), symlink("home/a", "b/b/b/../../../x")},
		{symlink("home/in", ".claude"), file("home/in/x", "x")},
		{symlink("home/ok", ".claude/note"), file("home/a\nb", "x")},
		{{name: "home/h", typ: tar.TypeLink, link: "/etc/passwd"}},
	} {
		ms := with(good, extra)
		f.Add(tarOf(f, ms, sumsOf(ms)))
	}
	ms := with(good, []tmem{symlink("logs/runtime.jsonl", "/etc/passwd")}, "logs/runtime.jsonl")
	f.Add(tarOf(f, ms, sumsOf(ms)))
	for _, script := range []string{
		"f session.json\t{\"id\":\"x\"}\nd home\nf home/a\tA\nl home/l\ta\n",
		"f session.json\t{}\nl home/b\t.\nl home/c\tb/b/../x\nl home/d\tc/../../y\n",
		"f session.json\t{}\nd home\nd home/d\nl home/d/up\t../..\nl home/e\td/up/home\nf logs/output.log\tout\n",
		"f session.json\t{}\nl home/etc\t/etc\nh home/h\t/etc/passwd\np home/p\n",
	} {
		f.Add([]byte(scriptMagic + script))
	}
	// One directory for every input of this process, emptied after each,
	// so that an input costs its restore and little else.
	root := f.TempDir()
	canary := filepath.Join(root, "canary")
	if err := os.WriteFile(canary, []byte("host\n"), 0o644); err != nil {
		f.Fatal(err)
	}
	s := &Store{Root: filepath.Join(root, "store")}
	f.Fuzz(func(t *testing.T, b []byte) {
		in := b
		switch {
		case bytes.HasPrefix(b, []byte(scriptMagic)):
			ms := membersOf(b[len(scriptMagic):])
			tb, err := buildTar(ms, sumsOf(ms))
			if err != nil {
				t.Skip(err) // not a tar the writer makes
			}
			in = storedGzip(tb)
		case !bytes.HasPrefix(b, []byte{0x1f, 0x8b}):
			in = storedGzip(b)
		}
		defer os.RemoveAll(s.Root)
		sess, err := s.Restore(bytes.NewReader(in), RestoreOptions{Name: "fz", Limits: RestoreLimits{MaxBytes: 4 << 20, MaxMembers: 2000}})
		entries, _ := os.ReadDir(root)
		for _, e := range entries {
			if e.Name() != "canary" && e.Name() != "store" {
				t.Fatalf("restore wrote beside the store: %s", e.Name())
			}
		}
		if c, _ := os.ReadFile(canary); string(c) != "host\n" {
			t.Fatalf("the canary was overwritten: %q", c)
		}
		if err != nil {
			if sess != nil {
				t.Fatal("a session and an error")
			}
			left, _ := os.ReadDir(filepath.Join(s.Root, "sessions"))
			if len(left) != 0 {
				t.Fatalf("a refused restore (%v) left %s", err, left[0].Name())
			}
			return
		}
		if sess.ID != "fz" {
			t.Fatalf("restored as %q", sess.ID)
		}
		checkRestored(t, s.Dir("fz"), in)
	})
}

// checkRestored checks a restored session against the snapshot it came
// from, read here independently of restore: every entry of the session is
// listed in SHA256SUMS with its kind and checksum (a link by its target),
// but the record and the runtime log that restore rewrites; every listed
// member is there; and every link that leads anywhere leads inside home/.
func checkRestored(t *testing.T, dir string, snap []byte) {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(snap))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var sums []byte
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		if h.Name == sumsName {
			sums, _ = io.ReadAll(tr)
		}
	}
	type want struct {
		kind memberKind
		sum  []byte
	}
	listed := map[string]want{}
	for _, line := range strings.SplitAfter(string(sums), "\n") {
		if line == "" {
			continue
		}
		k, sum, name, err := parseSumsLine(strings.TrimSuffix(line, "\n"))
		if err != nil {
			t.Fatalf("restored from a SHA256SUMS with %q: %v", line, err)
		}
		listed[name] = want{k, sum}
	}
	home, err := filepath.EvalSymlinks(filepath.Join(dir, homeName))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	found := map[string]bool{}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		found[rel] = true
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		w, ok := listed[rel]
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			sum := sha256.Sum256([]byte(target))
			if !ok || w.kind != kindLink || !bytes.Equal(w.sum, sum[:]) {
				t.Errorf("%s: a link to %q, listed as %v", rel, target, w)
			}
			if real, err := filepath.EvalSymlinks(p); err == nil && real != home && !strings.HasPrefix(real, home+string(filepath.Separator)) {
				t.Errorf("%s: a link to %q leads to %s, out of home/", rel, target, real)
			}
		case fi.IsDir():
			if ok && w.kind != kindDir {
				t.Errorf("%s: a directory, listed as %v", rel, w)
			}
		case fi.Mode().IsRegular():
			if rel == recordName || rel == RuntimeLogName {
				return nil // rewritten by restore
			}
			body, _ := os.ReadFile(p)
			sum := sha256.Sum256(body)
			if !ok || w.kind != kindFile || !bytes.Equal(w.sum, sum[:]) {
				t.Errorf("%s: sha256 %x, listed as %v", rel, sum, w)
			}
		default:
			t.Errorf("%s: %v restored", rel, fi.Mode())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name := range listed {
		if !found[name] {
			t.Errorf("%q is listed but was not restored", name)
		}
	}
}

// storedGzip is b in a gzip stream without compression: quick to make.
func storedGzip(b []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.NoCompression)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

// scriptMagic starts a fuzz input that lists members rather than holding
// a tar: one per line, "KIND NAME[\tBODY or TARGET]", KIND f (file), d
// (directory), l (symbolic link), h (hard link), p (fifo). Its SHA256SUMS
// is made right, so that the fuzzer explores names, kinds and links that
// restore must judge by themselves, not checksums it cannot forge.
const scriptMagic = "#members\n"

func membersOf(b []byte) []tmem {
	var ms []tmem
	for _, line := range strings.Split(string(b), "\n") {
		kind, rest, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		name, arg, _ := strings.Cut(rest, "\t")
		switch kind {
		case "f":
			ms = append(ms, file(name, arg))
		case "d":
			ms = append(ms, dir(name))
		case "l":
			ms = append(ms, symlink(name, arg))
		case "h":
			ms = append(ms, tmem{name: name, typ: tar.TypeLink, link: arg})
		case "p":
			ms = append(ms, tmem{name: name, typ: tar.TypeFifo})
		}
	}
	return ms
}
