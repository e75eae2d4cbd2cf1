// Package s3test runs a real S3-compatible server (MinIO) for tests, on a
// loopback port with a temporary data directory, and gives the tests a
// hermetic AWS environment pointing at it: test credentials, and shared
// config and credentials files in a temporary directory, so that no test
// reads the machine's ~/.aws or reaches any other address.
package s3test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// MinioVersion is the MinIO the tests run, as the Go module proxy serves it.
const MinioVersion = "v0.0.0-20260212201848-7aac2a2c5b7c"

// Test credentials: MinIO's root user of the throwaway server.
const (
	AccessKey = "sandboxtest"
	SecretKey = "sandboxtest-secret"
	Region    = "us-east-1"
)

// InstallCommand is how to get the server binary where Binary looks.
func InstallCommand() string {
	return fmt.Sprintf("GOBIN=%s go install github.com/minio/minio@%s", binDir(), MinioVersion)
}

// binDir is where .ci/run installs the server: beside Go's build cache,
// so a second run finds it.
func binDir() string {
	cache := os.Getenv("GOCACHE")
	if cache == "" {
		if d, err := os.UserCacheDir(); err == nil {
			cache = filepath.Join(d, "go-build")
		}
	}
	return filepath.Join(cache, "sandbox-tools", "minio-"+MinioVersion)
}

// Binary returns the MinIO binary: $SANDBOX_MINIO, else the one .ci/run
// installs, else minio on PATH; "" when there is none.
func Binary() string {
	if p := os.Getenv("SANDBOX_MINIO"); p != "" {
		return p
	}
	if p := filepath.Join(binDir(), "minio"); isExec(p) {
		return p
	}
	if p, err := exec.LookPath("minio"); err == nil {
		return p
	}
	return ""
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// onCI says whether the tests run under CI=true, where a missing server is
// a broken machine, not a reason to skip.
func onCI() bool {
	v, _ := strconv.ParseBool(os.Getenv("CI"))
	return v
}

// Missing is the message of a test that has no server binary.
func Missing() string {
	return "no MinIO server binary for the S3 tests: install it with " + InstallCommand() + " (or set SANDBOX_MINIO)"
}

// Server is a MinIO server run for a test.
type Server struct {
	// Endpoint is its URL, http://127.0.0.1:PORT.
	Endpoint string
	cmd      *exec.Cmd
	done     chan error
	log      *bytes.Buffer
}

// TB is what Start needs of a test (a *testing.T, or a script's adapter).
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Skipf(format string, args ...any)
	Cleanup(func())
	TempDir() string
}

