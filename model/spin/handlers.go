package spin

import (
	"sort"

	"github.com/gpunetsim/gpunetsim/datatype"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	hwspin "github.com/gpunetsim/gpunetsim/hw/spin"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// Breakdown splits payload-handler time (the SC'19 paper): init
// (invocation, checkpoint copy), setup (processing-function start and
// catch-up) and processing (finding blocks and issuing their DMAs).
type Breakdown struct {
	Handlers          int
	Init, Setup, Proc sim.Duration
	CatchUpBlocks     int // blocks skipped by catch-ups
	Resets            int // segments restarted (HPU-local) or restored from a master copy (RW-CP)
	CheckpointCopies  int // RO-CP copies and RW-CP restores
	MaxHandler        sim.Duration
	DMAs              int
}

// recvState is the per-receive state the handlers share: the plan, the
// buffer origin's host address, and each strategy's segments.
type recvState struct {
	plan   *Plan
	costs  Costs
	origin mem.Addr            // host address of the datatype origin
	segs   []*datatype.Segment // HPU-local: per vHPU; RO-CP: per HPU scratch; RW-CP: per sequence
	blocks [][]datatype.Block  // per HPU scratch block lists
	bd     *Breakdown
}

func newRecvState(p *Plan, cs Costs, origin mem.Addr, hpus int, bd *Breakdown) *recvState {
	r := &recvState{plan: p, costs: cs, origin: origin, blocks: make([][]datatype.Block, hpus), bd: bd}
	switch p.Method {
	case HPULocal, ROCP:
		r.segs = make([]*datatype.Segment, hpus)
	case RWCP:
		r.segs = make([]*datatype.Segment, len(p.Checkpoints))
	}
	return r
}

// handlers returns the execution context's handlers and scheduling policy
// for the plan's method (the SC'19 paper).
func (r *recvState) handlers(hpus int) (hwspin.Handlers, hwspin.Policy) {
	h := hwspin.Handlers{Completion: completion}
	var pol hwspin.Policy
	switch r.plan.Method {
	case Specialized:
		h.Payload = r.specialized
	case HPULocal:
		h.Payload = r.general
		pol = hwspin.Policy{BlockedRR: true, Delta: 1, VHPUs: hpus}
	case ROCP:
		h.Payload = r.general
	case RWCP:
		h.Payload = r.general
		pol = hwspin.Policy{BlockedRR: true, Delta: r.plan.Interval.Q, VHPUs: len(r.plan.Checkpoints)}
	}
	return h, pol
}

// completion issues the zero-byte DMA whose event, FIFO-ordered after
// every earlier write, tells the host the message is unpacked (§3).
func completion(h *hwspin.HandlerCtx) hwspin.Return {
	h.DMAToHost(nil, 0, h.Msg.Host(), 0)
	return hwspin.Success
}

// account records one payload handler's phases.
func (r *recvState) account(h *hwspin.HandlerCtx, init, setup sim.Duration) {
	b := r.bd
	total := h.Elapsed()
	b.Handlers++
	b.Init += init
	b.Setup += setup - init
	b.Proc += total - setup
	b.MaxHandler = max(b.MaxHandler, total)
}

// specialized is the payload handler of §4: vector arithmetic, or a binary
// search over the prefix sums of an index list, then one DMA per block piece.
func (r *recvState) specialized(h *hwspin.HandlerCtx) hwspin.Return {
	sh, cs := &r.plan.Shape, r.costs
	first, end := int(h.Packet.Offset), int(h.Packet.Offset+h.Packet.Len)
	init := h.Elapsed()
	o := first
	switch sh.Kind {
	case datatype.ShapeContiguous, datatype.ShapeVector:
		// The descriptor lives in NIC memory (L2 on pulp) like the
		// general handlers' dataloops, and is read the same way.
		h.SharedMem(0, r.plan.Mem.Descriptors)
		h.Cycles(cs.VecSetup)
		setup := h.Elapsed()
		for o < end {
			b, rr := o/sh.BlockLen, o%sh.BlockLen
			n := min(sh.BlockLen-rr, end-o)
			h.Cycles(cs.VecBlock)
			h.DMAPayload(uint64(o-first), uint64(n), r.origin+mem.Addr(sh.Base+b*sh.Stride+rr), hwspin.NoEvent)
			r.bd.DMAs++
			o += n
		}
		r.account(h, init, setup)
		return hwspin.Success
	}
	w := cs.DescriptorWord
	levels := searchLevels(sh.Count)
	var b, entries int
	if sh.Kind == datatype.ShapeIndexBlock {
		b, entries = o/sh.BlockLen, 1 // offsets; the prefix sums are j·block_size
	} else {
		b, entries = sort.Search(len(r.plan.prefix), func(j int) bool { return r.plan.prefix[j] > o })-1, 2 // offsets, lengths
		// The binary search reads one prefix sum per level from NIC memory.
		h.SharedMem(0, unit.Bytes(levels)*w)
	}
	h.Cycles(cs.IdxSearch * levels)
	setup := h.Elapsed()
	// The packet's blocks' descriptor entries, read as the loop walks them
	// (one access: they are consecutive).
	h.SharedMem(unit.Bytes(b*entries)*w, unit.Bytes(r.plan.blocksIn(b, first, end)*entries)*w)
	for o < end {
		var start, blen int
		if sh.Kind == datatype.ShapeIndexBlock {
			start, blen = b*sh.BlockLen, sh.BlockLen
		} else {
			start, blen = r.plan.prefix[b], sh.Lens[b]
		}
		rr := o - start
		n := min(blen-rr, end-o)
		h.Cycles(cs.IdxBlock)
		h.DMAPayload(uint64(o-first), uint64(n), r.origin+mem.Addr(sh.Offsets[b]+rr), hwspin.NoEvent)
		r.bd.DMAs++
		o += n
		b++
	}
	r.account(h, init, setup)
	return hwspin.Success
}

// general is the MPITypes-style payload handler of §5 (HPU-local, RO-CP,
// RW-CP): get a segment positioned for the packet, catch up, then emit the
// packet's regions as DMA writes.
func (r *recvState) general(h *hwspin.HandlerCtx) hwspin.Return {
	p, cs := r.plan, r.costs
	first, last := int(h.Packet.Offset), int(h.Packet.Offset+h.Packet.Len)
	seg := r.segment(h, first)
	init := h.Elapsed()
	before := seg.Stats()
	h.Cycles(cs.MPITStart + cs.LevelCycles*p.Depth)
	if cs.DataloopRead > 0 {
		// The descent reads each level's dataloop (NIC memory; L2 on pulp).
		h.SharedMem(0, unit.Bytes(p.Depth)*cs.DataloopRead)
	}
	blocks, err := seg.BlockList(first, last, r.blocks[h.HPU][:0])
	if err != nil {
		return hwspin.Fail
	}
	r.blocks[h.HPU] = blocks
	after := seg.Stats()
	skipped := after.SkippedBlocks - before.SkippedBlocks
	r.bd.CatchUpBlocks += skipped
	if p.Method == HPULocal {
		r.bd.Resets += after.Resets - before.Resets
	}
	// On PULP the dataloops stay in L2: every block skipped or found reads
	// the leaf loop's parameters there, through the L2 banks, where the
	// other cores' reads and the packets queue too. The ARM HPUs' caches
	// keep the leaf loop after the descent.
	perBlock := h.Spec().Model == hwspin.ModelPULP && cs.BlockLoopRead > 0
	leaf := unit.Bytes(max(p.Depth-1, 0)) * cs.DataloopRead
	if perBlock {
		h.SharedMemEach(leaf, cs.BlockLoopRead, skipped, h.Spec().Cycles(cs.SkipCycles))
	} else {
		h.Cycles(cs.SkipCycles * skipped)
	}
	setup := h.Elapsed()
	for _, b := range blocks {
		if perBlock {
			h.SharedMem(leaf, cs.BlockLoopRead)
		}
		h.Cycles(cs.BlockCycles)
		h.DMAPayload(uint64(b.Stream-first), uint64(b.Len), r.origin+mem.Addr(b.Off), hwspin.NoEvent)
	}
	r.bd.DMAs += len(blocks)
	r.account(h, init, setup)
	return hwspin.Success
}

// segment returns the segment this handler processes with, charging the
// checkpoint copies its strategy needs.
func (r *recvState) segment(h *hwspin.HandlerCtx, first int) *datatype.Segment {
	p, cs := r.plan, r.costs
	switch p.Method {
	case HPULocal:
		s := r.segs[h.VHPU]
		if s == nil {
			s, _ = p.C.NewSegment(p.Count)
			r.segs[h.VHPU] = s
		}
		h.Bring(p.objectOff(h.VHPU), cs.Checkpoint)
		return s
	case ROCP:
		cp := datatype.CheckpointFor(p.Checkpoints, first)
		if p.Interval.Q == 1 {
			// One checkpoint per packet: each is used once, in place, no copy.
			return cp.Segment()
		}
		r.copyCheckpoint(h, cs, p.objectOff(first/p.Interval.Interval))
		s := r.segs[h.HPU]
		if s == nil {
			s = cp.Segment()
			r.segs[h.HPU] = s
			return s
		}
		_ = s.Restore(cp)
		return s
	default: // RWCP
		j := h.Packet.Index / p.Interval.Q
		s := r.segs[j]
		if s == nil {
			s = p.Checkpoints[j].Segment() // the working copy, in place in NIC memory
			r.segs[j] = s
		}
		h.Bring(p.objectOff(j), cs.Checkpoint)
		if first < s.Position() {
			// Out of order behind the working copy: restore it from the master.
			r.copyCheckpoint(h, cs, p.objectOff(len(p.Checkpoints)+j))
			_ = s.Restore(p.Checkpoints[j])
			r.bd.Resets++
		}
		return s
	}
}

// copyCheckpoint charges a C-byte copy of the checkpoint at context offset
// off: its read from the context's memory (NIC memory; L2 on pulp) and C/8
// cycles (§7.3).
func (r *recvState) copyCheckpoint(h *hwspin.HandlerCtx, cs Costs, off unit.Bytes) {
	h.SharedMem(off, cs.Checkpoint)
	h.Cycles(int(cs.Checkpoint) / 8)
	r.bd.CheckpointCopies++
}
