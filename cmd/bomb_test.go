package cmd

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// repeat is a reader of n bytes of s repeated, made on the fly.
type repeat struct {
	s []byte
	n int64
	i int
}

func (r *repeat) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	k := 0
	for k < len(p) && r.n > 0 {
		c := copy(p[k:], r.s[r.i:])
		if int64(c) > r.n {
			c = int(r.n)
		}
		k += c
		r.n -= int64(c)
		r.i = (r.i + c) % len(r.s)
	}
	return k, nil
}

// peakRSS runs the sandbox binary with stdin and returns its exit code,
// output and peak resident memory in MiB.
func peakRSS(t *testing.T, bin string, stdin io.Reader, args ...string) (int, string, int64) {
	t.Helper()
	c := exec.Command(bin, args...)
	c.Env = os.Environ()
	c.Stdin = stdin
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	err := c.Run()
	ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Fatal("no rusage")
	}
	return exitCode(err), out.String(), ru.Maxrss / 1024 // Linux reports KiB
}

// TestBombsBoundedMemory feeds the built command decompression bombs and
// endless lines, and requires its peak memory to stay far below their size:
// a line over --max-line is skipped without being held, archive members and
// standard input are streamed, warnings of a kind are counted.
func TestBombsBoundedMemory(t *testing.T) {
	bin, dir := measuredBinary(t, "reads gigabytes")
	session, err := os.ReadFile(samplePath)
	if err != nil {
		t.Fatal(err)
	}
	// With --max-line 64M, about 1.5 lines live at the worst moment, plus the
	// garbage of the line's growth the collector has not returned yet and the
	// runtime: measured 200-250 MiB here, against 5.9 GB for one 2 GiB line
	// and 9.5 GB for an 18 MB tar.gz before lines were limited and members
	// streamed.
	const limitMiB = 320
	big := int64(1 << 30) // one line of 1 GiB, no newline

	// A tar.gz of 1 MiB holding one 1 GiB line after a real session.
	tgz := filepath.Join(dir, "bomb.tar.gz")
	{
		f, _ := os.Create(tgz)
		gz, _ := gzip.NewWriterLevel(f, gzip.BestCompression)
		tw := tar.NewWriter(gz)
		_ = tw.WriteHeader(&tar.Header{Name: "rollout.jsonl", Mode: 0o644, Size: int64(len(session)) + big, Typeflag: tar.TypeReg})
		_, _ = tw.Write(session)
		_, _ = io.Copy(tw, &repeat{s: []byte("a"), n: big})
		tw.Close()
		gz.Close()
		f.Close()
	}
	// A zip of the same.
	zp := filepath.Join(dir, "bomb.zip")
	{
		f, _ := os.Create(zp)
		zw := zip.NewWriter(f)
		w, _ := zw.Create("rollout.jsonl")
		_, _ = w.Write(session)
		_, _ = io.Copy(w, &repeat{s: []byte("a"), n: big})
		zw.Close()
		f.Close()
	}
	for _, c := range []struct {
		name  string
		stdin io.Reader
		args  []string
		want  string
	}{
		{"tar.gz", nil, []string{"recover", "--from", tgz, "--dest", filepath.Join(dir, "d1"), "--dry-run", "--max-line", "64M"}, "longer than --max-line"},
		{"zip", nil, []string{"recover", "--from", zp, "--dest", filepath.Join(dir, "d2"), "--dry-run", "--max-line", "64M"}, "longer than --max-line"},
		{"stdin", io.MultiReader(bytes.NewReader(session), &repeat{s: []byte{0}, n: 512 << 20}),
			[]string{"recover", "-t", "-", "--dest", filepath.Join(dir, "d3"), "--dry-run", "--max-line", "64M"}, "longer than --max-line"},
		{"two million {} lines", io.MultiReader(bytes.NewReader(session), &repeat{s: []byte("{}\n"), n: 3 * 2000000}),
			[]string{"recover", "-t", "-", "--dest", filepath.Join(dir, "d4"), "--dry-run", "--json"}, "more warnings like the one before"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, mib := peakRSS(t, bin, c.stdin, c.args...)
			if code != ExitOK && code != ExitPartial {
				t.Fatalf("exit %d: %s", code, tail(out))
			}
			if !strings.Contains(out, c.want) {
				t.Errorf("no %q in: %s", c.want, tail(out))
			}
			if !strings.Contains(out, "greet") {
				t.Errorf("the session's files were not recovered: %s", tail(out))
			}
			if mib > limitMiB {
				t.Errorf("peak memory %d MiB, want under %d", mib, limitMiB)
			}
			t.Logf("%s: peak %d MiB", c.name, mib)
		})
	}
}

