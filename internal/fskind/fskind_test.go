package fskind

import (
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestOf names real files of each kind, as Lstat sees them.
func TestOf(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	os.WriteFile(file, nil, 0o600)
	os.Symlink(file, filepath.Join(dir, "l"))
	if err := syscall.Mkfifo(filepath.Join(dir, "p"), 0o600); err != nil {
		t.Fatal(err)
	}
	if l, err := net.Listen("unix", filepath.Join(dir, "s")); err == nil {
		defer l.Close()
	}
	for name, want := range map[string]string{"f": "a regular file", "l": "a symbolic link", ".": "a folder", "p": "a named pipe", "s": "a socket"} {
		info, err := os.Lstat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if got := Of(info.Mode()); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
	if info, err := os.Stat("/dev/null"); err == nil && Of(info.Mode()) != "a device" {
		t.Errorf("/dev/null: %q", Of(info.Mode()))
	}
}
