package vault

// This file gives `sandbox vault install` and `uninstall` their logic: a
// vault is only as complete as its syncs are frequent, so install hands
// `sandbox vault sync --watch` to the user's own service manager (systemd
// on Linux, launchd on macOS), which starts it at login and restarts it when
// it fails, without root.

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentsandbox/sandbox/internal/osenv"
)

// The service's names. They are fixed, not derived from the vault, so that
// install run again replaces the service rather than adding a second one.
const (
	// svcUnitName is the systemd user unit's name.
	svcUnitName = "sandbox-vault.service"
	// svcLabel is the launchd agent's label (and its plist's name).
	svcLabel = "dev.agentsandbox.vault"
	// svcLogName is the launchd agent's log, under ~/Library/Logs: launchd
	// has no journal to send its output to.
	svcLogName = "sandbox-vault.log"
	// svcDescription is the unit's Description. systemd expands %
	// specifiers in it, so it must hold no %.
	svcDescription = "sandbox vault sync: keeps every version of the coding agents' transcripts"
	// svcTimeout bounds each systemctl or launchctl run by the default
	// runner, so that a wedged bus cannot hang install.
	svcTimeout = time.Minute
)

// ServiceOptions say what the installed service runs.
type ServiceOptions struct {
	// Env is the environment whose home the service is installed in; its
	// PATH finds systemctl and launchctl, and they run with it (the user's
	// bus is found through XDG_RUNTIME_DIR and DBUS_SESSION_BUS_ADDRESS).
	Env osenv.Env
	// Binary is the absolute path of the sandbox binary to run: the
	// service manager does not search the user's PATH.
	Binary string
	// Args are the arguments after the binary, e.g. vault sync --watch
	// --to /x.
	Args []string
	// GOOS picks the service manager: "linux" (systemd) or "darwin"
	// (launchd). Callers pass runtime.GOOS; tests pass either.
	GOOS string
	// Environment are the variables ("NAME=value") the service runs
	// with besides what its manager gives it: where the agents keep their
	// sessions when the installing shell moved them (CLAUDE_CONFIG_DIR,
	// CODEX_HOME, the XDG base directories), which a service started at
	// login would not otherwise see.
	Environment []string
	// Run runs a service manager command (systemctl or launchctl) and
	// says whether it succeeded; nil runs it from Env's PATH, with Env.
	Run func(name string, args ...string) error
}

// ServiceResult says what Install or Uninstall did.
type ServiceResult struct {
	// Path is the unit or plist file written or removed.
	Path string
	// Enabled says the service manager accepted the installed service.
	// When it is false after Install, the file is written but the manager
	// could not be reached, and Note says why and what to run. Uninstall
	// leaves nothing enabled, so it is always false there.
	Enabled bool
	// Note is what the user should know, in a sentence or a few lines.
	Note string
	// Commands are the manager commands run; when the manager could not be
	// reached, the commands the user should run instead.
	Commands [][]string
}

// svcErrGOOS is install or uninstall on a system with neither systemd
// nor launchd as we know them.
func svcErrGOOS(goos string) error {
	return fmt.Errorf("sandbox vault install supports Linux (systemd) and macOS (launchd), not %q: run `sandbox vault sync --watch` under this system's own service manager instead", goos)
}

// svcPaths are where a service's files go.
type svcPaths struct {
	file string // the unit or plist
	log  string // launchd only: the agent's output
}

