package s3test

import (
	"io"
	"net/http"
	"strings"
	"sync"
)

// Counter is an http.RoundTripper that counts the requests it carries, by
// method and key, and the bytes of the responses' bodies read: how tests
// prove what a command did not read.
type Counter struct {
	Next http.RoundTripper

	mu    sync.Mutex
	gets  map[string]int // by path (/bucket/key)
	other int
	bytes int64
}

// NewCounter counts the requests of a fresh transport.
func NewCounter() *Counter {
	return &Counter{Next: http.DefaultTransport.(*http.Transport).Clone(), gets: map[string]int{}}
}

// Client is an http.Client through c.
func (c *Counter) Client() *http.Client { return &http.Client{Transport: c} }

// RoundTrip implements http.RoundTripper.
func (c *Counter) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	// A GET of /bucket/key reads an object; a listing is a GET of
	// /bucket with list-type in its query.
	if r.Method == http.MethodGet && !r.URL.Query().Has("list-type") && strings.Count(strings.Trim(r.URL.Path, "/"), "/") >= 1 {
		c.gets[r.URL.Path]++
	} else {
		c.other++
	}
	c.mu.Unlock()
	resp, err := c.Next.RoundTrip(r)
	if err == nil && resp.Body != nil {
		resp.Body = &countBody{resp.Body, c}
	}
	return resp, err
}

// Gets is how many object GETs went to keys whose path contains sub.
func (c *Counter) Gets(sub string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for p, k := range c.gets {
		if strings.Contains(p, sub) {
			n += k
		}
	}
	return n
}

// Objects is how many distinct objects were read.
func (c *Counter) Objects() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.gets)
}

// Bytes is how many bytes of response bodies were read.
func (c *Counter) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}

type countBody struct {
	io.ReadCloser
	c *Counter
}

func (b *countBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.c.mu.Lock()
	b.c.bytes += int64(n)
	b.c.mu.Unlock()
	return n, err
}
