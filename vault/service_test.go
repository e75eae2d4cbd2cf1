package vault

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentsandbox/sandbox/internal/osenv"
)

// svcTestEnv is an environment whose home and XDG folders are fresh
// temporary ones, so that no test reads or writes the real home, and whose
// PATH is an empty folder, so that nothing real runs unless a test puts it
// there.
func svcTestEnv(t *testing.T) osenv.Env {
	t.Helper()
	root := t.TempDir()
	var env osenv.Env
	for _, v := range []struct{ key, dir string }{
		{"HOME", "home"},
		{"XDG_CONFIG_HOME", "config"},
		{"XDG_DATA_HOME", "data"},
		{"XDG_STATE_HOME", "state"},
		{"XDG_CACHE_HOME", "cache"},
		{"PATH", "bin"},
	} {
		dir := filepath.Join(root, v.dir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		env = append(env, v.key+"="+dir)
	}
	return env
}

// svcRecorder stands in for systemctl and launchctl: it records each
// command, and fails those fail says to.
type svcRecorder struct {
	calls [][]string
	fail  func(cmd []string) error
}

func (r *svcRecorder) run(name string, args ...string) error {
	cmd := append([]string{name}, args...)
	r.calls = append(r.calls, cmd)
	if r.fail != nil {
		return r.fail(cmd)
	}
	return nil
}

// svcTrickyArgs are arguments that a unit or a plist could mangle.
var svcTrickyArgs = []string{
	"vault", "sync", "--watch", "--to", "/home/me/My Vault",
	"100%", "%h", "%%", "%", "$HOME", "${HOME}", "$$", "$",
	`a"b`, "it's", `'single'`, `back\slash`, `trail\`, `\n`, `\x41`,
	"", " ", ";", `\;`, "-dash", "@at", ":colon", "+plus", "!bang",
	"tab\tnew\nline\rcr", "\x01\x1b\x7f", "é ünï ☃ 🗄", "\xff\xfe", "#hash", "a b  c",
	"<&>", "]]>", "&amp;",
}

// svcSystemdWords splits a systemd command line as systemd does (the
// quoting and C escapes of extract_first_word, then % specifiers, then $
// variables), strictly: a specifier or a variable other than %% and $$ is
// an error, since the unit means every word literally.
func svcSystemdWords(line string) ([]string, error) {
	var words []string
	i := 0
	for {
		for i < len(line) && strings.IndexByte(" \t", line[i]) >= 0 {
			i++
		}
		if i == len(line) {
			return words, nil
		}
		var w []byte
		var quote byte
	word:
		for ; i < len(line); i++ {
			c := line[i]
			switch {
			case quote == 0 && (c == ' ' || c == '\t'):
				break word
			case c == '\\':
				b, n, err := svcCUnescape(line[i+1:])
				if err != nil {
					return nil, fmt.Errorf("word %d: %w", len(words), err)
				}
				w = append(w, b...)
				i += n
			case quote == 0 && (c == '"' || c == '\''):
				quote = c
			case c == quote:
				quote = 0
			default:
				w = append(w, c)
			}
		}
		if quote != 0 {
			return nil, errors.New("unbalanced quoting")
		}
		s, err := svcUndouble(string(w), '%')
		if err == nil {
			s, err = svcUndouble(s, '$')
		}
		if err != nil {
			return nil, fmt.Errorf("word %d %q: %w", len(words), w, err)
		}
		words = append(words, s)
	}
}

// svcCUnescape reads the escape after a backslash as systemd's
// cunescape_one does, returning the bytes it stands for and how many bytes
// it took.
func svcCUnescape(s string) ([]byte, int, error) {
	if s == "" {
		return nil, 0, errors.New("a backslash ends the line")
	}
	simple := map[byte]byte{'a': '\a', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t', 'v': '\v',
		'\\': '\\', '"': '"', '\'': '\'', 's': ' '}
	if b, ok := simple[s[0]]; ok {
		return []byte{b}, 1, nil
	}
	number := func(digits, base int) (uint64, error) {
		if len(s) < 1+digits {
			return 0, fmt.Errorf("short escape \\%s", s)
		}
		v, err := strconv.ParseUint(s[1:1+digits], base, 32)
		if err == nil && v == 0 {
			err = errors.New("a NUL")
		}
		return v, err
	}
	switch s[0] {
	case 'x':
		v, err := number(2, 16)
		return []byte{byte(v)}, 3, err
	case 'u', 'U':
		n := 4
		if s[0] == 'U' {
			n = 8
		}
		v, err := number(n, 16)
		return utf8.AppendRune(nil, rune(v)), 1 + n, err
	case '0', '1', '2', '3':
		// Octal has no letter: the digits start at s[0].
		v, err := strconv.ParseUint(s[:min(3, len(s))], 8, 8)
		if err == nil && v == 0 {
			err = errors.New("a NUL")
		}
		return []byte{byte(v)}, 3, err
	}
	return nil, 0, fmt.Errorf("unknown escape \\%c", s[0])
}

// svcUndouble reads c doubled as one c, and refuses c alone (a specifier or
// a variable systemd would expand).
func svcUndouble(s string, c byte) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != c {
			b.WriteByte(s[i])
			continue
		}
		if i+1 == len(s) || s[i+1] != c {
			return "", fmt.Errorf("%c not doubled: systemd would expand it", c)
		}
		b.WriteByte(c)
		i++
	}
	return b.String(), nil
}

// svcUnitSettings reads a unit file into section -> key -> values.
func svcUnitSettings(t *testing.T, data []byte) map[string]map[string][]string {
	t.Helper()
	out := map[string]map[string][]string{}
	section := ""
	for n, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case line[0] == '[' && line[len(line)-1] == ']':
			section = line[1 : len(line)-1]
			out[section] = map[string][]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Fatalf("unit line %d %q is neither a section nor a setting", n+1, line)
			}
			if strings.HasSuffix(v, `\`) {
				t.Fatalf("unit line %d %q ends in a backslash, which continues it on the next", n+1, line)
			}
			out[section][k] = append(out[section][k], v)
		}
	}
	return out
}

func TestServicePath(t *testing.T) {
	for _, c := range []struct {
		name string
		env  osenv.Env
		goos string
		want string
		err  string
	}{
		{"linux xdg", osenv.Env{"HOME=/h", "XDG_CONFIG_HOME=/c"}, "linux", "/c/systemd/user/sandbox-vault.service", ""},
		{"linux default", osenv.Env{"HOME=/h"}, "linux", "/h/.config/systemd/user/sandbox-vault.service", ""},
		{"linux relative xdg is ignored", osenv.Env{"HOME=/h", "XDG_CONFIG_HOME=rel"}, "linux", "/h/.config/systemd/user/sandbox-vault.service", ""},
		{"darwin", osenv.Env{"HOME=/Users/me", "XDG_CONFIG_HOME=/c"}, "darwin", "/Users/me/Library/LaunchAgents/dev.agentsandbox.vault.plist", ""},
		{"no home", osenv.Env{"XDG_CONFIG_HOME=/c"}, "linux", "", "HOME"},
		{"relative home", osenv.Env{"HOME=h"}, "darwin", "", "not an absolute path"},
		{"windows", osenv.Env{"HOME=/h"}, "windows", "", "supports Linux (systemd) and macOS (launchd)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ServicePath(ServiceOptions{Env: c.env, GOOS: c.goos})
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("got %q, %v; want an error saying %q", got, err, c.err)
				}
				return
			}
			if err != nil || got != filepath.FromSlash(c.want) {
				t.Fatalf("got %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

// svcTrickyEnv are variables a service is given, holding what systemd and
// XML read specially.
var svcTrickyEnv = []string{"CLAUDE_CONFIG_DIR=/data/claude state/100% mine", `CODEX_HOME=/x/"q"\\$HOME`, "XDG_DATA_HOME=/x/é & <y>"}

func TestServiceUnit(t *testing.T) {
	env := svcTestEnv(t)
	bin := "/opt/my tools/100% sure/sandbox"
	rec := &svcRecorder{}
	res, err := Install(ServiceOptions{Env: env, Binary: bin, Args: svcTrickyArgs, Environment: svcTrickyEnv, GOOS: "linux", Run: rec.run})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(env.Get("XDG_CONFIG_HOME"), "systemd", "user", "sandbox-vault.service"); res.Path != want {
		t.Fatalf("wrote %s, want %s", res.Path, want)
	}
	data, err := os.ReadFile(res.Path)
	if err != nil {
		t.Fatal(err)
	}
	if !utf8.Valid(data) {
		t.Error("the unit is not UTF-8")
	}
	units := svcUnitSettings(t, data)
	for _, c := range []struct{ section, key, want string }{
		{"Unit", "Description", svcDescription},
		{"Service", "Type", "simple"},
		{"Service", "Restart", "on-failure"},
		{"Service", "RestartSec", "5"},
		{"Service", "Nice", "10"},
		{"Install", "WantedBy", "default.target"},
	} {
		if got := units[c.section][c.key]; len(got) != 1 || got[0] != c.want {
			t.Errorf("[%s] %s=%q, want %q", c.section, c.key, got, c.want)
		}
	}
	if strings.Contains(svcDescription, "%") {
		t.Error("the Description holds a %, which systemd would read as a specifier")
	}
	execStart := units["Service"]["ExecStart"]
	if len(execStart) != 1 {
		t.Fatalf("ExecStart=%q: want one", execStart)
	}
	if !strings.HasPrefix(execStart[0], `"/`) {
		t.Errorf("ExecStart=%s: the program must be an absolute path, with no prefix systemd reads (-@:+!)", execStart[0])
	}
	words, err := svcSystemdWords(execStart[0])
	if err != nil {
		t.Fatalf("ExecStart=%s: %v", execStart[0], err)
	}
	if want := append([]string{bin}, svcTrickyArgs...); !reflect.DeepEqual(words, want) {
		t.Errorf("ExecStart reads back as\n%q\nwant\n%q", words, want)
	}

	// Environment= reads back as each variable, whole: systemd expands
	// specifiers there (% doubled) but not variables ($ left alone).
	envLines := units["Service"]["Environment"]
	if len(envLines) != len(svcTrickyEnv) {
		t.Fatalf("Environment=%q, want %d lines", envLines, len(svcTrickyEnv))
	}
	for i, line := range envLines {
		words, err := svcSystemdWords(strings.ReplaceAll(line, "$", "$$"))
		if err != nil || len(words) != 1 || words[0] != svcTrickyEnv[i] {
			t.Errorf("Environment=%s reads back as %q (%v), want %q", line, words, err, svcTrickyEnv[i])
		}
	}

	info, err := os.Stat(res.Path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o644 {
		t.Errorf("the unit's mode is %v, want 0644", info.Mode().Perm())
	}
	ents, err := os.ReadDir(filepath.Dir(res.Path))
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 {
		t.Errorf("the unit's folder holds %v: a temporary file was left behind", ents)
	}
}

// TestServiceSplitterRefuses makes sure the test's own reading of
// ExecStart would notice what systemd reads differently.
func TestServiceSplitterRefuses(t *testing.T) {
	for _, line := range []string{`"/a" "b`, `"/a" %h`, `"/a" $HOME`, `"/a" "\q"`, `"/a" "\x00"`, `"/a" x\`} {
		if words, err := svcSystemdWords(line); err == nil {
			t.Errorf("%s read as %q, want an error", line, words)
		}
	}
	words, err := svcSystemdWords(`"/a b" c\sd 'e "f' "" "\101\x42\u00e9"`)
	if want := []string{"/a b", "c d", `e "f`, "", "ABé"}; err != nil || !reflect.DeepEqual(words, want) {
		t.Errorf("read %q, %v; want %q", words, err, want)
	}
}

// TestServiceSystemdVerify has systemd itself read the unit, when
// systemd-analyze is here: its verify parses ExecStart and checks that the
// program exists, without a running systemd.
func TestServiceSystemdVerify(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("no systemd-analyze here to read the unit as systemd does")
	}
	env := svcTestEnv(t)
	dir := filepath.Join(env.Get("HOME"), "my bin 100%")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "sandbox")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	res, err := Install(ServiceOptions{Env: env, Binary: bin, Args: svcTrickyArgs, Environment: svcTrickyEnv, GOOS: "linux", Run: (&svcRecorder{}).run})
	if err != nil {
		t.Fatal(err)
	}
	runtimeDir := t.TempDir()
	cmd := exec.Command(analyze, "--user", "verify", "--man=no", res.Path)
	cmd.Env = env.With("XDG_RUNTIME_DIR", runtimeDir).With("PATH", "/usr/bin:/bin").List()
	out, err := cmd.CombinedOutput()
	if err != nil && bytes.Contains(out, []byte("Failed to initialize manager")) {
		t.Skipf("systemd-analyze cannot run here: %s", out)
	}
	if err != nil || bytes.Contains(out, []byte(res.Path)) {
		data, _ := os.ReadFile(res.Path)
		t.Fatalf("systemd-analyze verify: %v\n%s\nthe unit:\n%s", err, out, data)
	}
}

