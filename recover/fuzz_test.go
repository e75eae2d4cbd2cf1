package recover

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentsandbox/sandbox/manifest"
)

// FuzzApplyChunks checks the applier on arbitrary content and chunks:
//   - a success ends with a newline, as codex's does (or is empty, when
//     every line was removed);
//   - Strict only refuses: where it succeeds, Faithful gives the same text
//     and the same fuzz;
//   - a chunk whose old and new lines are the same lines of the content
//     (context only) is the identity, as the grammar says: the content
//     comes back as it was, with a final newline added when it had none
//     (codex drops the newline of a last empty line: not checked there).
func FuzzApplyChunks(f *testing.F) {
	f.Add("a\nb\nc\n", "b", "B", "", false, true, uint8(1), uint8(1))
	f.Add("x\r\ny\r\n", "y", "Y", "x", true, false, uint8(0), uint8(2))
	f.Add("", "", "new", "", false, true, uint8(0), uint8(0))
	f.Add("dup\ndup\n", "dup", "", "", false, false, uint8(1), uint8(1))
	f.Add("say \u201chi\u201d\n  y  \nz", "  y", "Y", "say \"hi\"", false, true, uint8(1), uint8(2))
	f.Fuzz(func(t *testing.T, content, old, new, ctx string, eof, faithful bool, from, n uint8) {
		c := manifest.Chunk{OldLines: splitOrEmpty(old), NewLines: splitOrEmpty(new), EOF: eof}
		if ctx != "" {
			c.Context = &ctx
		}
		mode := Strict
		if faithful {
			mode = Faithful
		}
		if got, want := splitLines(content), strings.Split(content, "\n"); !reflect.DeepEqual(*got, want) {
			t.Fatalf("splitLines(%q) = %q, strings.Split gives %q", content, *got, want)
		} else {
			putLines(got)
		}
		out, fuzz, err := ApplyChunks(content, "f", []manifest.Chunk{c}, mode)
		// The line lists are pooled: a second run, on a list the first
		// one (and applyReverse's in-place edits) used, is the same.
		if again, fuzz2, err2 := ApplyChunks(content, "f", []manifest.Chunk{c}, mode); again != out || fuzz2 != fuzz || fmt.Sprint(err2) != fmt.Sprint(err) {
			t.Fatalf("a second run gave %q (fuzz %d, %v), the first %q (fuzz %d, %v)", again, fuzz2, err2, out, fuzz, err)
		}
		if err == nil && out != "" && !strings.HasSuffix(out, "\n") {
			t.Fatalf("result %q does not end with a newline", out)
		}
		if mode == Strict && err == nil {
			fout, ffuzz, ferr := ApplyChunks(content, "f", []manifest.Chunk{c}, Faithful)
			if ferr != nil || fout != out || ffuzz != fuzz {
				t.Fatalf("strict gave %q (fuzz %d), faithful %q (fuzz %d, %v)", out, fuzz, fout, ffuzz, ferr)
			}
		}

		// The identity: lines [from, from+n) of the content, as context.
		text, eol := content, "\n"
		if strings.Contains(text, "\r\n") && strings.Count(text, "\r\n") == strings.Count(text, "\n") {
			text, eol = strings.ReplaceAll(text, "\r\n", "\n"), "\r\n"
		}
		lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
		if text == "" || (strings.HasSuffix(text, "\n") && lines[len(lines)-1] == "") || int(from) >= len(lines) {
			return
		}
		window := lines[from:min(len(lines), int(from)+int(n)+1)]
		same := manifest.Chunk{OldLines: window, NewLines: window, EOF: eof && int(from)+len(window) == len(lines)}
		want := content
		if !strings.HasSuffix(text, "\n") {
			want += eol
		}
		for _, m := range []MatchMode{Faithful, Strict} {
			got, fz, err := ApplyChunks(content, "f", []manifest.Chunk{same}, m)
			if m == Strict && err != nil && strings.Contains(err.Error(), "ambiguous") {
				continue // the window occurs twice: Strict refuses, as it must
			}
			if err != nil || got != want || fz != 0 {
				t.Fatalf("mode %d: context-only chunk %q on %q gave %q (fuzz %d, %v), want the content back", m, window, content, got, fz, err)
			}
		}
	})
}

