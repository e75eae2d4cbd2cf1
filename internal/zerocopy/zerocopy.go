// Package zerocopy is the one place sandbox reads memory in place instead
// of copying it, and the only package that imports unsafe. Its four
// functions are the whole of the trick: a view of bytes as a string, of a
// string as bytes, and the two questions a reader of views must answer
// (does a string lie in a buffer; where, in a string, do bytes that view it
// lie). Every view is valid only while the memory it views is neither
// written nor reused: a caller that keeps what it read copies it
// (strings.Clone), and manifest.Op.OwnBorrowed does so for what a parser
// emits.
package zerocopy

import "unsafe"

// String returns a string viewing b's bytes: no copy, valid while b is
// neither written nor reused.
func String(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// Bytes returns a slice viewing s's bytes, which must never be written
// (strings are immutable; writing one is undefined behaviour).
func Bytes(s string) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// Within returns whether a string has bytes in b's memory: the strings a
// reader of b in place must copy to keep. A nil or empty b holds none (and
// Within returns nil).
func Within(b []byte) func(string) bool {
	if len(b) == 0 {
		return nil
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	hi := lo + uintptr(len(b))
	return func(s string) bool {
		if len(s) == 0 {
			return false
		}
		at := uintptr(unsafe.Pointer(unsafe.StringData(s)))
		return at < hi && lo < at+uintptr(len(s))
	}
}

// Inside returns the substring of s whose bytes raw views, when raw lies
// within s (a value found in a view of s, read back as a string without a
// copy).
func Inside(s string, raw []byte) (string, bool) {
	base := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	at := uintptr(unsafe.Pointer(unsafe.SliceData(raw)))
	if at < base || at+uintptr(len(raw)) > base+uintptr(len(s)) {
		return "", false
	}
	return s[at-base : at-base+uintptr(len(raw))], true
}
