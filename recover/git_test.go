package recover

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
)

// readTree flattens a tree into path -> content (and checks that every
// tree is sorted as git sorts it and that no directory is empty).
func readTree(t testing.TB, st *memory.Storage, h plumbing.Hash, prefix string, out map[string]string) {
	t.Helper()
	tree, err := object.GetTree(st, h)
	if err != nil {
		t.Fatal(err)
	}
	if len(tree.Entries) == 0 && prefix != "" {
		t.Fatalf("%s: an empty directory was written", prefix)
	}
	if !sort.IsSorted(object.TreeEntrySorter(tree.Entries)) {
		t.Fatalf("%s: entries out of git's order", prefix)
	}
	for _, e := range tree.Entries {
		p := prefix + e.Name
		if e.Mode == filemode.Dir {
			readTree(t, st, e.Hash, p+"/", out)
			continue
		}
		b, err := object.GetBlob(st, e.Hash)
		if err != nil {
			t.Fatal(err)
		}
		r, _ := b.Reader()
		var sb strings.Builder
		buf := make([]byte, 4096)
		for {
			n, err := r.Read(buf)
			sb.Write(buf[:n])
			if err != nil {
				break
			}
		}
		r.Close()
		out[p] = sb.String()
	}
}

// FuzzTreeBuilder checks the tree builder against a map: after any
// sequence of sets and removes over a small set of nested paths, the tree
// written holds exactly the map's files, sorted as git sorts them, with no
// empty directory; writing again without a change gives the same hash, and
// the same files always give the same hash however they were reached.
func FuzzTreeBuilder(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7})
	f.Add([]byte{0, 0x80, 1, 0x81, 2, 3})
	f.Add([]byte{7, 6, 5, 4, 0x87, 0x86, 0x85, 0x84, 3})
	paths := []string{"a", "b/c", "b/d", "b/e/f", "b.txt", "b-x/y", "c/a/b/c", "e"}
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 256 {
			return
		}
		st := memory.NewStorage()
		b := newTreeBuilder(st, plumbing.ZeroHash)
		model := map[string]string{}
		for i, op := range ops {
			p := paths[int(op&0x7f)%len(paths)]
			if op&0x80 != 0 {
				if err := b.remove(p); err != nil {
					t.Fatal(err)
				}
				delete(model, p)
				continue
			}
			// A path under a file of the model, or a file where a directory
			// is: the builder replaces; so does the model.
			for q := range model {
				if strings.HasPrefix(p, q+"/") || strings.HasPrefix(q, p+"/") {
					delete(model, q)
				}
			}
			content := fmt.Sprintf("%s %d\n", p, i)
			if err := b.set(p, []byte(content)); err != nil {
				t.Fatal(err)
			}
			model[p] = content
			if i%3 == 0 {
				if _, err := b.write(); err != nil {
					t.Fatal(err)
				}
			}
		}
		h, err := b.write()
		if err != nil {
			t.Fatal(err)
		}
		again, _ := b.write()
		if again != h {
			t.Fatalf("a second write without change gave %s, then %s", h, again)
		}
		got := map[string]string{}
		readTree(t, st, h, "", got)
		if fmt.Sprint(got) != fmt.Sprint(model) {
			t.Fatalf("tree %v, want %v", got, model)
		}
		// The same files set in one go give the same tree.
		fresh := newTreeBuilder(st, plumbing.ZeroHash)
		for p, c := range model {
			if err := fresh.set(p, []byte(c)); err != nil {
				t.Fatal(err)
			}
		}
		if h2, _ := fresh.write(); h2 != h {
			t.Fatalf("the same files give tree %s and %s", h, h2)
		}
		// Editing on top of a written tree reads it back lazily: removing
		// every file from a builder started at h gives the empty tree.
		onTop := newTreeBuilder(st, h)
		for p := range model {
			if err := onTop.remove(p); err != nil {
				t.Fatal(err)
			}
		}
		empty, _ := onTop.write()
		left := map[string]string{}
		readTree(t, st, empty, "", left)
		if len(left) != 0 {
			t.Fatalf("files left after removing all: %v", left)
		}
	})
}

