package objstore

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"
)

// Archiver keeps archives under a prefix (harness.GCOptions.ArchiveTo):
// each is named for its session and time, as in $SANDBOX_HOME/archive.
type Archiver struct {
	c      *Client
	prefix Loc
}

// NewArchiver keeps archives under prefix, with or without its final
// slash.
func NewArchiver(c *Client, prefix Loc) *Archiver {
	if prefix.Key != "" && !strings.HasSuffix(prefix.Key, "/") {
		prefix.Key += "/"
	}
	return &Archiver{c: c, prefix: prefix}
}

// Name is the s3:// URL the archive of session id at t gets.
func (a *Archiver) Name(id string, t time.Time) string {
	return Loc{Bucket: a.prefix.Bucket, Key: a.prefix.Key + id + "-" + t.UTC().Format("20060102T150405Z") + ".tar.gz"}.String()
}

// Write uploads what fill writes as the archive name (a Name).
func (a *Archiver) Write(ctx context.Context, name string, fill func(io.Writer) error) error {
	l, err := ParseURL(name)
	if err != nil {
		return err
	}
	if _, err := a.c.Upload(ctx, l, fill); err != nil {
		return fmt.Errorf("archiving: %w", err)
	}
	return nil
}
