package shellcmd

import (
	"slices"
	"strings"
)

// Write is what a command is seen to write, in the form callers used
// before Parse. New code reads Parse's Result instead.
type Write struct {
	// Targets are every path of every effect other than Dir, in order,
	// then the Vague targets that hold $, `, *, ?, [, { or ~: Detect's
	// callers tell those from paths by these bytes and list them as
	// targets that cannot be resolved.
	Targets []string
	// Verbs are the reasons, e.g. "redirect", "sed -i", "rm".
	Verbs []string
	// Heredocs maps a target of "cat <<'X' > target" to the exact content
	// written (Parse also knows the content echo and printf write; Detect
	// keeps to what its callers label as heredocs).
	Heredocs map[string]string
	// Appends maps a target of "cat <<'X' >> target" to the content
	// appended.
	Appends map[string]string
	// Vague lists the targets that cannot be named (see Result.Vague).
	Vague []string
}

// Detect reports whether script writes files, and what: Parse in the
// older Write form.
func Detect(script string) (Write, bool) {
	r := Parse(script)
	var w Write
	for _, e := range r.Effects {
		if e.Kind == Dir {
			continue
		}
		verb := e.Verb
		if (e.Kind == Create || e.Kind == Append) && verb != "tee" && verb != "truncate" {
			verb = "redirect" // as Detect always named what cat, echo or printf wrote through >
		}
		if !slices.Contains(w.Verbs, verb) {
			w.Verbs = append(w.Verbs, verb)
		}
		for _, p := range e.Paths {
			if !slices.Contains(w.Targets, p) {
				w.Targets = append(w.Targets, p)
			}
		}
		switch {
		case e.Verb != "cat <<" || len(e.Paths) == 0:
		case e.Kind == Create:
			if w.Heredocs == nil {
				w.Heredocs = map[string]string{}
			}
			w.Heredocs[e.Paths[0]] = e.Content
		case e.Kind == Append:
			if w.Appends == nil {
				w.Appends = map[string]string{}
			}
			w.Appends[e.Paths[0]] = e.Content
		}
	}
	w.Vague = r.Vague
	for _, v := range r.Vague {
		if strings.ContainsAny(v, "$`*?[{~") && !slices.Contains(w.Targets, v) {
			w.Targets = append(w.Targets, v)
		}
	}
	if len(w.Verbs) == 0 && len(r.Vague) > 0 {
		w.Verbs = []string{"unknown"}
	}
	return w, r.Writes()
}