// svcPlistValue reads the next plist value from d: a string, a bool, an
// []any or a map[string]any. It returns false at the end of the enclosing
// element instead.
func svcPlistValue(d *xml.Decoder) (any, bool, error) {
	for {
		tok, err := d.Token()
		if err != nil {
			return nil, false, err
		}
		switch tok := tok.(type) {
		case xml.EndElement:
			return nil, false, nil
		case xml.StartElement:
			switch tok.Name.Local {
			case "string", "key":
				var s string
				err := d.DecodeElement(&s, &tok)
				return s, true, err
			case "true", "false":
				return tok.Name.Local == "true", true, d.Skip()
			case "array":
				var a []any
				for {
					v, ok, err := svcPlistValue(d)
					if err != nil || !ok {
						return a, true, err
					}
					a = append(a, v)
				}
			case "dict":
				m := map[string]any{}
				for {
					k, ok, err := svcPlistValue(d)
					if err != nil || !ok {
						return m, true, err
					}
					key, isKey := k.(string)
					v, ok, err := svcPlistValue(d)
					if err != nil || !ok || !isKey {
						return nil, false, fmt.Errorf("dict entry %v: %v (a key without a value?)", k, err)
					}
					m[key] = v
				}
			default:
				return nil, false, fmt.Errorf("unexpected <%s>", tok.Name.Local)
			}
		}
	}
}

