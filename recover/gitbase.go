package recover

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// Repo is a git repository that may hold a session's start: its object
// database, and where the destination lies inside its work tree.
type Repo struct {
	// Dir is the directory it was opened from (for messages).
	Dir string
	// Prefix is the destination's directory inside the work tree, in
	// slash form ("" for the root, and for a bare repository).
	Prefix string
	r      *git.Repository
}

// openRepo opens the git repository that holds dir: dir itself (a bare
// repository, or a work tree with .git), or the nearest parent that is one.
// A dir that does not exist yet is looked for from its nearest existing
// parent. It returns nil, nil when there is no repository.
func openRepo(dir string) (*Repo, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	at := abs
	for {
		if st, err := os.Stat(at); err == nil && st.IsDir() {
			break
		}
		parent := filepath.Dir(at)
		if parent == at {
			return nil, nil
		}
		at = parent
	}
	// The nearest directory that is a work tree (has .git) or a bare
	// repository (HEAD, objects/ and refs/ of its own).
	top := at
	for !isRepoDir(top) {
		parent := filepath.Dir(top)
		if parent == top {
			return nil, nil
		}
		top = parent
	}
	r, err := git.PlainOpenWithOptions(top, &git.PlainOpenOptions{EnableDotGitCommonDir: true})
	if errors.Is(err, git.ErrRepositoryNotExists) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("git repository at %s: %w", top, err)
	}
	repo := &Repo{Dir: dir, r: r}
	if wt, err := r.Worktree(); err == nil {
		root := wt.Filesystem.Root()
		if real, err := filepath.EvalSymlinks(root); err == nil {
			root = real
		}
		if real, err := filepath.EvalSymlinks(at); err == nil {
			rest, _ := filepath.Rel(at, abs)
			abs = filepath.Join(real, rest)
		}
		if rel, err := filepath.Rel(root, abs); err == nil && filepath.IsLocal(rel) {
			repo.Prefix = filepath.ToSlash(rel)
		}
	}
	return repo, nil
}

// isRepoDir reports whether dir holds a repository: a .git (directory, or
// the file of a linked work tree), or the layout of a bare one.
func isRepoDir(dir string) bool {
	if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
		return true
	}
	for _, p := range []string{"HEAD", "objects", "refs"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			return false
		}
	}
	return true
}

// Git returns the go-git repository.
func (r *Repo) Git() *git.Repository { return r.r }

// GitBase is a commit whose tree holds the files as a session started.
type GitBase struct {
	Hash plumbing.Hash
	// Grade is Exact for the commit the transcript recorded, Git for one
	// found by branch and time or named by --base git:REV.
	Grade Confidence
	// How says how the commit was found, for the report.
	How    string
	repo   *Repo
	commit *object.Commit
	tree   *object.Tree
}

// Name is the base's name in reports: git:<short hash>.
func (g *GitBase) Name() string { return "git:" + g.Hash.String()[:7] }

// Commit returns the commit.
func (g *GitBase) Commit() *object.Commit { return g.commit }

// Repo returns the repository the commit is in.
func (g *GitBase) Repo() *Repo { return g.repo }

// maxBlob bounds what is read of one blob as a base: larger files are
// left to the other bases rather than held in memory.
const maxBlob = 256 << 20

// Read returns the content of rel (relative to the destination) at the
// commit. ok is false when the commit has no regular file there (absent,
// a directory, a symbolic link, a submodule, too large): another base
// must say.
func (g *GitBase) Read(rel string) (content []byte, ok bool) {
	p := path.Join(g.repo.Prefix, rel)
	f, err := g.tree.File(p)
	if err != nil || !f.Mode.IsFile() || f.Size > maxBlob {
		return nil, false
	}
	rd, err := f.Reader()
	if err != nil {
		return nil, false
	}
	defer rd.Close()
	var b strings.Builder
	b.Grow(int(f.Size))
	buf := bufio.NewReader(rd)
	if _, err := buf.WriteTo(&b); err != nil {
		return nil, false
	}
	return []byte(b.String()), true
}

// commitBase makes a base of a commit.
func (r *Repo) commitBase(h plumbing.Hash, grade Confidence, how string) (*GitBase, error) {
	c, err := r.r.CommitObject(h)
	if err != nil {
		return nil, err
	}
	t, err := c.Tree()
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", h.String()[:7], err)
	}
	return &GitBase{Hash: h, Grade: grade, How: how, repo: r, commit: c, tree: t}, nil
}

