package stream

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/sim"
)

// Program is a schedule of stream operations whose content follows from
// their index, such as a GDS ring's wait, reduce and trigger per step.
// Enqueue puts its operations on the stream one by one, each at the host
// cost of the single call, but the stream keeps the Program instead of
// the operations and asks it for operation i when the CP reaches it: a
// host that enqueues its whole schedule ahead of the CP (2(n−1) steps per
// node) costs no memory per operation. Kind and Op must answer the same
// for the same index every time.
type Program interface {
	Len() int          // number of operations
	Kind(i int) OpKind // what operation i is (the host's cost depends on it)
	Op(i int) Op       // operation i's content
}

// OpKind is the kind of a Program's operation.
type OpKind uint8

// The operations a Program can hold.
const (
	OpKernel    OpKind = iota // launch Op.Kernel (sw.kernel_launch) with a null completion signal
	OpTrigger                 // ring the doorbell of deferred command Op.Deferred (GDS NIC trigger)
	OpWaitEqual               // wait until the word at Op.Addr equals Op.Value (GDS wait-value)
	OpMarker                  // store Op.Value at Op.Addr
	OpPeerCopy                // a copy engine moves Op.N bytes from Op.Src here to Op.Addr on the GPU at endpoint Op.PE (CopyPeer)
)

// Op is one operation of a Program.
type Op struct {
	Kind     OpKind
	Kernel   gpu.Kernel     // OpKernel; must be valid (gpu.GPU.Validate)
	Deferred nic.DeferredID // OpTrigger
	Addr     mem.Addr       // OpWaitEqual, OpMarker
	Value    uint64         // OpWaitEqual: the awaited value; OpMarker: the value stored
	What     string         // OpWaitEqual: what the wait is for (deadlock reports)
	PE       int            // OpPeerCopy: the GPU copied to
	Src      mem.Addr       // OpPeerCopy: the source here
	N        uint64         // OpPeerCopy: bytes
}

// Enqueue enqueues p's operations in order, as the single calls would: a
// kernel costs the host what Launch does (but the host gets no Run; a
// later Synchronize orders it after the kernel), the others what
// NicTrigger, WaitValue and Marker do.
func (s *Stream) Enqueue(p Program) {
	n := p.Len()
	if n == 0 {
		return
	}
	s.pending.Push(op{kind: opProgram})
	s.payloads.Push(p)
	for i := range n {
		instr := s.sw.AQLBuild
		if p.Kind(i) == OpKernel {
			instr = s.sw.KernelLaunch
		}
		s.charge(instr)
	}
}

// runProgramOp runs the next operation of the Program at the head of the
// pending queue, and retires the Program after its last.
func (s *Stream) runProgramOp(cp *sim.Proc) {
	p := (*s.payloads.Front()).(Program)
	i := s.progNext
	o := p.Op(i)
	if o.Kind != p.Kind(i) { // a bug in the Program
		panic(fmt.Sprintf("stream program on %s: operation %d is a %d, Kind says %d", s.g.Name(), i, o.Kind, p.Kind(i)))
	}
	if s.progNext++; s.progNext == p.Len() {
		s.pending.Pop()
		s.payloads.Pop()
		s.progNext = 0
	}
	switch o.Kind {
	case OpKernel:
		s.g.RunUnsignalled(cp, o.Kernel)
	case OpTrigger:
		s.nic.ActivateDoorbell(cp, o.Deferred)
		s.lastTrigger = cp.Now()
	case OpWaitEqual:
		want := o.Value
		s.waitValue(cp, o.Addr, o.What, func(v uint64) bool { return v == want })
	case OpMarker:
		s.g.Mem().Store64(o.Addr, o.Value)
	case OpPeerCopy:
		if !s.ReachesPeer(o.PE) { // a bug in the Program
			panic(fmt.Sprintf("stream program on %s: peer copy to endpoint %d, not a GPU of this node", s.g.Name(), o.PE))
		}
		landed := false
		var sig sim.Signal
		s.peer.Copy(s.peer.Self(), o.PE, o.Addr, o.Src, o.N, func() { landed = true; sig.Notify() })
		cp.WaitUntil(&sig, fmt.Sprintf("peer copy to GPU %d", o.PE), func() bool { return landed })
	}
}
