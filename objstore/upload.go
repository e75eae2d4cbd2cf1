// feature/s3/manager is deprecated in favour of feature/s3/transfermanager,
// which is still v0 (no compatibility promise) as of this writing; manager
// is the stable upload manager and still gets fixes. Move when that is 1.0.
//
//lint:file-ignore SA1019 manager is the stable upload manager; transfermanager is v0
package objstore

import (
	"context"
	"errors"
	"io"

	"github.com/aws/aws-sdk-go-v2/feature/s3/manager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// Upload writes what fill writes as the object at l, streamed in parts (a
// multipart upload for anything past the first part), never held whole nor
// spooled to disk. The object appears whole or not at all: when fill or a
// part fails, the upload is aborted and whatever was at l before is still
// there. Each part carries its CRC32, checked by the store.
func (c *Client) Upload(ctx context.Context, l Loc, fill func(io.Writer) error) (Info, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := fill(pw)
		pw.CloseWithError(err) // nil: a clean end of the stream
		done <- err
	}()
	up := manager.NewUploader(c.s3, func(u *manager.Uploader) {
		u.Concurrency = 2 // parts in flight: memory is Concurrency × PartSize
	})
	out, err := up.Upload(ctx, &s3.PutObjectInput{Bucket: &l.Bucket, Key: &l.Key, Body: pr,
		ChecksumAlgorithm: types.ChecksumAlgorithmCrc32})
	// The writer must not block on a reader that has given up.
	pr.CloseWithError(errUploadEnded)
	if ferr := <-done; ferr != nil && !errors.Is(ferr, errUploadEnded) {
		return Info{}, ferr // the upload saw the stream fail and aborted
	}
	if err != nil {
		return Info{}, c.wrap(l, "", err)
	}
	etag := ""
	if out.ETag != nil {
		etag = *out.ETag
	}
	return Info{Loc: l, ETag: etag}, nil
}

var errUploadEnded = errors.New("the upload ended before the stream")

// Open pins the object at l as it is now (its ETag and size) for reading.
func (c *Client) Open(ctx context.Context, l Loc) (*Object, error) {
	info, err := c.Head(ctx, l)
	if err != nil {
		return nil, err
	}
	return c.Object(ctx, info), nil
}