// FuzzMessage checks the commit message made of a prompt: a one-line
// subject of valid UTF-8, at most 72 bytes and an ellipsis, and nothing of
// the prompt lost (a cut subject's prompt is the body whole).
func FuzzMessage(f *testing.F) {
	f.Add("Make the service fast")
	f.Add("Rename the notes\nand add a new file")
	f.Add(strings.Repeat("é", 60))
	f.Add("")
	f.Add("\xff\xfe bad bytes")
	f.Fuzz(func(t *testing.T, prompt string) {
		subject, body := message(prompt)
		if strings.ContainsAny(subject, "\n\r") || !utf8.ValidString(subject) || subject == "" {
			t.Fatalf("subject %q", subject)
		}
		if len(subject) > 72+len("…") {
			t.Fatalf("subject of %d bytes", len(subject))
		}
		if strings.HasSuffix(subject, "…") && !strings.HasSuffix(prompt, "…") && body == "" {
			t.Fatalf("a cut subject with no body: %q", prompt)
		}
	})
}

// testRepo makes a repository on disk with go-git: one commit per entry
// of trees, at the times given, on main.
func testRepo(t testing.TB, dir string, trees []map[string]string, times []time.Time) []plumbing.Hash {
	t.Helper()
	r, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{InitOptions: git.InitOptions{DefaultBranch: plumbing.Main}})
	if err != nil {
		t.Fatal(err)
	}
	wt, err := r.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	var out []plumbing.Hash
	for i, tree := range trees {
		for name, content := range tree {
			p := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := wt.AddGlob("."); err != nil {
			t.Fatal(err)
		}
		sig := &object.Signature{Name: "dev", Email: "dev@example.com", When: times[i]}
		h, err := wt.Commit(fmt.Sprintf("commit %d", i), &git.CommitOptions{Author: sig, Committer: sig})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, h)
	}
	return out
}

// TestTipAt finds a branch's tip at a time from the reflog, and from the
// first-parent history when there is none; a time before every commit
// finds nothing.
func TestTipAt(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)
	hs := testRepo(t, dir, []map[string]string{{"a": "1\n"}, {"a": "2\n"}, {"a": "3\n"}}, []time.Time{t0, t0.Add(2 * time.Hour), t0.Add(4 * time.Hour)})
	r, err := openRepo(filepath.Join(dir, "sub", "dir"))
	if err != nil || r == nil {
		t.Fatalf("OpenRepo: %v, %v", r, err)
	}
	if r.Prefix != "sub/dir" {
		t.Errorf("prefix %q, want sub/dir", r.Prefix)
	}
	// go-git writes no reflog: the history answers.
	h, how, err := r.TipAt("main", t0.Add(3*time.Hour))
	if err != nil || h != hs[1] || !strings.Contains(how, "first-parent history") {
		t.Errorf("history: %s %q %v, want %s", h, how, err, hs[1])
	}
	// A reflog that says the branch was reset to the first commit at 5:00.
	log := fmt.Sprintf("%s %s dev <dev@example.com> %d +0000\tcommit\n%s %s dev <dev@example.com> %d +0000\treset: moving to HEAD~2\n",
		hs[1], hs[2], t0.Add(4*time.Hour).Unix(), hs[2], hs[0], t0.Add(5*time.Hour).Unix())
	if err := os.MkdirAll(filepath.Join(dir, ".git", "logs", "refs", "heads"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".git", "logs", "refs", "heads", "main"), []byte("garbage line\n"+log), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		at   time.Time
		want plumbing.Hash
		how  string
	}{
		{t0.Add(6 * time.Hour), hs[0], "reflog"},
		{t0.Add(4*time.Hour + time.Minute), hs[2], "reflog"},
		{t0.Add(3 * time.Hour), hs[1], "first-parent"}, // before the log begins
	} {
		h, how, err := r.TipAt("main", c.at)
		if err != nil || h != c.want || !strings.Contains(how, c.how) {
			t.Errorf("at %s: %s %q %v, want %s (%s)", c.at, h, how, err, c.want, c.how)
		}
	}
	if _, _, err := r.TipAt("main", t0.Add(-time.Hour)); err == nil {
		t.Errorf("a time before every commit found one")
	}
	if _, _, err := r.TipAt("nope", t0); err == nil {
		t.Errorf("a missing branch found a commit")
	}
	// StartBase: a recorded commit is exact, a branch and time git, a
	// missing commit says so.
	if g, _ := r.StartBase(manifest.Session{GitCommit: hs[1].String()}); g == nil || g.Grade != Exact {
		t.Errorf("recorded commit: %v", g)
	}
	if g, note := r.StartBase(manifest.Session{GitCommit: strings.Repeat("1", 40)}); g != nil || !strings.Contains(note, "not in the repository") {
		t.Errorf("missing commit: %v %q", g, note)
	}
	if g, note := r.StartBase(manifest.Session{GitCommit: "../../etc"}); g != nil || !strings.Contains(note, "not a commit hash") {
		t.Errorf("a hostile commit: %v %q", g, note)
	}
	if g, _ := r.StartBase(manifest.Session{GitBranch: "main", Start: t0.Add(6 * time.Hour)}); g == nil || g.Grade != Git || g.Hash != hs[0] {
		t.Errorf("branch and time: %v", g)
	}
	if g, note := r.StartBase(manifest.Session{GitBranch: "HEAD", Start: t0.Add(6 * time.Hour)}); g != nil || !strings.Contains(note, "detached HEAD") {
		t.Errorf("detached HEAD: %v %q", g, note)
	}
}

