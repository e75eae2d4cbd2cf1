// Command prepare builds what internal/k8stest needs and its cache lacks
// (the Kubernetes programs from the Go module proxy, and the pause and
// busybox images), for .ci/run to call before the tests.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/agentsandbox/sandbox/internal/k8stest"
)

func main() {
	began := time.Now()
	if err := k8stest.Prepare(context.Background(), os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "k8stest prepare: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("Kubernetes %s ready in %s (%s)\n", k8stest.Version, time.Since(began).Round(time.Second), k8stest.CacheDir())
}
