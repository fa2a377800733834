package workload

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/shmem"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
)

// ShmemRun is what one run of a device-shmem microbenchmark measured on
// node 0 (the dissertation's ComP-Net chapter).
type ShmemRun struct {
	Kernel  sim.Duration // kernel body: first work-group start to last end
	Report  shmem.Report // node 0's service threads: polls, energy
	L2      gpu.L2Stats  // node 0's GPU L2 (CP hit rate, locked lines)
	Latency sim.Duration // ShmemGet: mean latency of one get
	// Phases is ShmemGet's mean decomposition of one get over the service
	// path (shmem.PhaseNames); zero for backends without service threads.
	Phases [shmem.NumPhases]sim.Duration
	// CPClasses is CPL2's breakdown of node 0's CP accesses at the L2 by
	// the structure they touched (nil for the other benchmarks).
	CPClasses []CPClass
}

// CPClass is the CP's L2 accesses to one class of lines: how many hit,
// how many missed, and how many found their line store_locked (the
// accesses LLC locking protected).
type CPClass struct {
	Name                 string
	Hits, Misses, Locked uint64
}

// The classes of CPL2's breakdown, in the order it reports them.
const (
	CPClassNetQueues  = "net_queues"  // the networking work-groups' queues (entries, status words)
	CPClassIdleQueues = "idle_queues" // the streaming work-groups' queues: nothing is ever posted there
	CPClassLibrary    = "library"     // the library's lines: contexts, counting-event copies, bounce buffers
	CPClassOther      = "other"       // heap, results, scratch
)

// cpClasses sorts node 0's per-line CP counts into the classes above by
// the allocation each line belongs to: a work-group's queue ring or
// status words (queue i is work-group i's; the first netWGs work-groups
// are the networking ones), the library's lines, or anything else.
func cpClasses(m *mem.Memory, lines map[mem.Addr]*gpu.CPLineCount, netWGs int) []CPClass {
	out := []CPClass{{Name: CPClassNetQueues}, {Name: CPClassIdleQueues}, {Name: CPClassLibrary}, {Name: CPClassOther}}
	for l, c := range lines {
		k := 3
		name := m.RegionName(l)
		var q int
		switch {
		case strings.HasPrefix(name, "shmem.queue["), strings.HasPrefix(name, "shmem.status["):
			k = 1
			if _, err := fmt.Sscanf(name[strings.IndexByte(name, '[')+1:], "%d]", &q); err == nil && q < netWGs {
				k = 0
			}
		case strings.HasPrefix(name, "shmem.lib."):
			k = 2
		}
		out[k].Hits += c.Hits
		out[k].Misses += c.Misses
		out[k].Locked += c.Locked
	}
	return out
}

// shmemKernel runs, on every node of c under strategy s (a device-shmem
// strategy), one kernel of wgs work-groups of wgSize items whose body is
// body(node, ctx), after allocating the symmetric buffers sizes. It
// returns node 0's measures.
func shmemKernel(c *cluster.Cluster, s strategy.Strategy, cfg strategy.Config, wgs, wgSize int, sizes []uint64,
	body func(pe int, sym []mem.Addr, x *shmem.Ctx) error) (ShmemRun, error) {
	return shmemKernelChecked(c, s, cfg, wgs, wgSize, sizes, shmemCheck{}, body)
}

// shmemCheck is how a microbenchmark verifies what it delivered: fill
// writes each PE's symmetric buffers before the kernel (its sources);
// verify compares, after the run, each PE's buffers with what the other
// PEs must have put there. Either may be nil.
type shmemCheck struct {
	fill   func(pe int, m *mem.Memory, sym []mem.Addr)
	verify func(pe, npes int, m *mem.Memory, sym []mem.Addr) error
	// plain, when set, runs the work-groups it accepts (ok) without a
	// device context: work-groups that never call the network (they
	// still have their queue, which the service threads poll).
	plain func(pe int, wg *gpu.WG) (ok bool, err error)
}

