package workload

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/gpi"
	"github.com/gpunetsim/gpunetsim/model/verbs"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/unit"
)

// The GPI workloads of the GPUrdma paper: node 0 is the master on a
// host thread; node 1 the worker, either GPU thread blocks calling the
// device GPI subset ("gpu", GNN_GPURDMA) or a host thread calling GPI
// (the CPU-driven baseline, "cpu").

// sharedWorld is a run-wide GPI world built by the first node's setup
// (node setups run one after the other at time 0) and handed, or the error
// building it met, to every node.
type sharedWorld struct {
	w   *gpi.World
	err error
}

// world returns the world, building it on the first call: sides and
// notifs as gpi.New takes them, then wire creates its segments and
// connects its queues.
func (s *sharedWorld) world(nd *strategy.Node, sides []gpi.Side, notifs int, wire func(*gpi.World) error) (*gpi.World, error) {
	if s.w == nil && s.err == nil {
		s.w, s.err = buildWorld(nd, sides, notifs, wire)
	}
	return s.w, s.err
}

// prebuild builds the world over domain d now, before the run: every
// node's setup then only reads it, so a partitioned run's nodes touch no
// other node's memory. The world is what the first node's setup would
// have built (its strategy setup allocates nothing in node memory before
// it), so the run is the same.
func (s *sharedWorld) prebuild(d *verbs.Domain, sides []gpi.Side, notifs int, wire func(*gpi.World) error) {
	s.w, s.err = buildWorldOver(d, sides, notifs, wire)
}

func buildWorld(nd *strategy.Node, sides []gpi.Side, notifs int, wire func(*gpi.World) error) (*gpi.World, error) {
	d, err := verbsOf(nd)
	if err != nil {
		return nil, err
	}
	return buildWorldOver(d, sides, notifs, wire)
}

func buildWorldOver(d *verbs.Domain, sides []gpi.Side, notifs int, wire func(*gpi.World) error) (*gpi.World, error) {
	w, err := gpi.New(d, sides, notifs)
	if err != nil {
		return nil, err
	}
	if err := wire(w); err != nil {
		return nil, err
	}
	return w, nil
}

// gpuSides is n GPU-side ranks.
func gpuSides(n int) []gpi.Side {
	sides := make([]gpi.Side, n)
	for i := range sides {
		sides[i] = gpi.GPUSide
	}
	return sides
}

// gpiWorld is the GPI world of the master/worker workloads below.
type gpiWorld struct{ sharedWorld }

func (g *gpiWorld) get(nd *strategy.Node, worker string, notifs, queues int) (*gpi.World, error) {
	side := gpi.GPUSide
	if worker != "gpu" && worker != "persistent" {
		side = gpi.CPUSide
	}
	return g.world(nd, []gpi.Side{gpi.CPUSide, side}, notifs, func(w *gpi.World) error {
		for q := range queues {
			if err := w.Connect(q); err != nil {
				return err
			}
		}
		return nil
	})
}

func checkWorker(what, worker string, allowed ...string) error {
	for _, a := range allowed {
		if worker == a {
			return nil
		}
	}
	return fmt.Errorf("%s worker %q: must be one of %v", what, worker, allowed)
}

// GPIPingPong is the GPI latency ping-pong (§9.4): the CPU master
// notifies, the worker's notify_waitsome sees it and notifies back; the
// round trip is measured on the master.
type GPIPingPong struct {
	Iters  int
	Worker string // "gpu" (one thread block) or "cpu"
}

// GPIPingPongResult is one run.
type GPIPingPongResult struct {
	RoundTrip sim.Time // average over the iterations
	Verified  bool     // every reply carried the value sent
}

