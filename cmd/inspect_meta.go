package cmd

import (
	"os"
	"os/user"
	"strings"
	"time"

	"github.com/agentsandbox/sandbox/inspect"
)

// reportMeta says where and by what the report was made; tests replace it
// so that goldens do not depend on the machine.
var reportMeta = func() inspect.Footer {
	f := inspect.Footer{Version: strings.TrimPrefix(readVersion().String(), "sandbox "), Generated: time.Now().Format("2006-01-02 15:04:05 MST")}
	f.Host, _ = os.Hostname()
	if u, err := user.Current(); err == nil {
		f.User = u.Username
	}
	return f
}