// shmemKernelChecked is shmemKernel with a check of the delivered data:
// a mismatch fails the run.
func shmemKernelChecked(c *cluster.Cluster, s strategy.Strategy, cfg strategy.Config, wgs, wgSize int, sizes []uint64,
	chk shmemCheck, body func(pe int, sym []mem.Addr, x *shmem.Ctx) error) (ShmemRun, error) {
	var out ShmemRun
	errs := make([]error, len(c.Nodes))
	syms := make([][]mem.Addr, len(c.Nodes))
	g := strategy.Spawn(c, s, cfg, func(nd *strategy.Node) error {
		rt, ok := strategy.Get[*shmem.Runtime](nd)
		if !ok {
			return fmt.Errorf("%s provides no device shmem runtime", s)
		}
		dev, err := rt.Init(wgs)
		if err != nil {
			return err
		}
		defer dev.Finalize() // stops the service threads, also on errors (a second call is a no-op)
		var sym []mem.Addr
		for _, n := range sizes {
			a, err := dev.Malloc(n)
			if err != nil {
				return err
			}
			sym = append(sym, a)
		}
		syms[nd.Rank] = sym
		if chk.fill != nil {
			chk.fill(nd.Rank, nd.Mem, sym)
		}
		wgErrs := make([]error, wgs)
		k := gpu.Kernel{Name: "bench", WGs: wgs, WGSize: wgSize, Body: func(wg *gpu.WG) {
			if chk.plain != nil {
				if ok, err := chk.plain(nd.Rank, wg); ok {
					wgErrs[wg.ID] = err
					return
				}
			}
			x, err := dev.CtxCreate(wg)
			if err == nil {
				err = body(nd.Rank, sym, x)
			}
			if err == nil {
				err = x.Destroy()
			}
			wgErrs[wg.ID] = err
		}}
		if err := dev.Cooperative(k); err != nil {
			return err
		}
		run := nd.Stream.Launch(k)
		nd.Stream.Wait(run)
		rep := dev.Finalize()
		if nd.Rank == 0 {
			out.Kernel, out.Report = run.BodyEnd-run.BodyStart, rep
		}
		errs[nd.Rank] = errors.Join(wgErrs...)
		return nil
	})
	if err := runGroup(c, g); err != nil {
		return out, err
	}
	out.L2 = c.Nodes[0].GPU.L2Stats()
	if err := errors.Join(errs...); err != nil || chk.verify == nil {
		return out, err
	}
	for pe, nd := range c.Nodes {
		if err := chk.verify(pe, len(c.Nodes), nd.Mem, syms[pe]); err != nil {
			return out, fmt.Errorf("%s: PE %d: %w", s, pe, err)
		}
	}
	return out, nil
}

// ErrDelivery is wrapped by the error of a microbenchmark whose delivered
// bytes differ from its reference.
var ErrDelivery = errors.New("verification failed: delivered data differs from the reference")

// ShmemService is the queue-placement and helper-scalability
// microbenchmark (the dissertation's ComP-Net chapter): WGs work-groups each issue Ops
// blocking 8-byte puts to the next node; the measure is the mean service
// time a work-group sees (post → completion observed), from node 0.
type ShmemService struct {
	WGs, WGSize, Ops int
}

// Run runs it on c (2 nodes or more) under s.
func (b ShmemService) Run(c *cluster.Cluster, s strategy.Strategy, cfg strategy.Config) (ShmemRun, error) {
	if b.WGs < 1 || b.Ops < 1 || b.WGSize < 1 {
		return ShmemRun{}, fmt.Errorf("shmem service benchmark: wgs, ops and wg_size must be ≥ 1 (got %d, %d, %d)", b.WGs, b.Ops, b.WGSize)
	}
	return shmemKernelChecked(c, s, cfg, b.WGs, b.WGSize, []uint64{uint64(8 * b.WGs)}, b.check(), func(pe int, sym []mem.Addr, x *shmem.Ctx) error {
		slot := sym[0] + mem.Addr(8*x.WG().ID)
		for i := range b.Ops {
			if err := x.P(slot, uint64(i+1), 8, (pe+1)%x.NPEs()); err != nil {
				return err
			}
		}
		return nil
	})
}

// check: each slot ends holding the last of its work-group's puts, Ops
// (the puts are blocking, so they land in order).
func (b ShmemService) check() shmemCheck {
	return shmemCheck{verify: func(_, _ int, m *mem.Memory, sym []mem.Addr) error {
		for w := range b.WGs {
			if got := m.Load64(sym[0] + mem.Addr(8*w)); got != uint64(b.Ops) {
				return fmt.Errorf("%w: work-group %d's slot holds %d after its %d blocking puts, want %d", ErrDelivery, w, got, b.Ops, b.Ops)
			}
		}
		return nil
	}}
}

// ShmemGet is the get-latency sweep point (the dissertation's ComP-Net chapter): one
// work-group issues Reps blocking gets of Size bytes from node 1; the
// first is a warm-up, the mean of the others is the latency. The data
// is checked.
type ShmemGet struct {
	Size uint64
	Reps int
}

