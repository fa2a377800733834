package mem

import "sync"

// mapMin is the size from which an allocation's bytes are mapped outside
// the Go heap (a functional run's data buffers, megabytes per node): the
// garbage collector neither counts them towards its next cycle, which
// would let the heap grow to twice the node memories, nor keeps them after
// the simulation (Memory.Release unmaps them at once).
const mapMin = 1 << 20

// mappings are the mapped backings of one memory.
type mappings struct {
	mu   sync.Mutex // Release and the cleanup of an unreachable memory may race
	list [][]byte
}

// get returns n zero bytes mapped outside the Go heap, or nil where the
// system refuses (the caller then allocates on the heap).
func (p *mappings) get(n int) []byte {
	b := mapAnon(n)
	if b != nil {
		p.mu.Lock()
		p.list = append(p.list, b)
		p.mu.Unlock()
	}
	return b
}

// release unmaps every backing.
func (p *mappings) release() {
	p.mu.Lock()
	list := p.list
	p.list = nil
	p.mu.Unlock()
	for _, b := range list {
		unmapAnon(b)
	}
}