// svcLocate finds the service's files in o.Env's home, as the user's
// service manager looks for them.
func svcLocate(o ServiceOptions) (svcPaths, error) {
	if o.GOOS != "linux" && o.GOOS != "darwin" {
		return svcPaths{}, svcErrGOOS(o.GOOS)
	}
	home, err := o.Env.Home()
	if err != nil {
		return svcPaths{}, fmt.Errorf("no home to install the vault service in: %w", err)
	}
	if !filepath.IsAbs(home) {
		return svcPaths{}, fmt.Errorf("the home %q is not an absolute path, so the vault service has nowhere certain to go", home)
	}
	if o.GOOS == "darwin" {
		return svcPaths{
			file: filepath.Join(home, "Library", "LaunchAgents", svcLabel+".plist"),
			log:  filepath.Join(home, "Library", "Logs", svcLogName),
		}, nil
	}
	// The XDG spec has a relative $XDG_CONFIG_HOME ignored, as systemd
	// does when it looks for user units.
	config := o.Env.Get("XDG_CONFIG_HOME")
	if !filepath.IsAbs(config) {
		config = filepath.Join(home, ".config")
	}
	return svcPaths{file: filepath.Join(config, "systemd", "user", svcUnitName)}, nil
}

// ServicePath is the file Install writes and Uninstall removes: the systemd
// user unit $XDG_CONFIG_HOME/systemd/user/sandbox-vault.service on Linux,
// the launchd agent ~/Library/LaunchAgents/dev.agentsandbox.vault.plist on
// macOS.
func ServicePath(o ServiceOptions) (string, error) {
	p, err := svcLocate(o)
	return p.file, err
}

// Install writes the service that runs o.Binary with o.Args, replacing one
// installed before (that is how its arguments are changed), and has the
// user's service manager start it now and at every login. A manager that
// cannot be reached (no user bus in a container or over su, launchd outside
// a GUI login) is not an error: the file stays written, and the result says
// what to run.
func Install(o ServiceOptions) (ServiceResult, error) {
	paths, err := svcLocate(o)
	if err != nil {
		return ServiceResult{}, err
	}
	var data []byte
	if o.GOOS == "darwin" {
		data, err = svcPlist(o, paths.log)
	} else {
		data, err = svcUnit(o)
	}
	if err != nil {
		return ServiceResult{}, err
	}
	replaced, err := svcExists(paths.file)
	if err != nil {
		return ServiceResult{}, err
	}
	if paths.log != "" {
		// launchd opens the log but does not create its folder.
		if err := os.MkdirAll(filepath.Dir(paths.log), 0o755); err != nil {
			return ServiceResult{}, fmt.Errorf("creating the folder of the service's log %s: %w", paths.log, err)
		}
	}
	if err := svcWriteFile(paths.file, data); err != nil {
		return ServiceResult{}, err
	}

	res := ServiceResult{Path: paths.file}
	wrote := "installed " + paths.file
	if replaced {
		wrote = "replaced the existing " + paths.file
	}
	uid := strconv.Itoa(os.Getuid())
	var steps []svcStep
	if o.GOOS == "darwin" {
		if replaced {
			// launchd refuses to bootstrap a label it has loaded: unload
			// the old one first (it may well not be loaded).
			steps = append(steps, svcStep{cmd: []string{"launchctl", "bootout", "gui/" + uid + "/" + svcLabel}, mayFail: true})
		}
		steps = append(steps, svcStep{cmd: []string{"launchctl", "bootstrap", "gui/" + uid, paths.file}})
	} else {
		steps = []svcStep{
			{cmd: []string{"systemctl", "--user", "daemon-reload"}},
			{cmd: []string{"systemctl", "--user", "enable", "--now", svcUnitName}},
		}
		if replaced {
			// enable --now leaves a running service running as it was:
			// restart it so that it runs what the new unit says.
			steps = append(steps, svcStep{cmd: []string{"systemctl", "--user", "restart", svcUnitName}})
		}
	}
	res.Commands = svcCommands(steps)
	if err := svcRun(o, steps); err != nil {
		if o.GOOS == "darwin" {
			res.Note = fmt.Sprintf("%s, but launchd did not load it (%v); from a session logged in at the Mac's screen, run:\n%s",
				wrote, err, svcShellLines(res.Commands))
		} else {
			res.Note = fmt.Sprintf("%s, but could not have systemd start it (%v); to start it, run:\n%s\nand `loginctl enable-linger $USER` to keep it running while you are logged out",
				wrote, err, svcShellLines(res.Commands))
		}
		return res, nil
	}
	res.Enabled = true
	if o.GOOS == "darwin" {
		res.Note = fmt.Sprintf("%s and loaded it into launchd as %s; it logs to %s", wrote, svcLabel, paths.log)
	} else {
		res.Note = fmt.Sprintf("%s and started %s; it runs while you are logged in (`loginctl enable-linger $USER` keeps it running while you are logged out), and `journalctl --user -u %s` shows its log",
			wrote, svcUnitName, svcUnitName)
	}
	return res, nil
}