// Run runs it on a 2-node cluster c under s.
func (b ShmemGet) Run(c *cluster.Cluster, s strategy.Strategy, cfg strategy.Config) (ShmemRun, error) {
	if b.Size < 1 || b.Reps < 2 {
		return ShmemRun{}, fmt.Errorf("shmem get benchmark: size ≥ 1 byte and reps ≥ 2 (got %d, %d)", b.Size, b.Reps)
	}
	var lat sim.Duration
	var phases [shmem.NumPhases]sim.Duration
	bad := false
	run, err := shmemKernel(c, s, cfg, 1, 64, []uint64{b.Size, b.Size}, func(pe int, sym []mem.Addr, x *shmem.Ctx) error {
		wg := x.WG()
		src, dst := sym[0], sym[1]
		if bs := wg.Mem().Bytes(src, int(b.Size)); bs != nil {
			for i := range bs {
				bs[i] = byte(pe*17 + i)
			}
		}
		if err := x.Barrier(); err != nil {
			return err
		}
		if pe != 0 {
			return x.Barrier()
		}
		var start sim.Time
		var before shmem.Stats
		for r := range b.Reps {
			if r == 1 {
				start, before = wg.Now(), x.Stats()
			}
			if err := x.Getmem(dst, src, b.Size, 1); err != nil {
				return err
			}
		}
		lat = (wg.Now() - start) / sim.Duration(b.Reps-1)
		after := x.Stats()
		if n := after.Phased - before.Phased; n > 0 {
			for i := range phases {
				phases[i] = (after.Phases[i] - before.Phases[i]) / sim.Duration(n)
			}
		}
		if got := wg.Mem().Bytes(dst, int(b.Size)); got != nil {
			for i := range got {
				bad = bad || got[i] != byte(17+i)
			}
		}
		return x.Barrier()
	})
	run.Latency, run.Phases = lat, phases
	if err == nil && bad {
		err = fmt.Errorf("%s get of %d bytes: wrong data", s, b.Size)
	}
	return run, err
}

// ShmemLoad is the fully loaded GPU (the dissertation's ComP-Net chapter): WGs work-groups
// of WGSize items each put one Bytes-byte value to the next node, then
// quiet. The measures are the kernel's completion time and the service
// threads' energy.
type ShmemLoad struct {
	WGs, WGSize int
	Bytes       int
}

// Run runs it on c under s.
func (b ShmemLoad) Run(c *cluster.Cluster, s strategy.Strategy, cfg strategy.Config) (ShmemRun, error) {
	if b.WGs < 1 || b.WGSize < 1 || b.Bytes < 1 || b.Bytes > 8 {
		return ShmemRun{}, fmt.Errorf("shmem load benchmark: wgs, wg_size ≥ 1 and bytes in [1, 8] (got %d, %d, %d)", b.WGs, b.WGSize, b.Bytes)
	}
	return shmemKernelChecked(c, s, cfg, b.WGs, b.WGSize, []uint64{uint64(8 * b.WGs)}, b.check(), func(pe int, sym []mem.Addr, x *shmem.Ctx) error {
		if err := x.P(sym[0]+mem.Addr(8*x.WG().ID), uint64(pe+1), b.Bytes, (pe+1)%x.NPEs()); err != nil {
			return err
		}
		return x.Quiet()
	})
}

// check: each slot holds the low Bytes bytes of its sender's PE number
// + 1 (the previous PE's), after the quiet.
func (b ShmemLoad) check() shmemCheck {
	return shmemCheck{verify: func(pe, npes int, m *mem.Memory, sym []mem.Addr) error {
		want := uint64((pe-1+npes)%npes+1) & (1<<(8*b.Bytes) - 1)
		for w := range b.WGs {
			if got := m.Load64(sym[0] + mem.Addr(8*w)); got != want {
				return fmt.Errorf("%w: work-group %d's %d-byte put delivered %#x, want %#x", ErrDelivery, w, b.Bytes, got, want)
			}
		}
		return nil
	}}
}

// CPL2 is the L2 interference microbenchmark (the dissertation's ComP-Net chapter, the
// dissertation's §5.3.3 set-up): NetWGs networking work-groups each keep
// one request in flight (a blocking 64-byte put, Puts times; with
// InFlight > 1, InFlight non-blocking puts and then a quiet), while
// Streaming work-groups per networking one read and write arrays far
// larger than the L2 through it, at unit stride, for as long as the
// networking work-groups run (they wrap around their arrays). The
// measures are the L2 hit rate of the CP's accesses and the lock hold
// times.
type CPL2 struct {
	NetWGs, Streaming, Puts int
	InFlight                int    // puts in flight per networking work-group (0 or 1: one blocking put at a time)
	StreamBytes             uint64 // per streaming work-group: its array
	Chunk                   uint64 // streamed per step, between which the work-group yields
}

