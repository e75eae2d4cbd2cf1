// Package cmd is the sandbox command line: cobra commands, flags, output and
// logging. It is the only package that prints. Main maps errors to exit
// codes in one place (0 success, 1 failure, 2 usage, 3 partial, 130
// interrupted).
package cmd
