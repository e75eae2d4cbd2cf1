package recover

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// BranchSchema is the version of the --to-branch report.
const BranchSchema = "sandbox.branch/v1"

// Turn is one prompt of a session: what the user asked, and when.
type Turn struct {
	Session string
	Time    time.Time
	Prompt  string
}

// BranchOptions configure the writing of a session as git history.
type BranchOptions struct {
	// Name is the new branch (refs/heads/Name).
	Name string
	// Force replaces a branch of that name.
	Force bool
	// Turns returns the sessions' prompts once every operation has been
	// read (the parsers find them as they go).
	Turns func() []Turn
	// Sessions describe the sessions, by id (agent and model), once read.
	Sessions func() []manifest.Session
}

// BranchReport is the sandbox.branch/v1 document.
type BranchReport struct {
	Schema string `json:"schema"`
	Branch string `json:"branch"`
	// Repo is the repository written to; Start the commit the branch
	// starts at (full hash), StartBase how it was found.
	Repo      string         `json:"repo"`
	Start     string         `json:"start"`
	StartNote string         `json:"start_note"`
	Replaced  string         `json:"replaced,omitempty"`
	Commits   []BranchCommit `json:"commits"`
	// Left lists the files the branch does not carry, and why.
	Left []BranchLeft `json:"left"`
	// Stale lists the files the branch carries as last known before a
	// change that could not be replayed (a shell command), and why.
	Stale []BranchLeft `json:"stale,omitempty"`
	// Redacted lists the files the branch carries with redaction
	// placeholders (--redacted apply), and why.
	Redacted []BranchLeft       `json:"redacted,omitempty"`
	Warnings []manifest.Warning `json:"warnings"`
}

// BranchCommit is one commit written: one turn that changed files.
type BranchCommit struct {
	Hash    string    `json:"hash"`
	Session string    `json:"session"`
	Subject string    `json:"subject"`
	Author  string    `json:"author"`
	Date    time.Time `json:"date"`
	Files   []string  `json:"files"`
}

// BranchLeft is a file the branch leaves as the start commit has it.
type BranchLeft struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// BranchError is a refusal to write the branch.
type BranchError struct{ Msg, Hint string }

func (e *BranchError) Error() string { return e.Msg }

