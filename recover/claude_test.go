package recover

import (
	"strings"
	"testing"

	"github.com/agentsandbox/sandbox/manifest"
)

func TestApplyEdit(t *testing.T) {
	cases := []struct {
		orig string
		e    manifest.Edit
		want string
		err  string
	}{
		{"a\nb\nc\n", manifest.Edit{Old: "b", New: "B"}, "a\nB\nc\n", ""},
		{"a $1 b", manifest.Edit{Old: "$1", New: "$& x"}, "a $& x b", ""},           // literal, no $ expansion
		{"a\nb\nc\n", manifest.Edit{Old: "b", New: ""}, "a\nc\n", ""},               // the newline after old is eaten
		{"a\nb", manifest.Edit{Old: "b", New: ""}, "a\n", ""},                       // nothing to eat at the end
		{"x x x", manifest.Edit{Old: "x", New: "y", ReplaceAll: true}, "y y y", ""}, // replace_all
		{"anything", manifest.Edit{Old: "", New: "fresh\n"}, "fresh\n", ""},         // empty old_string writes new_string
		{"dup dup", manifest.Edit{Old: "dup", New: "one"}, "", "occurs 2 times"},    // Claude refuses an ambiguous edit
		{"abc", manifest.Edit{Old: "zzz", New: "y"}, "", "old_string not found"},    // drift
	}
	for _, c := range cases {
		got, err := applyEdit(c.orig, c.e)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ApplyEdit(%q, %+v) error = %v, want %q", c.orig, c.e, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ApplyEdit(%q, %+v) = %q, %v; want %q", c.orig, c.e, got, err, c.want)
		}
	}
}

func TestEditNotebook(t *testing.T) {
	nb := `{"cells": [{"cell_type": "code", "execution_count": 3, "id": "c1", "metadata": {}, "outputs": [{"text": "old"}], "source": "print(1)"}, {"cell_type": "markdown", "id": "m1", "metadata": {}, "source": "# <Title>"}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}`
	got, err := editNotebook(nb, manifest.NotebookCell{CellID: "c1", NewSource: "print(2)"})
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n \"cells\": [\n  {\n   \"cell_type\": \"code\",\n   \"execution_count\": null,\n   \"id\": \"c1\",\n   \"metadata\": {},\n   \"outputs\": [],\n   \"source\": \"print(2)\"\n  },\n  {\n   \"cell_type\": \"markdown\",\n   \"id\": \"m1\",\n   \"metadata\": {},\n   \"source\": \"# <Title>\"\n  }\n ],\n \"metadata\": {},\n \"nbformat\": 4,\n \"nbformat_minor\": 5\n}"
	if got != want {
		t.Errorf("replace:\n%s\nwant:\n%s", got, want)
	}
	got, err = editNotebook(nb, manifest.NotebookCell{CellID: "cell-0", NewSource: "## new", CellType: "markdown", EditMode: "insert"})
	if err != nil || strings.Index(got, "## new") < strings.Index(got, "print(1)") || strings.Index(got, "## new") > strings.Index(got, "<Title>") {
		t.Errorf("insert after cell-0: %v\n%s", err, got)
	}
	got, err = editNotebook(nb, manifest.NotebookCell{CellID: "m1", EditMode: "delete"})
	if err != nil || strings.Contains(got, "Title") {
		t.Errorf("delete: %v\n%s", err, got)
	}
	if _, err := editNotebook(nb, manifest.NotebookCell{CellID: "nope", NewSource: "x"}); err == nil {
		t.Error("a missing cell must fail")
	}
}
