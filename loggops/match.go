package loggops

import (
	"slices"

	"github.com/gpunetsim/gpunetsim/goal"
)

// Matching queues: a host's posted receives and its unexpected messages,
// each matched oldest first. A short queue is a list scanned in order (a
// ring or a halo keeps a few entries: a scan is cheapest). A queue that
// grows past indexAt entries is indexed by key instead, one FIFO per
// (source, tag) its entries carry (a receive's key may hold wildcards), so
// that a host holding thousands of receives posted in another order than
// their messages arrive does not scan them all at every arrival: the
// oldest match is the oldest of the heads of the FIFOs whose key matches,
// since entries of one key match the same queries. It goes back to a list
// when it empties. Which entry matches is the same either way (the
// oldest); TestIndexedMatchingMatchesScans compares them.
const indexAt = 64

// mq is one matching queue of handles (ops or messages, linked through
// their next field).
type mq struct {
	head, tail int32 // the list, oldest first, while not indexed
	n          uint32
	seq        uint32 // while indexed: entries added, their order
	ix         map[[2]uint32]*fifo
}

// fifo is one key's entries in an indexed queue, oldest first.
type fifo struct{ head, tail int32 }

// mqLinks reaches the queued entries' link, order and key.
type mqLinks interface {
	next(h int32) *int32
	seq(h int32) *uint32
	key(h int32) (src, tag uint32)
}

type rqLinks struct{ s *state }

func (l rqLinks) next(h int32) *int32 { return &l.s.op(uint32(h)).qnext }
func (l rqLinks) seq(h int32) *uint32 { return &l.s.op(uint32(h)).qseq }
func (l rqLinks) key(h int32) (uint32, uint32) {
	o := l.s.op(uint32(h))
	return o.peer, o.tag
}

type uqLinks struct{ s *state }

func (l uqLinks) next(h int32) *int32 { return &l.s.msgs[h].next }
func (l uqLinks) seq(h int32) *uint32 { return &l.s.msgs[h].qseq }
func (l uqLinks) key(h int32) (uint32, uint32) {
	m := &l.s.msgs[h]
	return m.src, m.tag
}

func newMQ() mq { return mq{head: -1, tail: -1} }

// add appends entry e (its key already set), indexing the queue when it
// reaches indexAt entries.
func (q *mq) add(l mqLinks, e int32, indexAt uint32) {
	*l.next(e) = -1
	q.n++
	if q.ix != nil {
		q.push(l, e)
		return
	}
	if q.tail < 0 {
		q.head = e
	} else {
		*l.next(q.tail) = e
	}
	q.tail = e
	if q.n >= indexAt {
		q.ix, q.seq = map[[2]uint32]*fifo{}, 0
		for h := q.head; h >= 0; {
			nx := *l.next(h)
			q.push(l, h)
			h = nx
		}
		q.head, q.tail = -1, -1
	}
}

// push appends e to its key's FIFO, next in order. The order is
// renumbered before it would wrap (after 2^32 entries: a long run where
// the queue never empties).
func (q *mq) push(l mqLinks, e int32) {
	if q.seq == ^uint32(0) {
		q.renumber(l)
	}
	*l.seq(e) = q.seq
	q.seq++
	src, tag := l.key(e)
	*l.next(e) = -1
	f := q.ix[[2]uint32{src, tag}]
	if f == nil {
		q.ix[[2]uint32{src, tag}] = &fifo{e, e}
		return
	}
	*l.next(f.tail) = e
	f.tail = e
}

