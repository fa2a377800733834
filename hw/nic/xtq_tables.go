package nic

import (
	"encoding/binary"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
)

// XTQ lookup tables (the dissertation's XTQ chapter). With nic.xtq_tables = nic (the
// prototype) they are on-NIC SRAM: every lookup costs xtq_lookup. With
// xtq_tables = host (the documents' option for large node counts) they
// live in host memory, one array per table, written by the registration
// calls, and the NIC keeps recently used entries in a set-associative
// LRU cache of xtq_cache_entries entries and xtq_cache_ways ways: a hit
// costs xtq_lookup, a miss a PCIe DMA read of the entry (one non-posted
// round trip), after which the entry is decoded from the bytes read; a
// lookup of an entry whose read is in flight waits for that read (a miss
// status holding register) instead of issuing another.
// Registering an index invalidates its cached copy (the registration call
// writes the entry, then tells the NIC).

// xtqTable names a lookup table.
type xtqTable uint8

const (
	tableKernel   xtqTable = iota // KLUT
	tableQueue                    // QLUT
	tableFunction                 // FLUT
	tables
)

// entrySize is an entry's bytes in host memory: KLUT and FLUT {pointer,
// buffer, signal, valid}, QLUT {base, size, write index, read index,
// doorbell, agent, valid}, padded to a power of two. The valid word is
// last.
func (t xtqTable) entrySize() uint64 {
	if t == tableQueue {
		return 64
	}
	return 32
}

func (t xtqTable) String() string { return [tables]string{"xtq.klut", "xtq.qlut", "xtq.flut"}[t] }

// xtqCache is the on-NIC cache of host-memory table entries.
type xtqCache struct {
	sets    [][]cacheWay
	tick    uint64
	pending map[uint64]sim.Time // entries being read (miss status holding registers), until when
}

type cacheWay struct {
	key   uint64
	valid bool
	used  uint64
	entry []byte
}

func tableKey(t xtqTable, idx uint64) uint64 { return uint64(t)<<48 | idx }

func (c *xtqCache) set(key uint64) []cacheWay {
	idx, t := key&(1<<48-1), key>>48
	return c.sets[(idx*3+t)%uint64(len(c.sets))]
}

// lookup returns the cached entry of key, if any, and marks it used.
func (c *xtqCache) lookup(key uint64) ([]byte, bool) {
	for i, w := range c.set(key) {
		if w.valid && w.key == key {
			c.tick++
			c.set(key)[i].used = c.tick
			return w.entry, true
		}
	}
	return nil, false
}

// fill installs entry for key, evicting the least recently used way.
func (c *xtqCache) fill(key uint64, entry []byte) {
	s := c.set(key)
	victim := 0
	for i, w := range s {
		if !w.valid || w.key == key {
			victim = i
			break
		}
		if w.used < s[victim].used {
			victim = i
		}
	}
	c.tick++
	s[victim] = cacheWay{key: key, valid: true, used: c.tick, entry: entry}
}

// invalidate drops key's cached copy.
func (c *xtqCache) invalidate(key uint64) {
	for i, w := range c.set(key) {
		if w.valid && w.key == key {
			c.set(key)[i].valid = false
		}
	}
}

// hostTables reports whether the tables live in host memory, and makes
// the cache on first use.
func (n *NIC) hostTables() bool {
	if n.spec.XtqTables != "host" {
		return false
	}
	if c := &n.xtq.cache; c.sets == nil {
		ways := n.spec.XtqCacheWays
		c.sets = make([][]cacheWay, n.spec.XtqCacheEntries/ways)
		c.pending = map[uint64]sim.Time{}
		for i := range c.sets {
			c.sets[i] = make([]cacheWay, ways)
		}
	}
	return true
}

// tableEntry returns the host-memory address of entry idx of table t,
// allocating the table on first use.
func (n *NIC) tableEntry(t xtqTable, idx uint64) mem.Addr {
	x := &n.xtq
	if x.tableBase[t] == 0 {
		x.tableBase[t] = n.mem.AllocData(mem.Host, uint64(n.spec.XtqTableSize)*t.entrySize(), t.String())
	}
	return x.tableBase[t] + mem.Addr(idx*t.entrySize())
}

// writeEntry stores a registration's entry words (valid last) into the
// host table and invalidates its cached copy.
func (n *NIC) writeEntry(t xtqTable, idx uint64, words ...uint64) {
	if !n.hostTables() {
		return
	}
	a := n.tableEntry(t, idx)
	for i, w := range words {
		n.mem.Store64(a+mem.Addr(8*i), w)
	}
	n.mem.Store64(a+mem.Addr(t.entrySize()-8), 1)
	n.xtq.cache.invalidate(tableKey(t, idx))
}

