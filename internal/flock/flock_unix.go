//go:build unix

// Package flock takes exclusive advisory locks on files (flock(2)): one
// writer at a time for a manifest's export --add and for a vault's sync.
package flock

import (
	"os"
	"syscall"
)

// Lock takes an exclusive lock on name (created if needed), waiting for
// it; the function it returns releases it. The kernel releases it too when
// the process dies, so a killed holder never leaves it taken.
func Lock(name string) (func(), error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
