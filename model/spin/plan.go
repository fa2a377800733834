package spin

import (
	"errors"
	"fmt"
	"math/bits"

	"github.com/gpunetsim/gpunetsim/datatype"
	"github.com/gpunetsim/gpunetsim/hw/cpu"
	hwspin "github.com/gpunetsim/gpunetsim/hw/spin"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// ErrNotApplicable: the method cannot process this datatype (specialized
// handlers need a single level of blocks, the SC'19 paper).
var ErrNotApplicable = errors.New("method does not apply to this datatype")

// ErrNICMemory: the method's structures do not fit the NIC memory.
var ErrNICMemory = errors.New("datatype structures do not fit NIC memory")

// MemUse is the NIC memory a method's structures take (the SC'19 paper).
type MemUse struct {
	Dataloops   unit.Bytes // committed dataloops (general methods)
	Segments    unit.Bytes // HPU-local: one segment per HPU
	Checkpoints unit.Bytes // RO-CP, RW-CP (RW-CP: working + master copies)
	Descriptors unit.Bytes // specialized: vector descriptor, or offsets/lengths/prefix sums
	Iovec       unit.Bytes // iovec: the whole list (moved to the NIC over time)
}

// Total is the NIC memory held for the message (the iovec list streams
// through v entries at a time, so it counts only those).
func (u MemUse) Total() unit.Bytes { return u.Dataloops + u.Segments + u.Checkpoints + u.Descriptors }

// Moved is the bytes the host moves to the NIC for the method (§8 "bytes
// moved to the NIC").
func (u MemUse) Moved() unit.Bytes { return u.Dataloops + u.Checkpoints + u.Descriptors + u.Iovec }

// Env is the hardware view a plan needs.
type Env struct {
	Spin  hwspin.Spec
	Host  cpu.Spec // the host core that creates checkpoints (zero: the affine model)
	Costs Costs
	K     int          // packet payload bytes
	TPkt  sim.Duration // packet inter-arrival time at line rate
}

// Plan is what the host builds at commit/post time for one (datatype,
// count) under one method (the SC'19 paper step 1): the NIC-resident
// structures, the checkpoint interval, and the estimates that chose it.
type Plan struct {
	Method  Method
	C       *datatype.Committed
	Count   int
	Size    int     // packed bytes m
	Regions int     // merged contiguous regions
	Gamma   float64 // regions per packet
	Depth   int     // segment stack depth at stream 0
	Lo, Hi  int     // buffer span relative to the origin
	Shape   datatype.Shape
	Blocks  []datatype.Block // the type map's regions (host unpack, iovec, traffic)
	Lines   int              // distinct 64 B lines the regions touch

	Interval    IntervalChoice         // RO-CP, RW-CP
	Checkpoints []*datatype.Checkpoint // RO-CP, RW-CP
	prefix      []int                  // specialized indexed: packed offset of each block
	TPH         sim.Duration           // estimated payload-handler time, catch-up aside
	CatchUp     sim.Duration           // estimated catch-up per packet past the checkpoint (RO-CP)
	Mem         MemUse
	// Priority is the user's offload priority (type_set_attr, the SC'19 paper
	// §6): under NIC-memory pressure, resident structures of lower
	// priority are evicted first.
	Priority int
	// NoOffload is the user's "do not offload" hint (type_set_attr): the
	// receive lands contiguously and the host unpacks it.
	NoOffload bool
	costs     Costs
	// HostCreate is the host's one-time cost to build the checkpoints of
	// RO-CP and RW-CP (Process over the message without copies, storing
	// each checkpoint), executed on the host core (zero for the other
	// methods), before the copy over PCIe (§7.3).
	HostCreate sim.Duration
}

// NewPlan builds the plan of method for count elements of c.
func NewPlan(method Method, c *datatype.Committed, count int, env Env) (*Plan, error) {
	m, err := c.PackedSize(count)
	if err != nil {
		return nil, err
	}
	if m == 0 {
		return nil, fmt.Errorf("%v: empty message", c.Type())
	}
	lo, hi, err := c.Span(count)
	if err != nil {
		return nil, err
	}
	seg, err := c.NewSegment(count)
	if err != nil {
		return nil, err
	}
	blocks, err := seg.BlockList(0, m, nil)
	if err != nil {
		return nil, err
	}
	npkt := (m + env.K - 1) / env.K
	p := &Plan{Method: method, C: c, Count: count, Size: m, Regions: len(blocks), Gamma: float64(len(blocks)) / float64(npkt),
		Depth: c.Depth() + 1, Lo: lo, Hi: hi, Blocks: blocks, Lines: touchedLines(blocks)}
	cs := env.Costs
	p.costs = cs
	switch method {
	case Specialized:
		if err := p.planSpecialized(cs); err != nil {
			return nil, err
		}
	case HPULocal:
		p.Mem.Dataloops = unit.Bytes(c.DataloopBytes(count))
		p.Mem.Segments = unit.Bytes(env.Spin.HPUs) * cs.Checkpoint
	case ROCP, RWCP:
		p.Mem.Dataloops = unit.Bytes(c.DataloopBytes(count))
		copies := 1
		if method == RWCP && cs.MasterCopies {
			copies = 2
		}
		p.TPH, p.CatchUp = p.estimateTPH(env)
		var ch IntervalChoice
		if cs.Interval > 0 {
			ch, err = fixedInterval(int(cs.Interval), m, copies, IntervalInput{TPH: p.TPH, CatchUp: p.CatchUp}, env, p.Mem.Dataloops)
		} else {
			ch, err = ChooseInterval(IntervalInput{K: env.K, M: m, P: env.Spin.HPUs, TPkt: env.TPkt, TPH: p.TPH, CatchUp: p.CatchUp,
				C: int(cs.Checkpoint), Copies: copies, MNIC: int(env.Spin.MemSize - p.Mem.Dataloops), BPkt: int(env.Spin.PktBuffer), Eps: cs.Epsilon, BufferAware: cs.BufferAware})
			if err != nil {
				err = fmt.Errorf("%w: %v", ErrNICMemory, err)
			}
		}
		if err != nil {
			return nil, err
		}
		p.Interval = ch
		if p.Checkpoints, err = c.Checkpoints(count, ch.Interval); err != nil {
			return nil, err
		}
		p.Mem.Checkpoints = unit.Bytes(len(p.Checkpoints)*copies) * cs.Checkpoint
		// Only the checkpointed methods build anything on the host at post
		// time; the others' structures are the type's dataloops.
		p.HostCreate = hostCreate(env, p, len(p.Checkpoints))
	case Iovec:
		p.Mem.Iovec = unit.Bytes(len(blocks)) * env.Spin.IovecEntrySize
	}
	if p.Mem.Total() > env.Spin.MemSize {
		return nil, fmt.Errorf("%w: %d × %v under %s needs %v (dataloops %v, segments %v, checkpoints %v, descriptors %v), spin.mem_size = %v",
			ErrNICMemory, count, c.Type(), method, p.Mem.Total(), p.Mem.Dataloops, p.Mem.Segments, p.Mem.Checkpoints, p.Mem.Descriptors, env.Spin.MemSize)
	}
	return p, nil
}

// objectOff is the offset in the context's NIC memory of object i after
// the dataloops: HPU-local segment i, or checkpoint i (RW-CP: the working
// copies, then the masters).
func (p *Plan) objectOff(i int) unit.Bytes {
	return p.Mem.Dataloops + unit.Bytes(i)*p.costs.Checkpoint
}

// estimateTPH is T_PH(γ) = T_init + T_setup + γ·T_block of the general
// handlers (§5.4) from the cost constants, and the catch-up per packet of
// distance from the checkpoint. T_init includes RO-CP's checkpoint copy
// (the paper names it as part of T_PH^init: C/8 cycles and C bytes over
// the NIC memory, as §7.3 charges it). T_PH^setup includes any catch-up
// (the paper's definition): an RO-CP handler skips γ blocks per packet
// between its checkpoint and its packet, so its catch-up depends on Δr
// and is returned per packet for ChooseInterval to add at each interval
// (RW-CP's handlers, in order, never catch up).
func (p *Plan) estimateTPH(env Env) (tph, catchUp sim.Duration) {
	cs, sp := env.Costs, env.Spin
	cyc := float64(sp.InvokeCycles+cs.MPITStart+cs.LevelCycles*p.Depth) + p.Gamma*float64(cs.BlockCycles+sp.DMAIssueCycles)
	var copyTime sim.Duration
	if p.Method == ROCP {
		cyc += float64(cs.Checkpoint) / 8
		if sp.Model != hwspin.ModelPULP {
			copyTime = sp.MemBandwidth.TransferTime(cs.Checkpoint)
		}
	}
	if p.Method == ROCP {
		catchUp = sp.HPUFreq.Cycles(p.Gamma * float64(cs.SkipCycles))
	}
	return sp.HPUFreq.Cycles(cyc) + copyTime, catchUp
}

func (p *Plan) planSpecialized(cs Costs) error {
	sh, err := p.C.Shape(p.Count)
	if err != nil {
		return err
	}
	p.Shape = sh
	w := cs.DescriptorWord
	switch sh.Kind {
	case datatype.ShapeContiguous, datatype.ShapeVector:
		p.Mem.Descriptors = 3 * w // spin_vec_t{block_size, stride, count}
	case datatype.ShapeIndexBlock:
		p.Mem.Descriptors = unit.Bytes(sh.Count+2) * w // offsets; prefix sums are j·block_size
	case datatype.ShapeIndexed:
		p.Mem.Descriptors = unit.Bytes(3*sh.Count) * w // offsets, lengths, prefix sums
		p.prefix = make([]int, sh.Count+1)
		for j, l := range sh.Lens {
			p.prefix[j+1] = p.prefix[j] + l
		}
	default:
		return fmt.Errorf("%w: specialized handlers need a vector, index-block or indexed type after normalization; %v is %v",
			ErrNotApplicable, p.C.Type(), sh.Kind)
	}
	return nil
}

// blocksIn counts the index-shape blocks, from block b on, that packed
// bytes [first, end) touch.
func (p *Plan) blocksIn(b, first, end int) int {
	sh := &p.Shape
	if sh.Kind == datatype.ShapeIndexBlock {
		return (end-1)/sh.BlockLen - first/sh.BlockLen + 1
	}
	n := 0
	for o := first; o < end && b < len(sh.Lens); b++ {
		o = p.prefix[b+1]
		n++
	}
	return n
}

// searchLevels is the binary-search depth over n blocks.
func searchLevels(n int) int { return bits.Len(uint(max(n, 1))) }

// touchedLines counts the distinct 64 B lines the regions cover (regions
// are in stream order, not address order, so lines are counted per region
// and a region's first line is not counted again when the previous region
// ended in it).
func touchedLines(blocks []datatype.Block) int {
	n, last := 0, -1<<62
	for _, b := range blocks {
		first, end := floorDiv(b.Off, 64), floorDiv(b.Off+b.Len-1, 64)
		if first == last {
			first++
		}
		if end >= first {
			n += end - first + 1
		}
		last = end
	}
	return n
}

func floorDiv(a, b int) int {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// ErrInterval: a user-set checkpoint interval breaks a constraint of
// the SC'19 paper.
var ErrInterval = errors.New("bad checkpoint interval")

// fixedInterval checks a user-set Δr (ddt.interval) against the spec's
// constraints: a positive multiple of k, checkpoints that fit the NIC
// memory, and packets buffered during scheduling that fit the buffer.
func fixedInterval(dr, m, copies int, est IntervalInput, env Env, loops unit.Bytes) (IntervalChoice, error) {
	k := env.K
	if dr%k != 0 {
		return IntervalChoice{}, fmt.Errorf("%w: ddt.interval = %v: must be a multiple of the %d B packet payload", ErrInterval, unit.Bytes(dr), k)
	}
	npkt := (m + k - 1) / k
	q := min(dr/k, npkt)
	cps := (npkt + q - 1) / q
	need := unit.Bytes(cps*copies) * env.Costs.Checkpoint
	if free := env.Spin.MemSize - loops; need > free {
		return IntervalChoice{}, fmt.Errorf("%w: ddt.interval = %v: %d checkpoints × %d × %v = %v exceed the %v of NIC memory left after the dataloops (the SC'19 paper constraint 2)",
			ErrInterval, unit.Bytes(dr), cps, copies, env.Costs.Checkpoint, need, free)
	}
	buffered := int(float64(est.tph(q)) * float64(k) / float64(env.TPkt))
	if b := min(buffered, q*k); b > int(env.Spin.PktBuffer) {
		return IntervalChoice{}, fmt.Errorf("%w: ddt.interval = %v: %v buffered while a sequence is scheduled exceed spin.pkt_buffer = %v (the SC'19 paper constraint 3)",
			ErrInterval, unit.Bytes(dr), unit.Bytes(b), env.Spin.PktBuffer)
	}
	return IntervalChoice{Interval: q * k, Q: q, Checkpoints: cps}, nil
}
