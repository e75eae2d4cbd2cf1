package jsonl

import "golang.org/x/sys/unix"

// bigBuf is a buffer for one line longer than keptLine, outside the Go
// heap: an anonymous mapping that grows by mremap, which moves pages
// instead of copying them. A line read from a stream whose length is not
// known beforehand (standard input, a compressed file, an archive member)
// is then held once, and read in one piece without a copy. Gathered in
// blocks and joined at its end, a 200 MiB line cost 2.2 times its size at
// that moment, and most of the time went to faulting in and copying the
// joined buffer while the collector tried to stop the copy.
type bigBuf struct {
	m []byte // the mapping, all of it
	n int    // bytes held
}

// newBigBuf returns a buffer of capacity at least n, or nil when the
// system will not map one (the caller then gathers in blocks).
func newBigBuf(n int) *bigBuf {
	m, err := unix.Mmap(-1, 0, mapRound(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return nil
	}
	huge(m)
	return &bigBuf{m: m}
}

// add appends b, growing the mapping (to twice what it needs) when it
// must; false when it could not grow, and then nothing was added.
func (g *bigBuf) add(b []byte) bool {
	if need := g.n + len(b); need > len(g.m) {
		m, err := unix.Mremap(g.m, mapRound(2*need), unix.MREMAP_MAYMOVE)
		if err != nil {
			return false
		}
		g.m = m
		huge(m)
	}
	g.n += copy(g.m[g.n:], b)
	return true
}

// bytes returns what was added: valid until free.
func (g *bigBuf) bytes() []byte { return g.m[:g.n:g.n] }

// size is the mapping's size; reset empties it for another line, which
// reuses the pages already faulted in.
func (g *bigBuf) size() int { return len(g.m) }
func (g *bigBuf) reset()    { g.n = 0 }

// free unmaps the buffer; what bytes returned must not be used after.
func (g *bigBuf) free() { _ = unix.Munmap(g.m) }

// huge asks for the mapping in huge pages where the kernel gives them
// (transparent huge pages in "madvise" mode): a fault for every 2 MiB
// instead of every 4 KiB as the line is copied in. A kernel that says no
// gives small pages, as without the advice.
func huge(m []byte) { _ = unix.Madvise(m, unix.MADV_HUGEPAGE) }

// mapRound rounds n up to a multiple of any page size Linux uses.
func mapRound(n int) int {
	const unit = 2 << 20
	return (n + unit - 1) &^ (unit - 1)
}
