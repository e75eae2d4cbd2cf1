package cmd

import "github.com/agentsandbox/sandbox/internal/termsafe"

// printable and inertLines make what a transcript says safe to print
// (package termsafe).
func printable(s string) string { return termsafe.Printable(s) }

func inertLines(s string) string { return termsafe.InertLines(s) }