// Run runs the ping-pong on two nodes under s.
func (p GPIPingPong) Run(c *cluster.Cluster, s strategy.Strategy, cfg strategy.Config) (GPIPingPongResult, error) {
	if err := checkWorker("gpi ping-pong", p.Worker, "gpu", "cpu"); err != nil {
		return GPIPingPongResult{}, err
	}
	if p.Iters < 1 || len(c.Nodes) != 2 {
		return GPIPingPongResult{}, fmt.Errorf("gpi ping-pong: %d iterations on %d nodes: need ≥ 1 on 2", p.Iters, len(c.Nodes))
	}
	var res GPIPingPongResult
	var gw gpiWorld
	ok := true
	g := strategy.Spawn(c, s, cfg, func(nd *strategy.Node) error {
		w, err := gw.get(nd, p.Worker, 8, 1)
		if err != nil {
			return err
		}
		if nd.Rank == 0 {
			h := w.Host(0, nd.Host, nd.SW)
			t0 := nd.Host.Now()
			for it := 1; it <= p.Iters; it++ {
				if err := h.Notify(1, 0, uint64(it), 0); err != nil {
					return err
				}
				_, v, err := h.NotifyWaitsome(1, 1)
				if err != nil {
					return err
				}
				ok = ok && v == uint64(it)
				h.NotifyReset(1)
			}
			res.RoundTrip = (nd.Host.Now() - t0) / sim.Duration(p.Iters)
			return h.Wait(0)
		}
		if p.Worker == "cpu" {
			h := w.Host(1, nd.Host, nd.SW)
			for range p.Iters {
				if _, _, err := h.NotifyWaitsome(0, 1); err != nil {
					return err
				}
				if err := h.Notify(0, 1, h.NotifyReset(0), 0); err != nil {
					return err
				}
			}
			return h.Wait(0)
		}
		var kerr error
		run := nd.Stream.Launch(gpu.Kernel{Name: "gpi-pong", WGs: 1, WGSize: min(1024, nd.GPU.MaxWGSize), Body: func(wg *gpu.WG) {
			d := w.Device(1)
			for range p.Iters {
				if _, _, kerr = d.NotifyWaitsome(wg, 0, 1); kerr != nil {
					return
				}
				if kerr = d.Notify(wg, 0, 1, d.NotifyReset(wg, 0), 0); kerr != nil {
					return
				}
			}
			kerr = d.Wait(wg, 0)
		}})
		nd.Stream.Wait(run)
		return kerr
	})
	if err := runGroup(c, g); err != nil {
		return res, err
	}
	res.Verified = ok
	if !ok {
		return res, fmt.Errorf("gpi ping-pong: a reply carried another value than the notification sent")
	}
	return res, nil
}

// GPIThroughput is the 180 MB throughput ping-pong (§9.5), Rounds times:
// the master sends Size bytes from host memory into the worker's segment
// and the worker returns them over Queues queues in equal slices. Basic
// (bulk synchronous): per round one write_notify of the whole buffer and
// one notification per block; the master waits for every slice before the
// next round. Overlap (the enhanced version): per round one write_notify
// per slice, block b starts as soon as its slice is there, and the master
// sends slice b of the next round as soon as slice b came back. The
// rounds alternate between two source buffers of different contents, so a
// slice forwarded before its new bytes landed is wrong. With Validate
// each block first checks its slice's known contents in a data-parallel
// loop (the workaround for the reorder hazard, the GPUrdma paper), charging
// the loop and re-checking until the contents are right.
type GPIThroughput struct {
	Size     unit.Bytes
	Queues   int
	Rounds   int    // ping-pongs of the whole buffer (0: 1)
	Worker   string // "gpu" or "cpu"
	Overlap  bool
	Validate bool
}

// GPIThroughputResult is one run. Gbps is one direction: the bytes the
// master sent, times the rounds, over the time; it can never exceed the
// link's rate. GbpsBoth is the two directions' sum, so labelled.
type GPIThroughputResult struct {
	Time       sim.Time
	Gbps       float64 // one direction: Size × Rounds over the time
	GbpsBoth   float64 // both directions: 2 × Size × Rounds over the time
	Revalidate uint64  // slice checks that found stale contents
	Verified   bool
}

// pattern8r is byte i of the source of round r.
func pattern8r(i, r int) byte { return pattern8(i) ^ byte(r%2)*0x5a }

func pattern8(i int) byte { return byte(i*31 + i>>9) }

