//go:build !unix

// Package flock takes exclusive advisory locks on files.
package flock

import "errors"

// Lock is not available on this system.
func Lock(string) (func(), error) {
	return nil, errors.New("file locks are not available on this system")
}
