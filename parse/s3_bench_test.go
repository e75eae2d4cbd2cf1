package parse_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/agentsandbox/sandbox/fixtures/gen"
	"github.com/agentsandbox/sandbox/internal/s3test"
	"github.com/agentsandbox/sandbox/objstore"
	"github.com/agentsandbox/sandbox/parse"
	"github.com/agentsandbox/sandbox/parse/discover"
	"github.com/agentsandbox/sandbox/parse/internal/testhook"
)

// The benchmarks' bucket is filled once per test binary and its server
// stopped when the binary ends (TestMain).
var benchStore struct {
	once     sync.Once
	srv      *s3test.Server
	skip     string
	cleanups []func()
	cutoff   time.Time // the small objects written after it: 1 in 10
	small    int
	large    int
}

func TestMain(m *testing.M) {
	testhook.PoisonTests() // records poisoned once read: nothing may keep one
	code := m.Run()
	for i := len(benchStore.cleanups) - 1; i >= 0; i-- {
		benchStore.cleanups[i]()
	}
	os.Exit(code)
}

// procTB lets s3test.Start run for the whole binary, not one benchmark.
type procTB struct{}

func (procTB) Helper()                           {}
func (procTB) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
func (procTB) Skipf(format string, args ...any)  { panic(skipped(fmt.Sprintf(format, args...))) }
func (procTB) Cleanup(f func())                  { benchStore.cleanups = append(benchStore.cleanups, f) }
func (procTB) TempDir() string {
	d, err := os.MkdirTemp("", "sandbox-s3bench-")
	if err != nil {
		panic(err)
	}
	benchStore.cleanups = append(benchStore.cleanups, func() { os.RemoveAll(d) })
	return d
}

type skipped string

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n >= 0 {
		return n
	}
	return def
}

// benchBucket fills bucket "bench": small/ holds SANDBOX_S3_BENCH_SMALL
// (default 10,000) rollouts of about 4 KiB, nine in ten written before the
// cutoff (a bounded wait of a few seconds, so that their sessions are
// active only after it); large/ holds SANDBOX_S3_BENCH_LARGE (default 100) of about 1 MiB.
func benchBucket(b *testing.B) *s3test.Server {
	benchStore.once.Do(func() {
		defer func() {
			if r := recover(); r != nil {
				if s, ok := r.(skipped); ok {
					benchStore.skip = string(s)
					return
				}
				panic(r)
			}
		}()
		srv := s3test.Start(procTB{})
		for k, v := range srv.Env(procTB{}.TempDir()) {
			os.Setenv(k, v)
		}
		ctx := context.Background()
		if err := srv.MakeBucket(ctx, "bench"); err != nil {
			panic(err)
		}
		benchStore.small, benchStore.large = envInt("SANDBOX_S3_BENCH_SMALL", 10000), envInt("SANDBOX_S3_BENCH_LARGE", 100)
		// Each object a session of its own (its own seed, so its own id).
		// A session is active up to when its object is written: those
		// written after the cutoff are active after it.
		small := func(i int) []byte {
			return must(gen.Bytes(gen.Options{Size: 4 << 10, Seed: int64(i), Files: 3, PatchEvery: 4, Start: time.Now().Add(-5 * time.Second)}))
		}
		large := func(i int) []byte {
			return must(gen.Bytes(gen.Options{Size: 1 << 20, Seed: int64(1e6 + i), Files: 20, PatchEvery: 8, Start: time.Now().Add(-time.Hour)}))
		}
		putAll := func(prefix string, from, to int, data func(int) []byte) {
			work := make(chan int)
			var wg sync.WaitGroup
			for range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range work {
						if _, err := srv.Put(ctx, "bench", fmt.Sprintf("%s/rollout-%06d.jsonl", prefix, i), data(i)); err != nil {
							panic(err)
						}
					}
				}()
			}
			for i := from; i < to; i++ {
				work <- i
			}
			close(work)
			wg.Wait()
		}
		old := benchStore.small * 9 / 10
		putAll("small", 0, old, small)
		time.Sleep(1100 * time.Millisecond)
		benchStore.cutoff = time.Now()
		// Five seconds of activity before each write: the sessions written
		// after the cutoff are active only after it.
		time.Sleep(6 * time.Second)
		putAll("small", old, benchStore.small, small)
		putAll("large", 0, benchStore.large, large)
		benchStore.srv = srv
	})
	if benchStore.skip != "" {
		b.Skip(benchStore.skip)
	}
	if benchStore.srv == nil {
		b.Fatal("the benchmark bucket could not be filled")
	}
	return benchStore.srv
}

// sessionsOver does what sandbox sessions --from URL does: list, select,
// and read each selected transcript for its summary.
func sessionsOver(b *testing.B, url string, w discover.Window) (listed, sessions int, cnt *s3test.Counter) {
	cnt = s3test.NewCounter()
	f := &discover.Finder{Window: w, S3: &discover.S3{Options: objstore.Options{HTTPClient: cnt.Client()}}}
	cands, _, err := f.From(url, nil)
	if err != nil {
		b.Fatal(err)
	}
	sel, errs, err := parse.Select(cands, parse.Filter{Window: w}, f.Looked)
	if err != nil || len(errs) > 0 {
		b.Fatal(err, errs)
	}
	sums, serrs := parse.Summarize(context.Background(), sel, nil)
	if len(serrs) > 0 {
		b.Fatal(serrs)
	}
	return len(cands), len(sums), cnt
}

func BenchmarkS3Sessions(b *testing.B) {
	benchBucket(b)
	run := func(name, url string, w func() discover.Window) {
		b.Run(name, func(b *testing.B) {
			var listed, sessions int
			var gets, objects int
			var bytes int64
			for b.Loop() {
				var cnt *s3test.Counter
				listed, sessions, cnt = sessionsOver(b, url, w())
				gets, objects, bytes = cnt.Gets("/bench/"), cnt.Objects(), cnt.Bytes()
			}
			b.ReportMetric(float64(listed), "objects-in-window")
			b.ReportMetric(float64(sessions), "sessions")
			b.ReportMetric(float64(objects), "objects-read")
			b.ReportMetric(float64(gets), "GETs")
			b.ReportMetric(float64(bytes), "bytes-read")
		})
	}
	run("small-full", "s3://bench/small/", func() discover.Window { return discover.Window{} })
	run("small-since", "s3://bench/small/", func() discover.Window { return discover.Window{Since: benchStore.cutoff} })
	run("large-full", "s3://bench/large/", func() discover.Window { return discover.Window{} })
}
