//go:build !unix

package cmd

import "errors"

func lockFile(string) (func(), error) {
	return nil, errors.New("export --add needs file locks, which this system lacks")
}