// Uninstall stops the service, has the manager forget it and removes its
// file. Nothing installed is not an error; neither is a manager that cannot
// be reached: the file is removed all the same, and the result says what to
// run to stop a service that may still be running.
func Uninstall(o ServiceOptions) (ServiceResult, error) {
	paths, err := svcLocate(o)
	if err != nil {
		return ServiceResult{}, err
	}
	res := ServiceResult{Path: paths.file}
	installed, err := svcExists(paths.file)
	if err != nil {
		return res, err
	}
	if !installed {
		res.Note = "nothing was installed: there is no " + paths.file
		return res, nil
	}
	uid := strconv.Itoa(os.Getuid())
	run := svcRunner(o)

	if o.GOOS == "darwin" {
		bootout := []string{"launchctl", "bootout", "gui/" + uid, paths.file}
		res.Commands = [][]string{bootout}
		stopErr := svcRunOne(run, bootout)
		if err := svcRemove(paths.file); err != nil {
			return res, err
		}
		if stopErr != nil {
			// launchctl fails too when the agent is not loaded, which is
			// not worth a warning but cannot be told apart here. The
			// plist is gone, so the label names the agent now.
			res.Commands = [][]string{{"launchctl", "bootout", "gui/" + uid + "/" + svcLabel}}
			res.Note = fmt.Sprintf("removed %s, but launchd did not unload it (%v); if it is still running, run:\n%s",
				paths.file, stopErr, svcShellLines(res.Commands))
			return res, nil
		}
		res.Note = fmt.Sprintf("unloaded %s from launchd and removed %s", svcLabel, paths.file)
		return res, nil
	}

	steps := []svcStep{
		{cmd: []string{"systemctl", "--user", "disable", "--now", svcUnitName}},
		{cmd: []string{"systemctl", "--user", "daemon-reload"}},
	}
	res.Commands = svcCommands(steps)
	stopErr := svcRunOne(run, steps[0].cmd)
	if err := svcRemove(paths.file); err != nil {
		return res, err
	}
	if stopErr != nil {
		// systemd could not disable it, so the link enable made would
		// dangle: remove it when it is plainly ours.
		svcRemoveLink(filepath.Join(filepath.Dir(paths.file), "default.target.wants", svcUnitName), paths.file)
	}
	reloadErr := svcRunOne(run, steps[1].cmd)
	if err := errors.Join(stopErr, reloadErr); err != nil {
		res.Note = fmt.Sprintf("removed %s, but could not have systemd stop it (%v); if it is still running, run:\n%s",
			paths.file, strings.ReplaceAll(err.Error(), "\n", "; "), svcShellLines(res.Commands))
		return res, nil
	}
	res.Note = fmt.Sprintf("stopped and disabled %s and removed %s", svcUnitName, paths.file)
	return res, nil
}