// BenchmarkGitBase measures the git base lookup: opening the repository,
// finding the recorded start commit, and reading 100 files of a
// 2,000-file tree from it, as a recovery does.
func BenchmarkGitBase(b *testing.B) {
	dir := b.TempDir()
	tree := map[string]string{}
	total := 0
	for i := 0; i < 2000; i++ {
		c := strings.Repeat(fmt.Sprintf("line %d of a file in the start commit\n", i), 40)
		tree[fmt.Sprintf("pkg%d/sub%d/file%d.go", i%20, i%7, i)] = c
	}
	hs := testRepo(b, dir, []map[string]string{tree}, []time.Time{time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)})
	var names []string
	for n := range tree {
		names = append(names, n)
	}
	sort.Strings(names)
	names = names[:100]
	for _, n := range names {
		total += len(tree[n])
	}
	s := manifest.Session{GitCommit: hs[0].String()}
	b.ReportAllocs()
	b.SetBytes(int64(total))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := openRepo(dir)
		if err != nil {
			b.Fatal(err)
		}
		g, note := r.StartBase(s)
		if g == nil {
			b.Fatal(note)
		}
		for _, n := range names {
			if _, ok := g.Read(n); !ok {
				b.Fatalf("%s not read", n)
			}
		}
	}
}

