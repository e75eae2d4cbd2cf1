package objstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/logging"
)

// scheme is how a source or destination in object storage is written.
const scheme = "s3://"

// IsURL tells whether name is an s3:// URL.
func IsURL(name string) bool { return strings.HasPrefix(name, scheme) }

// Loc is a bucket and a key (or key prefix) in it.
type Loc struct {
	Bucket, Key string
}

// ParseURL reads s3://bucket/key, s3://bucket/prefix/ or s3://bucket.
func ParseURL(u string) (Loc, error) {
	if !IsURL(u) {
		return Loc{}, fmt.Errorf("%s: not an s3:// URL", u)
	}
	rest := strings.TrimPrefix(u, scheme)
	bucket, key, _ := strings.Cut(rest, "/")
	if bucket == "" {
		return Loc{}, fmt.Errorf("%s: no bucket: write s3://BUCKET/KEY or s3://BUCKET/PREFIX/", u)
	}
	return Loc{Bucket: bucket, Key: key}, nil
}

// String is the location as an s3:// URL.
func (l Loc) String() string { return scheme + l.Bucket + "/" + l.Key }

// IsPrefix tells whether the location names a prefix (a "folder") rather
// than one object: the whole bucket, or a key ending in "/".
func (l Loc) IsPrefix() bool { return l.Key == "" || strings.HasSuffix(l.Key, "/") }

// Options configure a Client beyond what the AWS configuration says.
type Options struct {
	// Endpoint overrides the S3 endpoint (as --s3-endpoint does); empty
	// keeps AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL or the shared config's.
	Endpoint string
	// HTTPClient, when not nil, carries every request (tests count them).
	HTTPClient *http.Client
}

// Client talks to one S3-compatible store.
type Client struct {
	s3       *s3.Client
	endpoint string
}

// New makes a client from the AWS configuration chain and o.
func New(ctx context.Context, o Options) (*Client, error) {
	var opts []func(*config.LoadOptions) error
	if o.HTTPClient != nil {
		opts = append(opts, config.WithHTTPClient(o.HTTPClient))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("reading the AWS configuration: %w", err)
	}
	endpoint := o.Endpoint
	if endpoint == "" {
		endpoint = os.Getenv("AWS_ENDPOINT_URL_S3")
	}
	if endpoint == "" && cfg.BaseEndpoint != nil {
		endpoint = *cfg.BaseEndpoint
	}
	// Library packages never print: the SDK's own notes (a response
	// without a checksum to validate) would land on stderr.
	cfg.Logger = logging.Nop{}
	if cfg.Region == "" {
		// S3-compatible stores ignore the region but the signature needs
		// one; us-east-1 is what AWS itself takes when none is given.
		cfg.Region = "us-east-1"
	}
	c := &Client{endpoint: endpoint}
	c.s3 = s3.NewFromConfig(cfg, func(so *s3.Options) {
		so.DisableLogOutputChecksumValidationSkipped = true
		if o.Endpoint != "" {
			so.BaseEndpoint = aws.String(o.Endpoint)
		}
		// A custom endpoint is a store of its own (MinIO, a gateway):
		// bucket names in host names need DNS that such a store rarely has.
		if endpoint != "" {
			so.UsePathStyle = true
		}
	})
	return c, nil
}

// Info is what a listing or a HEAD says of an object.
type Info struct {
	Loc
	Size         int64
	ETag         string
	LastModified time.Time
}

// Head looks at one object.
func (c *Client) Head(ctx context.Context, l Loc) (Info, error) {
	out, err := c.s3.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &l.Bucket, Key: &l.Key})
	if err != nil {
		return Info{}, c.wrap(l, "", err)
	}
	return Info{Loc: l, Size: aws.ToInt64(out.ContentLength), ETag: aws.ToString(out.ETag), LastModified: aws.ToTime(out.LastModified)}, nil
}

