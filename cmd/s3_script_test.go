package cmd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/agentsandbox/sandbox/internal/s3test"
	"github.com/agentsandbox/sandbox/objstore"
)

// The MinIO server of each script that started one.
var scriptServers sync.Map // *testscript.TestScript -> *s3test.Server

// hermeticAWS points every script's AWS configuration at files in its own
// work directory that do not exist, with no credentials and no endpoint:
// no script reads the machine's ~/.aws or reaches a real store.
func hermeticAWS(env *testscript.Env) {
	aws := filepath.Join(env.WorkDir, "home", ".aws")
	for k, v := range map[string]string{
		"AWS_CONFIG_FILE": filepath.Join(aws, "config"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(aws, "credentials"),
		"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": "", "AWS_PROFILE": "",
		"AWS_ENDPOINT_URL": "", "AWS_ENDPOINT_URL_S3": "", "AWS_CA_BUNDLE": "", "AWS_EC2_METADATA_DISABLED": "true",
		"AWS_REGION": s3test.Region,
	} {
		env.Setenv(k, v)
	}
}

// scriptTB lets s3test.Start run for a script.
type scriptTB struct{ ts *testscript.TestScript }

func (s scriptTB) Helper()                           {}
func (s scriptTB) Fatalf(format string, args ...any) { s.ts.Fatalf(format, args...) }

// Skipf fails: a script that can run no server skips itself first, with
// [!minio] skip $MINIO_MISSING.
func (s scriptTB) Skipf(format string, args ...any) { s.ts.Fatalf(format, args...) }
func (s scriptTB) Cleanup(f func())                 { s.ts.Defer(f) }
func (s scriptTB) TempDir() string {
	d, err := os.MkdirTemp(s.ts.Getenv("WORK"), "minio-")
	s.ts.Check(err)
	return d
}

// cmdMinio runs a MinIO server for the script: minio start (and its
// hermetic AWS environment: $S3_ENDPOINT, AWS_ENDPOINT_URL_S3 and test
// credentials), minio stop, minio kill. Without a server binary the script
// fails; a script skips itself before, with [!minio] skip $MINIO_MISSING.
func cmdMinio(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: minio start|stop|kill")
	}
	if args[0] == "start" {
		srv := s3test.Start(scriptTB{ts})
		scriptServers.Store(ts, srv)
		ts.Defer(func() { scriptServers.Delete(ts) })
		for k, v := range srv.Env(ts.Getenv("HOME")) {
			ts.Setenv(k, v)
		}
		ts.Setenv("S3_ENDPOINT", srv.Endpoint)
		return
	}
	srv := scriptServer(ts)
	switch args[0] {
	case "stop":
		srv.Stop()
	case "kill":
		srv.Kill()
	default:
		ts.Fatalf("usage: minio start|stop|kill")
	}
}

func scriptServer(ts *testscript.TestScript) *s3test.Server {
	v, ok := scriptServers.Load(ts)
	if !ok {
		ts.Fatalf("no server: minio start first")
	}
	return v.(*s3test.Server)
}

// cmdS3 sets up and looks at the script's store with the test
// credentials, whatever the script's environment says:
// s3 mb BUCKET | s3 put s3://BUCKET/KEY FILE | s3 ls s3://BUCKET/PREFIX/.
func cmdS3(ts *testscript.TestScript, neg bool, args []string) {
	srv := scriptServer(ts)
	ctx := context.Background()
	var err error
	switch {
	case len(args) == 2 && args[0] == "mb":
		err = srv.MakeBucket(ctx, args[1])
	case len(args) == 3 && args[0] == "put":
		var l objstore.Loc
		l, err = objstore.ParseURL(args[1])
		ts.Check(err)
		_, err = srv.Put(ctx, l.Bucket, l.Key, []byte(ts.ReadFile(args[2])))
	case len(args) == 2 && args[0] == "ls":
		var l objstore.Loc
		l, err = objstore.ParseURL(args[1])
		ts.Check(err)
		var keys []string
		keys, err = srv.Keys(ctx, l.Bucket, l.Key)
		if err == nil {
			fmt.Fprintln(ts.Stdout(), strings.Join(keys, "\n"))
		}
	default:
		ts.Fatalf("usage: s3 mb BUCKET | s3 put s3://BUCKET/KEY FILE | s3 ls s3://BUCKET/PREFIX/")
	}
	if (err != nil) != neg {
		ts.Fatalf("s3 %s: %v", strings.Join(args, " "), err)
	}
}