// FuzzMerge3 checks, on any texts, what needs no git (FuzzMerge3Git holds
// the merge to git merge-file): a merge of a text with itself changes
// nothing; a side that is the base gives the other side; and a merge is
// clean or not whichever side is ours, and a clean one is the same text.
func FuzzMerge3(f *testing.F) {
	f.Add("a\nb\n", "a\nB\n", "A\nb\n")
	f.Add("", "x", "y\n")
	f.Add(minBase, minOurs, minTheirs)
	f.Fuzz(func(t *testing.T, base, ours, theirs string) {
		if got, n := Merge3(base, ours, ours, "o", "t"); n != 0 || got != ours {
			t.Fatalf("merging %q with itself gave %q (%d conflicts)", ours, got, n)
		}
		if got, n := Merge3(base, base, theirs, "o", "t"); n != 0 || got != theirs {
			t.Fatalf("merging %q onto the base gave %q (%d conflicts)", theirs, got, n)
		}
		got, n := Merge3(base, ours, theirs, "o", "t")
		swapped, sn := Merge3(base, theirs, ours, "t", "o")
		if (n == 0) != (sn == 0) || n == 0 && got != swapped {
			t.Fatalf("merge %q (%d conflicts), swapped %q (%d)\nbase %q\nours %q\ntheirs %q", got, n, swapped, sn, base, ours, theirs)
		}
		_ = UnifiedDiff("a", "b", ours, theirs)
	})
}

func splitOrEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// FuzzApplyEdit checks Claude Code's replacement rules: no panic; a
// successful single replacement removes one occurrence of old (or old plus
// the newline it eats) and inserts new.
func FuzzApplyEdit(f *testing.F) {
	f.Add("a\nb\nc\n", "b\n", "", false)
	f.Add("x x x", "x", "y", true)
	f.Add("", "", "new", false)
	f.Add("dup dup", "dup", "one", false)
	f.Fuzz(func(t *testing.T, orig, old, new string, all bool) {
		out, err := applyEdit(orig, manifest.Edit{Old: old, New: new, ReplaceAll: all})
		if want, werr := applyEditByCount(orig, manifest.Edit{Old: old, New: new, ReplaceAll: all}); out != want || fmt.Sprint(err) != fmt.Sprint(werr) {
			t.Fatalf("ApplyEdit(%q, %q→%q, all=%v) = %q, %v; by count %q, %v", orig, old, new, all, out, err, want, werr)
		}
		if err != nil || old == "" || all {
			return
		}
		eaten := old
		if new == "" && !strings.HasSuffix(old, "\n") && strings.Contains(orig, old+"\n") {
			eaten = old + "\n"
		}
		if len(out) != len(orig)-len(eaten)+len(new) {
			t.Fatalf("ApplyEdit(%q, %q→%q) = %q", orig, old, new, out)
		}
	})
}

// applyEditByCount is ApplyEdit as it was written first, by strings.Count
// and strings.Replace: FuzzApplyEdit requires the same result of the one
// that searches twice.
func applyEditByCount(orig string, e manifest.Edit) (string, error) {
	if e.Old == "" {
		return e.New, nil
	}
	old := e.Old
	if e.New == "" && !strings.HasSuffix(old, "\n") && strings.Contains(orig, old+"\n") {
		old += "\n"
	}
	n := strings.Count(orig, old)
	switch {
	case n == 0:
		return "", fmt.Errorf("old_string not found: %q", firstLine(e.Old))
	case n > 1 && !e.ReplaceAll:
		return "", fmt.Errorf("old_string occurs %d times and replace_all is false: refusing to pick one", n)
	case e.ReplaceAll:
		return strings.ReplaceAll(orig, old, e.New), nil
	}
	return strings.Replace(orig, old, e.New, 1), nil
}

