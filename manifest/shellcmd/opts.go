package shellcmd

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// flags describes the options of a command, as GNU getopt reads them:
// short options bundle (-rf), a short option's value is the rest of its
// word or the next word, long options take a value after = or, for those
// listed in longVal, as the next word, and -- ends the options.
type flags struct {
	shortVal string   // short options that take a value
	longVal  []string // long options that take the next word as their value
	// posix stops at the first operand, as BSD tools and git's parsers do
	// not: with it, "-x" after an operand is an operand.
	posix bool
}

// opt is one option given to a command.
type opt struct {
	name string // "r" for -r, "recursive" for --recursive
	val  arg    // its value, for options that take one
}

// parse splits args into options and operands. A word that is not literal
// is an operand: whatever it expands to, it cannot be told to be an option.
// Options unknown to f take no value, so their neighbours stay operands.
func (f flags) parse(args []arg) (opts []opt, operands []arg) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if name, ok := longPrefix(a); ok {
			// --name=$VALUE: an option whose value cannot be told.
			opts = append(opts, opt{name: name, val: arg{text: a.text}})
			continue
		}
		if !a.lit || len(a.val) < 2 || a.val[0] != '-' {
			operands = append(operands, a)
			if f.posix {
				return opts, append(operands, args[i+1:]...)
			}
			continue
		}
		if a.val == "--" {
			return opts, append(operands, args[i+1:]...)
		}
		if long, ok := strings.CutPrefix(a.val, "--"); ok {
			name, val, eq := strings.Cut(long, "=")
			o := opt{name: name}
			switch {
			case eq:
				o.val = arg{val: val, lit: true, text: a.text}
			case slices.Contains(f.longVal, name) && i+1 < len(args):
				i++
				o.val = args[i]
			}
			opts = append(opts, o)
			continue
		}
		for j := 1; j < len(a.val); j++ {
			name := a.val[j : j+1]
			if !strings.Contains(f.shortVal, name) {
				opts = append(opts, opt{name: name})
				continue
			}
			o := opt{name: name}
			if rest := a.val[j+1:]; rest != "" {
				o.val = arg{val: rest, lit: true, text: a.text}
			} else if i+1 < len(args) {
				i++
				o.val = args[i]
			}
			opts = append(opts, o)
			break
		}
	}
	return opts, operands
}

// has reports whether any of names was given.
func has(opts []opt, names ...string) bool {
	for _, o := range opts {
		if slices.Contains(names, o.name) {
			return true
		}
	}
	return false
}

// value returns the value of the last of names given.
func value(opts []opt, names ...string) (arg, bool) {
	for i := len(opts) - 1; i >= 0; i-- {
		if slices.Contains(names, opts[i].name) {
			return opts[i].val, true
		}
	}
	return arg{}, false
}

// longPrefix returns the name of a long option written --name=… whose value
// is not literal.
func longPrefix(a arg) (string, bool) {
	if a.lit || a.word == nil || len(a.word.Parts) == 0 {
		return "", false
	}
	l, ok := a.word.Parts[0].(*syntax.Lit)
	if !ok {
		return "", false
	}
	long, ok := strings.CutPrefix(l.Value, "--")
	if !ok {
		return "", false
	}
	name, _, eq := strings.Cut(long, "=")
	return name, eq && name != ""
}