// svcUnit is the systemd user unit that runs o.Binary with o.Args.
func svcUnit(o ServiceOptions) ([]byte, error) {
	if err := svcCheckBinary(o.Binary); err != nil {
		return nil, err
	}
	// systemd refuses, as a fatal error in the unit, an executable whose
	// path holds a quote, a backslash or a control character, however it
	// is quoted; and it does not expand $ in the path it runs (only in
	// argv), so a $ there cannot be written to mean itself.
	if i := strings.IndexFunc(o.Binary, func(r rune) bool {
		return r == '"' || r == '\'' || r == '\\' || r == '$' || r < 0x20 || r == 0x7f
	}); i >= 0 {
		return nil, fmt.Errorf("the sandbox binary %q holds %q, which systemd does not accept in the path of the program a unit runs: move it to a path without quotes, backslashes, $ or control characters", o.Binary, o.Binary[i:i+1])
	}
	var b strings.Builder
	b.WriteString("# Written by `sandbox vault install`; `sandbox vault uninstall` removes it.\n")
	if to := svcArgAfter(o.Args, "--to"); to != "" {
		// For sandbox doctor (ServiceVault): which vault this syncs into.
		b.WriteString(svcVaultComment + strconv.Quote(to) + "\n")
	}
	b.WriteString("[Unit]\n")
	b.WriteString("Description=" + svcDescription + "\n")
	b.WriteString("\n[Service]\n")
	b.WriteString("Type=simple\n")
	b.WriteString("ExecStart=" + svcSystemdWord(o.Binary))
	for _, a := range o.Args {
		if strings.IndexByte(a, 0) >= 0 {
			return nil, fmt.Errorf("the service's argument %q holds a NUL byte, which no program's argument can", a)
		}
		b.WriteString(" " + svcSystemdWord(a))
	}
	b.WriteString("\n")
	for _, kv := range o.Environment {
		if err := svcCheckEnv(kv); err != nil {
			return nil, err
		}
		// Environment= expands specifiers (%) but not variables ($).
		b.WriteString("Environment=" + svcQuote(kv, false) + "\n")
	}
	b.WriteString("Restart=on-failure\n")
	b.WriteString("RestartSec=5\n")
	// A sync is background work: it yields the CPU to the agents it keeps.
	b.WriteString("Nice=10\n")
	b.WriteString("\n[Install]\n")
	b.WriteString("WantedBy=default.target\n")
	return []byte(b.String()), nil
}

// svcVaultComment starts the unit's comment line naming its vault.
const svcVaultComment = "# vault: "

// svcArgAfter is the argument after flag in args, or "".
func svcArgAfter(args []string, flag string) string {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == flag {
			return args[i+1]
		}
	}
	return ""
}

// ServiceVault reads the installed service's file and says which vault it
// syncs into (its --to); ok is false when no service is installed or its
// file does not say.
func ServiceVault(o ServiceOptions) (path, vault string, ok bool) {
	paths, err := svcLocate(o)
	if err != nil {
		return "", "", false
	}
	data, err := os.ReadFile(paths.file)
	if err != nil {
		return "", "", false
	}
	if o.GOOS == "darwin" {
		// The plist's ProgramArguments, in order: the vault follows --to.
		var words []string
		d := xml.NewDecoder(bytes.NewReader(data))
		d.Strict = false
		inString := false
		for {
			tok, err := d.Token()
			if err != nil {
				break
			}
			switch t := tok.(type) {
			case xml.StartElement:
				inString = t.Name.Local == "string"
				if inString {
					words = append(words, "")
				}
			case xml.EndElement:
				inString = false
			case xml.CharData:
				if inString {
					words[len(words)-1] += string(t)
				}
			}
		}
		v := svcArgAfter(words, "--to")
		return paths.file, v, v != ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		if q, found := strings.CutPrefix(line, svcVaultComment); found {
			if v, err := strconv.Unquote(q); err == nil {
				return paths.file, v, true
			}
		}
	}
	return paths.file, "", false
}

// svcSystemdWord quotes s as one word of a systemd command line. The word is
// in double quotes, with C escapes for the quote, the backslash, every
// control byte (a newline would end the line) and every byte that is not
// UTF-8; and % and $ are doubled, because systemd expands specifiers and
// environment variables inside quotes too.
func svcSystemdWord(s string) string { return svcQuote(s, true) }

// svcCheckEnv refuses a variable a service cannot be given.
func svcCheckEnv(kv string) error {
	name, _, ok := strings.Cut(kv, "=")
	if !ok || name == "" || strings.ContainsAny(kv, "\x00") {
		return fmt.Errorf("the service's environment %q is not NAME=value", kv)
	}
	return nil
}

