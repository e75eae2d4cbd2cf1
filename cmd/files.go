package cmd

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agentsandbox/sandbox/inspect"
)

// createBeside creates the temporary file an output is written through
// (renamed into place once complete). Its error names the output and its
// directory, never the temporary file's random name.
func createBeside(name string) (*os.File, error) {
	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*")
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return nil, fmt.Errorf("%s: cannot write in %s: %w", name, filepath.Dir(name), pe.Err)
	}
	return tmp, err
}

// writeHTMLReport writes inspect's HTML page to name: the file appears
// only once it is complete, readable by others (a report is for sharing,
// not CreateTemp's 0600).
func writeHTMLReport(name string, r *inspect.Report) error {
	tmp, err := createBeside(name)
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	w := bufio.NewWriterSize(tmp, 1<<16)
	err = inspect.RenderHTML(w, r)
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), name)
}