// TestToBranchHostile writes a branch for a session whose transcript
// holds hostile text where the commit takes it: a model name that would
// add a header line, a session id with a newline, a prompt with NUL bytes.
// The commit stays one author, one parent; a branch name that would leave
// refs/heads is refused.
func TestToBranchHostile(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)
	hs := testRepo(t, dir, []map[string]string{{"a.txt": "one\n"}}, []time.Time{t0})
	content := "two\n"
	sess := manifest.Session{ID: "s1\nSigned-off-by: nobody", Agent: manifest.AgentCodex, Model: "gpt\nparent 0000000000000000000000000000000000000000 <x>",
		Cwd: "/w", GitCommit: hs[0].String(), Start: t0.Add(time.Hour)}
	ops := []manifest.Op{{Kind: manifest.KindWrite, Tool: "Write", Session: sess.ID, Paths: []string{"/w/a.txt"}, Content: &content,
		Outcome: manifest.OutcomeApplied, Provenance: manifest.Provenance{Transcript: "t\n.jsonl", Line: 2, Time: t0.Add(2 * time.Hour), CallID: "c1"}}}
	src := func() []Source { return []Source{&SliceSource{S: sess, Ops: ops}} }
	turns := func() []Turn { return []Turn{{Session: sess.ID, Time: t0.Add(time.Hour), Prompt: "do \x00 it"}} }
	opts := Options{JournalKey: testKey, Dest: dir}
	for _, bad := range []string{"../../HEAD", "a..b", "-x", "x.lock", "a b", ""} {
		if _, err := ToBranch(context.Background(), src(), NewOSFS(), opts, BranchOptions{Name: bad, Turns: turns}); err == nil {
			t.Errorf("branch name %q accepted", bad)
		}
	}
	rep, err := ToBranch(context.Background(), src(), NewOSFS(), opts, BranchOptions{Name: "agent/x", Turns: turns, Sessions: func() []manifest.Session { return []manifest.Session{sess} }})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Commits) != 1 {
		t.Fatalf("%d commits", len(rep.Commits))
	}
	r, err := git.PlainOpen(dir)
	if err != nil {
		t.Fatal(err)
	}
	c, err := r.CommitObject(plumbing.NewHash(rep.Commits[0].Hash))
	if err != nil {
		t.Fatal(err)
	}
	if c.NumParents() != 1 || c.ParentHashes[0] != hs[0] || strings.ContainsAny(c.Author.Name, "\n<>") {
		t.Errorf("commit: parents %v, author %q", c.ParentHashes, c.Author.Name)
	}
	if strings.Contains(c.Message, "\x00") || strings.Count(c.Message, "Signed-off-by") != 1 || strings.Contains(c.Message, "\nSigned-off-by") {
		t.Errorf("message %q", c.Message)
	}
	f, err := c.File("a.txt")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := f.Contents(); got != content {
		t.Errorf("a.txt on the branch: %q", got)
	}
	head, _ := r.Head()
	if head.Hash() != hs[0] {
		t.Errorf("HEAD moved to %s", head.Hash())
	}
	// A second time: refused, and the branch is where it was.
	if _, err := ToBranch(context.Background(), src(), NewOSFS(), opts, BranchOptions{Name: "agent/x", Turns: turns}); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("existing branch: %v", err)
	}
}

// TestToBranchLostLine holds --to-branch to the grade recover gives: a
// transcript line that could not be read and names a file the branch
// carries makes that file stale on the branch's report, as it is in
// recover's (one replay for both).
func TestToBranchLostLine(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)
	hs := testRepo(t, dir, []map[string]string{{"a.txt": "one\n"}}, []time.Time{t0})
	content := "two\n"
	sess := manifest.Session{ID: "s1", Agent: manifest.AgentCodex, Cwd: "/w", GitCommit: hs[0].String(), Start: t0.Add(time.Hour),
		Warnings: []manifest.Warning{{File: "t.jsonl", Line: 9, Message: "truncated last line", Names: []string{"a.txt"}}}}
	ops := []manifest.Op{{Kind: manifest.KindWrite, Tool: "Write", Session: sess.ID, Paths: []string{"/w/a.txt"}, Content: &content,
		Outcome: manifest.OutcomeApplied, Provenance: manifest.Provenance{Transcript: "t.jsonl", Line: 2, Time: t0.Add(2 * time.Hour), CallID: "c1"}}}
	opts := Options{JournalKey: testKey, Dest: dir}
	rep, err := ToBranch(context.Background(), []Source{&SliceSource{S: sess, Ops: ops}}, NewOSFS(), opts, BranchOptions{Name: "agent/lost"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Stale) != 1 || rep.Stale[0].Path != "a.txt" || !strings.Contains(rep.Stale[0].Reason, "t.jsonl:9 could not be read") {
		t.Errorf("stale: %+v", rep.Stale)
	}
	res, err := Recover(context.Background(), []Source{&SliceSource{S: sess, Ops: ops}}, NewOSFS(), Options{JournalKey: testKey, Dest: dir, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Files) != 1 || res.Files[0].Confidence != Stale {
		t.Errorf("recover grades a.txt %v", res.Files[0].Confidence)
	}
}
