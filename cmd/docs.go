package cmd

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// WriteReference writes the CLI reference (docs/cli.md) in Markdown, from
// the commands' own help, so the two cannot drift apart.
func WriteReference(w io.Writer) error {
	root := newApp(nil, io.Discard, io.Discard).rootCommand()
	var b bytes.Buffer
	b.WriteString("# sandbox command reference\n\n")
	b.WriteString("Generated from the commands' own help by `go test ./cmd -run TestReference -update`; do not edit.\n\n")
	writeCommand(&b, root)
	for _, c := range root.Commands() {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		writeCommand(&b, c)
		for _, sub := range c.Commands() {
			if !sub.Hidden && sub.Name() != "help" {
				writeCommand(&b, sub)
			}
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

func writeCommand(b *bytes.Buffer, c *cobra.Command) {
	fmt.Fprintf(b, "## `%s`\n\n%s\n\n", c.CommandPath(), c.Short)
	fmt.Fprintf(b, "```\n%s\n```\n\n", c.UseLine())
	if c.Long != "" {
		b.WriteString(c.Long + "\n\n")
	}
	if c.Example != "" {
		fmt.Fprintf(b, "Examples:\n\n```\n%s\n```\n\n", c.Example)
	}
	writeFlags(b, "Flags", c.NonInheritedFlags())
	if c.HasParent() {
		writeFlags(b, "Global flags", c.InheritedFlags())
	}
}

func writeFlags(b *bytes.Buffer, title string, fs *pflag.FlagSet) {
	if !fs.HasAvailableFlags() {
		return
	}
	fmt.Fprintf(b, "%s:\n\n| flag | meaning | default |\n|---|---|---|\n", title)
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Name == "help" {
			return
		}
		name := "--" + f.Name
		if f.Shorthand != "" {
			name = "-" + f.Shorthand + ", " + name
		}
		varname, usage := pflag.UnquoteUsage(f)
		if varname != "" {
			name += " " + varname
		}
		def := f.DefValue
		if def == "[]" || def == "false" || def == "0" {
			def = ""
		}
		fmt.Fprintf(b, "| `%s` | %s | %s |\n", name, strings.ReplaceAll(usage, "|", "\\|"), def)
	})
	b.WriteString("\n")
}
