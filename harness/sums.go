package harness

import (
	"encoding/hex"
	"errors"
	"strings"
)

// sumsName is the checksum list, the last member of a snapshot.
const sumsName = "SHA256SUMS"

// The kinds of snapshot member. A snapshot holds nothing else: no hard
// links, devices, fifos or sparse files.
type memberKind byte

const (
	kindFile memberKind = 'f'
	kindDir  memberKind = 'd'
	kindLink memberKind = 'l'
)

func (k memberKind) String() string {
	switch k {
	case kindFile:
		return "regular file"
	case kindDir:
		return "directory"
	case kindLink:
		return "symbolic link"
	}
	return "member"
}

// SHA256SUMS lists every member of a snapshot, one per line, in the format
// of sha256sum(1) for files, so that sha256sum -c checks them in an
// unpacked snapshot:
//
//	<sha256 of the bytes>  home/.claude/note
//	symlink:<sha256 of the target>  home/.claude/link
//	directory  home/.claude
//
// A name holding a backslash, newline or carriage return is escaped as
// sha256sum does (\\, \n, \r) and its line starts with a backslash.

// sumsLine formats one line of SHA256SUMS.
func sumsLine(kind memberKind, sum []byte, name string) string {
	var field string
	switch kind {
	case kindFile:
		field = hex.EncodeToString(sum)
	case kindLink:
		field = "symlink:" + hex.EncodeToString(sum)
	default:
		field = "directory"
	}
	esc := strings.NewReplacer(`\`, `\\`, "\n", `\n`, "\r", `\r`).Replace(name)
	if esc != name {
		return `\` + field + "  " + esc + "\n"
	}
	return field + "  " + name + "\n"
}

var errSumsLine = errors.New(`want "<sha256>  <name>", "symlink:<sha256>  <name>" or "directory  <name>"`)

// parseSumsLine reads one line of SHA256SUMS (without its newline). For a
// directory, sum is nil.
func parseSumsLine(line string) (memberKind, []byte, string, error) {
	escaped := strings.HasPrefix(line, `\`)
	if escaped {
		line = line[1:]
	}
	field, name, ok := strings.Cut(line, "  ")
	if !ok || name == "" {
		return 0, nil, "", errSumsLine
	}
	kind := kindFile
	if field == "directory" {
		kind, field = kindDir, ""
	} else if f, ok := strings.CutPrefix(field, "symlink:"); ok {
		kind, field = kindLink, f
	}
	var sum []byte
	if kind != kindDir {
		var err error
		if sum, err = hex.DecodeString(field); err != nil || len(sum) != 32 {
			return 0, nil, "", errSumsLine
		}
	}
	if escaped {
		var b strings.Builder
		for i := 0; i < len(name); i++ {
			c := name[i]
			if c != '\\' {
				b.WriteByte(c)
				continue
			}
			if i++; i == len(name) {
				return 0, nil, "", errors.New(`a name ends in a lone \`)
			}
			switch name[i] {
			case '\\':
				b.WriteByte('\\')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			default:
				return 0, nil, "", errors.New(`a name holds an escape other than \\, \n or \r`)
			}
		}
		name = b.String()
	}
	return kind, sum, name, nil
}