// FuzzEditNotebook edits any JSON as a notebook. Where the edit succeeds:
//   - the result is JSON, and everything but the cells is unchanged;
//   - replace keeps the cell count, insert adds one cell and delete removes
//     one, and every cell the edit did not touch is kept as it was;
//   - the cell edited or inserted has the new source (and type);
//   - the edited cell is one the edit named: by id, or as cell-N.
//
// Documents with a key twice in one object are left out: which of the two
// a notebook reader takes is not the edit's to decide.
func FuzzEditNotebook(f *testing.F) {
	f.Add(`{"cells":[{"cell_type":"code","id":"a","source":"x","outputs":[1]}],"nbformat":4}`, "a", "y", "replace", "")
	f.Add(`{"cells":[]}`, "", "first", "insert", "markdown")
	f.Add(`{"cells": [{"cell_type": "code", "execution_count": 3, "id": "c1", "metadata": {}, "outputs": [{"text": "old"}], "source": ["print(1)\n", "x"]}, {"cell_type": "markdown", "id": "m1", "metadata": {"tags": []}, "source": "# <Title> \u00e9"}], "metadata": {"kernelspec": {"name": "python3"}}, "nbformat": 4, "nbformat_minor": 5}`, "cell-1", "## new", "delete", "")
	f.Add(`{"cells": [{"cell_type": "raw", "id": "r", "source": ""}, {"cell_type": "code", "id": "r", "source": "1.50e3"}], "n": 1.50e3}`, "r", "z", "insert", "code")
	f.Fuzz(func(t *testing.T, nb, id, src, mode, typ string) {
		cell := manifest.NotebookCell{CellID: id, NewSource: src, EditMode: mode, CellType: typ}
		out, err := editNotebook(nb, cell)
		if hasDuplicateKeys(nb) {
			return
		}
		if err != nil {
			// A cell that is there by id is found. (Ids that JSON and Go
			// quote differently, with <, >, & or control characters, are
			// not: reported under issue 19, left out here until fixed.)
			// Keys are matched exactly, as Claude Code (JavaScript) matches
			// them: encoding/json would take "Id" for "id".
			var doc struct{ Cells []map[string]any }
			if id == "" || strings.ContainsAny(id, "<>&") || strings.ContainsFunc(id, func(r rune) bool { return r < ' ' || r == 0x7f }) ||
				!utf8.ValidString(id) || (mode != "" && mode != "replace" && mode != "insert" && mode != "delete") || json.Unmarshal([]byte(nb), &doc) != nil {
				return
			}
			for _, c := range doc.Cells {
				if cid, ok := c["id"].(string); ok && cid == id && strings.Contains(err.Error(), "not found") {
					t.Fatalf("cell %q is in the notebook, yet: %v", id, err)
				}
			}
			return
		}
		var in, got map[string]any
		if err := decodeNumbers(nb, &in); err != nil {
			t.Fatalf("edited a notebook that is not a JSON object: %v", err)
		}
		if err := decodeNumbers(out, &got); err != nil {
			t.Fatalf("the edit is not JSON: %v\n%s", err, out)
		}
		before, after := in["cells"].([]any), got["cells"].([]any)
		delete(in, "cells")
		delete(got, "cells")
		if !reflect.DeepEqual(in, got) {
			t.Fatalf("the edit changed more than the cells:\n%v\n%v", in, got)
		}
		// JSON carries text: bytes that are not UTF-8 are U+FFFD in it.
		id, src, typ = utf8JSON(id), utf8JSON(src), utf8JSON(typ)
		named := func(i int) bool {
			if c, ok := before[i].(map[string]any); ok && c["id"] == id {
				return true
			}
			k, err := strconv.Atoi(strings.TrimPrefix(id, "cell-"))
			return strings.HasPrefix(id, "cell-") && err == nil && k == i
		}
		if mode == "" {
			mode = "replace"
		}
		at := -1 // the index in after of the edited or inserted cell
		switch mode {
		case "replace":
			if len(after) != len(before) {
				t.Fatalf("replace: %d cells, then %d", len(before), len(after))
			}
			for i := range before {
				if !reflect.DeepEqual(before[i], after[i]) {
					if at >= 0 {
						t.Fatalf("replace changed cells %d and %d", at, i)
					}
					at = i
				}
			}
			if at < 0 { // an edit that changes nothing: find the cell named
				for i := range before {
					if named(i) {
						at = i
					}
				}
			}
			if at < 0 || !named(at) {
				t.Fatalf("replace of %q changed cell %d, which it does not name", id, at)
			}
		case "insert":
			if len(after) != len(before)+1 {
				t.Fatalf("insert: %d cells, then %d", len(before), len(after))
			}
			for at = 0; at < len(before) && reflect.DeepEqual(before[at], after[at]); at++ {
			}
			if !reflect.DeepEqual(before[at:], after[at+1:]) {
				t.Fatalf("insert at %d moved or changed other cells", at)
			}
			for at > 0 && !named(at-1) && reflect.DeepEqual(after[at], after[at-1]) {
				at-- // the same cell inserted next to its twin: the first of them
			}
			if (id == "" && at != 0) || (id != "" && (at == 0 || !named(at-1))) {
				t.Fatalf("insert after %q landed at %d", id, at)
			}
		case "delete":
			if len(after) != len(before)-1 {
				t.Fatalf("delete: %d cells, then %d", len(before), len(after))
			}
			for at = 0; at < len(after) && reflect.DeepEqual(before[at], after[at]); at++ {
			}
			if !reflect.DeepEqual(before[at+1:], after[at:]) {
				t.Fatalf("delete of %d moved or changed other cells", at)
			}
			for at < len(after) && !named(at) && reflect.DeepEqual(before[at], before[at+1]) {
				at++ // a twin of the deleted cell: the one named
			}
			if !named(at) {
				t.Fatalf("delete of %q removed cell %d", id, at)
			}
			return
		default:
			t.Fatalf("unknown edit_mode %q accepted", mode)
		}
		c, _ := after[at].(map[string]any)
		if c["source"] != src || (typ != "" && c["cell_type"] != typ) {
			t.Fatalf("cell %d after the edit: %v; want source %q, type %q", at, c, src, typ)
		}
	})
}

