package cmd

import (
	"fmt"
	"io"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentsandbox/sandbox/fixtures/gen"
)

// sandboxBinary returns a path that runs this test binary as the sandbox
// command (testscript.Main in TestMain dispatches on the program's name).
func sandboxBinary(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "sandbox")
	if err := os.Symlink(exe, link); err != nil {
		t.Fatal(err)
	}
	return link
}

// measuredBinary is the start of a test that runs the real command and
// measures it (its memory, its timing, its death): it skips under the race
// detector, which changes both, and in -short, saying what it does
// instead (heavy); it then makes the homes hermetic and returns the command
// and a temporary directory.
func measuredBinary(t *testing.T, heavy string) (bin, dir string) {
	t.Helper()
	if raceEnabled {
		t.Skip("measures the real command's memory and timing, which the race detector changes; .ci/run runs it without -race")
	}
	if testing.Short() {
		t.Skip(heavy + "; not in -short")
	}
	hermeticProcess(t)
	return sandboxBinary(t), t.TempDir()
}

// samplePath is the sample session the README's first command recovers.
const samplePath = "../fixtures/sample/rollout-2026-11-20T10-12-03-019e5a1c-3b7d-7c21-9f4e-2a6b8d0c1e55.jsonl"

// writeSession writes a generated session to name and returns what the
// generator says it did.
func writeSession(t *testing.T, name string, write func(io.Writer, gen.Options) (gen.Stats, error), o gen.Options) gen.Stats {
	t.Helper()
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	st, err := write(f, o)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestKill9MidApply kills recover with SIGKILL at random moments of its
// apply, 20 times, and requires undo to give back the host tree byte for
// byte every time: no torn file, no temporary file, no directory left.
func TestKill9MidApply(t *testing.T) {
	bin, dir := measuredBinary(t, "kills a real process two dozen times")
	name := filepath.Join(dir, "session.jsonl")
	st := writeSession(t, name, gen.Rollout, gen.Options{Size: 1 << 20, Seed: 9, Files: 200, PatchEvery: 2, HostFiles: true})
	// Half the files exist on the host as the session started, half not: the
	// apply updates some and creates others, in new directories too.
	host := map[string]string{}
	i := 0
	for n, c := range st.Initial {
		if i%2 == 0 {
			host[n] = c
		}
		i++
	}
	run := func(args ...string) *exec.Cmd {
		c := exec.Command(bin, args...)
		c.Env = os.Environ()
		return c
	}
	// How long the writing takes here (from the journal's first entry to
	// the end), to kill inside it whatever the machine's load.
	probe := filepath.Join(dir, "probe")
	writeTree(t, probe, host)
	pc := run("recover", "-t", name, "--dest", probe, "--on-conflict", "overwrite")
	if err := pc.Start(); err != nil {
		t.Fatal(err)
	}
	writing := waitJournal(probe)
	if err := pc.Wait(); exitCode(err) != ExitOK && exitCode(err) != ExitPartial {
		t.Fatalf("recover: %v", err)
	}
	full := time.Since(writing)
	rng := rand.New(rand.NewSource(1))
	killed := 0
	midApply := 0
	for round := 0; round < 20; round++ {
		dest := filepath.Join(dir, fmt.Sprintf("dest%d", round))
		writeTree(t, dest, host)
		before := snapshotTree(t, dest)
		c := run("recover", "-t", name, "--dest", dest, "--on-conflict", "overwrite")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		waitJournal(dest)
		time.Sleep(time.Duration(rng.Int63n(int64(full / 2))))
		_ = c.Process.Kill()
		_ = c.Wait()
		ws, ok := c.ProcessState.Sys().(syscall.WaitStatus)
		wasKilled := ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
		if wasKilled {
			killed++
		}
		journals, _ := filepath.Glob(filepath.Join(dest, ".sandbox/journal/*/journal.jsonl"))
		if len(journals) > 0 {
			if wasKilled {
				midApply++
			}
			if out, err := run("undo", "--dest", dest).CombinedOutput(); err != nil {
				t.Fatalf("round %d: undo: %v: %s", round, err, out)
			}
		}
		if after := snapshotTree(t, dest); after != before {
			t.Fatalf("round %d: undo did not give the tree back:\n%s", round, treeDiff(before, after))
		}
	}
	if killed < 10 || midApply < 5 {
		t.Errorf("only %d of 20 runs were killed before they finished, %d of them while writing: the kills did not land", killed, midApply)
	}
	t.Logf("%d of 20 runs killed, %d of them while writing; every undo gave the tree back (the writing takes %s here)", killed, midApply, full)
}

// waitJournal waits (up to a minute) for an apply into dest to start
// writing its journal, and returns when it saw it.
func waitJournal(dest string) time.Time {
	for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(time.Millisecond) {
		if m, _ := filepath.Glob(filepath.Join(dest, ".sandbox/journal/*/journal.jsonl")); len(m) > 0 {
			break
		}
	}
	return time.Now()
}

// snapshotTree lists every entry under root but the journal: path, type,
// mode and content, so two trees compare as text.
func snapshotTree(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() && rel == ".sandbox" {
			return filepath.SkipDir
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			fmt.Fprintf(&b, "%s dir %v\n", rel, info.Mode())
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %v %q\n", rel, info.Mode(), data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func treeDiff(a, b string) string {
	in := map[string]bool{}
	for _, l := range strings.Split(a, "\n") {
		in[l] = true
	}
	var out []string
	for _, l := range strings.Split(b, "\n") {
		if !in[l] {
			if len(l) > 120 {
				l = l[:120] + "…"
			}
			out = append(out, "+ "+l)
		}
	}
	return strings.Join(out, "\n")
}

// TestTwoRecoversAtOnce starts two recovers into one destination at the same
// moment: one refuses (the other holds the destination) or, if the first was
// already done, finds nothing left to write; the tree is never a mix.
func TestTwoRecoversAtOnce(t *testing.T) {
	t.Parallel()
	env := hermetic(t)
	bin := sandboxBinary(t)
	dir := t.TempDir()
	name := filepath.Join(dir, "session.jsonl")
	st := writeSession(t, name, gen.Rollout, gen.Options{Size: 1 << 20, Seed: 3, Files: 200, PatchEvery: 2})
	for round := 0; round < 3; round++ {
		dest := filepath.Join(dir, fmt.Sprintf("dest%d", round))
		var cmds [2]*exec.Cmd
		var outs [2]strings.Builder
		for i := range cmds {
			cmds[i] = exec.Command(bin, "recover", "-t", name, "--dest", dest, "--json")
			cmds[i].Env = env.List()
			cmds[i].Stdout, cmds[i].Stderr = &outs[i], &outs[i]
		}
		for _, c := range cmds {
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
		}
		codes := [2]int{exitCode(cmds[0].Wait()), exitCode(cmds[1].Wait())}
		busy, quiet := 0, 0
		for i, code := range codes {
			switch {
			case code == ExitFailure && strings.Contains(outs[i].String(), "another sandbox is writing to"):
				busy++
			case code == ExitOK && strings.Contains(outs[i].String(), `"written": 0,`):
				quiet++
			case code != ExitOK:
				t.Fatalf("round %d: run %d exit %d: %s", round, i, code, outs[i].String())
			}
		}
		if busy+quiet != 1 {
			t.Fatalf("round %d: exits %v, want one run to write and the other to refuse or find nothing to do:\n%s\n%s", round, codes, outs[0].String(), outs[1].String())
		}
		got := dirContents(t, dest)
		if len(got) != len(st.Final) {
			t.Fatalf("round %d: %d files, want %d", round, len(got), len(st.Final))
		}
		for n, want := range st.Final {
			if got[n] != want {
				t.Fatalf("round %d: %s is not what the session wrote", round, n)
			}
		}
		t.Logf("round %d: exits %v (%d refused as busy)", round, codes, busy)
	}
}