// xtqLookup looks the indices of lks up together: on-NIC tables take
// xtq_lookup each, one after the other; host tables take xtq_lookup per
// cached entry, and the misses' DMA reads are issued at once. done gets
// each lookup's entry words (nil: not registered) when all are known.
func (n *NIC) xtqLookup(lks []tableLookup, done func(entries [][]uint64)) {
	if !n.hostTables() {
		n.e.After(sim.Time(len(lks))*n.spec.XtqLookup, func() {
			out := make([][]uint64, len(lks))
			for i, l := range lks {
				out[i] = n.xtqOnNIC(l)
			}
			done(out)
		})
		return
	}
	ready := n.e.Now() + n.spec.XtqLookup
	out := make([][]uint64, len(lks))
	var missed []int
	for i, l := range lks {
		if l.idx >= uint64(n.spec.XtqTableSize) {
			continue // out of the table: not registered, nothing to read
		}
		if b, ok := n.xtq.cache.lookup(tableKey(l.table, l.idx)); ok {
			n.xtq.stats.CacheHits++
			out[i] = decodeEntry(b)
			continue
		}
		missed = append(missed, i)
		ready = max(ready, n.xtqMiss(l))
	}
	n.e.At(ready, func() {
		for _, i := range missed {
			l := lks[i]
			out[i] = decodeEntry(n.mem.Bytes(n.tableEntry(l.table, l.idx), int(l.table.entrySize())))
		}
		done(out)
	})
}

// xtqMiss fetches entry l into the cache unless its read is already in
// flight, and returns when the entry will be on the NIC.
func (n *NIC) xtqMiss(l tableLookup) sim.Time {
	key := tableKey(l.table, l.idx)
	if t, ok := n.xtq.cache.pending[key]; ok {
		n.xtq.stats.CacheMerged++
		return t
	}
	n.xtq.stats.CacheMisses++
	a, size := n.tableEntry(l.table, l.idx), l.table.entrySize()
	t, k := n.dmaRead(a, size)
	n.xtq.cache.pending[key] = t
	n.e.At(t, func() {
		n.dmaEnd(k)
		delete(n.xtq.cache.pending, key)
		n.xtq.cache.fill(key, append([]byte(nil), n.mem.Bytes(a, int(size))...))
	})
	return t
}

// tableLookup is one index to look up.
type tableLookup struct {
	table xtqTable
	idx   uint64
}

// decodeEntry returns an entry's words, or nil when its valid word is 0.
func decodeEntry(b []byte) []uint64 {
	words := make([]uint64, len(b)/8)
	for i := range words {
		words[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	if words[len(words)-1] == 0 {
		return nil
	}
	return words[:len(words)-1]
}

// xtqOnNIC returns the words of an on-NIC table entry (nil: not
// registered).
func (n *NIC) xtqOnNIC(l tableLookup) []uint64 {
	switch l.table {
	case tableKernel:
		if k, ok := n.xtq.kernels[l.idx]; ok {
			return k.words()
		}
	case tableQueue:
		if l.idx >= 1<<16 {
			return nil
		}
		if q, ok := n.xtq.queues[uint16(l.idx)]; ok {
			return q.desc.words()
		}
	case tableFunction:
		if f, ok := n.xtq.functions[l.idx]; ok {
			return f.words()
		}
	}
	return nil
}

func (k XtqKernel) words() []uint64 { return []uint64{k.Object, uint64(k.Buffer), uint64(k.Signal)} }

func kernelFromWords(w []uint64) XtqKernel {
	return XtqKernel{Object: w[0], Buffer: mem.Addr(w[1]), Signal: mem.Addr(w[2])}
}

func (q XtqQueue) words() []uint64 {
	return []uint64{uint64(q.Base), q.Size, uint64(q.WriteIndex), uint64(q.ReadIndex), uint64(q.Doorbell), uint64(q.Agent)}
}

func queueFromWords(w []uint64) XtqQueue {
	return XtqQueue{Base: mem.Addr(w[0]), Size: w[1], WriteIndex: mem.Addr(w[2]), ReadIndex: mem.Addr(w[3]), Doorbell: mem.Addr(w[4]),
		Agent: XtqAgent(w[5])}
}

func (f XtqFunction) words() []uint64 { return []uint64{f.Pointer, uint64(f.Buffer), uint64(f.Signal)} }

func functionFromWords(w []uint64) XtqFunction {
	return XtqFunction{Pointer: w[0], Buffer: mem.Addr(w[1]), Signal: mem.Addr(w[2])}
}
