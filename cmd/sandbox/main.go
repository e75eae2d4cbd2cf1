// Command sandbox gets back the work of coding agents whose sandbox is gone.
package main

import (
	"os"

	"github.com/agentsandbox/sandbox/cmd"
)

func main() {
	os.Exit(cmd.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
