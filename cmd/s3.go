package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/spf13/pflag"

	"github.com/agentsandbox/sandbox/manifest"
	"github.com/agentsandbox/sandbox/objstore"
	"github.com/agentsandbox/sandbox/parse"
	recov "github.com/agentsandbox/sandbox/recover"
)

// s3Flag registers --s3-endpoint on a command that writes or reads
// snapshots and archives.
func s3Flag(f *pflag.FlagSet, endpoint *string) {
	f.StringVar(endpoint, "s3-endpoint", "", "the S3-compatible endpoint `URL` for s3:// destinations and sources, such as http://127.0.0.1:9000 for MinIO (default $AWS_ENDPOINT_URL_S3 or AWS's; path-style addressing)")
}

// s3Loc reads an s3:// URL given on the command line: a usage error when
// it names no bucket, or (with object) when it names a prefix.
func s3Loc(u string, object bool) (objstore.Loc, error) {
	l, err := objstore.ParseURL(u)
	if err != nil {
		return l, usagef("%v", err)
	}
	if object && l.IsPrefix() {
		return l, usagef("%s names a prefix: give the object's key, such as s3://%s/%sNAME.tar.gz", u, l.Bucket, l.Key)
	}
	return l, nil
}

// s3Upload writes what fill writes to the object u names.
func s3Upload(ctx context.Context, endpoint, u string, fill func(io.Writer) error) error {
	l, err := s3Loc(u, true)
	if err != nil {
		return err
	}
	c, err := objstore.New(ctx, objstore.Options{Endpoint: endpoint})
	if err != nil {
		return err
	}
	if _, err := c.Upload(ctx, l, fill); err != nil {
		return s3Hint(err)
	}
	return nil
}

// s3Archiver keeps gc's archives under the s3:// prefix u.
func s3Archiver(ctx context.Context, endpoint, u string) (*objstore.Archiver, error) {
	l, err := s3Loc(u, false)
	if err != nil {
		return nil, err
	}
	c, err := objstore.New(ctx, objstore.Options{Endpoint: endpoint})
	if err != nil {
		return nil, err
	}
	return objstore.NewArchiver(c, l), nil
}

// openSnapshot opens a snapshot to restore: a file, or an s3:// object
// pinned by its ETag and read through ranged GETs (streamed, never copied
// to disk).
func (a *app) openSnapshot(ctx context.Context, endpoint, name string) (io.ReadSeeker, int64, func(), error) {
	if !objstore.IsURL(name) {
		f, err := os.Open(name)
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, 0, nil, fmt.Errorf("%s: %w", name, pe.Err) // not "open x: …", Go's call
		} else if err != nil {
			return nil, 0, nil, err
		}
		st, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, 0, nil, err
		}
		return f, st.Size(), func() { f.Close() }, nil
	}
	l, err := s3Loc(name, true)
	if err != nil {
		return nil, 0, nil, err
	}
	c, err := objstore.New(ctx, objstore.Options{Endpoint: endpoint})
	if err != nil {
		return nil, 0, nil, err
	}
	obj, err := c.Open(ctx, l)
	if err != nil {
		return nil, 0, nil, s3Hint(err)
	}
	return io.NewSectionReader(obj, 0, obj.Size()), obj.Size(), func() { obj.Close() }, nil
}

// guardSources wraps sources so that a stream stopped by its store (an
// s3:// object that changed, or could not be read to its end) cancels the
// returned context. recover and export treat a transcript read up to damage
// as what it holds, but a store that failed is no damage in the transcript:
// like ^C it must stop the run before anything is planned or written.
// failed, called once the run is over, returns that store's error, with
// its hint.
func guardSources(ctx context.Context, streams []*parse.Stream, sources []recov.Source) (_ context.Context, failed func() error, _ []recov.Source) {
	gctx, cancel := context.WithCancelCause(ctx)
	out := make([]recov.Source, len(sources))
	for i := range sources {
		out[i] = &storeGuard{Source: sources[i], s: streams[i], cancel: cancel}
	}
	return gctx, func() error {
		cause := context.Cause(gctx)
		cancel(nil) // the run is over: release the context
		var oe *objstore.Error
		if errors.As(cause, &oe) {
			return s3Hint(oe)
		}
		return nil
	}, out
}

type storeGuard struct {
	recov.Source
	s      *parse.Stream
	cancel context.CancelCauseFunc
}

func (g *storeGuard) Next() (manifest.Op, bool) {
	op, ok := g.Source.Next()
	if !ok {
		var oe *objstore.Error
		if err := g.s.Err(); errors.As(err, &oe) {
			g.cancel(oe)
		}
	}
	return op, ok
}