func utf8JSON(s string) string {
	b, _ := json.Marshal(s)
	_ = json.Unmarshal(b, &s)
	return s
}

func decodeNumbers(s string, v any) error {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	return d.Decode(v)
}

// hasDuplicateKeys reports a JSON text with a key twice in one object (or
// that is not JSON).
func hasDuplicateKeys(s string) bool {
	d := json.NewDecoder(strings.NewReader(s))
	var walk func() bool
	walk = func() bool {
		tok, err := d.Token()
		if err != nil {
			return true
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for d.More() {
				k, err := d.Token()
				ks, _ := k.(string)
				if err != nil || seen[ks] || walk() {
					return true
				}
				seen[ks] = true
			}
			_, err = d.Token()
			return err != nil
		case json.Delim('['):
			for d.More() {
				if walk() {
					return true
				}
			}
			_, err = d.Token()
			return err != nil
		}
		return false
	}
	return walk()
}

// FuzzOpencodeReplace checks that opencode's replacers never panic, that a
// replacement they make starts and ends like the content where nothing
// matched, and that the diff applier never panics on any diff.
func FuzzOpencodeReplace(f *testing.F) {
	f.Add("def f():\n    return 1\n", "    return 1", "    return 2", false)
	f.Add("a\n  b  \nc\n", "a\nb\nc", "x", false)
	f.Add("if (a  &&  b) {\n", "if (a && b) {", "y", false)
	f.Add("say \"hi\"\n", `say \"hi\"`, "z", true)
	f.Add("func a() {\n  x := 1\n  y := 2\n}\n", "func a() {\n  x := 100\n  y := 2\n}", "$&$$", true)
	f.Fuzz(func(t *testing.T, content, old, new string, all bool) {
		if len(content) > 4096 || len(old) > 1024 {
			return
		}
		out, how, err := opencodeReplace(content, old, new, all)
		if err == nil && how == "simple" && !all && out != strings.Replace(content, old, new, 1) {
			t.Fatalf("simple replacement %q -> %q in %q gave %q", old, new, content, out)
		}
		_, _ = ApplyOpencodeDiff(content, old)
	})
}

// FuzzAssemble requires assemble, which copies the lines between
// replacements in one piece, to give what making the replacements one at a
// time (applyReverse, the way it was done before) gives, whenever it
// agrees to do them.
func FuzzAssemble(f *testing.F) {
	f.Add("a\nb\nc\n", []byte{1, 1, 1, 3, 0, 2})
	f.Add("a\n\nb", []byte{0, 0, 1, 2, 1, 0})
	f.Add("", []byte{0, 0, 2})
	f.Add("x\ny\n", []byte{0, 2, 0, 2, 0, 1})
	f.Fuzz(func(t *testing.T, content string, spec []byte) {
		lines := strings.Split(content, "\n")
		if len(lines) > 0 && lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		var repls []repl
		for i := 0; i+2 < len(spec) && len(repls) < 8; i += 3 {
			start := int(spec[i]) % (len(lines) + 1)
			n := int(spec[i+1]) % (len(lines) - start + 1)
			with := []string{}
			for k := 0; k < int(spec[i+2]%4); k++ {
				with = append(with, fmt.Sprintf("w%d", k))
				if spec[i+2]&0x10 != 0 {
					with[k] = ""
				}
			}
			repls = append(repls, repl{start, n, with})
		}
		sort.SliceStable(repls, func(a, b int) bool { return repls[a].start < repls[b].start })
		got, ok := assemble(content, lines, repls)
		if !ok {
			return // overlapping: left to applyReverse
		}
		if want := applyReverse(append([]string(nil), lines...), repls); got != want {
			t.Fatalf("assemble(%q, %v) = %q, one at a time %q", content, repls, got, want)
		}
	})
}
