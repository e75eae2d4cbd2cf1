// Command testlog reads `go test -json` on standard input and prints what
// plain `go test` prints (a line per package, the output of failed tests,
// build errors), then every skipped test with its reason, so that CI shows
// what did not run. It exits 1 when a package or a build failed.
//
//	go test -json ./... | go run .ci/testlog/main.go
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action     string
	Package    string
	ImportPath string
	Test       string
	Output     string
}

type key struct{ pkg, test string }

func main() {
	failed, err := run(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testlog:", err)
		os.Exit(2)
	}
	if failed {
		os.Exit(1)
	}
}

func run(in io.Reader, out io.Writer) (failed bool, err error) {
	buf := map[key][]string{}
	// The output of failed tests, printed when their package ends, parents
	// before their subtests as go test prints them.
	failures := map[string]map[string][]string{}
	var skipped []string
	passed, failedTests := 0, 0
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			// Not an event: something go test printed itself.
			fmt.Fprintln(out, sc.Text())
			continue
		}
		k := key{e.Package, e.Test}
		switch e.Action {
		case "build-output":
			fmt.Fprint(out, e.Output)
		case "build-fail":
			failed = true
		case "output":
			buf[k] = append(buf[k], e.Output)
		case "pass", "skip", "fail":
			lines := buf[k]
			delete(buf, k)
			if e.Test == "" { // the package's own end
				if e.Action == "fail" {
					failed = true
					// Tests that never ended (a panic, a timeout) show what they said.
					for o := range buf {
						if o.pkg == e.Package {
							addFailure(failures, o, buf[o])
							delete(buf, o)
						}
					}
				}
				var names []string
				for name := range failures[e.Package] {
					names = append(names, name)
				}
				sort.Strings(names)
				for _, name := range names {
					printLines(out, failures[e.Package][name])
				}
				delete(failures, e.Package)
				for _, l := range lines {
					if e.Action == "fail" || !(l == "PASS\n" || strings.HasPrefix(l, "=== ")) {
						fmt.Fprint(out, l)
					}
				}
				continue
			}
			switch e.Action {
			case "pass":
				passed++
			case "fail":
				failedTests++
				addFailure(failures, k, lines)
			case "skip":
				skipped = append(skipped, fmt.Sprintf("%s %s: %s", e.Package, e.Test, reason(lines)))
			}
		}
	}
	if err := sc.Err(); err != nil {
		return true, err
	}
	fmt.Fprintf(out, "tests: %d passed, %d failed, %d skipped\n", passed, failedTests, len(skipped))
	if len(skipped) > 0 {
		fmt.Fprintf(out, "skipped tests:\n")
		for _, s := range skipped {
			fmt.Fprintf(out, "  %s\n", s)
		}
	}
	return failed, nil
}

func addFailure(failures map[string]map[string][]string, k key, lines []string) {
	if failures[k.pkg] == nil {
		failures[k.pkg] = map[string][]string{}
	}
	failures[k.pkg][k.test] = append(failures[k.pkg][k.test], lines...)
}

// printLines prints a test's output as go test does, without the
// progress lines of -v.
func printLines(out io.Writer, lines []string) {
	for _, l := range lines {
		if !strings.HasPrefix(l, "=== ") {
			fmt.Fprint(out, l)
		}
	}
}

// reason is what a skipped test said, on one line.
func reason(lines []string) string {
	var said []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		said = append(said, t)
	}
	if len(said) == 0 {
		return "(no reason given)"
	}
	return strings.Join(said, " ")
}
