package harness

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// What a snapshot may hold, shared by Snapshot (which leaves out what
// restore would refuse) and Restore (which refuses it).

// maxName is the longest member name or link target a snapshot may hold:
// PATH_MAX less its NUL.
const maxName = 4095

// checkName says what is wrong with a member's name, or "": it must be a
// clean relative slash path that stays inside the session directory.
func checkName(name string) string {
	switch {
	case name == "" || name == ".":
		return "an empty name"
	case len(name) > maxName:
		return fmt.Sprintf("a name longer than %d bytes", maxName)
	case path.IsAbs(name):
		return "an absolute name, which leaves the session directory"
	case strings.ContainsRune(name, 0):
		return "a name holding a NUL byte"
	}
	for _, c := range strings.Split(name, "/") {
		if c == ".." {
			return "a name with a .. step, which leaves the session directory"
		}
	}
	if path.Clean(name) != name {
		return "a name that is not a clean path (. steps, doubled or trailing slashes)"
	}
	return ""
}

// placement says what is wrong with a member of kind at name, or "": a
// session directory holds session.json, manifest.json, logs/ (regular files
// and directories) and home/, the workspace, which alone may hold symbolic
// links.
func placement(name string, kind memberKind) string {
	top, below, _ := strings.Cut(name, "/")
	if kind == kindLink && (top != homeName || below == "") {
		return "a symbolic link outside home/, and only the workspace (home/) may hold links"
	}
	switch top {
	case recordName, manifestName:
		if below != "" || kind != kindFile {
			return "must be a regular file"
		}
	case homeName, "logs":
		if below == "" && kind != kindDir {
			return "must be a directory"
		}
	default:
		return "is not part of a session (a snapshot holds session.json, manifest.json, home/ and logs/)"
	}
	return ""
}

// maxLinkSteps bounds the work of following a snapshot's links (steps of
// every target, hops through other links included): a forged snapshot
// must not make the check itself a bomb.
const maxLinkSteps = 1 << 24

var (
	errLinkAbsolute = errors.New("an absolute target")
	errLinkEscapes  = errors.New("a target that leads out of the session directory")
	errLinkLoop     = errors.New("a target that goes through more than 40 links")
	errLinkBudget   = errors.New("too many or too intricate links to check")
)

// linkSet is the symbolic links of a snapshot (name -> target), followed
// as the kernel would follow them once unpacked.
type linkSet struct {
	links map[string]string
	steps int
}

// check says where the link at name leads: nil when it stays inside home/,
// else why not. It follows the target step by step from the link's
// directory, through the snapshot's own links, so that a chain of links
// each harmless alone (home/b -> ., home/a -> b/b/b/../../../x) is judged by
// where it really ends. A step through a name that is not a link is taken
// as a directory: if it is not one, the kernel stops there, inside.
func (l *linkSet) check(name string) error {
	hops := 0
	end, err := l.follow(path.Dir(name), l.links[name], &hops)
	if err != nil {
		return err
	}
	if end != homeName && !strings.HasPrefix(end, homeName+"/") {
		return fmt.Errorf("a target that leads to %s, out of home/", orDot(end))
	}
	return nil
}

func orDot(p string) string {
	if p == "" {
		return "the session directory itself"
	}
	return p
}

// follow resolves target from dir ("" is the session directory) and
// returns the path reached.
func (l *linkSet) follow(dir, target string, hops *int) (string, error) {
	if path.IsAbs(target) {
		return "", errLinkAbsolute
	}
	cur := dir
	if cur == "." {
		cur = ""
	}
	for _, c := range strings.Split(target, "/") {
		if l.steps++; l.steps > maxLinkSteps {
			return "", errLinkBudget
		}
		switch c {
		case "", ".":
			continue
		case "..":
			if cur == "" {
				return "", errLinkEscapes
			}
			if i := strings.LastIndexByte(cur, '/'); i >= 0 {
				cur = cur[:i]
			} else {
				cur = ""
			}
			continue
		}
		parent := cur
		if cur == "" {
			cur = c
		} else {
			cur += "/" + c
		}
		if t, ok := l.links[cur]; ok {
			if *hops++; *hops > 40 {
				return "", errLinkLoop
			}
			next, err := l.follow(parent, t, hops)
			if err != nil {
				return "", err
			}
			cur = next
		}
	}
	return cur, nil
}