func svcDecodePlist(data []byte) (map[string]any, error) {
	d := xml.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := d.Token()
		if err != nil {
			return nil, err
		}
		if se, ok := tok.(xml.StartElement); ok {
			if se.Name.Local != "plist" {
				return nil, fmt.Errorf("the root is <%s>, not <plist>", se.Name.Local)
			}
			v, _, err := svcPlistValue(d)
			if err != nil {
				return nil, err
			}
			m, ok := v.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("the plist holds %T, not a dict", v)
			}
			// Nothing may follow but the end.
			for {
				tok, err := d.Token()
				if err == io.EOF {
					return m, nil
				}
				if err != nil {
					return nil, err
				}
				if _, ok := tok.(xml.StartElement); ok {
					return nil, errors.New("more after the plist's dict")
				}
			}
		}
	}
}

func TestServicePlist(t *testing.T) {
	env := svcTestEnv(t)
	home := env.Get("HOME")
	bin := "/Applications/My Tools & Co/<sandbox>"
	args := svcWithout(svcTrickyArgs, "\x01\x1b\x7f", "\xff\xfe") // XML cannot carry these
	rec := &svcRecorder{}
	res, err := Install(ServiceOptions{Env: env, Binary: bin, Args: args, Environment: svcTrickyEnv, GOOS: "darwin", Run: rec.run})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(home, "Library", "LaunchAgents", "dev.agentsandbox.vault.plist"); res.Path != want {
		t.Fatalf("wrote %s, want %s", res.Path, want)
	}
	data, err := os.ReadFile(res.Path)
	if err != nil {
		t.Fatal(err)
	}
	plist, err := svcDecodePlist(data)
	if err != nil {
		t.Fatalf("the plist is not valid XML: %v\n%s", err, data)
	}
	logPath := filepath.Join(home, "Library", "Logs", "sandbox-vault.log")
	want := map[string]any{
		"Label":             "dev.agentsandbox.vault",
		"ProgramArguments":  svcAnys(append([]string{bin}, args...)),
		"RunAtLoad":         true,
		"KeepAlive":         map[string]any{"SuccessfulExit": false},
		"ProcessType":       "Background",
		"StandardOutPath":   logPath,
		"StandardErrorPath": logPath,
		"EnvironmentVariables": map[string]any{"CLAUDE_CONFIG_DIR": "/data/claude state/100% mine", "CODEX_HOME": `/x/"q"\\$HOME`,
			"XDG_DATA_HOME": "/x/é & <y>"},
	}
	for k, w := range want {
		if !reflect.DeepEqual(plist[k], w) {
			t.Errorf("%s = %#v, want %#v", k, plist[k], w)
		}
	}
	if len(plist) != len(want) {
		t.Errorf("the plist holds %d keys, want %d: %v", len(plist), len(want), plist)
	}
	if info, err := os.Stat(filepath.Dir(logPath)); err != nil || !info.IsDir() {
		t.Errorf("the log's folder was not made: %v", err)
	}
	if info, err := os.Stat(res.Path); err != nil || info.Mode().Perm() != 0o644 {
		t.Errorf("the plist's mode: %v, %v; want 0644", info, err)
	}
}

