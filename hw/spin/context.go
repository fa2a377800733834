package spin

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/unit"
)

// Kind names a handler (the SC'19 paper).
type Kind uint8

// Handler kinds.
const (
	Header Kind = iota
	Payload
	Completion
)

// String names the kind.
func (k Kind) String() string { return [...]string{"header", "payload", "completion"}[k] }

// Return is a handler's return code (the SC'19 paper).
type Return uint8

// Return codes.
const (
	Success Return = iota
	Drop           // discard the remaining packets of the message
	Fail           // end the message with a HANDLER_FAIL event
)

// Handler is a packet handler. It runs on an HPU as part of a blocking
// agent and charges its time through h.
type Handler func(h *HandlerCtx) Return

// Policy is a packet scheduling policy (the SC'19 paper).
type Policy struct {
	// BlockedRR selects blocked round-robin; otherwise ready HERs go FIFO
	// to any idle HPU.
	BlockedRR bool
	// Delta is Δp: packet i belongs to sequence ⌊i/Δp⌋.
	Delta int
	// VHPUs is the number of virtual HPUs: sequence s runs on vHPU s mod VHPUs.
	VHPUs int
}

// Context is a sPIN execution context (the SC'19 paper): up to three handlers,
// a block of NIC memory shared by them, and a scheduling policy. Bind it
// to an ME by setting nic.ME.Ctx to it. Its Mem bytes are taken from the
// NIC memory at NewContext and given back by Release.
type Context struct {
	s          *NIC
	header     Handler
	payload    Handler
	completion Handler
	policy     Policy
	mem        unit.Bytes
	base       uint64 // NIC address of the context's memory
	owned      bool   // its memory was allocated by NewContext (Release frees it)
	// Tag is returned in the DMA events of the context's handlers unless
	// a handler gives its own.
	Tag any
}

// Handlers groups the handlers of a context; any may be nil (not
// installed). Without a payload handler a packet's bytes land at its
// stream offset from the ME start, as on the plain path.
type Handlers struct {
	Header, Payload, Completion Handler
}

// NewContext allocates mem bytes of NIC memory for the context's shared
// structures and returns the context, or an error naming the sizes when
// the NIC memory cannot hold them, or when the policy is malformed.
func (s *NIC) NewContext(h Handlers, pol Policy, mem unit.Bytes) (*Context, error) {
	if pol.BlockedRR && (pol.Delta < 1 || pol.VHPUs < 1) {
		return nil, fmt.Errorf("%s: blocked round-robin with Δp = %d and %d vHPUs: both must be ≥ 1", s.name, pol.Delta, pol.VHPUs)
	}
	if err := s.Alloc(mem); err != nil {
		return nil, fmt.Errorf("execution context: %w", err)
	}
	c := &Context{s: s, header: h.Header, payload: h.Payload, completion: h.Completion, policy: pol, mem: mem, base: s.ctxBase, owned: true}
	s.ctxBase += uint64(mem)
	return c, nil
}

// Region is a block of NIC memory holding structures that outlive one
// execution context: a committed datatype's dataloops and checkpoints,
// kept resident for later receives (the SC'19 paper).
type Region struct {
	Base  uint64     // NIC address
	Size  unit.Bytes // bytes held
	freed bool
}

// AllocRegion reserves b bytes of NIC memory, or fails naming the sizes
// when they do not fit what is free of spin.mem_size.
func (s *NIC) AllocRegion(b unit.Bytes) (*Region, error) {
	if err := s.Alloc(b); err != nil {
		return nil, err
	}
	r := &Region{Base: s.ctxBase, Size: b}
	s.ctxBase += uint64(b)
	return r, nil
}

// FreeRegion gives a region's memory back (once).
func (s *NIC) FreeRegion(r *Region) {
	if r.freed {
		return
	}
	r.freed = true
	s.Free(r.Size)
}

// MemFree returns the NIC memory not held by contexts and regions.
func (s *NIC) MemFree() unit.Bytes { return s.spec.MemSize - s.alloc }

// NewContextIn returns a context whose shared memory is region r, which
// outlives it (Release leaves r allocated).
func (s *NIC) NewContextIn(h Handlers, pol Policy, r *Region) (*Context, error) {
	if pol.BlockedRR && (pol.Delta < 1 || pol.VHPUs < 1) {
		return nil, fmt.Errorf("%s: blocked round-robin with Δp = %d and %d vHPUs: both must be ≥ 1", s.name, pol.Delta, pol.VHPUs)
	}
	if r.freed {
		return nil, fmt.Errorf("%s: execution context on a freed NIC memory region", s.name)
	}
	return &Context{s: s, header: h.Header, payload: h.Payload, completion: h.Completion, policy: pol, mem: r.Size, base: r.Base}, nil
}

// Release gives the context's NIC memory back, unless it lives in a
// Region.
func (c *Context) Release() {
	if c.owned {
		c.s.Free(c.mem)
	}
	c.mem = 0
}

// Policy returns the context's scheduling policy.
func (c *Context) Policy() Policy { return c.policy }
