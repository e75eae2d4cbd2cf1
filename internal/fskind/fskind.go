// Package fskind names what a file is, for messages about files that are
// not what they should be (a named pipe where a transcript was expected, a
// link where a session's file was).
package fskind

import "io/fs"

// Of says what a file of mode m is: "a regular file", "a symbolic link",
// "a folder", "a named pipe", "a socket", "a device" or "a special file".
func Of(m fs.FileMode) string {
	switch t := m.Type(); {
	case t&fs.ModeSymlink != 0:
		return "a symbolic link"
	case t.IsDir():
		return "a folder"
	case t&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeDevice != 0:
		return "a device"
	case t.IsRegular():
		return "a regular file"
	}
	return "a special file"
}