func svcWithout(s []string, drop ...string) []string {
	var out []string
	for _, v := range s {
		keep := true
		for _, d := range drop {
			keep = keep && v != d
		}
		if keep {
			out = append(out, v)
		}
	}
	return out
}

func svcAnys(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func TestServiceRefuses(t *testing.T) {
	for _, c := range []struct {
		name, goos, bin string
		args            []string
		want            string
	}{
		{"relative binary", "linux", "sandbox", nil, "absolute"},
		{"no binary", "darwin", "", nil, "no sandbox binary"},
		{"binary is a folder", "linux", "/usr/bin/", nil, "folder"},
		{"quote in the binary", "linux", "/home/o'brien/bin/sandbox", nil, "systemd does not accept"},
		{"backslash in the binary", "linux", `/opt/a\b/sandbox`, nil, "systemd does not accept"},
		{"dollar in the binary", "linux", "/opt/$x/sandbox", nil, "systemd does not accept"},
		{"newline in the binary", "linux", "/opt/a\nb/sandbox", nil, "systemd does not accept"},
		{"NUL in an argument", "linux", "/bin/sandbox", []string{"a\x00b"}, "NUL"},
		{"control character for launchd", "darwin", "/bin/sandbox", []string{"a\x01b"}, "plist"},
		{"not UTF-8 for launchd", "darwin", "/bin/sandbox", []string{"\xff"}, "not UTF-8"},
		{"windows", "windows", "/bin/sandbox", nil, "supports Linux (systemd) and macOS (launchd)"},
		{"freebsd", "freebsd", "/bin/sandbox", nil, "sandbox vault sync --watch"},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := svcTestEnv(t)
			rec := &svcRecorder{}
			o := ServiceOptions{Env: env, Binary: c.bin, Args: c.args, GOOS: c.goos, Run: rec.run}
			res, err := Install(o)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %+v, %v; want an error saying %q", res, err, c.want)
			}
			if len(rec.calls) != 0 {
				t.Errorf("ran %q", rec.calls)
			}
			if p, err := ServicePath(o); err == nil {
				if _, err := os.Lstat(p); err == nil {
					t.Errorf("%s was written", p)
				}
			}
			if c.goos != "linux" && c.goos != "darwin" {
				if _, err := Uninstall(o); err == nil || !strings.Contains(err.Error(), c.want) {
					t.Errorf("Uninstall: %v; want an error saying %q", err, c.want)
				}
			}
		})
	}
}