// Run runs the throughput ping-pong on two nodes under s.
func (p GPIThroughput) Run(c *cluster.Cluster, s strategy.Strategy, cfg strategy.Config) (GPIThroughputResult, error) {
	if err := checkWorker("gpi throughput", p.Worker, "gpu", "cpu"); err != nil {
		return GPIThroughputResult{}, err
	}
	size := uint64(p.Size)
	rounds := max(1, p.Rounds)
	if p.Queues < 1 || size < uint64(p.Queues) || len(c.Nodes) != 2 {
		return GPIThroughputResult{}, fmt.Errorf("gpi throughput: %v over %d queues on %d nodes: need a byte per queue, 2 nodes", p.Size, p.Queues, len(c.Nodes))
	}
	slice := size / uint64(p.Queues)
	sliceOf := func(b int) (off, n uint64) {
		off = uint64(b) * slice
		if b == p.Queues-1 {
			return off, size - off
		}
		return off, slice
	}
	var res GPIThroughputResult
	var gw gpiWorld
	var back mem.Addr
	srcSeg := func(r int) int { return 1 + 2*(r%2) } // segments 1 and 3 on the master
	g := strategy.Spawn(c, s, cfg, func(nd *strategy.Node) error {
		w, err := gw.get(nd, p.Worker, 2*p.Queues+1, p.Queues)
		if err != nil {
			return err
		}
		if nd.Rank == 0 {
			srcs := [2]mem.Addr{w.SegmentCreate(1, 0, size), w.SegmentCreate(3, 0, size)}
			back = w.SegmentCreate(2, 0, size)
			w.SegmentCreate(1, 1, size)
			for r, a := range srcs {
				if b := nd.Mem.Bytes(a, int(size)); b != nil {
					for i := range b {
						b[i] = pattern8r(i, r)
					}
				}
			}
			h := w.Host(0, nd.Host, nd.SW)
			t0 := nd.Host.Now()
			send := func(b, r int) error {
				off, n := sliceOf(b)
				return h.WriteNotify(srcSeg(r), off, 1, 1, off, n, b, uint64(r+1), b)
			}
			if p.Overlap {
				done := make([]int, p.Queues)
				for b := range p.Queues {
					if err := send(b, 0); err != nil {
						return err
					}
				}
				for left := p.Queues * rounds; left > 0; left-- {
					id, _, err := h.NotifyWaitsome(p.Queues, p.Queues)
					if err != nil {
						return err
					}
					h.NotifyReset(id)
					b := id - p.Queues
					if done[b]++; done[b] < rounds {
						if err := send(b, done[b]); err != nil {
							return err
						}
					}
				}
			} else {
				for r := range rounds {
					if err := h.WriteNotify(srcSeg(r), 0, 1, 1, 0, size, 0, uint64(r+1), 0); err != nil {
						return err
					}
					for k := 1; k < p.Queues; k++ {
						if err := h.Notify(1, k, uint64(r+1), 0); err != nil {
							return err
						}
					}
					for range p.Queues {
						id, _, err := h.NotifyWaitsome(p.Queues, p.Queues)
						if err != nil {
							return err
						}
						h.NotifyReset(id)
					}
				}
			}
			res.Time = nd.Host.Now() - t0
			for q := range p.Queues {
				if err := h.Wait(q); err != nil {
					return err
				}
			}
			return nil
		}
		if p.Worker == "cpu" {
			h := w.Host(1, nd.Host, nd.SW)
			for r := range rounds {
				for b := range p.Queues {
					if _, _, err := h.NotifyWaitsome(b, 1); err != nil {
						return err
					}
					h.NotifyReset(b)
					off, n := sliceOf(b)
					if err := h.WriteNotify(1, off, 0, 2, off, n, p.Queues+b, uint64(r+1), b); err != nil {
						return err
					}
				}
			}
			for b := range p.Queues {
				if err := h.Wait(b); err != nil {
					return err
				}
			}
			return nil
		}
		dst := w.SegmentAddr(1, 1)
		var kerr error
		run := nd.Stream.Launch(gpu.Kernel{Name: "gpi-return", WGs: p.Queues, WGSize: min(1024, nd.GPU.MaxWGSize), Body: func(wg *gpu.WG) {
			d := w.Device(1)
			b := wg.ID
			off, n := sliceOf(b)
			for r := range rounds {
				if _, _, err := d.NotifyWaitsome(wg, b, 1); err != nil {
					kerr = err
					return
				}
				d.NotifyReset(wg, b)
				if p.Validate {
					res.Revalidate += validateSlice(wg, dst, off, n, r)
				}
				if err := d.WriteNotify(wg, 1, off, 0, 2, off, n, p.Queues+b, uint64(r+1), b); err != nil {
					kerr = err
					return
				}
				// The slice's buffer is sent from: the next round may
				// overwrite it only once the send has read it.
				if err := d.Wait(wg, b); err != nil {
					kerr = err
					return
				}
			}
		}})
		nd.Stream.Wait(run)
		return kerr
	})
	if err := runGroup(c, g); err != nil {
		return res, err
	}
	res.Gbps = float64(size) * float64(rounds) * 8 / res.Time.Seconds() / 1e9
	res.GbpsBoth = 2 * res.Gbps
	if m := c.Nodes[0].Mem; m.Functional() {
		want := make([]byte, size)
		for i := range want {
			want[i] = pattern8r(i, rounds-1)
		}
		if !bytes.Equal(want, m.Bytes(back, int(size))) {
			return res, fmt.Errorf("gpi throughput: the returned buffer differs from the last round's (stale data forwarded)")
		}
		res.Verified = true
	}
	return res, nil
}

