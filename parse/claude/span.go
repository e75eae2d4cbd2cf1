package claude

import "time"

// span is a session's time span as its lines write it: the earliest and
// latest timestamps, and the last one read. Each is kept in a buffer of its
// own, so that a line's stamp, read in place, costs no allocation (most
// lines carry one, each later than the one before). ISO-8601 UTC stamps of
// one shape order as strings, and lines are only roughly in time order.
type span struct{ first, max, last []byte }

// stamp notes a timestamp as written; an empty one is left out.
func stamp[T ~string | ~[]byte](s *span, ts T) {
	if len(ts) == 0 {
		return
	}
	s.last = append(s.last[:0], ts...)
	if len(s.first) == 0 || string(ts) < string(s.first) {
		s.first = append(s.first[:0], ts...)
	}
	if string(ts) > string(s.max) {
		s.max = append(s.max[:0], ts...)
	}
}

// timeOf parses a timestamp kept by span (the zero time for none, or for
// one that is not RFC 3339).
func timeOf(b []byte) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, string(b))
	return t
}
