package k8stest

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/agentsandbox/sandbox/internal/flock"
)

// Version is the Kubernetes the tests run: its control plane and kubelet
// are built from the Go module proxy. 1.34 is the newest that runs here
// (1.35 refuses cgroup v1 unless told, 1.36 drops containerd 1.x, and this
// machine's kind has cgroup v1 and Debian's containerd 1.6).
const Version = "v1.34.4"

// stagingVersion is the version of the staging modules (k8s.io/api…)
// that Version's module replaces with its own folders.
const stagingVersion = "v0.34.4"

// Commands are the programs a cluster needs.
var Commands = []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet"}

// CacheDir is where the built programs and images are kept: beside Go's
// build cache, as .ci/run keeps MinIO, so a second run starts in seconds.
func CacheDir() string {
	cache := os.Getenv("GOCACHE")
	if cache == "" {
		if out, err := exec.Command("go", "env", "GOCACHE").Output(); err == nil {
			cache = strings.TrimSpace(string(out))
		}
	}
	return filepath.Join(cache, "sandbox-tools", "kubernetes-"+Version)
}

// Built says whether every program is in the cache.
func Built() bool {
	for _, c := range Commands {
		if !isExec(filepath.Join(CacheDir(), "bin", c)) {
			return false
		}
	}
	return true
}

// Ready says whether the cache holds everything a cluster starts from:
// the programs and both images.
func Ready() bool {
	_, err := os.Stat(filepath.Join(CacheDir(), "images", "busybox.tar"))
	return Built() && err == nil
}

// buildTime is what building the programs and images takes once, on two
// cores with other work beside it (26 minutes measured on a fresh machine
// under .ci/run): a test whose deadline is nearer does not start it.
const buildTime = 40 * time.Minute

// Build builds what the cache lacks of the programs, logging the go
// command's output to log. The programs come from k8s.io/kubernetes,
// which cannot be installed with go install (its go.mod replaces the
// staging modules with its own folders): a module of the cache's own
// requires it and replaces each staging module with its published
// version. Two builds at once wait for each other.
func Build(ctx context.Context, log io.Writer) error {
	dir := CacheDir()
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		return err
	}
	unlock, err := flock.Lock(filepath.Join(dir, "build.lock"))
	if err != nil {
		return err
	}
	defer unlock()
	if Built() {
		return nil
	}
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return err
	}
	replaces, err := stagingModules(ctx, log)
	if err != nil {
		return err
	}
	var mod strings.Builder
	fmt.Fprintf(&mod, "module sandbox-k8stest-build\n\ngo 1.24.0\n\nrequire k8s.io/kubernetes %s\n\n", Version)
	for _, m := range replaces {
		fmt.Fprintf(&mod, "replace %s => %s %s\n", m, m, stagingVersion)
	}
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte(mod.String()), 0o644); err != nil {
		return err
	}
	// The binaries are stripped (-s -w), so the compiler's debugging
	// information would only cost build time (-dwarf=false).
	ld := "-s -w"
	minor := strings.Split(strings.TrimPrefix(Version, "v"), ".")[1]
	for _, p := range []string{"k8s.io/component-base/version", "k8s.io/client-go/pkg/version"} {
		ld += fmt.Sprintf(" -X %s.gitVersion=%s -X %s.gitMajor=1 -X %s.gitMinor=%s -X %s.gitTreeState=clean", p, Version, p, p, minor, p)
	}
	for _, c := range Commands {
		out := filepath.Join(dir, "bin", c)
		if isExec(out) {
			continue
		}
		tmp := out + ".tmp"
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-gcflags=all=-dwarf=false", "-ldflags", ld, "-o", tmp, "k8s.io/kubernetes/cmd/"+c)
		cmd.Dir = src
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "CGO_ENABLED=0", "GOWORK=off")
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Run(); err != nil {
			os.Remove(tmp)
			return fmt.Errorf("building %s %s: %w", c, Version, err)
		}
		if err := os.Rename(tmp, out); err != nil {
			return err
		}
	}
	return nil
}