func tail(s string) string {
	if len(s) > 2000 {
		return "…" + s[len(s)-2000:]
	}
	return s
}

// TestHugeLineCostsItsSize reads a session file with one 128 MiB tool
// output line in the middle (whole, then cut short), and requires what the
// line adds to the command's peak memory to stay under 1.25 times the
// line: a plain file's long line is measured ahead and read into one
// buffer of its size (jsonl.WithSource). Gathered in blocks and copied
// once at its end, it cost 2.2 times; grown by appending, 4 times.
// What the line adds is the peak less the same command's on the session
// without it (about 60 MiB): the program itself, its code and its
// packages' start, grew when the Kubernetes client and the terminal UI came
// in (sandbox version peaks at 55 MiB, 23 MiB before), and a limit on the
// whole command moved with it.
func TestHugeLineCostsItsSize(t *testing.T) {
	bin, dir := measuredBinary(t, "writes a 128 MiB file")
	session, err := os.ReadFile(samplePath)
	if err != nil {
		t.Fatal(err)
	}
	code, out, base := peakRSS(t, bin, nil, "recover", "-t", samplePath, "--dest", filepath.Join(dir, "d"), "--dry-run")
	if code != ExitOK {
		t.Fatalf("the sample alone: exit %d: %s", code, tail(out))
	}
	const line = 128 << 20
	lines := bytes.SplitAfter(session, []byte("\n"))
	// The line whole, and cut short (a damaged line, which the reader looks
	// past before it says so, held twice until this was mended).
	for _, end := range []string{"\"}}\n", "\n"} {
		name := filepath.Join(dir, filepath.Base(samplePath))
		f, err := os.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = f.Write(bytes.Join(lines[:3], nil))
		head := `{"timestamp":"2026-11-20T10:12:09.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_huge","output":"`
		_, _ = f.WriteString(head)
		_, _ = io.Copy(f, &repeat{s: []byte("build log line \\n"), n: line - int64(len(head)) - 4})
		_, _ = f.WriteString(end)
		_, _ = f.Write(bytes.Join(lines[3:], nil))
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		code, out, mib := peakRSS(t, bin, nil, "recover", "-t", name, "--dest", filepath.Join(dir, "d"), "--dry-run")
		if code != ExitOK && code != ExitPartial {
			t.Fatalf("exit %d: %s", code, tail(out))
		}
		if !strings.Contains(out, "greet") {
			t.Errorf("the session's files were not recovered: %s", tail(out))
		}
		damaged := end == "\n"
		if warned := strings.Contains(out, filepath.Base(name)+":4:"); warned != damaged {
			t.Errorf("damaged %v, but a warning for line 4 %v: %s", damaged, warned, tail(out))
		}
		if limit := int64(line) * 5 / 4 >> 20; mib-base > limit {
			t.Errorf("damaged %v: the line adds %d MiB to the peak memory (%d MiB, the command without it %d MiB) for a line of %d MiB, want under %d",
				damaged, mib-base, mib, base, line>>20, limit)
		}
		t.Logf("damaged %v: peak %d MiB (%d without the line) for a line of %d MiB", damaged, mib, base, line>>20)
	}
}