// ToBranch replays the sources as Recover does and writes the result as
// history on a new branch that starts at the sessions' start commit: one
// commit per turn that changed files. Only objects and the one reference
// are written: the work tree, the index and HEAD are left alone, and a bare
// repository works as well.
func ToBranch(ctx context.Context, sources []Source, fsys FS, opts Options, b BranchOptions) (*BranchReport, error) {
	if !plumbing.NewBranchReferenceName(b.Name).IsBranch() || b.Name == "" || !validRefName(b.Name) {
		return nil, &BranchError{Msg: fmt.Sprintf("--to-branch %q is not a valid branch name", b.Name)}
	}
	headers := headersOf(sources)
	rules, err := hostRules(headers, opts)
	if err != nil {
		return nil, err
	}
	m, err := NewMapper(dedupRules(rules))
	if err != nil {
		return nil, err
	}
	starts, err := findStarts(headers, rules, opts)
	if err != nil {
		return nil, err
	}
	var start *GitBase
	var root string
	for _, h := range headers {
		if r, ok := rootOf(m.Rules(), h.Cwd); ok && starts.ForRoot(r) != nil {
			if start != nil && root != r {
				return nil, &BranchError{Msg: "the sessions worked in several directories: one branch holds one of them", Hint: "give one --session at a time"}
			}
			start, root = starts.ForRoot(r), r
		}
	}
	if start == nil {
		note := "no session recorded a commit or a branch"
		for i := range headers {
			if _, n := starts.Session(i); n != "" {
				note = n
			}
		}
		return nil, &BranchError{Msg: "--to-branch needs the commit the session started from: " + note,
			Hint: "name it with --base git:REV, and the repository with --repo DIR"}
	}
	repo := start.repo.r
	ref := plumbing.NewBranchReferenceName(b.Name)
	rep := &BranchReport{Schema: BranchSchema, Branch: b.Name, Repo: start.repo.Dir, Start: start.Hash.String(), StartNote: start.How,
		Commits: []BranchCommit{}, Left: []BranchLeft{}, Warnings: []manifest.Warning{}}
	if old, err := repo.Reference(ref, false); err == nil {
		if !b.Force {
			return nil, &BranchError{Msg: fmt.Sprintf("branch %s already exists (at %s)", b.Name, old.Hash().String()[:7]), Hint: "choose another name, or add --force to replace it"}
		}
		rep.Replaced = old.Hash().String()
	}

	bases, err := baseMapper(headers, opts, m)
	if err != nil {
		return nil, err
	}
	r, err := Replay(ctx, sources, fsys, Stage{Ends: m, Bases: bases, Starts: starts, IncludeUnknown: opts.IncludeUnknown, History: true})
	if err != nil {
		return nil, err
	}
	files := r.Files
	rep.Warnings = append(rep.Warnings, r.Warnings...)
	var sessions []manifest.Session
	if b.Sessions != nil {
		sessions = b.Sessions()
	}
	var turns []Turn
	if b.Turns != nil {
		turns = b.Turns()
	}
	sort.SliceStable(turns, func(i, j int) bool { return turns[i].Time.Before(turns[j].Time) })

	// Each turn's changes: the content every file had after the turn's
	// last operation on it.
	type change struct {
		content Content
		at      time.Time
	}
	perTurn := map[int]map[string]change{}
	found := map[string]Content{}
	leave := func(p, why string) {
		rep.Left = append(rep.Left, BranchLeft{Path: p, Reason: why})
	}
	for _, f := range filterFiles(files, m, opts.Filter) {
		t, ok := m.Map(f.Path)
		if !ok || f.Outside || t.Root != root {
			leave(strings.TrimPrefix(f.Path, manifest.RelativeRoot+"/"), "outside the destination root")
			continue
		}
		if f.Confidence == Unrecoverable || f.Confidence == UnknownOutcome || f.Confidence == Redacted && opts.Redacted != RedactedApply {
			leave(t.Rel, fmt.Sprintf("%s: %s", f.Confidence, f.Reason))
			continue
		}
		if f.Confidence == Stale {
			rep.Stale = append(rep.Stale, BranchLeft{Path: t.Rel, Reason: f.Reason})
		}
		if f.Confidence == Redacted {
			rep.Redacted = append(rep.Redacted, BranchLeft{Path: t.Rel, Reason: f.Reason})
		}
		if f.Base == BaseTranscript && f.Start.Known {
			// The transcript saw the file otherwise than the commit has it:
			// the work tree was not clean when the session started.
			data, ok := start.Read(t.Rel)
			if ok != f.Start.Exists || (ok && string(data) != f.Start.Text) {
				found[t.Rel] = f.Start
			}
		}
		for _, s := range r.History(f.Path) {
			if !s.Replayed || !s.After.Known {
				continue
			}
			k := turnOf(turns, s.Op.Session, s.Op.Provenance.Time)
			if perTurn[k] == nil {
				perTurn[k] = map[string]change{}
			}
			perTurn[k][t.Rel] = change{content: s.After, at: s.Op.Provenance.Time}
		}
	}
	order := make([]int, 0, len(perTurn))
	for k := range perTurn {
		order = append(order, k)
	}
	sort.Ints(order)

	tb := newTreeBuilder(repo.Storer, start.tree.Hash)
	parent := start.commit
	if len(found) > 0 {
		// First, the work tree as the session found it: changes nobody
		// committed, which the agent did not make.
		c, err := foundCommit(repo.Storer, tb, start, found, sessionByID(sessions, "", headers))
		if err != nil {
			return nil, err
		}
		parent = c
		rep.Commits = append(rep.Commits, BranchCommit{Hash: c.Hash.String(), Session: sessionByID(sessions, "", headers).ID, Subject: "The work tree as the session found it",
			Author: c.Author.Name + " <" + c.Author.Email + ">", Date: c.Author.When, Files: sortedNames(found)})
	}
	for _, k := range order {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var names []string
		var first time.Time
		for rel, c := range perTurn[k] {
			if first.IsZero() || c.at.Before(first) {
				first = c.at
			}
			p := path.Join(start.repo.Prefix, rel)
			if c.content.Exists {
				err = tb.set(p, []byte(c.content.Text))
			} else {
				err = tb.remove(p)
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", rel, err)
			}
			names = append(names, rel)
		}
		sort.Strings(names)
		treeHash, err := tb.write()
		if err != nil {
			return nil, err
		}
		if treeHash == parent.TreeHash {
			continue // the turn's changes undid themselves, or were already there
		}
		turn := Turn{Time: first}
		if k >= 0 {
			turn = turns[k]
		}
		sess := sessionByID(sessions, turn.Session, headers)
		if turn.Time.IsZero() {
			turn.Time = sess.Start
		}
		subject, body := message(turn.Prompt)
		sig := object.Signature{Name: identity(authorName(sess)), Email: identity(string(sess.Agent)) + "@agents.invalid", When: turn.Time}
		if sig.Email == "@agents.invalid" {
			sig.Email = "agent@agents.invalid"
		}
		msg := subject + "\n\n"
		if body != "" {
			msg += body + "\n\n"
		}
		msg += "Session-Id: " + oneLine(sess.ID) + "\n"
		if sess.Transcript != "" {
			msg += "Transcript: " + oneLine(path.Base(strings.ReplaceAll(sess.Transcript, `\`, "/"))) + "\n"
		}
		msg = strings.ReplaceAll(msg, "\x00", "")
		c := &object.Commit{Author: sig, Committer: sig, Message: msg, TreeHash: treeHash, ParentHashes: []plumbing.Hash{parent.Hash}}
		h, err := storeObject(repo.Storer, c)
		if err != nil {
			return nil, err
		}
		c.Hash = h
		parent = c
		rep.Commits = append(rep.Commits, BranchCommit{Hash: h.String(), Session: sess.ID, Subject: subject, Author: sig.Name + " <" + sig.Email + ">", Date: sig.When, Files: names})
	}
	if err := repo.Storer.SetReference(plumbing.NewHashReference(ref, parent.Hash)); err != nil {
		return nil, fmt.Errorf("setting %s: %w", ref, err)
	}
	return rep, nil
}

// foundCommit commits the files as the session first saw them where that
// differs from the start commit.
func foundCommit(st storer.EncodedObjectStorer, tb *treeBuilder, start *GitBase, found map[string]Content, sess manifest.Session) (*object.Commit, error) {
	for _, rel := range sortedNames(found) {
		p := path.Join(start.repo.Prefix, rel)
		var err error
		if c := found[rel]; c.Exists {
			err = tb.set(p, []byte(c.Text))
		} else {
			err = tb.remove(p)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rel, err)
		}
	}
	tree, err := tb.write()
	if err != nil {
		return nil, err
	}
	when := sess.Start
	if when.IsZero() {
		when = start.commit.Committer.When
	}
	sig := object.Signature{Name: "sandbox", Email: "sandbox@agents.invalid", When: when}
	msg := "The work tree as the session found it\n\n" +
		"Changes nobody had committed, in files the session then changed: the\n" +
		"transcript shows them before the agent's first change, so the agent did\n" +
		"not make them.\n\n" +
		"Session-Id: " + oneLine(sess.ID) + "\n"
	c := &object.Commit{Author: sig, Committer: sig, Message: msg, TreeHash: tree, ParentHashes: []plumbing.Hash{start.Hash}}
	h, err := storeObject(st, c)
	if err != nil {
		return nil, err
	}
	c.Hash = h
	return c, nil
}

func sortedNames(m map[string]Content) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// validRefName refuses what git refuses in a branch name (git
// check-ref-format), so that a name never escapes refs/heads.
func validRefName(n string) bool {
	if n == "" || n == "@" || strings.HasPrefix(n, "-") || strings.HasPrefix(n, "/") || strings.HasSuffix(n, "/") ||
		strings.HasSuffix(n, ".") || strings.HasSuffix(n, ".lock") || strings.Contains(n, "..") || strings.Contains(n, "//") ||
		strings.Contains(n, "@{") {
		return false
	}
	for _, c := range n {
		if c < 0x20 || c == 0x7f || strings.ContainsRune(" ~^:?*[\\", c) {
			return false
		}
	}
	for _, part := range strings.Split(n, "/") {
		if strings.HasPrefix(part, ".") {
			return false
		}
	}
	return true
}

// turnOf returns the index of the last turn of session at or before t, or
// -1 when the operation came before any prompt.
func turnOf(turns []Turn, session string, t time.Time) int {
	k := -1
	for i, tu := range turns {
		if tu.Time.After(t) {
			break
		}
		if tu.Session == session {
			k = i
		}
	}
	return k
}

func sessionByID(sessions []manifest.Session, id string, headers []manifest.Session) manifest.Session {
	for _, s := range sessions {
		if s.ID == id {
			return s
		}
	}
	for _, s := range headers {
		if s.ID == id {
			return s
		}
	}
	if len(sessions) > 0 {
		return sessions[0]
	}
	if len(headers) > 0 {
		return headers[0]
	}
	return manifest.Session{}
}

// identity makes text from a transcript (a model's name) safe in a commit's
// author line: no line break to add a header of its own, no angle bracket
// to end the name early, no control byte.
func identity(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '<' || r == '>' {
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, ""))
	return strings.TrimSpace(s)
}

// authorName is the agent and its model.
func authorName(s manifest.Session) string {
	name := string(s.Agent)
	if name == "" {
		name = "agent"
	}
	if m, _, _ := strings.Cut(s.Model, ", "); m != "" {
		name += " (" + m + ")" // the first model the session used
	}
	return name
}

// message makes a commit message of a prompt: its first line (cut to 72
// bytes) as the subject, the rest as the body.
func message(prompt string) (subject, body string) {
	prompt = strings.TrimSpace(strings.ToValidUTF8(prompt, "\uFFFD"))
	if prompt == "" {
		return "Changes made before the first prompt", ""
	}
	subject, body, _ = strings.Cut(prompt, "\n")
	subject = strings.Join(strings.Fields(subject), " ")
	if len(subject) > 72 {
		cut := 71
		for cut > 0 && (subject[cut]&0xC0) == 0x80 {
			cut--
		}
		body = strings.TrimSpace(prompt)
		subject = subject[:cut] + "…"
	}
	return subject, strings.TrimSpace(body)
}

// encoder is an object that encodes itself (a commit, a tree).
type encoder interface {
	Encode(plumbing.EncodedObject) error
}

func storeObject(st storer.EncodedObjectStorer, e encoder) (plumbing.Hash, error) {
	obj := st.NewEncodedObject()
	if err := e.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return st.SetEncodedObject(obj)
}

func storeBlob(st storer.EncodedObjectStorer, data []byte) (plumbing.Hash, error) {
	obj := st.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	obj.SetSize(int64(len(data)))
	w, err := obj.Writer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, err := w.Write(data); err != nil {
		w.Close()
		return plumbing.ZeroHash, err
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	return st.SetEncodedObject(obj)
}

// treeBuilder edits a tree one path at a time and writes only the trees
// on the paths that changed: a directory is read from its tree object the
// first time a path goes into it, and written again only if it changed.
type treeBuilder struct {
	st   storer.EncodedObjectStorer
	root *tnode
}

type tnode struct {
	mode filemode.FileMode
	// hash is the blob, or the tree as last written (zero: changed since).
	hash plumbing.Hash
	// kids are a directory's entries, once read.
	kids map[string]*tnode
}

func newTreeBuilder(st storer.EncodedObjectStorer, root plumbing.Hash) *treeBuilder {
	return &treeBuilder{st: st, root: &tnode{mode: filemode.Dir, hash: root}}
}

// open reads a directory's entries from its tree object.
func (b *treeBuilder) open(n *tnode) error {
	if n.kids != nil {
		return nil
	}
	n.kids = map[string]*tnode{}
	if n.hash.IsZero() {
		return nil
	}
	t, err := object.GetTree(b.st, n.hash)
	if err != nil {
		return err
	}
	for _, e := range t.Entries {
		n.kids[e.Name] = &tnode{mode: e.Mode, hash: e.Hash}
	}
	return nil
}

// set writes data as the regular file at p (keeping an executable bit the
// start commit gave it).
func (b *treeBuilder) set(p string, data []byte) error {
	parts := strings.Split(p, "/")
	n := b.root
	for _, dir := range parts[:len(parts)-1] {
		if err := b.open(n); err != nil {
			return err
		}
		n.hash = plumbing.ZeroHash
		k, ok := n.kids[dir]
		if !ok || k.mode != filemode.Dir {
			// A new directory (or one replacing a file the session removed
			// without the replay knowing): made empty.
			k = &tnode{mode: filemode.Dir, kids: map[string]*tnode{}}
			n.kids[dir] = k
		}
		n = k
	}
	if err := b.open(n); err != nil {
		return err
	}
	n.hash = plumbing.ZeroHash
	h, err := storeBlob(b.st, data)
	if err != nil {
		return err
	}
	name := parts[len(parts)-1]
	mode := filemode.Regular
	if old, ok := n.kids[name]; ok && old.mode == filemode.Executable {
		mode = filemode.Executable
	}
	n.kids[name] = &tnode{mode: mode, hash: h}
	return nil
}

// remove deletes the file at p, and the directories it leaves empty.
func (b *treeBuilder) remove(p string) error {
	parts := strings.Split(p, "/")
	chain := []*tnode{b.root}
	n := b.root
	for _, dir := range parts[:len(parts)-1] {
		if err := b.open(n); err != nil {
			return err
		}
		k, ok := n.kids[dir]
		if !ok || k.mode != filemode.Dir {
			return nil // not there: nothing to remove
		}
		n = k
		chain = append(chain, n)
	}
	if err := b.open(n); err != nil {
		return err
	}
	name := parts[len(parts)-1]
	if _, ok := n.kids[name]; !ok {
		return nil
	}
	for _, c := range chain {
		c.hash = plumbing.ZeroHash
	}
	delete(n.kids, name)
	for i := len(chain) - 1; i > 0 && len(chain[i].kids) == 0; i-- {
		delete(chain[i-1].kids, parts[i-1])
	}
	return nil
}

// write stores every changed tree and returns the root's hash.
func (b *treeBuilder) write() (plumbing.Hash, error) { return b.writeNode(b.root) }

func (b *treeBuilder) writeNode(n *tnode) (plumbing.Hash, error) {
	if !n.hash.IsZero() {
		return n.hash, nil
	}
	t := &object.Tree{}
	for name, k := range n.kids {
		h := k.hash
		if k.mode == filemode.Dir {
			var err error
			if h, err = b.writeNode(k); err != nil {
				return plumbing.ZeroHash, err
			}
		}
		t.Entries = append(t.Entries, object.TreeEntry{Name: name, Mode: k.mode, Hash: h})
	}
	sort.Sort(object.TreeEntrySorter(t.Entries))
	h, err := storeObject(b.st, t)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	n.hash = h
	return h, nil
}
