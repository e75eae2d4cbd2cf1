//go:build unix

package vault

import (
	"io/fs"
	"syscall"
)

// inode is a file's inode number: a file replaced by another of the same
// size and time (a rename over it) is still seen to change.
func inode(info fs.FileInfo) uint64 {
	if sys, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(sys.Ino)
	}
	return 0
}

// noFollow opens a source without following a symbolic link put in its
// place since it was looked at, and without waiting on a named pipe put
// there (the opened file is then refused as not regular).
const noFollow = syscall.O_NOFOLLOW | syscall.O_NONBLOCK