// Run runs it on c (a 1-CU GPU with a scaled L2) under s.
func (b CPL2) Run(c *cluster.Cluster, s strategy.Strategy, cfg strategy.Config) (ShmemRun, error) {
	if b.NetWGs < 1 || b.Streaming < 0 || b.Puts < 1 || b.InFlight < 0 || b.Chunk < 64 || b.Streaming > 0 && b.StreamBytes < b.Chunk {
		return ShmemRun{}, fmt.Errorf("cp l2 benchmark: net wgs, puts ≥ 1, streaming, in flight ≥ 0, chunk ≥ 64 B, array ≥ chunk (got %d, %d, %d, %d, %d, %d)", b.NetWGs, b.Puts, b.Streaming, b.InFlight, b.Chunk, b.StreamBytes)
	}
	wgs := b.NetWGs * (1 + b.Streaming)
	arrays := make([]mem.Addr, len(c.Nodes))
	running := make([]int, len(c.Nodes)) // networking work-groups still running, per node
	for i, nd := range c.Nodes {
		running[i] = b.NetWGs
		if b.Streaming > 0 {
			arrays[i] = nd.Mem.Alloc(mem.GPU, b.StreamBytes*uint64(b.NetWGs*b.Streaming), "stream")
		}
	}
	chk := b.check()
	c.Nodes[0].GPU.RecordCPLines() // the breakdown of the CP's accesses (CPClasses)
	// The streaming work-groups never call the network (no context), for
	// as long as the node's networking work-groups run, so the CP's
	// accesses see interference for the whole measurement.
	chk.plain = func(pe int, wg *gpu.WG) (bool, error) {
		if wg.ID < b.NetWGs {
			return false, nil
		}
		base := arrays[pe] + mem.Addr(uint64(wg.ID-b.NetWGs)*b.StreamBytes)
		for off := uint64(0); running[pe] > 0; off = (off + b.Chunk) % b.StreamBytes {
			wg.StreamLines(base+mem.Addr(off), min(b.Chunk, b.StreamBytes-off))
		}
		return true, nil
	}
	run, err := shmemKernelChecked(c, s, cfg, wgs, 64, []uint64{64 * uint64(b.NetWGs), 64}, chk, func(pe int, sym []mem.Addr, x *shmem.Ctx) error {
		defer func() { running[pe]-- }()
		dst := sym[0] + mem.Addr(64*x.WG().ID)
		if b.InFlight <= 1 {
			for range b.Puts {
				if err := x.Putmem(dst, sym[1], 64, (pe+1)%x.NPEs()); err != nil {
					return err
				}
			}
			return nil
		}
		for i := range b.Puts {
			if err := x.PutmemNBI(dst, sym[1], 64, (pe+1)%x.NPEs()); err != nil {
				return err
			}
			if (i+1)%b.InFlight == 0 || i == b.Puts-1 {
				if err := x.Quiet(); err != nil {
					return err
				}
			}
		}
		return nil
	})
	run.CPClasses = cpClasses(c.Nodes[0].Mem, c.Nodes[0].GPU.CPLines(), b.NetWGs)
	return run, err
}

// check: the put source, 64 bytes per PE, is a pattern of the PE; every
// networking work-group's line on the next PE must end holding it.
func (b CPL2) check() shmemCheck {
	pattern := func(pe int) []byte {
		p := make([]byte, 64)
		for i := range p {
			p[i] = byte(pe*31 + i + 1)
		}
		return p
	}
	return shmemCheck{
		fill: func(pe int, m *mem.Memory, sym []mem.Addr) { m.Write(sym[1], pattern(pe)) },
		verify: func(pe, npes int, m *mem.Memory, sym []mem.Addr) error {
			want, got := pattern((pe-1+npes)%npes), make([]byte, 64)
			for w := range b.NetWGs {
				m.Read(sym[0]+mem.Addr(64*w), got)
				if !bytes.Equal(got, want) {
					return fmt.Errorf("%w: networking work-group %d's 64-byte puts delivered % x..., want % x...", ErrDelivery, w, got[:8], want[:8])
				}
			}
			return nil
		},
	}
}
