// Command prepare builds what internal/k8stest needs and its cache lacks
// (the Kubernetes programs from the Go module proxy, and the pause and
// busybox images), for .ci/run to call before the tests. With -programs
// it builds the programs only: they need nothing but Go, so .ci/run starts
// them at once, and the images, which need Debian's busybox, after its
// install.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/agentsandbox/sandbox/internal/k8stest"
)

func main() {
	programs := flag.Bool("programs", false, "build the Kubernetes programs only, not the images")
	flag.Parse()
	began := time.Now()
	prepare, what := k8stest.Prepare, "ready"
	if *programs {
		prepare, what = k8stest.Build, "programs built"
	}
	if err := prepare(context.Background(), os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "k8stest prepare: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("Kubernetes %s %s in %s (%s)\n", k8stest.Version, what, time.Since(began).Round(time.Second), k8stest.CacheDir())
}