// take removes and returns the oldest entry whose key satisfies ok, or
// -1. keys lists the keys that can satisfy ok when the queue is indexed
// (nil: any key can, and every FIFO is looked at).
func (q *mq) take(l mqLinks, ok func(src, tag uint32) bool, keys [][2]uint32) int32 {
	if q.ix == nil {
		prev := int32(-1)
		for h := q.head; h >= 0; prev, h = h, *l.next(h) {
			if src, tag := l.key(h); !ok(src, tag) {
				continue
			}
			if prev < 0 {
				q.head = *l.next(h)
			} else {
				*l.next(prev) = *l.next(h)
			}
			if q.tail == h {
				q.tail = prev
			}
			q.n--
			return h
		}
		return -1
	}
	var best *fifo
	var bestKey [2]uint32
	consider := func(k [2]uint32, f *fifo) {
		if f != nil && ok(k[0], k[1]) && (best == nil || *l.seq(f.head) < *l.seq(best.head)) {
			best, bestKey = f, k
		}
	}
	if keys != nil {
		for _, k := range keys {
			consider(k, q.ix[k])
		}
	} else {
		for k, f := range q.ix {
			consider(k, f)
		}
	}
	if best == nil {
		return -1
	}
	h := best.head
	best.head = *l.next(h)
	if best.head < 0 {
		delete(q.ix, bestKey)
	}
	q.n--
	if q.n == 0 {
		q.ix = nil
	}
	return h
}

// renumber gives the indexed entries the orders 0, 1, ... oldest first.
func (q *mq) renumber(l mqLinks) {
	all := q.all(l)
	for i, h := range all {
		*l.seq(h) = uint32(i)
	}
	q.seq = uint32(len(all))
}

// all returns the entries oldest first (for a deadlock report).
func (q *mq) all(l mqLinks) []int32 {
	var out []int32
	if q.ix == nil {
		for h := q.head; h >= 0; h = *l.next(h) {
			out = append(out, h)
		}
		return out
	}
	for _, f := range q.ix {
		for h := f.head; h >= 0; h = *l.next(h) {
			out = append(out, h)
		}
	}
	slices.SortFunc(out, func(a, b int32) int {
		if *l.seq(a) < *l.seq(b) {
			return -1
		}
		return 1
	})
	return out
}

// takePosted removes the oldest receive posted on hs that a message from
// src with tag matches: one with that source or any, that tag or any.
func (s *state) takePosted(hs *host, src, tag uint32) int32 {
	if q := &hs.rq; q.ix == nil { // the list, scanned here without indirection: the common case
		prev := int32(-1)
		for ri := q.head; ri >= 0; prev, ri = ri, s.op(uint32(ri)).qnext {
			r := s.op(uint32(ri))
			if !matches(r.peer, r.tag, src, tag) {
				continue
			}
			if prev < 0 {
				q.head = r.qnext
			} else {
				s.op(uint32(prev)).qnext = r.qnext
			}
			if q.tail == ri {
				q.tail = prev
			}
			q.n--
			return ri
		}
		return -1
	}
	ok := func(rsrc, rtag uint32) bool { return matches(rsrc, rtag, src, tag) }
	var keys [][2]uint32
	if hs.rq.ix != nil {
		keys = [][2]uint32{{src, tag}, {goal.AnySource, tag}, {src, goal.AnyTag}, {goal.AnySource, goal.AnyTag}}
	}
	return hs.rq.take(rqLinks{s}, ok, keys)
}

// takeUnexpected removes the oldest unexpected message on hs that a
// receive from rsrc with tag rtag (either may be a wildcard) matches.
func (s *state) takeUnexpected(hs *host, rsrc, rtag uint32) int32 {
	if q := &hs.uq; q.ix == nil {
		prev := int32(-1)
		for mi := q.head; mi >= 0; prev, mi = mi, s.msgs[mi].next {
			m := &s.msgs[mi]
			if !matches(rsrc, rtag, m.src, m.tag) {
				continue
			}
			if prev < 0 {
				q.head = m.next
			} else {
				s.msgs[prev].next = m.next
			}
			if q.tail == mi {
				q.tail = prev
			}
			q.n--
			return mi
		}
		return -1
	}
	ok := func(src, tag uint32) bool { return matches(rsrc, rtag, src, tag) }
	var keys [][2]uint32
	if hs.uq.ix != nil && rsrc != goal.AnySource && rtag != goal.AnyTag {
		keys = [][2]uint32{{rsrc, rtag}}
	}
	return hs.uq.take(uqLinks{s}, ok, keys)
}