// validateSlice is the data-parallel content check of a received slice:
// the block streams it once per check; when a byte is not the known
// pattern, the block polls the 8-byte word holding the first such byte
// (acquire loads) until its value changes — the late write landed — and
// checks the whole slice again, until every byte is the pattern. It
// returns the failed checks. (No fixed back-off: the wait is the polls
// and the late line's own arrival.)
func validateSlice(wg *gpu.WG, dst mem.Addr, off, n uint64, round int) uint64 {
	m := wg.Mem()
	failed := uint64(0)
	for {
		wg.Stream(n)
		wg.VALU(int(n/uint64(4*wg.Size)) + 1)
		b := m.Bytes(dst+mem.Addr(off), int(n))
		stale := -1
		for i := range b {
			if b[i] != pattern8r(int(off)+i, round) {
				stale = i
				break
			}
		}
		if stale < 0 {
			return failed
		}
		failed++
		w := (dst + mem.Addr(off) + mem.Addr(stale)) &^ 7
		old := m.Load64(w)
		wg.PollUntil(w, true, "a late line of the slice", func(v uint64) bool { return v != old })
	}
}

// GPIMatVec is the multi-matrix-vector stream (§9.6): a fixed 32×32
// float32 matrix, a stream of 32-element vectors sent by the master in
// batches of Batch bytes; the worker multiplies each batch and returns
// the results. "persistent": a kernel of Blocks thread blocks that loads
// the matrix once and serves every batch with GPI calls. "relaunch": the
// worker CPU waits for each batch, launches a kernel (which loads the
// matrix again), waits for it, and sends the results.
type GPIMatVec struct {
	Batch   unit.Bytes
	Batches int
	Blocks  int
	Threads int
	Worker  string // "persistent" or "relaunch"
	// Validate makes each block check its share of a batch against a
	// CRC32 (seeded with the batch number) the master appends to the
	// batch, re-checking until it matches: the workaround for the
	// reorder hazard when the data is not known in advance (the dissertation
	// §5.4). The check is charged as a pass over the share.
	Validate bool
}

// GPIMatVecResult is one run, with the breakdown of block 0's time: the
// matrix copies into shared memory, the multiplications (and any
// validation), and the rest — waiting for batches, sending results,
// kernel launches — the message costs.
type GPIMatVecResult struct {
	Time       sim.Time
	MVecs      float64 // million vector products per second
	MatrixCopy sim.Duration
	Compute    sim.Duration
	Messages   sim.Duration
	Revalidate uint64 // CRC checks that found stale contents
	Verified   bool
}

const mvDim = 32

// mvMatrix is the fixed matrix, element (r, c).
func mvMatrix(r, c int) float32 { return float32((r*7+c*3)%11) - 5 }

// mvVector is element e of vector v of batch b.
func mvVector(b, v, e int) float32 { return float32((b*13+v*5+e)%9) - 4 }

// matvec computes out = M × in for every vector of in (little-endian
// float32).
func matvec(in, out []byte) {
	for v := 0; v+mvDim*4 <= len(in); v += mvDim * 4 {
		for r := range mvDim {
			var acc float32
			for c := range mvDim {
				acc += mvMatrix(r, c) * math.Float32frombits(binary.LittleEndian.Uint32(in[v+4*c:]))
			}
			binary.LittleEndian.PutUint32(out[v+4*r:], math.Float32bits(acc))
		}
	}
}