// Resolve names a revision as git does (a hash, a branch, a tag, HEAD~2)
// and returns it as a base graded git: the user says it is the start.
func (r *Repo) Resolve(rev string) (*GitBase, error) {
	h, err := r.r.ResolveRevision(plumbing.Revision(rev))
	if err != nil {
		return nil, fmt.Errorf("--base git:%s: %w in %s", rev, err, r.Dir)
	}
	return r.commitBase(*h, Git, "--base git:"+rev)
}

// StartBase finds the commit a session started from: the one it recorded
// (Codex), else the tip its branch had at the session's start (Claude
// Code), graded below a recorded one. note says what was found or why
// nothing was; base is nil when nothing was.
func (r *Repo) StartBase(s manifest.Session) (base *GitBase, note string) {
	if s.GitCommit != "" {
		if !plumbing.IsHash(s.GitCommit) {
			return nil, fmt.Sprintf("the recorded start commit %q is not a commit hash", s.GitCommit)
		}
		h := plumbing.NewHash(s.GitCommit)
		b, err := r.commitBase(h, Exact, "the recorded start commit")
		if err != nil {
			return nil, fmt.Sprintf("the recorded start commit %s is not in the repository at %s: files start from the other bases", s.GitCommit[:min(12, len(s.GitCommit))], r.Dir)
		}
		return b, b.How
	}
	if s.GitBranch == "" || s.Start.IsZero() {
		return nil, ""
	}
	if s.GitBranch == "HEAD" {
		// Claude Code's name for a detached HEAD: no branch to follow.
		return nil, "the session ran on a detached HEAD: no branch to find its start commit by (--base git:REV names it)"
	}
	h, how, err := r.TipAt(s.GitBranch, s.Start)
	if err != nil {
		return nil, fmt.Sprintf("branch %s at %s: %v", s.GitBranch, s.Start.UTC().Format(time.RFC3339), err)
	}
	b, err := r.commitBase(h, Git, how)
	if err != nil {
		return nil, err.Error()
	}
	return b, how
}

// maxWalk bounds the first-parent walk of a branch's history.
const maxWalk = 1 << 20

// TipAt returns the commit a branch pointed at, at time t: from the
// branch's reflog when it covers t, else the newest commit of its
// first-parent history committed at or before t.
func (r *Repo) TipAt(branch string, t time.Time) (plumbing.Hash, string, error) {
	ref := plumbing.NewBranchReferenceName(branch)
	when := t.UTC().Format(time.RFC3339)
	if h, ok := r.reflogAt(ref, t); ok {
		return h, fmt.Sprintf("the tip of %s at %s (reflog)", branch, when), nil
	}
	tip, err := r.r.Reference(ref, true)
	if err != nil {
		tip, err = r.r.Reference(plumbing.NewRemoteReferenceName("origin", branch), true)
	}
	if err != nil {
		return plumbing.ZeroHash, "", fmt.Errorf("no branch %s in %s", branch, r.Dir)
	}
	c, err := r.r.CommitObject(tip.Hash())
	for n := 0; err == nil && n < maxWalk; n++ {
		if !c.Committer.When.After(t) {
			return c.Hash, fmt.Sprintf("the tip of %s at %s (first-parent history by committer date)", branch, when), nil
		}
		if c.NumParents() == 0 {
			break
		}
		c, err = c.Parent(0)
	}
	if err != nil {
		return plumbing.ZeroHash, "", err
	}
	return plumbing.ZeroHash, "", fmt.Errorf("no commit of %s is older than the session", branch)
}

// reflogAt reads a branch's reflog (logs/refs/heads/NAME in the git
// directory: "old new name <email> unix-time zone\tmessage" per line) and
// returns where it pointed at t, if the log goes back that far. go-git
// does not read reflogs; the format is one line per move.
func (r *Repo) reflogAt(ref plumbing.ReferenceName, t time.Time) (plumbing.Hash, bool) {
	st, ok := r.r.Storer.(*filesystem.Storage)
	if !ok {
		return plumbing.ZeroHash, false
	}
	f, err := st.Filesystem().Open(path.Join("logs", ref.String()))
	if err != nil {
		return plumbing.ZeroHash, false
	}
	defer f.Close()
	var found plumbing.Hash
	ok = false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "\t")
		fields := strings.Fields(line)
		if len(fields) < 4 || !plumbing.IsHash(fields[1]) {
			continue
		}
		sec, err := strconv.ParseInt(fields[len(fields)-2], 10, 64)
		if err != nil {
			continue
		}
		if time.Unix(sec, 0).After(t) {
			break // the log is in time order
		}
		found, ok = plumbing.NewHash(fields[1]), true
	}
	if found.IsZero() {
		return plumbing.ZeroHash, false // the branch was deleted, or not yet made
	}
	return found, ok
}
