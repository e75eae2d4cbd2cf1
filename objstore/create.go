package objstore

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// ErrExists is a conditional create refused because the key is taken.
var ErrExists = errors.New("an object with that key already exists")

// Create writes data as the object at l only if no object is there
// (If-None-Match: *), so that two writers never overwrite each other: the
// second gets ErrExists (412 Precondition Failed; 409 when the store saw the
// two requests at once) and the first one's object stays. The body carries
// its CRC32, checked by the store.
func (c *Client) Create(ctx context.Context, l Loc, data []byte) error {
	_, err := c.s3.PutObject(ctx, &s3.PutObjectInput{Bucket: &l.Bucket, Key: &l.Key, Body: bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))), IfNoneMatch: aws.String("*"), ChecksumAlgorithm: types.ChecksumAlgorithmCrc32})
	if err == nil {
		return nil
	}
	var re interface{ HTTPStatusCode() int }
	var api smithy.APIError
	if errors.As(err, &re) && (re.HTTPStatusCode() == http.StatusPreconditionFailed || re.HTTPStatusCode() == http.StatusConflict) ||
		errors.As(err, &api) && (api.ErrorCode() == "PreconditionFailed" || api.ErrorCode() == "ConditionalRequestConflict") {
		return &Error{URL: l.String(), Kind: ErrExists, Err: err}
	}
	return c.wrap(l, "", err)
}

// Get reads a small object whole.
func (c *Client) Get(ctx context.Context, l Loc) ([]byte, error) {
	out, err := c.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: &l.Bucket, Key: &l.Key})
	if err != nil {
		return nil, c.wrap(l, "", err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		return nil, c.wrap(l, "", err)
	}
	return data, nil
}