// batchCRC is the CRC32 of a block's share of batch b, seeded with b so
// that a whole share left over from an earlier batch does not pass.
func batchCRC(b int, share []byte) uint32 {
	var seed [8]byte
	binary.LittleEndian.PutUint64(seed[:], uint64(b))
	return crc32.Update(crc32.ChecksumIEEE(seed[:]), crc32.IEEETable, share)
}

// checkCRC validates [in+off, in+off+n) of batch b against the CRC at
// in+at, checking again at once after a mismatch until it matches (the
// data is not known in advance, so no word tells which line is late: the
// block re-runs the check, as the code would), and returns the failed
// checks. Each check streams the share and does a few operations per
// word, so the re-checks themselves are the wait.
func checkCRC(wg *gpu.WG, in mem.Addr, off, n, at uint64, b int) uint64 {
	m := wg.Mem()
	failed := uint64(0)
	for {
		wg.Stream(n + 4)
		wg.VALU(int(n/uint64(4*wg.Size))*4 + 1)
		share, crc := m.Bytes(in+mem.Addr(off), int(n)), m.Bytes(in+mem.Addr(at), 4)
		if share == nil || crc == nil || batchCRC(b, share) == binary.LittleEndian.Uint32(crc) {
			return failed
		}
		failed++
	}
}

