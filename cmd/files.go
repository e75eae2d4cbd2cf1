package cmd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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
