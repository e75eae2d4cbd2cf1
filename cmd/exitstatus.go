package cmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// The one exit-code table (DESIGN.md): what each code means for each
// command. Every command's help ends with its EXIT STATUS section, made
// from here, so help, docs/cli.md and the code say the same.

type exitLine struct {
	code    string
	meaning string
}

var (
	exitInterrupted = exitLine{"130", "interrupted (^C or TERM); nothing more was written"}
	exitUsageLine   = exitLine{"2", "usage error: a flag, value or argument cannot work; nothing was done"}
)

// exitStatus lists, per command, the codes it can end with besides 2 and
// 130, which every command has.
var exitStatus = map[string][]exitLine{
	"recover": {{"0", "done, or nothing to do"}, {"1", "failure: the host is as it was"},
		{"3", "finished, but some files were not recovered (conflict, skipped, outside the destination, unrecoverable)"}},
	"review": {{"0", "written as taken, quit writing nothing, or (off a terminal) the plan printed, every file recoverable"}, {"1", "failure: the host is as it was"},
		{"3", "written, or (off a terminal) planned as recover --dry-run plans, but some files could not be recovered (conflict, skipped, outside the destination, unrecoverable); files left in the review do not count"}},
	"apply": {{"0", "done, or nothing to do"}, {"1", "failure: the host is as it was"},
		{"3", "finished, but some files were not recovered (conflict, skipped, outside the destination, unrecoverable)"}},
	"undo": {{"0", "done, or nothing to undo"}, {"1", "failure, or an undo that could not finish: run it again"},
		{"3", "some files were refused (changed since the apply) and left as they are"}},
	"diff": {{"0", "printed"}, {"1", "failure"},
		{"3", "printed, but some files were left out of the patch (conflict, unrecoverable, outside the destination), each named on stderr"}},
	"sessions": {{"0", "listed (also when none matched)"}, {"1", "failure"}},
	"export":   {{"0", "written"}, {"1", "failure: no partial manifest is left"}},
	"inspect":  {{"0", "reported"}, {"1", "failure, or no such session"}},
	"log":      {{"0", "reported"}, {"1", "failure, or no such file in the session"}},
	"detect":   {{"0", "inside a sandbox"}, {"1", "outside one"}},
	"run": {{"N", "the agent's own exit code"}, {"128+N", "the agent was killed by signal N (137: SIGKILL or out of memory, 143: SIGTERM, as after a ^C; 137 after a second ^C)"},
		{"125", "the runtime could not run the sandbox"}, {"126, 127", "the command cannot be run, or is not there"},
		{"1", "the harness failed (the session's record says why)"}},
	"exec": {{"N", "the command's own exit code"}, {"126, 127", "the command cannot be run, or is not there"},
		{"1", "the session is not running, or exec failed"}},
	"ps":       {{"0", "listed"}, {"1", "failure"}},
	"logs":     {{"0", "printed"}, {"1", "failure, or no such session or run"}},
	"stop":     {{"0", "stopped, and the exit recorded"}, {"1", "failure, or the session is not running"}},
	"rm":       {{"0", "every session removed"}, {"1", "some were not (each is named)"}},
	"gc":       {{"0", "done, or nothing to collect"}, {"1", "failure"}, {"3", "some actions failed (each is named)"}},
	"snapshot": {{"0", "written"}, {"1", "failure: no partial archive is left"}},
	"restore":  {{"0", "restored"}, {"1", "refused or failed: nothing was restored"}},
	"version":  {{"0", "printed"}},
	"vault":    {{"0", "done"}, {"1", "failure"}},
	"doctor":   {{"0", "nothing to warn of"}, {"1", "failure"}, {"3", "warnings: each is said, with what to do"}},
	"vault sync": {{"0", "every file synced; with --watch, stopped by ^C or TERM (a service stopped on purpose is no failure)"},
		{"1", "failure, or some files could not be synced (each is named; the rest were): what was stored stays whole"},
		{"130", "a sync without --watch interrupted (^C or TERM): what was stored stays whole, the rest is synced next time"}},
	"vault ls":        {{"0", "listed (also when the vault is empty)"}, {"1", "failure, or no vault there"}},
	"vault verify":    {{"0", "every version reads whole"}, {"1", "failure, or no vault there"}, {"3", "some versions cannot be read whole (each is named)"}},
	"vault prune":     {{"0", "done (also when nothing went)"}, {"1", "failure: what was removed before it is gone, the rest is whole"}},
	"vault install":   {{"0", "written (enabled, or with the commands that enable it printed)"}, {"1", "failure: nothing was written"}},
	"vault uninstall": {{"0", "removed, or nothing was installed"}, {"1", "failure"}},
}

// ownInterrupt are the commands whose ^C is not (only) 130: run gives the
// agent's exit (143 after TERM, 137 after a second ^C); vault sync --watch
// ends with 0.
var ownInterrupt = map[string]bool{"run": true, "vault sync": true}

// addExitStatus appends each command's EXIT STATUS section to its help.
func addExitStatus(root *cobra.Command) {
	for _, c := range root.Commands() {
		addExitStatusTo(c, c.Name())
	}
}

// addExitStatusTo appends c's section and its subcommands' (keyed by
// their path after sandbox: "vault sync").
func addExitStatusTo(c *cobra.Command, key string) {
	if lines, ok := exitStatus[key]; ok {
		c.Long = strings.TrimRight(c.Long, "\n") + "\n\n" + exitStatusText(lines, !ownInterrupt[key])
	}
	for _, sub := range c.Commands() {
		addExitStatusTo(sub, key+" "+sub.Name())
	}
}

func exitStatusText(lines []exitLine, interrupt bool) string {
	var b strings.Builder
	b.WriteString("EXIT STATUS\n")
	all := append(lines, exitUsageLine)
	if interrupt {
		all = append(all, exitInterrupted)
	}
	for _, l := range all {
		fmt.Fprintf(&b, "  %-9s %s\n", l.code, l.meaning)
	}
	return strings.TrimRight(b.String(), "\n")
}