// Run runs the stream on two nodes under s.
func (p GPIMatVec) Run(c *cluster.Cluster, s strategy.Strategy, cfg strategy.Config) (GPIMatVecResult, error) {
	if err := checkWorker("gpi matvec", p.Worker, "persistent", "relaunch"); err != nil {
		return GPIMatVecResult{}, err
	}
	vb := uint64(mvDim * 4)
	batch := uint64(p.Batch) / vb * vb
	if batch == 0 || p.Batches < 1 || p.Blocks < 1 || p.Threads < 1 || len(c.Nodes) != 2 {
		return GPIMatVecResult{}, fmt.Errorf("gpi matvec: batch %v (≥ one %d-byte vector), %d batches, %d blocks × %d threads on %d nodes: all must be positive, 2 nodes",
			p.Batch, vb, p.Batches, p.Blocks, p.Threads, len(c.Nodes))
	}
	vecs := int(batch / vb)
	seg := batch // the batch segment: the vectors, then a CRC per block when validating
	if p.Validate {
		seg += 4 * uint64(p.Blocks)
	}
	per := (vecs + p.Blocks - 1) / p.Blocks
	part := func(b int) (off, n uint64) {
		lo, hi := min(b*per, vecs), min((b+1)*per, vecs)
		return uint64(lo) * vb, uint64(hi-lo) * vb
	}
	results := p.Blocks
	if p.Worker == "relaunch" {
		results = 1
	}
	var res GPIMatVecResult
	var gw gpiWorld
	ok := true
	g := strategy.Spawn(c, s, cfg, func(nd *strategy.Node) error {
		w, err := gw.get(nd, p.Worker, 2*p.Blocks+2, p.Blocks)
		if err != nil {
			return err
		}
		if nd.Rank == 0 {
			in, out := w.SegmentCreate(1, 0, seg), w.SegmentCreate(2, 0, batch)
			w.SegmentCreateIn(1, 1, seg, mem.GPU)
			w.SegmentCreateIn(2, 1, batch, mem.GPU)
			h := w.Host(0, nd.Host, nd.SW)
			want := make([]byte, batch)
			t0 := nd.Host.Now()
			for b := range p.Batches {
				if ib := nd.Mem.Bytes(in, int(batch)); ib != nil {
					for i := 0; i < len(ib); i += 4 {
						binary.LittleEndian.PutUint32(ib[i:], math.Float32bits(mvVector(b, i/int(vb), i%int(vb)/4)))
					}
					matvec(ib, want)
				}
				if sb := nd.Mem.Bytes(in, int(seg)); p.Validate && sb != nil {
					for k := range p.Blocks {
						off, n := part(k)
						binary.LittleEndian.PutUint32(sb[batch+4*uint64(k):], batchCRC(b, sb[off:off+n]))
					}
				}
				if err := h.WriteNotify(1, 0, 1, 1, 0, seg, 0, uint64(b+1), 0); err != nil {
					return err
				}
				for k := 1; p.Worker == "persistent" && k < p.Blocks; k++ {
					if err := h.Notify(1, k, uint64(b+1), 0); err != nil {
						return err
					}
				}
				for range results {
					id, _, err := h.NotifyWaitsome(p.Blocks, results)
					if err != nil {
						return err
					}
					h.NotifyReset(id)
				}
				if ob := nd.Mem.Bytes(out, int(batch)); ob != nil {
					ok = ok && bytes.Equal(ob, want)
				}
			}
			res.Time = nd.Host.Now() - t0
			return h.Wait(0)
		}
		in, out := w.SegmentAddr(1, 1), w.SegmentAddr(2, 1)
		compute := func(wg *gpu.WG, bi int, loadMatrix bool) {
			if loadMatrix {
				t := wg.Now()
				wg.Stream(mvDim * mvDim * 4)
				if wg.ID == 0 {
					res.MatrixCopy += wg.Now() - t
				}
			}
			t := wg.Now()
			defer func() {
				if wg.ID == 0 {
					res.Compute += wg.Now() - t
				}
			}()
			off, n := part(wg.ID)
			if n == 0 {
				return
			}
			m := wg.Mem()
			if p.Validate {
				res.Revalidate += checkCRC(wg, in, off, n, batch+4*uint64(wg.ID), bi)
			}
			if ib, ob := m.Bytes(in+mem.Addr(off), int(n)), m.Bytes(out+mem.Addr(off), int(n)); ib != nil && ob != nil {
				matvec(ib, ob)
			}
			// One multiply-add per thread per matrix element of every
			// vector, spread over the block's threads.
			wg.VALU(int(n/vb)*mvDim*mvDim*2/max(1, wg.Size) + 1)
			wg.StreamOut(2*n, n) // the output vectors written
		}
		if p.Worker == "relaunch" {
			h := w.Host(1, nd.Host, nd.SW)
			for b := range p.Batches {
				if _, _, err := h.NotifyWaitsome(0, 1); err != nil {
					return err
				}
				h.NotifyReset(0)
				run := nd.Stream.Launch(gpu.Kernel{Name: "matvec", WGs: p.Blocks, WGSize: p.Threads, Body: func(wg *gpu.WG) { compute(wg, b, true) }})
				nd.Stream.Wait(run)
				if err := h.WriteNotify(2, 0, 0, 2, 0, batch, p.Blocks, uint64(b+1), 0); err != nil {
					return err
				}
			}
			return h.Wait(0)
		}
		var kerr error
		run := nd.Stream.Launch(gpu.Kernel{Name: "matvec-persistent", WGs: p.Blocks, WGSize: p.Threads, Body: func(wg *gpu.WG) {
			d := w.Device(1)
			t := wg.Now()
			wg.Stream(mvDim * mvDim * 4) // the matrix into shared memory, once
			if wg.ID == 0 {
				res.MatrixCopy += wg.Now() - t
			}
			for b := range p.Batches {
				if _, _, kerr = d.NotifyWaitsome(wg, wg.ID, 1); kerr != nil {
					return
				}
				d.NotifyReset(wg, wg.ID)
				compute(wg, b, false)
				off, n := part(wg.ID)
				if n == 0 { // more blocks than vectors: only the notification
					kerr = d.Notify(wg, 0, p.Blocks+wg.ID, uint64(b+1), wg.ID)
				} else {
					kerr = d.WriteNotify(wg, 2, off, 0, 2, off, n, p.Blocks+wg.ID, uint64(b+1), wg.ID)
				}
				if kerr != nil {
					return
				}
			}
			kerr = d.Wait(wg, wg.ID)
		}})
		nd.Stream.Wait(run)
		return kerr
	})
	if err := runGroup(c, g); err != nil {
		return res, err
	}
	res.MVecs = float64(vecs*p.Batches) / res.Time.Seconds() / 1e6
	res.Messages = max(0, res.Time-res.MatrixCopy-res.Compute)
	res.Verified = ok && c.Nodes[0].Mem.Functional()
	if !ok {
		return res, fmt.Errorf("gpi matvec: results differ from the CPU matrix-vector product")
	}
	return res, nil
}