// Start runs a server for t and stops it when t ends. With no binary it
// skips t with the install command (and fails it when CI=true).
func Start(t TB) *Server {
	t.Helper()
	bin := Binary()
	if bin == "" {
		if onCI() {
			t.Fatalf("CI=true, but %s", Missing())
		}
		t.Skipf("%s", Missing())
	}
	dir := t.TempDir()
	var s *Server
	var err error
	// A port found free can be taken before the server binds it: try a
	// few, no more.
	for range 3 {
		if s, err = start(bin, dir); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("starting MinIO: %v", err)
	}
	t.Cleanup(s.Stop)
	return s
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func start(bin, dir string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	console, err := freePort()
	if err != nil {
		return nil, err
	}
	data := filepath.Join(dir, fmt.Sprintf("data-%d", port))
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	cmd := exec.Command(bin, "server", data, "--address", addr, "--console-address", fmt.Sprintf("127.0.0.1:%d", console), "--quiet")
	cmd.Env = []string{
		"HOME=" + dir, "PATH=/usr/bin:/bin",
		"MINIO_ROOT_USER=" + AccessKey, "MINIO_ROOT_PASSWORD=" + SecretKey,
		"MINIO_BROWSER=off", "MINIO_UPDATE=off", "MINIO_CI_CD=on",
	}
	log := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &Server{Endpoint: "http://" + addr, cmd: cmd, done: make(chan error, 1), log: log}
	go func() { s.done <- cmd.Wait() }()
	// Ready when its health check answers; a bounded wait.
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-s.done:
			s.done <- err
			return nil, fmt.Errorf("minio exited: %v: %s", err, log.String())
		default:
		}
		// Ready once it answers S3 requests: its health check says live
		// before it takes them.
		resp, err := client.Get(s.Endpoint + "/minio/health/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				_, err := s.Client().ListBuckets(ctx, &s3.ListBucketsInput{})
				cancel()
				if err == nil {
					return s, nil
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.Stop()
	return nil, fmt.Errorf("minio did not answer on %s within 60s: %s", addr, log.String())
}

// Stop stops the server (TERM, then KILL after a few seconds) and waits
// for it. Stopping a stopped server does nothing.
func (s *Server) Stop() {
	if s.cmd.Process == nil {
		return
	}
	select {
	case err := <-s.done:
		s.done <- err
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.done:
		s.done <- err
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		s.done <- <-s.done
	}
}

// Kill stops the server at once (SIGKILL), as a crash or a cut network
// would: responses under way end mid-stream.
func (s *Server) Kill() {
	if s.cmd.Process == nil || s.Stopped() {
		return
	}
	_ = s.cmd.Process.Kill()
	s.done <- <-s.done
}

// Env is the hermetic AWS environment for the server: test credentials,
// config files that do not exist in a temporary directory, its endpoint,
// and nothing that could send a request elsewhere (no instance metadata).
func (s *Server) Env(home string) map[string]string {
	return map[string]string{
		"HOME":                        home,
		"AWS_CONFIG_FILE":             filepath.Join(home, ".aws", "config"),
		"AWS_SHARED_CREDENTIALS_FILE": filepath.Join(home, ".aws", "credentials"),
		"AWS_ACCESS_KEY_ID":           AccessKey,
		"AWS_SECRET_ACCESS_KEY":       SecretKey,
		"AWS_SESSION_TOKEN":           "",
		"AWS_PROFILE":                 "",
		"AWS_REGION":                  Region,
		"AWS_DEFAULT_REGION":          Region,
		"AWS_ENDPOINT_URL":            "",
		"AWS_ENDPOINT_URL_S3":         s.Endpoint,
		"AWS_EC2_METADATA_DISABLED":   "true",
		// A CA bundle of the machine's is no business of a loopback test.
		"AWS_CA_BUNDLE": "",
	}
}

// Setenv sets Env for the rest of the test t, with a temporary HOME.
func (s *Server) Setenv(t interface {
	Setenv(k, v string)
	TempDir() string
}) {
	for k, v := range s.Env(t.TempDir()) {
		t.Setenv(k, v)
	}
}

// Client is an SDK client of the server with the test credentials, for
// setting up buckets and objects, whatever the environment says.
func (s *Server) Client() *s3.Client {
	return s3.New(s3.Options{
		Region:       Region,
		BaseEndpoint: aws.String(s.Endpoint),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(AccessKey, SecretKey, ""),
	})
}

// MakeBucket creates a bucket.
func (s *Server) MakeBucket(ctx context.Context, name string) error {
	_, err := s.Client().CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &name})
	return err
}

// Put writes an object and returns its ETag.
func (s *Server) Put(ctx context.Context, bucket, key string, data []byte) (string, error) {
	out, err := s.Client().PutObject(ctx, &s3.PutObjectInput{Bucket: &bucket, Key: &key, Body: bytes.NewReader(data)})
	if err != nil {
		return "", err
	}
	return aws.ToString(out.ETag), nil
}

// Keys lists the keys under a prefix.
func (s *Server) Keys(ctx context.Context, bucket, prefix string) ([]string, error) {
	var keys []string
	p := s3.NewListObjectsV2Paginator(s.Client(), &s3.ListObjectsV2Input{Bucket: &bucket, Prefix: &prefix})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, o := range page.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
	}
	return keys, nil
}

// Log is what the server printed, for a failing test's message.
func (s *Server) Log() string { return s.log.String() }

// Stopped tells whether the server has exited.
func (s *Server) Stopped() bool {
	select {
	case err := <-s.done:
		s.done <- err
		return true
	default:
		return false
	}
}
