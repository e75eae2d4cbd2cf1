package vault

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentsandbox/sandbox/internal/osenv"
)

// TestHelperSyncForever is the process TestKilledSync kills: it syncs the
// home VAULT_TEST_HOME names into its vault, again and again.
func TestHelperSyncForever(t *testing.T) {
	home := os.Getenv("VAULT_TEST_HOME")
	if home == "" {
		t.Skip("the process TestKilledSync runs and kills")
	}
	env := osenv.Env(strings.Split(os.Getenv("VAULT_TEST_ENV"), "\x1f"))
	v, err := Create(context.Background(), filepath.Join(home, "vault"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(home, "started"), nil, 0o644)
	for i := 0; ; i++ {
		// A new cache and a new host name each time: every round reads
		// every file and writes new versions.
		if _, err := v.Sync(context.Background(), SyncOptions{Env: env, Host: fmt.Sprintf("box%d", i), Cache: filepath.Join(home, fmt.Sprintf("cache-%d", i))}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestKilledSync: a sync killed (SIGKILL) at any point leaves the vault
// readable with nothing half-written, and the next sync completes it.
func TestKilledSync(t *testing.T) {
	env, home := hermetic(t)
	for round, delay := range []time.Duration{20 * time.Millisecond, 90 * time.Millisecond, 250 * time.Millisecond, 600 * time.Millisecond} {
		os.Remove(filepath.Join(home, "started"))
		// New bytes in every file: the killed sync writes new chunks.
		for i := range 30 {
			p, data := rollout(t, home, fmt.Sprintf("019e5a1c-3b7d-7c21-9f4e-2a6b8d0c%04d", i), 3000+i*50+round*400)
			write(t, p, data)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperSyncForever$", "-test.count=1")
		cmd.Env = append(os.Environ(), "VAULT_TEST_HOME="+home, "VAULT_TEST_ENV="+strings.Join(env, "\x1f"))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(30 * time.Second); ; {
			if _, err := os.Stat(filepath.Join(home, "started")); err == nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(delay)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		v, err := Open(context.Background(), filepath.Join(home, "vault"), Options{})
		if err != nil {
			t.Fatalf("round %d: the vault does not open after a kill: %v", round, err)
		}
		killed := check(t, v)
		tmp, _ := os.ReadDir(filepath.Join(home, "vault", "tmp"))
		t.Logf("round %d: killed after %s holding %d sources, %d temporary files", round, delay, len(killed), len(tmp))
		// Every object at its key is whole: nothing but temporary files
		// can be half-written.
		st, err := v.Sync(context.Background(), SyncOptions{Env: env, Host: "box", Cache: filepath.Join(home, "cache-final")})
		if err != nil || len(st.Problems) > 0 {
			t.Fatalf("round %d: the sync after a kill: %v %v", round, err, st.Problems)
		}
		n := 0
		for _, s := range check(t, v) {
			if s.Host() == "box" {
				n++
			}
		}
		if n != 30 {
			t.Fatalf("round %d: %d sources after the sync, want 30", round, n)
		}
		if left, _ := os.ReadDir(filepath.Join(home, "vault", "tmp")); len(left) > 0 {
			t.Fatalf("round %d: %d temporary files left after a whole sync", round, len(left))
		}
	}
}
