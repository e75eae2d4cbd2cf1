// Package osenv is the environment a command runs in, passed rather than
// read from the process: the CLI hands its libraries the environment it
// was started with, and a test its own, so that tests which give each
// command a different home can run side by side.
package osenv

import (
	"errors"
	"os"
	"runtime"
	"strings"
)

// Env is an environment as KEY=VALUE entries; a later entry for a key
// wins, as exec's does. The nil Env is the process's own.
type Env []string

// Process is the process's environment, as it is now.
func Process() Env { return Env(os.Environ()) }

// Lookup returns the value of key and whether it is set.
func (e Env) Lookup(key string) (string, bool) {
	if e == nil {
		return os.LookupEnv(key)
	}
	for i := len(e) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(e[i], "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

// Get returns the value of key, or "" when it is not set.
func (e Env) Get(key string) string {
	v, _ := e.Lookup(key)
	return v
}

// List returns the entries, for a child process (exec.Cmd.Env).
func (e Env) List() []string {
	if e == nil {
		return os.Environ()
	}
	return append([]string(nil), e...)
}

// With returns e with key set to value (e is not changed).
func (e Env) With(key, value string) Env {
	return append(e.List(), key+"="+value)
}

// Home is the user's home directory as os.UserHomeDir finds it, from this
// environment: $HOME (%USERPROFILE% on Windows, $home on Plan 9).
func (e Env) Home() (string, error) {
	key := "HOME"
	switch runtime.GOOS {
	case "windows":
		key = "USERPROFILE"
	case "plan9":
		key = "home"
	}
	if v := e.Get(key); v != "" {
		return v, nil
	}
	if e == nil {
		return os.UserHomeDir()
	}
	return "", errors.New("$" + key + " is not defined")
}