// stagingModules lists the modules k8s.io/kubernetes replaces with its
// staging folders, from its go.mod as the module proxy serves it.
func stagingModules(ctx context.Context, log io.Writer) ([]string, error) {
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", "k8s.io/kubernetes@"+Version)
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	cmd.Stderr = log
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("fetching k8s.io/kubernetes %s: %w", Version, err)
	}
	var info struct{ GoMod string }
	if err := json.Unmarshal(out, &info); err != nil || info.GoMod == "" {
		return nil, fmt.Errorf("fetching k8s.io/kubernetes %s: no go.mod in %q", Version, out)
	}
	f, err := os.Open(info.GoMod)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	re := regexp.MustCompile(`^\s*(k8s\.io/[^\s]+)\s+=>\s+\./staging/`)
	var mods []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			mods = append(mods, m[1])
		}
	}
	if len(mods) == 0 {
		return nil, fmt.Errorf("k8s.io/kubernetes %s: its go.mod replaces no staging module", Version)
	}
	return mods, sc.Err()
}

// pauseSource is the pause container's program: it holds the pod's
// namespaces and exits when told to.
const pauseSource = `package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGTERM, syscall.SIGINT)
	<-c
}
`

// Images names the two images a cluster has, imported at start (nothing
// can be pulled here): the pause image, and busybox for the tests' pods.
const (
	PauseImage   = "localhost/sandbox-k8stest/pause:1.0"
	BusyboxImage = "localhost/sandbox-k8stest/busybox:1.0"
)

// buildImages makes the two images as docker-archive files in the cache
// (pause.tar, busybox.tar), by docker import of a root file system and
// docker save: a static pause program, and Debian's static busybox.
func buildImages(ctx context.Context, log io.Writer) error {
	dir := filepath.Join(CacheDir(), "images")
	if _, err := os.Stat(filepath.Join(dir, "busybox.tar")); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	work, err := os.MkdirTemp(dir, "work-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if err := os.WriteFile(filepath.Join(work, "main.go"), []byte(pauseSource), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(work, "go.mod"), []byte("module pause\n\ngo 1.22\n"), 0o644); err != nil {
		return err
	}
	build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-s -w", "-o", "pause", ".")
	build.Dir, build.Stdout, build.Stderr = work, log, log
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off", "GOFLAGS=")
	if err := build.Run(); err != nil {
		return fmt.Errorf("building the pause program: %w", err)
	}
	pause, err := os.ReadFile(filepath.Join(work, "pause"))
	if err != nil {
		return err
	}
	busybox, err := os.ReadFile("/bin/busybox")
	if err != nil {
		return fmt.Errorf("busybox: %w (Debian's busybox-static provides it)", err)
	}
	applets, err := exec.CommandContext(ctx, "/bin/busybox", "--list").Output()
	if err != nil {
		return fmt.Errorf("busybox --list: %w", err)
	}
	images := []struct {
		name, tag string
		files     []tarFile
		changes   []string
	}{
		{"pause", PauseImage, []tarFile{{name: "pause", data: pause, mode: 0o755}}, []string{`ENTRYPOINT ["/pause"]`}},
		{"busybox", BusyboxImage, busyboxFiles(busybox, strings.Fields(string(applets))), []string{"ENV PATH=/bin", `CMD ["/bin/sh"]`}},
	}
	for _, im := range images {
		if err := makeImage(ctx, log, work, im.name, im.tag, im.files, im.changes); err != nil {
			return err
		}
	}
	// busybox.tar last: its presence says both are there.
	for _, n := range []string{"pause.tar", "busybox.tar"} {
		if err := os.Rename(filepath.Join(work, n), filepath.Join(dir, n)); err != nil {
			return err
		}
	}
	return nil
}

