package s3test

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
)

// Proxy forwards loopback connections to a server and can cut one in the
// middle of a response: a real connection cut between a client and a real
// server, where killing the server would leave the bytes already in the
// sockets' buffers (tens of MiB on loopback) to be read first.
type Proxy struct {
	// Endpoint is its URL, http://127.0.0.1:PORT.
	Endpoint string
	l        net.Listener
	target   string
	cutAfter atomic.Int64 // 0: no cut armed
	cuts     atomic.Int64
	down     atomic.Bool // after the cut, take no more connections
	wg       sync.WaitGroup

	mu    sync.Mutex
	conns map[net.Conn]bool
}

// NewProxy forwards to target (host:port) until Close.
func NewProxy(target string) (*Proxy, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{Endpoint: "http://" + l.Addr().String(), l: l, target: target, conns: map[net.Conn]bool{}}
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

// CutOnce arms a cut: the next connection to carry more than n bytes
// towards the client is closed there, both ways. With down, the proxy then
// stops taking connections, as a network that went away.
func (p *Proxy) CutOnce(n int64, down bool) {
	p.down.Store(down)
	p.cutAfter.Store(n)
}

// Cuts is how many connections were cut.
func (p *Proxy) Cuts() int64 { return p.cuts.Load() }

// Close stops listening, ends the connections and waits for them.
func (p *Proxy) Close() {
	p.l.Close()
	p.mu.Lock()
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

func (p *Proxy) track(c net.Conn, on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if on {
		p.conns[c] = true
	} else {
		delete(p.conns, c)
	}
}

func (p *Proxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.track(c, true)
		p.track(s, true)
		p.wg.Add(2)
		go func() {
			defer p.wg.Done()
			io.Copy(s, c)
			s.Close()
		}()
		go func() {
			defer p.wg.Done()
			defer func() { c.Close(); p.track(c, false); p.track(s, false) }()
			buf := make([]byte, 32<<10)
			var sent int64
			for {
				k, err := s.Read(buf)
				if k > 0 {
					if n := p.cutAfter.Load(); n > 0 && sent+int64(k) > n && p.cutAfter.CompareAndSwap(n, 0) {
						c.Write(buf[:n-sent])
						p.cuts.Add(1)
						if p.down.Load() {
							p.l.Close()
						}
						s.Close()
						return
					}
					if _, werr := c.Write(buf[:k]); werr != nil {
						s.Close()
						return
					}
					sent += int64(k)
				}
				if err != nil {
					return
				}
			}
		}()
	}
}