// svcQuote quotes s in double quotes as systemd reads them; dollar doubles
// $, which systemd expands in a command line but not in Environment=.
func svcQuote(s string, dollar bool) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '%':
			b.WriteString("%%")
		case r == '$' && dollar:
			b.WriteString("$$")
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	b.WriteByte('"')
	return b.String()
}

// svcPlist is the launchd agent that runs o.Binary with o.Args, logging to
// log.
func svcPlist(o ServiceOptions, log string) ([]byte, error) {
	if err := svcCheckBinary(o.Binary); err != nil {
		return nil, err
	}
	for _, s := range append(append([]string{o.Binary, log}, o.Args...), o.Environment...) {
		if err := svcCheckXML(s); err != nil {
			return nil, err
		}
	}
	for _, kv := range o.Environment {
		if err := svcCheckEnv(kv); err != nil {
			return nil, err
		}
	}
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<!-- Written by sandbox vault install; sandbox vault uninstall removes it. -->
<plist version="1.0">
<dict>
	<key>Label</key>
	<string>` + svcLabel + `</string>
	<key>ProgramArguments</key>
	<array>
`)
	for _, s := range append([]string{o.Binary}, o.Args...) {
		b.WriteString("\t\t<string>" + svcXMLText(s) + "</string>\n")
	}
	// KeepAlive restarts the agent when it fails, as Restart=on-failure
	// does on Linux: a sync that exits 0 was stopped on purpose.
	b.WriteString("\t</array>\n")
	if len(o.Environment) > 0 {
		b.WriteString("\t<key>EnvironmentVariables</key>\n\t<dict>\n")
		for _, kv := range o.Environment {
			k, v, _ := strings.Cut(kv, "=")
			b.WriteString("\t\t<key>" + svcXMLText(k) + "</key>\n\t\t<string>" + svcXMLText(v) + "</string>\n")
		}
		b.WriteString("\t</dict>\n")
	}
	b.WriteString(`	<key>RunAtLoad</key>
	<true/>
	<key>KeepAlive</key>
	<dict>
		<key>SuccessfulExit</key>
		<false/>
	</dict>
	<key>ProcessType</key>
	<string>Background</string>
	<key>StandardOutPath</key>
	<string>` + svcXMLText(log) + `</string>
	<key>StandardErrorPath</key>
	<string>` + svcXMLText(log) + `</string>
</dict>
</plist>
`)
	return []byte(b.String()), nil
}

// svcCheckXML refuses s when XML 1.0 cannot carry it: a plist would be
// unreadable, or would silently hold some other text.
func svcCheckXML(s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("the service's argument %q is not UTF-8, which a launchd plist cannot carry", s)
	}
	for _, r := range s {
		ok := r == '\t' || r == '\n' || r == '\r' ||
			(r >= 0x20 && r <= 0xD7FF) || (r >= 0xE000 && r <= 0xFFFD) || (r >= 0x10000 && r <= 0x10FFFF)
		if !ok {
			return fmt.Errorf("the service's argument %q holds the character %U, which a launchd plist (XML) cannot carry", s, r)
		}
	}
	return nil
}

// svcXMLText escapes s as XML text. A carriage return is written as a
// reference, since a parser reads a literal one as a newline.
func svcXMLText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\r", "&#13;").Replace(s)
}

// svcCheckBinary refuses a binary the service manager could not find: it
// runs programs by absolute path, without the user's PATH or working
// folder.
func svcCheckBinary(bin string) error {
	if bin == "" {
		return errors.New("no sandbox binary for the service to run")
	}
	if !strings.HasPrefix(bin, "/") {
		return fmt.Errorf("the sandbox binary %q is not an absolute path, which the service manager needs", bin)
	}
	if strings.HasSuffix(bin, "/") {
		return fmt.Errorf("the sandbox binary %q names a folder, not a program", bin)
	}
	return nil
}

// svcExists says whether the service's file is there.
func svcExists(path string) (bool, error) {
	info, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("looking at the vault service %s: %w", path, err)
	}
	if info.IsDir() {
		return false, fmt.Errorf("the vault service %s is a folder, not a file: remove it yourself", path)
	}
	return true, nil
}

// svcWriteFile writes data to path whole or not at all: a temporary file in
// the same folder renamed over it, so that the manager never reads half a
// unit, and an install that fails leaves the last one in place.
func svcWriteFile(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating the folder of %s: %w", path, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // nothing after the rename
	// CreateTemp makes the file 0600; the manager's tools and the user's
	// editor expect a config file anyone may read.
	err = f.Chmod(0o644)
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	// Flush the folder's entry too, so the rename survives a crash (best
	// effort: not every system can open a folder).
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// svcRemove removes the service's file; one already gone is removed.
func svcRemove(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing the vault service %s: %w", path, err)
	}
	return nil
}

// svcRemoveLink removes link when it is a symbolic link to target (best
// effort: anything else is left alone).
func svcRemoveLink(link, target string) {
	if to, err := os.Readlink(link); err == nil && to == target {
		_ = os.Remove(link)
	}
}

// svcStep is one service manager command Install runs.
type svcStep struct {
	cmd []string
	// mayFail marks a command whose failure says only that there was
	// nothing to undo, so the next ones run all the same.
	mayFail bool
}

// svcCommands lists the steps' commands.
func svcCommands(steps []svcStep) [][]string {
	out := make([][]string, len(steps))
	for i, s := range steps {
		out[i] = append([]string(nil), s.cmd...)
	}
	return out
}

// svcRun runs the steps in order, up to the first that fails.
func svcRun(o ServiceOptions, steps []svcStep) error {
	run := svcRunner(o)
	for _, s := range steps {
		if err := svcRunOne(run, s.cmd); err != nil && !s.mayFail {
			return err
		}
	}
	return nil
}

// svcRunOne runs cmd, and names it in its error, on one line (a command's
// output may have several), for a note that quotes it in parentheses.
func svcRunOne(run func(string, ...string) error, cmd []string) error {
	if err := run(cmd[0], cmd[1:]...); err != nil {
		return fmt.Errorf("%s: %s", strings.Join(cmd, " "), strings.Join(strings.Fields(err.Error()), " "))
	}
	return nil
}

// svcRunner is o.Run, or by default one that runs the command from o.Env's
// PATH, with o.Env: the caller's environment is the user's session, whose
// bus systemctl --user needs.
func svcRunner(o ServiceOptions) func(string, ...string) error {
	if o.Run != nil {
		return o.Run
	}
	return func(name string, args ...string) error {
		prog, err := svcLookPath(name, o.Env.Get("PATH"))
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(context.Background(), svcTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, prog, args...)
		cmd.Env = o.Env.List()
		out, err := cmd.CombinedOutput()
		if err != nil {
			if msg := strings.TrimSpace(string(out)); msg != "" {
				return fmt.Errorf("%w: %s", err, msg)
			}
			return err
		}
		return nil
	}
}

// svcLookPath finds the program name in path (a PATH), as exec.LookPath
// would in the process's own: only absolute folders, for a program found
// in the working folder is not the system's.
func svcLookPath(name, path string) (string, error) {
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() && info.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s is not in $PATH", name)
}

// svcShellLines writes commands as lines a shell runs, indented for a note.
func svcShellLines(cmds [][]string) string {
	lines := make([]string, len(cmds))
	for i, c := range cmds {
		words := make([]string, len(c))
		for j, w := range c {
			words[j] = svcShellWord(w)
		}
		lines[i] = "  " + strings.Join(words, " ")
	}
	return strings.Join(lines, "\n")
}

// svcShellWord quotes w for a POSIX shell when it needs it (a home with a
// space in it).
func svcShellWord(w string) string {
	if w != "" && strings.IndexFunc(w, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("@%+=:,./-_", r))
	}) < 0 {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}
