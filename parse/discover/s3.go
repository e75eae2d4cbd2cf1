package discover

import (
	"context"
	"errors"
	"io"
	"runtime"
	"strings"
	"sync"

	"github.com/agentsandbox/sandbox/objstore"
)

// S3 is how a Finder reaches object storage for s3:// sources.
type S3 struct {
	objstore.Options
	// Context bounds every request; nil is context.Background().
	Context context.Context

	once   sync.Once
	client *objstore.Client
	err    error
}

func (s *S3) get() (*objstore.Client, context.Context, error) {
	ctx := s.Context
	if ctx == nil {
		ctx = context.Background()
	}
	s.once.Do(func() { s.client, s.err = objstore.New(ctx, s.Options) })
	return s.client, ctx, s.err
}

// archiveName tells an archive in a listing by its name: looking at the
// content of every object listed would cost a GET each, before selection
// has ruled any out. A single object named on its own is known by content.
func archiveName(key string) bool {
	for _, ext := range []string{".zip", ".tar", ".tar.gz", ".tgz", ".db"} {
		if strings.HasSuffix(strings.ToLower(key), ext) {
			return true
		}
	}
	return false
}

// s3 finds the transcripts in an s3:// URL: every object under a prefix,
// or one object (a transcript, or an archive read in place through ranged
// GETs). The listing's LastModified rules out an object written before the
// window's start (which cannot hold activity after it) before any of its
// bytes are read.
func (f *Finder) s3(url string) ([]Candidate, []Skipped, error) {
	if f.S3 == nil {
		f.S3 = &S3{}
	}
	loc, err := objstore.ParseURL(url)
	if err != nil {
		return nil, nil, err
	}
	client, ctx, err := f.S3.get()
	if err != nil {
		return nil, nil, err
	}
	if !loc.IsPrefix() {
		info, err := client.Head(ctx, loc)
		switch {
		case err == nil:
			if !f.inWindow(info) {
				return nil, nil, nil
			}
			return f.object(client, ctx, info)
		case !errors.Is(err, objstore.ErrNotFound):
			return nil, nil, err
		}
		// No such object: it may be a prefix written without its "/".
		objs, lerr := client.List(ctx, objstore.Loc{Bucket: loc.Bucket, Key: loc.Key + "/"})
		if lerr != nil || len(objs) == 0 {
			return nil, nil, err
		}
		loc.Key += "/"
	}
	objs, err := client.List(ctx, loc)
	if err != nil {
		return nil, nil, err
	}
	var keep []objstore.Info
	for _, o := range objs {
		if f.inWindow(o) {
			keep = append(keep, o)
		}
	}
	// Archives are opened now to list their members, a few at a time;
	// transcripts only when selection reads them.
	type result struct {
		cands   []Candidate
		skipped []Skipped
	}
	results := make([]result, len(keep))
	sem := make(chan struct{}, 2*runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, o := range keep {
		if !archiveName(o.Key) {
			results[i].cands = []Candidate{f.objectCandidate(client, ctx, o)}
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			c, sk, err := f.object(client, ctx, o)
			if err != nil {
				sk = append(sk, Skipped{o.Loc.String(), err.Error()})
			}
			results[i] = result{c, sk}
		}()
	}
	wg.Wait()
	var out []Candidate
	var skipped []Skipped
	for _, r := range results {
		out = append(out, r.cands...)
		skipped = append(skipped, r.skipped...)
	}
	return out, skipped, nil
}

func (f *Finder) inWindow(o objstore.Info) bool {
	return f.Window.Since.IsZero() || o.LastModified.IsZero() || !o.LastModified.Before(f.Window.Since)
}

// object reads one object: an archive's members, or the object itself as
// a transcript candidate.
func (f *Finder) object(client *objstore.Client, ctx context.Context, info objstore.Info) ([]Candidate, []Skipped, error) {
	obj := client.Object(ctx, info)
	defer obj.Close()
	reopen := func() (io.ReaderAt, func(), error) {
		o := client.Object(ctx, info)
		return o, func() { o.Close() }, nil
	}
	cands, skipped, err := f.readerAt(info.Loc.String(), obj, info.Size, info.LastModified, reopen)
	if cands == nil && skipped == nil && err == nil {
		return []Candidate{f.objectCandidate(client, ctx, info)}, nil, nil
	}
	return cands, skipped, err
}

// objectCandidate is an object read as one transcript: streamed from its
// start, and its tail read by a ranged GET.
func (f *Finder) objectCandidate(client *objstore.Client, ctx context.Context, info objstore.Info) Candidate {
	c := Candidate{Name: info.Loc.String(), ModTime: info.LastModified, Size: info.Size, ID: iDFromName(info.Key)}
	c.open = func() (io.ReadCloser, error) { return client.Object(ctx, info).Stream(), nil }
	c.readAt = func() (io.ReaderAt, int64, func(), error) {
		o := client.Object(ctx, info)
		return o, info.Size, func() { o.Close() }, nil
	}
	return c
}

// IsSourceFailure tells whether err is the source failing while it was
// read (a store that could not be reached, an object that changed, a
// connection cut for good, a vault's chunk that is damaged: an error with
// a SourceFailure method that says so) rather than damage in the bytes it
// gave: what was read before it is part of a transcript, not all of one.
func IsSourceFailure(err error) bool {
	var oe *objstore.Error
	var sf interface{ SourceFailure() bool }
	return errors.As(err, &oe) || errors.As(err, &sf) && sf.SourceFailure()
}
