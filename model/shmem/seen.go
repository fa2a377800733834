package shmem

import "github.com/gpunetsim/gpunetsim/hw/mem"

// seenWords is a host helper's cache state per word: the value it last
// read or wrote at each address (a poll hits while memory still holds
// it). An open-addressing table with linear probing instead of a Go map:
// a helper looks a word up at every poll, dequeue store and quiet, and a
// probe here reads one host cache line where the map's lookup reads its
// control word and then the slot (hostPort.cachedRead, beginPoll, tryOp).
// Words are never forgotten.
type seenWords struct {
	slots []seenSlot // power-of-two length; key 0: empty
	n     int
	shift uint8 // 64 − log2(len(slots))
}

// seenSlot is one word: its address + 1 (0: empty) and value.
type seenSlot struct {
	k mem.Addr
	v uint64
}

func (s *seenWords) home(k mem.Addr) int {
	return int((uint64(k) * 0x9E3779B97F4A7C15) >> s.shift)
}

// get returns the value last held for a and whether there is one.
func (s *seenWords) get(a mem.Addr) (uint64, bool) {
	if s.n == 0 {
		return 0, false
	}
	k := a + 1
	mask := len(s.slots) - 1
	for i := s.home(k); ; i = (i + 1) & mask {
		sl := &s.slots[i]
		if sl.k == k {
			return sl.v, true
		}
		if sl.k == 0 {
			return 0, false
		}
	}
}

// put records v as the value held for a.
func (s *seenWords) put(a mem.Addr, v uint64) {
	if 2*(s.n+1) > len(s.slots) {
		s.grow()
	}
	k := a + 1
	mask := len(s.slots) - 1
	for i := s.home(k); ; i = (i + 1) & mask {
		sl := &s.slots[i]
		if sl.k == k {
			sl.v = v
			return
		}
		if sl.k == 0 {
			sl.k, sl.v = k, v
			s.n++
			return
		}
	}
}

// grow doubles the table (16 slots at first) and re-inserts every word.
func (s *seenWords) grow() {
	old := s.slots
	size := max(16, 2*len(old))
	s.slots = make([]seenSlot, size)
	s.shift = uint8(64 - bitsOf(size))
	s.n = 0
	for _, sl := range old {
		if sl.k != 0 {
			s.put(sl.k-1, sl.v)
		}
	}
}

// bitsOf returns log2 of the power of two n.
func bitsOf(n int) int {
	b := 0
	for n > 1 {
		n >>= 1
		b++
	}
	return b
}