func TestServiceCommands(t *testing.T) {
	uid := strconv.Itoa(os.Getuid())
	for _, goos := range []string{"linux", "darwin"} {
		t.Run(goos, func(t *testing.T) {
			env := svcTestEnv(t)
			rec := &svcRecorder{}
			o := ServiceOptions{Env: env, Binary: "/usr/local/bin/sandbox", Args: []string{"vault", "sync", "--watch"}, GOOS: goos, Run: rec.run}
			path, err := ServicePath(o)
			if err != nil {
				t.Fatal(err)
			}
			var want [3][][]string
			if goos == "linux" {
				reload := []string{"systemctl", "--user", "daemon-reload"}
				want[0] = [][]string{reload, {"systemctl", "--user", "enable", "--now", "sandbox-vault.service"}}
				want[1] = append(want[0], []string{"systemctl", "--user", "restart", "sandbox-vault.service"})
				want[2] = [][]string{{"systemctl", "--user", "disable", "--now", "sandbox-vault.service"}, reload}
			} else {
				bootstrap := []string{"launchctl", "bootstrap", "gui/" + uid, path}
				want[0] = [][]string{bootstrap}
				want[1] = [][]string{{"launchctl", "bootout", "gui/" + uid + "/dev.agentsandbox.vault"}, bootstrap}
				want[2] = [][]string{{"launchctl", "bootout", "gui/" + uid, path}}
			}

			steps := []struct {
				name string
				do   func(ServiceOptions) (ServiceResult, error)
				note string
			}{
				{"install", Install, "installed " + path},
				{"install again", Install, "replaced the existing " + path},
				{"uninstall", Uninstall, "removed " + path},
			}
			for i, s := range steps {
				rec.calls = nil
				if i == 1 {
					o.Args = []string{"vault", "sync", "--watch", "--to", "/elsewhere"}
				}
				res, err := s.do(o)
				if err != nil {
					t.Fatalf("%s: %v", s.name, err)
				}
				if !reflect.DeepEqual(rec.calls, want[i]) {
					t.Errorf("%s ran\n%q\nwant\n%q", s.name, rec.calls, want[i])
				}
				if !reflect.DeepEqual(res.Commands, want[i]) {
					t.Errorf("%s says it ran %q, want %q", s.name, res.Commands, want[i])
				}
				if res.Path != path || res.Enabled != (i < 2) || !strings.Contains(res.Note, s.note) {
					t.Errorf("%s: %+v; want Path %s, Enabled %v, a Note saying %q", s.name, res, path, i < 2, s.note)
				}
				data, err := os.ReadFile(path)
				switch {
				case i == 1 && !bytes.Contains(data, []byte("/elsewhere")):
					t.Errorf("install again did not replace the file: %s, %v", data, err)
				case i == 2 && !os.IsNotExist(err):
					t.Errorf("uninstall left %s: %v", path, err)
				}
			}
		})
	}
}

