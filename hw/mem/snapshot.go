package mem

// Snapshot stands for the bytes [a, a+n) of a memory held when the
// snapshot was taken (Memory.Snapshot), without copying them while they
// stay unchanged: a NIC reads a payload out of memory into a packet buffer and
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
// returns nil, copying nothing, when the range is empty or has no bytes
// (payload-free: use Read).
func (m *Memory) Snapshot(a Addr, buf []byte) *Snapshot {
	r, err := m.find(a, len(buf))
	if err != nil {
		panic(err)
	}
	if len(buf) == 0 || r.data == nil && !r.back(m) {
		return nil
	}
	if r.slotted() && r.slotOf(int(a-r.base), len(buf)) == -2 {
		r.flatten() // the snapshot's source must be contiguous
	}
	s, ok := m.snapFree.Get()
	if !ok {
		s = new(Snapshot)
	}
	*s = Snapshot{m: m, ri: r.idx, off: int(a - r.base), buf: buf, lazy: true, at: len(r.snaps)}
	r.snaps = append(r.snaps, s)
	r.countSnaps(s.off, s.off+len(buf), 1)
	return s
}

// snapBlockShift is log2 of the blocks in which a region counts its lazy
// snapshots, so that an access finds out whether any may overlap it by
// looking at the counts of the one or two blocks it touches instead of
// the whole list (a GPU-TN sender has dozens of packets in flight from
// one buffer while its flag words there are read and written).
const snapBlockShift = 12

// countSnaps adds d to the snapshot counts of the blocks [lo, hi) touches.
func (r *region) countSnaps(lo, hi, d int) {
	if r.snapCount == nil {
		r.snapCount = make([]int32, (r.size+1<<snapBlockShift-1)>>snapBlockShift)
	}
	for b := lo >> snapBlockShift; b <= (hi-1)>>snapBlockShift; b++ {
		r.snapCount[b] += int32(d)
	}
}

// snapped reports whether a lazy snapshot may overlap [lo, hi): one of
// the blocks it touches has one.
func (r *region) snapped(lo, hi int) bool {
	for b := lo >> snapBlockShift; b <= (hi-1)>>snapBlockShift; b++ {
		if r.snapCount[b] != 0 {
			return true
		}
	}
	return false
}

// Materialize copies the snapshot's bytes into its buffer now, if they
// are not there yet.
func (s *Snapshot) Materialize() {
	if s.lazy {
		r := s.region()
		copy(s.buf, r.src(s.off, len(s.buf)))
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
		copy(dst, r.src(s.off, len(dst)))
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
	r.countSnaps(s.off, s.off+len(s.buf), -1)
}

// materialize materialises r's snapshots that overlap [lo, hi) (offsets
// in r.data, hi > lo), before an access there.
func (r *region) materialize(lo, hi int) {
	if !r.snapped(lo, hi) {
		return
	}
	for i := 0; i < len(r.snaps); {
		if s := r.snaps[i]; s.off < hi && lo < s.off+len(s.buf) {
			s.Materialize() // moves the last snapshot to i
			continue
		}
		i++
	}
}