// makeImage writes the image tag, of files, as the docker archive
// work/name.tar: docker import of the files, docker save, docker rmi.
func makeImage(ctx context.Context, log io.Writer, work, name, tag string, files []tarFile, changes []string) error {
	rootfs := filepath.Join(work, name+"-rootfs.tar")
	if err := writeTar(rootfs, files); err != nil {
		return err
	}
	args := []string{"import"}
	for _, c := range changes {
		args = append(args, "-c", c)
	}
	for _, step := range [][]string{append(args, rootfs, tag), {"save", "-o", filepath.Join(work, name+".tar"), tag}, {"rmi", tag}} {
		cmd := exec.CommandContext(ctx, "docker", step...)
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("docker %s: %w", step[0], err)
		}
	}
	return nil
}

// ImportImage makes an image of busybox and the files given (path in the
// image: content, executable), and imports it into the cluster's
// containerd under ref, so a pod can run it (with imagePullPolicy
// IfNotPresent or Never: nothing is pulled here).
func (c *Cluster) ImportImage(ref string, files map[string][]byte) error {
	ctx := context.Background()
	busybox, err := os.ReadFile("/bin/busybox")
	if err != nil {
		return err
	}
	applets, err := exec.CommandContext(ctx, "/bin/busybox", "--list").Output()
	if err != nil {
		return fmt.Errorf("busybox --list: %w", err)
	}
	all := busyboxFiles(busybox, strings.Fields(string(applets)))
	for _, name := range slices.Sorted(maps.Keys(files)) {
		all = slices.DeleteFunc(all, func(f tarFile) bool { return f.name == name })
		all = append(all, tarFile{name: name, data: files[name], mode: 0o755})
	}
	work, err := os.MkdirTemp(c.Dir, "image-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	var log bytes.Buffer
	if err := makeImage(ctx, &log, work, "image", ref, all, []string{"ENV PATH=/bin", `CMD ["/bin/sh"]`}); err != nil {
		return fmt.Errorf("%w\n%s", err, log.String())
	}
	if out, err := c.ctr(ctx, "images", "import", filepath.Join(work, "image.tar")).CombinedOutput(); err != nil {
		return fmt.Errorf("importing %s: %v: %s", ref, err, out)
	}
	return nil
}

type tarFile struct {
	name string
	data []byte
	mode int64
	link string // a symbolic link's target
	dir  bool
}

func busyboxFiles(busybox []byte, applets []string) []tarFile {
	files := []tarFile{{name: "bin", dir: true, mode: 0o755}, {name: "tmp", dir: true, mode: 0o1777},
		{name: "etc", dir: true, mode: 0o755}, {name: "proc", dir: true, mode: 0o755}, {name: "sys", dir: true, mode: 0o755},
		{name: "dev", dir: true, mode: 0o755},
		{name: "bin/busybox", data: busybox, mode: 0o755},
		{name: "etc/passwd", data: []byte("root:x:0:0:root:/:/bin/sh\n"), mode: 0o644},
		{name: "etc/group", data: []byte("root:x:0:\n"), mode: 0o644}}
	for _, a := range applets {
		if a != "busybox" && !strings.Contains(a, "/") {
			files = append(files, tarFile{name: "bin/" + a, link: "busybox"})
		}
	}
	return files
}

func writeTar(path string, files []tarFile) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(f)
	for _, x := range files {
		h := &tar.Header{Name: x.name, Mode: x.mode, Size: int64(len(x.data)), Typeflag: tar.TypeReg}
		switch {
		case x.dir:
			h.Typeflag, h.Name, h.Size = tar.TypeDir, x.name+"/", 0
		case x.link != "":
			h.Typeflag, h.Linkname, h.Mode, h.Size = tar.TypeSymlink, x.link, 0o777, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			f.Close()
			return err
		}
		if h.Size > 0 {
			if _, err := tw.Write(x.data); err != nil {
				f.Close()
				return err
			}
		}
	}
	if err := tw.Close(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}