func TestServiceManagerFails(t *testing.T) {
	uid := strconv.Itoa(os.Getuid())
	busErr := errors.New("exit status 1: Failed to connect to bus: No medium found")
	for _, c := range []struct {
		name    string
		goos    string
		again   bool                // install over an installed service
		fails   func([]string) bool // which commands fail
		ran     int                 // how many commands run
		enabled bool
		note    []string // what the Note must say
	}{
		{"linux no bus", "linux", false, func([]string) bool { return true }, 1, false,
			[]string{"could not have systemd start it", "systemctl --user daemon-reload", "systemctl --user enable --now sandbox-vault.service", "loginctl enable-linger $USER", busErr.Error()}},
		{"linux enable fails", "linux", false, func(c []string) bool { return c[2] == "enable" }, 2, false,
			[]string{"systemctl --user enable --now sandbox-vault.service: " + busErr.Error(), "systemctl --user daemon-reload\n"}},
		{"darwin no gui session", "darwin", false, func([]string) bool { return true }, 1, false,
			[]string{"launchd did not load it", "launchctl bootstrap gui/" + uid + " "}},
		{"darwin not loaded before", "darwin", true, func(c []string) bool { return c[1] == "bootout" }, 2, true,
			[]string{"replaced the existing"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := svcTestEnv(t)
			rec := &svcRecorder{}
			o := ServiceOptions{Env: env, Binary: "/usr/local/bin/sandbox", Args: []string{"vault", "sync", "--watch"}, GOOS: c.goos, Run: rec.run}
			if c.again {
				if _, err := Install(o); err != nil {
					t.Fatal(err)
				}
				rec.calls = nil
			}
			rec.fail = func(cmd []string) error {
				if c.fails(cmd) {
					return busErr
				}
				return nil
			}
			res, err := Install(o)
			if err != nil {
				t.Fatalf("a manager that fails is not an error: %v", err)
			}
			if len(rec.calls) != c.ran {
				t.Errorf("ran %q, want %d commands", rec.calls, c.ran)
			}
			if res.Enabled != c.enabled {
				t.Errorf("Enabled %v, want %v", res.Enabled, c.enabled)
			}
			for _, s := range c.note {
				if !strings.Contains(res.Note, s) {
					t.Errorf("the Note does not say %q:\n%s", s, res.Note)
				}
			}
			if !c.enabled && !strings.Contains(res.Note, res.Path) {
				t.Errorf("the Note does not name %s:\n%s", res.Path, res.Note)
			}
			if len(res.Commands) == 0 {
				t.Error("no Commands to run")
			}
			if data, err := os.ReadFile(res.Path); err != nil || !bytes.Contains(data, []byte("/usr/local/bin/sandbox")) {
				t.Errorf("the service's file is not written: %v", err)
			}
		})
	}
}

