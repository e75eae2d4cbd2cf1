package cmd

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"

	recov "github.com/agentsandbox/sandbox/recover"
)

// validation is the result of --validate.
type validation struct {
	Command    string             `json:"command"`
	Dir        string             `json:"dir"`
	ExitCode   int                `json:"exit_code"`
	Output     string             `json:"output_tail"`
	RolledBack bool               `json:"rolled_back"`
	Undo       []recov.UndoResult `json:"undo,omitempty"`
}

// validate runs cmd with sh -c in dir and keeps the last lines of its output.
func validate(ctx context.Context, cmd, dir string) validation {
	c := exec.CommandContext(ctx, "sh", "-c", cmd)
	c.Dir = dir
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	v := validation{Command: cmd, Dir: dir}
	if err := c.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			v.ExitCode = ee.ExitCode()
		} else {
			v.ExitCode = -1
			out.WriteString(err.Error())
		}
	}
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	v.Output = strings.Join(lines, "\n")
	return v
}

// runValidation validates an apply and, when asked and it fails, undoes it
// from its journals.
func (a *app) runValidation(ctx context.Context, command string, rollback bool, res *recov.Result) *validation {
	if command == "" || res == nil || res.Journals == nil {
		return nil
	}
	journals := res.Journals.Written()
	dir := ""
	if len(journals) > 0 {
		dir = journals[0].Root
	} else if len(res.Plans) > 0 && res.Plans[0].Mapped {
		dir = res.Plans[0].Target.Root
	}
	if dir == "" {
		return nil
	}
	v := validate(ctx, command, dir)
	if v.ExitCode != 0 && rollback {
		fsys := recov.NewOSFS()
		defer fsys.Close()
		for _, j := range journals {
			r, err := recov.Undo(fsys, j.Root, j.Name, a.journalKey, false)
			v.Undo = append(v.Undo, r...)
			if err == nil {
				v.RolledBack = true
			}
		}
	}
	return &v
}
