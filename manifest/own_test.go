package manifest

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentsandbox/sandbox/internal/zerocopy"
)

// TestOwnCopiesEveryString fills every string of an operation with a slice
// of one line, as a parser reading through gjson does, and requires Own to
// leave none of them pointing into it. It walks the struct by reflection,
// so a string field added later that Own does not copy fails it.
func TestOwnCopiesEveryString(t *testing.T) {
	line := strings.Repeat("x", 1<<16)
	at := 0
	piece := func() string { at += 3; return line[at : at+3] }
	s := func() *string { p := piece(); return &p }
	op := Op{Session: piece(), Kind: KindWrite, Tool: piece(), Cwd: piece(), Paths: []string{piece(), piece()},
		PatchText: piece(), Command: piece(), Content: s(), Identity: piece(), Note: piece(), OutcomeEvidence: piece(),
		Effects:  []ShellEffect{{Kind: ShellCreate, Verb: piece(), Paths: []string{piece()}, Content: s()}},
		Edits:    []Edit{{Old: piece(), New: piece()}},
		Notebook: &NotebookCell{CellID: piece(), NewSource: piece(), CellType: piece(), EditMode: piece()},
		Evidence: []Evidence{{Path: piece(), Kind: EvidencePost, Content: piece(), MovePath: piece(), Source: piece()}},
		Provenance: Provenance{Transcript: piece(), Line: 3, Time: time.Unix(1, 0), CallID: piece(), TurnID: piece(),
			Carrier: piece()},
	}
	orig := op
	orig.Paths = append([]string(nil), op.Paths...)
	op.Own()
	if !reflect.DeepEqual(op, orig) {
		t.Fatalf("Own changed the operation:\n%+v\n%+v", op, orig)
	}
	inLine := zerocopy.Within(zerocopy.Bytes(line))
	n := 0
	var walk func(v reflect.Value, where string)
	walk = func(v reflect.Value, where string) {
		switch v.Kind() {
		case reflect.String:
			if v.Len() == 0 {
				return
			}
			n++
			if inLine(v.String()) {
				t.Errorf("%s still points into the line", where)
			}
		case reflect.Pointer:
			if !v.IsNil() {
				walk(v.Elem(), where)
			}
		case reflect.Slice:
			for i := range v.Len() {
				walk(v.Index(i), where+"[]")
			}
		case reflect.Struct:
			for i := range v.NumField() {
				if v.Type().Field(i).Name == "Patch" {
					continue // parsed from PatchText, by the caller
				}
				walk(v.Field(i), where+"."+v.Type().Field(i).Name)
			}
		}
	}
	walk(reflect.ValueOf(op), "op")
	if n < 20 {
		t.Fatalf("walked %d strings: the walk missed the operation's fields", n)
	}
}
