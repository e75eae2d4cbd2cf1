package recover

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

// envUndoAs asks the test binary to run one undo and report it, instead of
// the tests: how a test undoes as another user (undoAsNobody).
const envUndoAs = "RECOVER_TEST_UNDO"

func TestMain(m *testing.M) {
	if req := os.Getenv(envUndoAs); req != "" {
		os.Exit(undoHelper(req))
	}
	os.Exit(m.Run())
}

// helperReport is what undoHelper prints.
type helperReport struct {
	Results    []UndoResult `json:"results"`
	Error      string       `json:"error,omitempty"`
	Incomplete bool         `json:"incomplete,omitempty"`
}

// undoHelper undoes journal NAME under ROOT (req is "ROOT\nNAME") and
// prints a helperReport on stdout.
func undoHelper(req string) int {
	root, name, ok := strings.Cut(req, "\n")
	if !ok {
		fmt.Fprintf(os.Stderr, "%s: want ROOT\\nNAME\n", envUndoAs)
		return 2
	}
	fsys := NewOSFS()
	defer fsys.Close()
	res, err := Undo(fsys, root, name, testKey, false)
	rep := helperReport{Results: res}
	if err != nil {
		var ie *IncompleteError
		rep.Error, rep.Incomplete = err.Error(), errors.As(err, &ie)
	}
	if err := json.NewEncoder(os.Stdout).Encode(rep); err != nil {
		return 1
	}
	return 0
}
