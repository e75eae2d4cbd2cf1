package s3test

import "syscall"

// procAttr puts the server in a process group of its own, and has the
// kernel kill it when the test process dies, so a killed test leaves no
// server behind.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