func TestServiceUninstall(t *testing.T) {
	for _, goos := range []string{"linux", "darwin"} {
		t.Run(goos, func(t *testing.T) {
			env := svcTestEnv(t)
			rec := &svcRecorder{}
			o := ServiceOptions{Env: env, Binary: "/usr/local/bin/sandbox", Args: []string{"vault", "sync", "--watch"}, GOOS: goos, Run: rec.run}

			// Nothing installed: nothing to do, and not an error.
			res, err := Uninstall(o)
			if err != nil || !strings.Contains(res.Note, "nothing was installed") || len(rec.calls) != 0 || res.Enabled {
				t.Fatalf("uninstalling nothing: %+v, %v, ran %q", res, err, rec.calls)
			}

			// The manager cannot be reached: the file goes all the same.
			if _, err := Install(o); err != nil {
				t.Fatal(err)
			}
			wants := filepath.Join(filepath.Dir(res.Path), "default.target.wants", "sandbox-vault.service")
			if goos == "linux" {
				// What enable would have made, which disable cannot
				// remove now.
				if err := os.MkdirAll(filepath.Dir(wants), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(res.Path, wants); err != nil {
					t.Fatal(err)
				}
			}
			rec.calls = nil
			rec.fail = func([]string) error { return errors.New("no manager") }
			res, err = Uninstall(o)
			if err != nil {
				t.Fatalf("a manager that fails is not an error: %v", err)
			}
			if _, err := os.Lstat(res.Path); !os.IsNotExist(err) {
				t.Errorf("%s is still there: %v", res.Path, err)
			}
			if len(rec.calls) == 0 || len(res.Commands) == 0 || res.Enabled ||
				!strings.Contains(res.Note, "no manager") || !strings.Contains(res.Note, "if it is still running") {
				t.Errorf("uninstall without a manager: %+v, ran %q", res, rec.calls)
			}
			if goos == "linux" {
				if _, err := os.Lstat(wants); !os.IsNotExist(err) {
					t.Errorf("the enable link %s is still there: %v", wants, err)
				}
			} else if want := "gui/" + strconv.Itoa(os.Getuid()) + "/dev.agentsandbox.vault"; !strings.Contains(res.Note, want) {
				t.Errorf("the Note does not say to boot out %s (the plist is gone):\n%s", want, res.Note)
			}

			// And again: nothing left.
			rec.calls = nil
			res, err = Uninstall(o)
			if err != nil || !strings.Contains(res.Note, "nothing was installed") || len(rec.calls) != 0 {
				t.Errorf("uninstalling twice: %+v, %v, ran %q", res, err, rec.calls)
			}
		})
	}
}

// TestServiceDefaultRunner runs fake systemctl programs through the default
// Run: it finds them in Env's PATH (not the process's) and runs them with
// Env.
func TestServiceDefaultRunner(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the fake systemctl is a shell script")
	}
	env := svcTestEnv(t)
	bin := env.Get("PATH")
	log := filepath.Join(t.TempDir(), "calls")
	o := ServiceOptions{Env: env.With("FAKE_LOG", log), Binary: "/usr/local/bin/sandbox", Args: []string{"vault", "sync"}, GOOS: "linux"}

	// No systemctl in Env's PATH (though the process's may have one).
	res, err := Install(o)
	if err != nil || res.Enabled || !strings.Contains(res.Note, "systemctl is not in $PATH") {
		t.Fatalf("without systemctl: %+v, %v", res, err)
	}

	script := `#!/bin/sh
echo "HOME=$HOME $*" >> "$FAKE_LOG"
if [ -n "$FAKE_FAIL" ]; then echo "Failed to connect to bus: No medium found" >&2; exit 1; fi
`
	if err := os.WriteFile(filepath.Join(bin, "systemctl"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	res, err = Install(o)
	if err != nil || !res.Enabled {
		t.Fatalf("with a working systemctl: %+v, %v", res, err)
	}
	got, _ := os.ReadFile(log)
	home := env.Get("HOME")
	want := fmt.Sprintf("HOME=%s --user daemon-reload\nHOME=%s --user enable --now sandbox-vault.service\nHOME=%s --user restart sandbox-vault.service\n", home, home, home)
	if string(got) != want {
		t.Errorf("systemctl ran as\n%s\nwant\n%s", got, want)
	}

	o.Env = o.Env.With("FAKE_FAIL", "1")
	res, err = Install(o)
	if err != nil || res.Enabled || !strings.Contains(res.Note, "Failed to connect to bus: No medium found") {
		t.Fatalf("with a failing systemctl: %+v, %v", res, err)
	}
}

// TestServiceRealSystemd installs into and uninstalls from this user's own
// systemd, when there is one. The unit goes to a temporary
// $XDG_CONFIG_HOME, never the real home; but the user's manager looks for
// units in its own, so it cannot find this one: install must then reach the
// manager (daemon-reload succeeds), fail to enable, and say what to run.
func TestServiceRealSystemd(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("systemd is Linux's")
	}
	systemctl, err := exec.LookPath("systemctl")
	if err != nil {
		t.Skip("no user systemd here: no systemctl (CI machines are containers without systemd)")
	}
	out, _ := exec.Command(systemctl, "--user", "is-system-running").Output()
	if state := strings.TrimSpace(string(out)); state != "running" && state != "degraded" {
		t.Skipf("no user systemd here: systemctl --user is-system-running says %q (CI machines are containers without systemd)", state)
	}
	if exec.Command(systemctl, "--user", "cat", "sandbox-vault.service").Run() == nil {
		t.Skip("this user has a sandbox-vault.service of their own, which this test must not disturb")
	}
	env := svcTestEnv(t)
	for _, k := range []string{"PATH", "XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS"} {
		env = env.With(k, os.Getenv(k)) // how systemctl finds the bus
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep to run")
	}
	o := ServiceOptions{Env: env, Binary: sleep, Args: []string{"600"}, GOOS: "linux"}
	res, err := Install(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("install: %+v", res)
	if res.Enabled {
		// This manager does read the temporary folder: the service runs.
		if out, err := exec.Command(systemctl, "--user", "is-active", "sandbox-vault.service").CombinedOutput(); err != nil {
			t.Errorf("enabled, but not active: %v: %s", err, out)
		}
	} else if !strings.Contains(res.Note, "(systemctl --user enable --now sandbox-vault.service: ") {
		t.Errorf("systemd was not reached, or not as expected:\n%s", res.Note)
	}
	res, err = Uninstall(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("uninstall: %+v", res)
	if _, err := os.Lstat(res.Path); !os.IsNotExist(err) {
		t.Errorf("%s is still there: %v", res.Path, err)
	}
	if exec.Command(systemctl, "--user", "is-active", "sandbox-vault.service").Run() == nil {
		t.Error("sandbox-vault.service is still active")
	}
}

// TestServiceVault: the vault an installed service syncs into reads back
// from its file, on both systems, whatever its path holds.
func TestServiceVault(t *testing.T) {
	for _, goos := range []string{"linux", "darwin"} {
		env := svcTestEnv(t)
		to := "/mnt/my vault/100% \"safe\"\n-- 'x' é"
		if goos == "darwin" {
			to = "/mnt/my vault/100% \"safe\" -- 'x' é & <y>" // XML carries no newline in a plist's string as written
		}
		o := ServiceOptions{Env: env, Binary: "/usr/bin/sandbox", Args: []string{"vault", "sync", "--watch", "--to", to}, GOOS: goos, Run: (&svcRecorder{}).run}
		if _, _, ok := ServiceVault(o); ok {
			t.Fatalf("%s: a vault with no service installed", goos)
		}
		res, err := Install(o)
		if err != nil {
			t.Fatal(err)
		}
		path, got, ok := ServiceVault(o)
		if !ok || got != to || path != res.Path {
			t.Errorf("%s: %q %q %v, want %q in %s", goos, path, got, ok, to, res.Path)
		}
	}
}
