//go:build !unix

package vault

import "io/fs"

// inode is not known here: size and time tell a change.
func inode(fs.FileInfo) uint64 { return 0 }

// noFollow is not available here: the link check before the open stands.
const noFollow = 0