// List returns every object under a prefix, in key order. Keys that end in
// "/" (the folder markers some tools write) are left out.
func (c *Client) List(ctx context.Context, l Loc) ([]Info, error) {
	var out []Info
	p := s3.NewListObjectsV2Paginator(c.s3, &s3.ListObjectsV2Input{Bucket: &l.Bucket, Prefix: &l.Key})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, c.wrap(l, "", err)
		}
		for _, o := range page.Contents {
			k := aws.ToString(o.Key)
			if strings.HasSuffix(k, "/") {
				continue
			}
			out = append(out, Info{Loc: Loc{l.Bucket, k}, Size: aws.ToInt64(o.Size), ETag: aws.ToString(o.ETag), LastModified: aws.ToTime(o.LastModified)})
		}
	}
	return out, nil
}

// Delete removes one object.
func (c *Client) Delete(ctx context.Context, l Loc) error {
	_, err := c.s3.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &l.Bucket, Key: &l.Key})
	return c.wrap(l, "", err)
}

var (
	// ErrNotFound is a bucket or object that is not there.
	ErrNotFound = errors.New("not found")
	// ErrChanged is an object replaced after it was listed or first read.
	ErrChanged = errors.New("the object changed while it was read")
	// ErrDenied is a request the store refused: wrong or missing credentials,
	// or no permission.
	ErrDenied = errors.New("access denied")
	// ErrUnreachable is a store that could not be reached.
	ErrUnreachable = errors.New("cannot reach the object store")
)

// Error is a failed request, with the URL it was about.
type Error struct {
	URL string
	// Kind is one of the Err* values, or nil when none fits.
	Kind error
	// Detail says more: the store's own message, an ETag.
	Detail string
	Err    error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.URL)
	b.WriteString(": ")
	if e.Kind != nil {
		b.WriteString(e.Kind.Error())
		if e.Detail != "" {
			b.WriteString(" (" + e.Detail + ")")
		}
		return b.String()
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *Error) Unwrap() []error {
	if e.Kind != nil {
		return []error{e.Kind, e.Err}
	}
	return []error{e.Err}
}

// wrap turns an SDK error into an *Error naming the URL, and classifies it.
func (c *Client) wrap(l Loc, etag string, err error) error {
	if err == nil {
		return nil
	}
	var oe *Error
	if errors.As(err, &oe) {
		return err
	}
	e := &Error{URL: l.String(), Err: err}
	var api smithy.APIError
	var re interface{ HTTPStatusCode() int }
	status := 0
	if errors.As(err, &re) {
		status = re.HTTPStatusCode()
	}
	code := ""
	if errors.As(err, &api) {
		code = api.ErrorCode()
		e.Detail = api.ErrorMessage()
	}
	var dns *net.DNSError
	var op *net.OpError
	switch {
	case code == "NoSuchBucket":
		e.Kind, e.Detail = ErrNotFound, "no bucket "+l.Bucket
	case code == "NoSuchKey" || code == "NotFound" || status == http.StatusNotFound:
		e.Kind, e.Detail = ErrNotFound, "no such object"
	case code == "PreconditionFailed" || status == http.StatusPreconditionFailed:
		e.Kind, e.Detail = ErrChanged, "it is no longer the version with ETag "+etag
	case code == "InvalidAccessKeyId" || code == "SignatureDoesNotMatch" || code == "AccessDenied" || code == "InvalidToken" ||
		code == "ExpiredToken" || status == http.StatusForbidden:
		e.Kind = ErrDenied
		if e.Detail == "" {
			e.Detail = "check the credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE"
		}
	case strings.Contains(err.Error(), "get identity: get credentials"):
		// The SDK found no credentials anywhere in its chain; its own text
		// lists every place it tried, down to the instance metadata.
		e.Kind, e.Detail = ErrDenied, "no credentials found"
	case errors.As(err, &dns) || errors.As(err, &op):
		e.Kind = ErrUnreachable
		e.Detail = rootCause(err)
		if c.endpoint != "" {
			e.Detail = c.endpoint + ": " + e.Detail
		}
	}
	return e
}

// rootCause is the innermost message of an error chain: the SDK's own
// wrapping repeats the operation and retry count around it.
func rootCause(err error) string {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err.Error()
		}
		err = u
	}
}
