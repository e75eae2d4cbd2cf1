package recover

import (
	"path"
	"strings"

	"github.com/agentsandbox/sandbox/manifest"
)

// cutSource is a source that ends at the first operation keep refuses
// (--at): the rest of the transcript is still read, so that the session
// comes out whole, but none of its operations.
type cutSource struct {
	Source
	keep func(*manifest.Op) bool
	cut  bool
}

// Until returns src ending before the first operation keep refuses.
func Until(src Source, keep func(*manifest.Op) bool) Source {
	return &cutSource{Source: src, keep: keep}
}

// Next implements Source.
func (c *cutSource) Next() (manifest.Op, bool) {
	if c.cut {
		return manifest.Op{}, false
	}
	op, ok := c.Source.Next()
	if ok && !c.keep(&op) {
		c.cut = true
		for ok {
			_, ok = c.Source.Next() // the parser hands on every operation before the session is complete
		}
		return manifest.Op{}, false
	}
	return op, ok
}

// MatchPaths returns a filter that keeps the files whose path (relative to
// the destination root) a glob matches, or lies in a directory one
// matches. Globs are path.Match patterns; a malformed one is an error.
func MatchPaths(globs []string) (func(rel string) bool, error) {
	for _, g := range globs {
		if _, err := path.Match(g, ""); err != nil {
			return nil, &GlobError{Glob: g, Err: err}
		}
	}
	return func(rel string) bool {
		for _, g := range globs {
			g = strings.TrimPrefix(strings.TrimSuffix(g, "/"), "./")
			for p := rel; p != "." && p != "/" && p != ""; p = path.Dir(p) {
				if ok, _ := path.Match(g, p); ok {
					return true
				}
			}
		}
		return false
	}, nil
}

// GlobError is a malformed --path pattern.
type GlobError struct {
	Glob string
	Err  error
}

func (e *GlobError) Error() string { return "--path " + e.Glob + ": " + e.Err.Error() }

// filterFiles keeps the files keep accepts by their path relative to the
// destination (the agent's, for a file that maps nowhere). A move goes
// together: a kept destination keeps its source, and a source whose
// destination is left out is left out too, so its content is never lost.
func filterFiles(files []*FileResult, m *Mapper, keep func(rel string) bool) []*FileResult {
	if keep == nil {
		return files
	}
	rel := func(f *FileResult) string {
		if t, ok := m.Map(f.Path); ok {
			return t.Rel
		}
		return strings.TrimPrefix(f.Path, "/")
	}
	kept := map[string]bool{}
	for _, f := range files {
		if keep(rel(f)) {
			kept[f.Path] = true
		}
	}
	for _, f := range files {
		if f.MovedFrom == "" {
			continue
		}
		if kept[f.Path] {
			kept[f.MovedFrom] = true
		} else {
			kept[f.MovedFrom] = false
		}
	}
	out := files[:0:0]
	for _, f := range files {
		if kept[f.Path] {
			out = append(out, f)
		}
	}
	return out
}
