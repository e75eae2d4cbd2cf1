package harness

import (
	"bufio"
	"context"
	"io"
	"os"
	"time"
)

// TailLines copies r to w, or only its last n lines (n > 0), holding no
// more than those lines.
func TailLines(w io.Writer, r io.Reader, n int) error {
	if n <= 0 {
		_, err := io.Copy(w, r)
		return err
	}
	ring := make([]string, 0, n)
	next := 0
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			if len(ring) < n {
				ring = append(ring, line)
			} else {
				ring[next] = line
				next = (next + 1) % n
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	for i := range ring {
		if _, err := io.WriteString(w, ring[(next+i)%len(ring)]); err != nil {
			return err
		}
	}
	return nil
}

// followPoll is how often -f looks for more output.
const followPoll = 200 * time.Millisecond

// Follow writes to w what is appended to f (a log of session s) from off
// on, until the session is no longer running and nothing more came, or
// ctx is done.
func (st *Store) Follow(ctx context.Context, s *Session, f *os.File, off int64, w io.Writer) error {
	buf := make([]byte, 64<<10)
	for {
		n, err := f.ReadAt(buf, off)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return werr
			}
			off += int64(n)
			continue
		}
		if err != nil && err != io.EOF {
			return err
		}
		cur, lerr := st.Load(s.ID)
		if lerr != nil || !st.Running(cur) {
			// One more look: the last words come before the record.
			if n, _ := f.ReadAt(buf, off); n > 0 {
				continue
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return nil // ^C stops following, and that is all it does
		case <-time.After(followPoll):
		}
	}
}

// WaitAndFollow follows the log name of session s once it is there.
func (st *Store) WaitAndFollow(ctx context.Context, s *Session, name string, w io.Writer) error {
	for {
		f, err := st.OpenSessionFile(s.ID, name, os.O_RDONLY)
		if err == nil {
			defer f.Close()
			return st.Follow(ctx, s, f, 0, w)
		}
		cur, lerr := st.Load(s.ID)
		if lerr != nil || !st.Running(cur) {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(followPoll):
		}
	}
}
