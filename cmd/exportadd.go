package cmd

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
	"unicode/utf8"

	"github.com/agentsandbox/sandbox/harness"
	"github.com/agentsandbox/sandbox/internal/flock"
	"github.com/agentsandbox/sandbox/manifest"
)

// exportsPath is the in-sandbox manifest: $SANDBOX_EXPORTS or
// /tmp/sandbox-exports.json.
func (a *app) exportsPath() string {
	if p := a.env.Get("SANDBOX_EXPORTS"); p != "" {
		return p
	}
	return filepath.Join(os.TempDir(), "sandbox-exports.json")
}

// runExportAdd appends files to the simple-form manifest. A lock file
// serialises concurrent adders, and the manifest is replaced atomically, so
// no add is lost and no reader sees half a file.
func (a *app) runExportAdd(paths []string) error {
	if len(paths) == 0 {
		return usagef("--add needs the files to add")
	}
	var adds []manifest.Export
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return err
		}
		e := manifest.Export{Path: abs, Content: string(data), Type: "file", Created: time.Now().UTC().Format(time.RFC3339)}
		if !utf8.Valid(data) {
			e.Content, e.Encoding = base64.StdEncoding.EncodeToString(data), "base64"
		}
		adds = append(adds, e)
	}
	target := a.exportsPath()
	unlock, err := flock.Lock(target + ".lock")
	if err != nil {
		return fmt.Errorf("locking %s: %w", target, err)
	}
	defer unlock()
	var doc manifest.SimpleForm
	data, err := os.ReadFile(target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		doc.Session = a.env.Get("SANDBOX_SESSION")
		doc.Cwd, _ = os.Getwd()
	case err != nil:
		return err
	default:
		if err := json.Unmarshal(data, &doc); err != nil {
			return fmt.Errorf("%s: not a manifest of exports: %w", target, err)
		}
	}
	// A later add of the same path replaces the earlier one.
	for _, e := range adds {
		replaced := false
		for i := range doc.Exports {
			if doc.Exports[i].Path == e.Path {
				doc.Exports[i], replaced = e, true
			}
		}
		if !replaced {
			doc.Exports = append(doc.Exports, e)
		}
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	if err := harness.WriteFileAtomic(target, func(w io.Writer) error {
		_, err := w.Write(append(out, '\n'))
		return err
	}); err != nil {
		return err
	}
	if a.json {
		paths := make([]string, 0, len(adds))
		for _, e := range adds {
			paths = append(paths, e.Path)
		}
		return a.writeJSON(map[string]any{"schema": "sandbox.export-add/v1", "manifest": target, "added": paths, "exports": len(doc.Exports)})
	}
	if !a.quiet {
		fmt.Fprintf(a.stderr, "sandbox: added %d file(s) to %s\n", len(adds), target)
	}
	return nil
}
