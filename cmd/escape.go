package cmd

import "github.com/agentsandbox/sandbox/internal/termsafe"

// printable, inert and inertLines make what a transcript says safe to
// print (package termsafe).
func printable(s string) string { return termsafe.Printable(s) }

func inert(line string) string { return termsafe.Inert(line) }

func inertLines(s string) string { return termsafe.InertLines(s) }
