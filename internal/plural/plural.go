// Package plural says counts of things in English: "1 file", "2 files".
package plural

import "strconv"

// S is the ending of a noun counted n times: "" for one, "s" otherwise.
func S(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Count says n things: "1 file", "2 files".
func Count(n int, noun string) string {
	return strconv.Itoa(n) + " " + noun + S(n)
}
