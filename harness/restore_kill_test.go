package harness

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRestoreKill9 kills a restore (another process) at random moments,
// as a crash or an OOM kill would: each time the store holds no session
// of that name, or the whole session, never a part of one; and what a
// killed restore left is removed by the next.
func TestRestoreKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("kills 24 restores; skipped in -short")
	}
	st := hermetic(t)
	src := &Session{ID: "src", Name: "src", Runtime: "local", Project: "/", State: StateExited}
	if err := st.Save(src); err != nil {
		t.Fatal(err)
	}
	// Enough to take a while: 300 files of 64 KiB that do not compress.
	rng := rand.New(rand.NewPCG(7, 11))
	body := make([]byte, 64<<10)
	for i := range 300 {
		for j := range body {
			body[j] = byte(rng.Uint32())
		}
		p := filepath.Join(st.Home("src"), fmt.Sprintf("d%02d", i%30), fmt.Sprintf("f%03d", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("d00/f000", filepath.Join(st.Home("src"), "link")); err != nil {
		t.Fatal(err)
	}
	snap := filepath.Join(t.TempDir(), "src.tar.gz")
	if err := WriteFileAtomic(snap, func(w io.Writer) error { _, err := st.Snapshot("src", w, nil); return err }); err != nil {
		t.Fatal(err)
	}

	child := func() *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRestoreChild$")
		cmd.Env = append(os.Environ(), "SANDBOX_TEST_RESTORE="+snap, "SANDBOX_HOME="+st.Root)
		return cmd
	}
	// How long a whole restore takes here, process start included.
	start := time.Now()
	if out, err := child().CombinedOutput(); err != nil {
		t.Fatalf("restore in a child: %v\n%s", err, out)
	}
	full := time.Since(start)
	treesEqual(t, st.Home("src"), st.Home("killed"), nil)
	if err := os.RemoveAll(st.Dir("killed")); err != nil {
		t.Fatal(err)
	}

	var none, mid, whole int
	temps := func() int {
		n := 0
		entries, _ := os.ReadDir(filepath.Join(st.Root, "sessions"))
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), restorePrefix) {
				n++
			}
		}
		return n
	}
	for i := range 24 {
		cmd := child()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		delay := time.Duration(rng.Int64N(int64(full * 11 / 10)))
		time.Sleep(delay)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		_, err := os.Lstat(st.Dir("killed"))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			none++
			if temps() > 0 {
				mid++ // killed while it unpacked
			}
		case err == nil:
			whole++
			treesEqual(t, st.Home("src"), st.Home("killed"), nil)
			if _, err := st.Load("killed"); err != nil {
				t.Fatalf("kill %d after %v: %v", i, delay, err)
			}
			if err := os.RemoveAll(st.Dir("killed")); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatal(err)
		}
	}
	t.Logf("a whole restore takes %v; of 24 kills, %d left no session (%d while it unpacked), %d the whole session", full, none, mid, whole)
	if mid == 0 {
		t.Error("no kill landed while a restore unpacked: the test proves nothing")
	}
	// The next restore removes what the killed ones left.
	if _, err := st.Restore(mustOpen(t, snap), RestoreOptions{Name: "after"}); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Join(st.Root, "sessions"))
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "after src" {
		t.Errorf("the store holds %v", names)
	}
}

// TestRestoreChild is the restore TestRestoreKill9 kills.
func TestRestoreChild(t *testing.T) {
	snap := os.Getenv("SANDBOX_TEST_RESTORE")
	if snap == "" {
		t.Skip("run by TestRestoreKill9")
	}
	st := &Store{Root: os.Getenv("SANDBOX_HOME")}
	if _, err := st.Restore(mustOpen(t, snap), RestoreOptions{Name: "killed"}); err != nil {
		t.Fatal(err)
	}
}
