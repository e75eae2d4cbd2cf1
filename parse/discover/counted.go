package discover

import "io"

// Counted returns the candidate with every byte read through Open reported
// to add, as it is read: a progress bar across all of a command's inputs
// moves with the reading, not a file at a time. add may be called from
// several goroutines.
func (c Candidate) Counted(add func(int64)) Candidate {
	open := c.open
	if open == nil || add == nil {
		return c
	}
	c.open = func() (io.ReadCloser, error) {
		rc, err := open()
		if err != nil {
			return nil, err
		}
		return &countingReader{rc: rc, add: add}, nil
	}
	return c
}

type countingReader struct {
	rc  io.ReadCloser
	add func(int64)
}

func (r *countingReader) Read(p []byte) (int, error) {
	n, err := r.rc.Read(p)
	if n > 0 {
		r.add(int64(n))
	}
	return n, err
}

func (r *countingReader) Close() error { return r.rc.Close() }
