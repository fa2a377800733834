package mem

// Snapshot is the bytes [a, a+n) of a memory had when the snapshot was
// taken (Memory.Snapshot), held without copying them while they stay
// unchanged: a NIC reads a payload out of memory into a packet buffer and
// writes it into the destination a few microseconds later, and in
// between the source is rarely touched, so one copy (source to
// destination, CopyTo) does instead of two. The memory copies the bytes
// into the snapshot's buffer (materialises it) before anything reaches
// the source range (every access goes through Memory.Bytes), so a
// snapshot always yields the bytes of the moment it was taken. The
// simulated world does not depend on when, or whether, a snapshot is
// materialised; only the simulator's memory traffic does.
//
// A snapshot belongs to the memory's engine: taking, materialising and
// consuming it happen on that engine's goroutine (a packet crossing to
// another partition is materialised before it goes).
type Snapshot struct {
	m    *Memory
	ri   int    // index of its region in m.regions (stable: allocations append)
	off  int    // first byte in the region's data
	buf  []byte // where the bytes go when materialised
	lazy bool   // the bytes are still only in the source
	at   int    // index in r.snaps while lazy
}

// Snapshot takes a snapshot of [a, a+len(buf)) into buf, which the caller
// must not touch until it has materialised or consumed the snapshot. It
// returns nil, copying nothing, when the range has no bytes (payload-free:
// use Read).
func (m *Memory) Snapshot(a Addr, buf []byte) *Snapshot {
	r, err := m.find(a, len(buf))
	if err != nil {
		panic(err)
	}
	if r.data == nil && !r.back() {
		return nil
	}
	s, ok := m.snapFree.Get()
	if !ok {
		s = new(Snapshot)
	}
	*s = Snapshot{m: m, ri: r.idx, off: int(a - r.base), buf: buf, lazy: true, at: len(r.snaps)}
	r.snaps = append(r.snaps, s)
	r.snapLo = min(r.snapLo, s.off)
	r.snapHi = max(r.snapHi, s.off+len(buf))
	return s
}

// Materialize copies the snapshot's bytes into its buffer now, if they
// are not there yet.
func (s *Snapshot) Materialize() {
	if s.lazy {
		r := s.region()
		copy(s.buf, r.data[s.off:s.off+len(s.buf)])
		r.forget(s)
	}
}

// CopyTo copies the snapshot's first len(dst) bytes into dst (from the
// source when still lazy) and ends the snapshot: its buffer is the
// caller's again and s must not be used any more. dst must have been
// obtained after the snapshot was taken (Bytes of the destination
// materialises any snapshot it overlaps).
func (s *Snapshot) CopyTo(dst []byte) {
	m := s.m
	if s.lazy {
		r := s.region()
		copy(dst, r.data[s.off:s.off+len(dst)])
		r.forget(s)
	} else {
		copy(dst, s.buf)
	}
	*s = Snapshot{}
	m.snapFree.Put(s)
}

// Release materialises the snapshot and ends it: its buffer holds the
// bytes and s must not be used any more.
func (s *Snapshot) Release() {
	s.Materialize()
	m := s.m
	*s = Snapshot{}
	m.snapFree.Put(s)
}

// region returns the snapshot's region. (Regions live by value in a slice
// that an allocation may move, so a snapshot keeps the index.)
func (s *Snapshot) region() *region { return &s.m.regions[s.ri] }

// forget drops lazy snapshot s from r's list.
func (r *region) forget(s *Snapshot) {
	last := len(r.snaps) - 1
	if s.at != last {
		r.snaps[s.at] = r.snaps[last]
		r.snaps[s.at].at = s.at
	}
	r.snaps[last] = nil
	r.snaps = r.snaps[:last]
	s.lazy = false
	if last == 0 {
		r.snapLo, r.snapHi = int(^uint(0)>>1), 0
	}
}

// materialize materialises r's snapshots that overlap [lo, hi) (offsets
// in r.data), before an access there, and narrows the range the remaining
// ones cover.
func (r *region) materialize(lo, hi int) {
	if hi <= r.snapLo || lo >= r.snapHi {
		return
	}
	nlo, nhi := int(^uint(0)>>1), 0
	for i := 0; i < len(r.snaps); {
		s := r.snaps[i]
		if s.off < hi && lo < s.off+len(s.buf) {
			s.Materialize() // moves the last snapshot to i
			continue
		}
		nlo, nhi = min(nlo, s.off), max(nhi, s.off+len(s.buf))
		i++
	}
	r.snapLo, r.snapHi = nlo, nhi
}
