package workload

import (
	"bytes"
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/verbs"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/unit"
)

// The GPUrdma microbenchmarks (the GPUrdma paper). They program
// against the device-verbs capability: node 0's GPU threads post RDMA
// writes into node 1's host memory, which node 1's CPU never touches.

// RdmaBW is the single-thread benchmark (§9.1): one GPU thread issues
// Msgs RDMA writes of Size bytes, with the optimisations cfg.GNN switches
// on: without pipelining it polls each completion before the next post;
// with it, it posts until the QP is full, then waits for the completions;
// batched doorbells ring once per full QP (and at the end).
type RdmaBW struct {
	Size unit.Bytes
	Msgs int
	// Host runs the CPU-driven baseline of the same configuration
	// instead (the GPUrdma paper's "CPU-controlled RDMA with similar
	// configuration"): one host thread posts with standard verbs to a QP
	// and CQ in host memory, one doorbell per post, polling only when the
	// QP is full when the GPU variant pipelines, each completion
	// otherwise; the payload is the same GPU buffer.
	Host bool
}

// RdmaBWResult is one run of RdmaBW. Per-message step times are the
// averages over the messages (WQE write, doorbell, CQ poll).
type RdmaBWResult struct {
	Time       sim.Time // first WQE write to the last message's CQE
	GBps       float64
	PerMsg     sim.Time
	WQE        sim.Time
	Doorbell   sim.Time
	Poll       sim.Time
	Fields     uint64
	Doorbells  uint64
	QPMemBytes uint64 // verbs memory of node 0 (QP + CQ)
	QPBytes    uint64 // of which the QP: send and receive rings, doorbell record
	CQBytes    uint64 // of which the CQ rings
	QPDepth    int    // WQEs per send ring (and completions each CQ is asked for)
	Verified   bool
}

func verbsOf(nd *strategy.Node) (*verbs.Domain, error) {
	d, ok := strategy.Get[*verbs.Domain](nd)
	if !ok {
		return nil, fmt.Errorf("%s provides no device verbs (the DeviceVerbs capability)", nd.Strategy)
	}
	return d, nil
}

// fillPattern writes a recognisable pattern into [a, a+n) when m holds
// bytes.
func fillPattern(m *mem.Memory, a mem.Addr, n uint64, seed byte) {
	if b := m.Bytes(a, int(n)); b != nil {
		for i := range b {
			b[i] = byte(i)*13 + seed
		}
	}
}

// Run runs the benchmark on two nodes under s (a strategy with device
// verbs).
func (b RdmaBW) Run(c *cluster.Cluster, s strategy.Strategy, cfg strategy.Config) (RdmaBWResult, error) {
	if len(c.Nodes) != 2 {
		return RdmaBWResult{}, fmt.Errorf("gpurdma benchmark needs 2 nodes, got %d", len(c.Nodes))
	}
	if b.Size < 1 || b.Msgs < 1 {
		return RdmaBWResult{}, fmt.Errorf("gpurdma: size %v, %d messages: both must be positive", b.Size, b.Msgs)
	}
	size := uint64(b.Size)
	var res RdmaBWResult
	var src, dst mem.Addr
	var postErr error
	g := strategy.Spawn(c, s, cfg, func(nd *strategy.Node) error {
		if nd.Rank != 0 {
			return nil
		}
		d, err := verbsOf(nd)
		if err != nil {
			return err
		}
		spec := d.Spec()
		n0, n1 := d.Node(0), d.Node(1)
		src = nd.Mem.Alloc(mem.GPU, size, "src")
		dst = n1.Mem().Alloc(mem.Host, size, "dst")
		fillPattern(nd.Mem, src, size, 5)
		smr, dmr := n0.RegMR(src, size), n1.RegMR(dst, size)
		cq, err := n0.NewCQ(spec.QPDepth, verbs.Pool(spec.CQLoc))
		if err != nil {
			return err
		}
		tcq, err := n1.NewCQ(spec.QPDepth, mem.Host)
		if err != nil {
			return err
		}
		qpPool := verbs.Pool(spec.QPLoc)
		if b.Host {
			qpPool = mem.Host
			if cq, err = n0.NewCQ(spec.QPDepth, mem.Host); err != nil {
				return err
			}
		}
		qp, _, err := d.Connect(0, 1, verbs.Place{QP: qpPool}, verbs.Place{QP: mem.Host}, cq, tcq, spec.QPDepth)
		if err != nil {
			return err
		}
		w := verbs.Write(smr, src, dmr, dst, size)
		if b.Host {
			start := nd.Host.Now()
			postErr = hostSingle(nd, qp, cq, w, b.Msgs, spec.Pipeline)
			res.Time = nd.Host.Now() - start
			st := qp.Stats()
			res.QPMemBytes, res.QPBytes, res.CQBytes, res.QPDepth = n0.Footprint(), n0.QPBytes(), n0.CQBytes(), spec.QPDepth
			res.Fields, res.Doorbells = st.Fields, st.Doorbells
			res.PerMsg = res.Time / sim.Duration(b.Msgs)
			return postErr
		}
		if spec.WQEReuse {
			qp.Preinit(w)
		}
		run := nd.Stream.Launch(gpu.Kernel{Name: "gpurdma-bw", WGs: 1, WGSize: 32, Body: func(wg *gpu.WG) {
			start := wg.Now()
			postErr = singleThread(wg, qp, cq, w, b.Msgs, spec)
			res.Time = wg.Now() - start
		}})
		nd.Stream.Wait(run)
		st := qp.Stats()
		res.QPMemBytes, res.QPBytes, res.CQBytes, res.QPDepth = n0.Footprint(), n0.QPBytes(), n0.CQBytes(), spec.QPDepth
		res.Fields, res.Doorbells = st.Fields, st.Doorbells
		k := sim.Duration(b.Msgs)
		res.PerMsg, res.WQE, res.Doorbell, res.Poll = res.Time/k, st.WQETime/k, st.DoorbellTime/k, st.PollTime/k
		return postErr
	})
	if err := runGroup(c, g); err != nil {
		return res, err
	}
	res.GBps = float64(size) * float64(b.Msgs) / res.Time.Seconds() / 1e9
	if m := c.Nodes[0].Mem; m.Functional() {
		if !bytes.Equal(m.Bytes(src, int(size)), c.Nodes[1].Mem.Bytes(dst, int(size))) {
			return res, fmt.Errorf("gpurdma: the remote buffer differs from the source")
		}
		res.Verified = true
	}
	return res, nil
}

// hostSingle is the CPU-driven loop of RdmaBW.Host.
func hostSingle(nd *strategy.Node, qp *verbs.QP, cq *verbs.CQ, w verbs.WQE, msgs int, pipeline bool) error {
	for range msgs {
		if qp.Outstanding() == uint64(qp.Depth()) {
			if e, ok := cq.HostWaitQP(nd.Host, nd.SW, qp, 0); !ok {
				return fmt.Errorf("gpurdma (cpu): RDMA write completed with %v", e.Status)
			}
		}
		if err := qp.HostPost(nd.Host, nd.SW, w); err != nil {
			return err
		}
		qp.HostRing(nd.Host)
		if !pipeline {
			if e, ok := cq.HostWaitQP(nd.Host, nd.SW, qp, 0); !ok {
				return fmt.Errorf("gpurdma (cpu): RDMA write completed with %v", e.Status)
			}
		}
	}
	if e, ok := cq.HostWaitQP(nd.Host, nd.SW, qp, 0); !ok {
		return fmt.Errorf("gpurdma (cpu): RDMA write completed with %v", e.Status)
	}
	return nil
}

// singleThread is the one-thread post loop of §9.1 under the flags of
// spec.
func singleThread(wg *gpu.WG, qp *verbs.QP, cq *verbs.CQ, w verbs.WQE, msgs int, spec verbs.Spec) error {
	for range msgs {
		if qp.Outstanding() == uint64(qp.Depth()) {
			qp.Ring(wg)
			if e, ok := cq.WaitQP(wg, qp, 0); !ok {
				return fmt.Errorf("gpurdma: RDMA write completed with %v", e.Status)
			}
		}
		if err := qp.Post(wg, w); err != nil {
			return err
		}
		if !spec.BatchDoorbell {
			qp.Ring(wg)
		}
		if !spec.Pipeline {
			if e, ok := cq.WaitQP(wg, qp, 0); !ok {
				return fmt.Errorf("gpurdma: RDMA write completed with %v", e.Status)
			}
		}
	}
	qp.Ring(wg)
	if e, ok := cq.WaitQP(wg, qp, 0); !ok {
		return fmt.Errorf("gpurdma: RDMA write completed with %v", e.Status)
	}
	return nil
}

// RdmaMultiQP is the multi-QP benchmark (§9.2): Warps posters, each with
// its own QP, all sharing one CQ, each sending Msgs RDMA writes of Size
// bytes. Mode "warp": one thread block of Warps warps, a single thread
// posting per warp, one thread polling the shared CQ for all of them
// (post until the QPs are full, poll, repeat). Mode "block": Warps thread
// blocks of one warp, threadblock-collaborative post of a warp's worth of
// WQEs, the last thread rings the doorbell, collaborative CQ poll. Mode
// "cpu": one host thread drives the same QPs (in host memory) — the
// CPU-driven RDMA of the same configuration.
type RdmaMultiQP struct {
	Size  unit.Bytes
	Msgs  int // per QP
	Mode  string
	Warps int
}

// RdmaMultiQPResult is one run of RdmaMultiQP.
type RdmaMultiQPResult struct {
	Time         sim.Time
	MsgRate      float64 // million messages per second
	GBps         float64
	QPBytes      uint64 // verbs memory per QP on the initiator (rings, record, its share of the CQ)
	EnginesMax   uint64 // most HCA engines busy at once
	Events       uint64
	Verified     bool
	FootprintAll uint64
}

// Run runs the benchmark on two nodes under s.
func (b RdmaMultiQP) Run(c *cluster.Cluster, s strategy.Strategy, cfg strategy.Config) (RdmaMultiQPResult, error) {
	if len(c.Nodes) != 2 {
		return RdmaMultiQPResult{}, fmt.Errorf("gpurdma multi-QP benchmark needs 2 nodes, got %d", len(c.Nodes))
	}
	if b.Size < 1 || b.Msgs < 1 || b.Warps < 1 {
		return RdmaMultiQPResult{}, fmt.Errorf("gpurdma multi-QP: size %v, %d messages, %d warps: all must be positive", b.Size, b.Msgs, b.Warps)
	}
	if b.Mode != "warp" && b.Mode != "block" && b.Mode != "cpu" {
		return RdmaMultiQPResult{}, fmt.Errorf("gpurdma multi-QP mode %q: must be warp, block or cpu", b.Mode)
	}
	size := uint64(b.Size)
	var res RdmaMultiQPResult
	var srcs, dsts []mem.Addr
	g := strategy.Spawn(c, s, cfg, func(nd *strategy.Node) error {
		if nd.Rank != 0 {
			return nil
		}
		d, err := verbsOf(nd)
		if err != nil {
			return err
		}
		spec := d.Spec()
		n0, n1 := d.Node(0), d.Node(1)
		qpPool, cqPool, dataPool := verbs.Pool(spec.QPLoc), verbs.Pool(spec.CQLoc), mem.GPU
		if b.Mode == "cpu" {
			qpPool, cqPool, dataPool = mem.Host, mem.Host, mem.Host
		}
		// The shared CQ holds every CQE of the run: the collaborative
		// pollers each scan it with their own cursor.
		cq, err := n0.NewCQ(b.Warps*b.Msgs, cqPool)
		if err != nil {
			return err
		}
		tcq, err := n1.NewCQ(b.Warps, mem.Host)
		if err != nil {
			return err
		}
		qps := make([]*verbs.QP, b.Warps)
		ws := make([]verbs.WQE, b.Warps)
		for i := range qps {
			src, dst := nd.Mem.Alloc(dataPool, size, "src"), n1.Mem().Alloc(mem.Host, size, "dst")
			fillPattern(nd.Mem, src, size, byte(i))
			srcs, dsts = append(srcs, src), append(dsts, dst)
			if qps[i], _, err = d.Connect(0, 1, verbs.Place{QP: qpPool}, verbs.Place{QP: mem.Host}, cq, tcq, spec.QPDepth); err != nil {
				return err
			}
			ws[i] = verbs.Write(n0.RegMR(src, size), src, n1.RegMR(dst, size), dst, size)
			if spec.WQEReuse {
				qps[i].Preinit(ws[i])
			}
		}
		res.FootprintAll = n0.Footprint()
		res.QPBytes = res.FootprintAll / uint64(b.Warps)
		start := nd.Host.Now()
		var end sim.Time
		var runErr error
		switch b.Mode {
		case "cpu":
			runErr = cpuMultiQP(nd, qps, cq, ws, b.Msgs)
			end = nd.Host.Now()
		case "warp":
			run := nd.Stream.Launch(gpu.Kernel{Name: "multiqp-warp", WGs: b.Warps, WGSize: nd.GPU.WaveSize,
				Body: warpMultiQP(qps, cq, ws, b.Msgs, &runErr)})
			nd.Stream.Wait(run)
			start, end = run.BodyStart, run.BodyEnd
		case "block":
			run := nd.Stream.Launch(gpu.Kernel{Name: "multiqp-block", WGs: b.Warps, WGSize: nd.GPU.WaveSize,
				Body: blockMultiQP(qps, ws, b.Msgs, nd.GPU.WaveSize, &runErr)})
			nd.Stream.Wait(run)
			start, end = run.BodyStart, run.BodyEnd
		}
		res.Time = end - start
		res.EnginesMax = c.Nodes[0].NIC.VerbsStats().EnginesMax
		return runErr
	})
	if err := runGroup(c, g); err != nil {
		return res, err
	}
	total := float64(b.Warps * b.Msgs)
	res.MsgRate = total / res.Time.Seconds() / 1e6
	res.GBps = total * float64(size) / res.Time.Seconds() / 1e9
	res.Events = c.Engine.Events()
	if m := c.Nodes[0].Mem; m.Functional() {
		for i := range srcs {
			if !bytes.Equal(m.Bytes(srcs[i], int(size)), c.Nodes[1].Mem.Bytes(dsts[i], int(size))) {
				return res, fmt.Errorf("gpurdma multi-QP: QP %d's remote buffer differs", i)
			}
		}
		res.Verified = true
	}
	return res, nil
}

// tbBarrier is __syncthreads among the warps of one thread block, which
// the model runs as separate work-groups.
type tbBarrier struct {
	n, arrived int
	gen        int
	sig        sim.Signal
}

func (b *tbBarrier) wait(wg *gpu.WG) {
	gen := b.gen
	b.arrived++
	if b.arrived == b.n {
		b.arrived = 0
		b.gen++
		b.sig.Notify()
	} else {
		wg.WaitUntil(&b.sig, "__syncthreads", func() bool { return b.gen != gen })
	}
	wg.Scalar(4)
}

// warpMultiQP is QP per warp: each warp's single thread fills its QP
// (pipelined, one doorbell per batch when batched), then thread 0 polls
// the shared CQ until every QP drained, and the block goes round again.
func warpMultiQP(qps []*verbs.QP, cq *verbs.CQ, ws []verbs.WQE, msgs int, errp *error) func(wg *gpu.WG) {
	bar := &tbBarrier{n: len(qps)}
	return func(wg *gpu.WG) {
		qp, w := qps[wg.ID], ws[wg.ID]
		for sent := 0; sent < msgs; {
			batch := min(msgs-sent, qp.Depth())
			for range batch {
				if err := qp.Post(wg, w); err != nil {
					*errp = err
					return
				}
				if !qp.Node().Spec().BatchDoorbell {
					qp.Ring(wg)
				}
			}
			qp.Ring(wg)
			sent += batch
			bar.wait(wg)
			if wg.ID == 0 {
				for _, q := range qps {
					if e, ok := cq.WaitQP(wg, q, 0); !ok && *errp == nil {
						*errp = fmt.Errorf("gpurdma multi-QP: completion %v", e.Status)
					}
				}
			}
			bar.wait(wg)
		}
	}
}

// blockMultiQP is QP per threadblock: each block posts a warp's worth of
// WQEs collaboratively and rings once, and polls the shared CQ
// collaboratively whenever its QP has no room for the next batch.
func blockMultiQP(qps []*verbs.QP, ws []verbs.WQE, msgs, width int, errp *error) func(wg *gpu.WG) {
	return func(wg *gpu.WG) {
		qp, w := qps[wg.ID], ws[wg.ID]
		sc := qp.NewScanner(width)
		batch := make([]verbs.WQE, 0, width)
		for sent := 0; sent < msgs; {
			k := min(width, msgs-sent, qp.Depth())
			if room := uint64(qp.Depth() - k); qp.Outstanding() > room {
				if e, ok := sc.Wait(wg, room); !ok && *errp == nil {
					*errp = fmt.Errorf("gpurdma multi-QP: completion %v", e.Status)
				}
			}
			batch = batch[:0]
			for range k {
				batch = append(batch, w)
			}
			if err := qp.PostBlock(wg, batch); err != nil {
				*errp = err
				return
			}
			qp.Ring(wg)
			sent += k
		}
		if e, ok := sc.Wait(wg, 0); !ok && *errp == nil {
			*errp = fmt.Errorf("gpurdma multi-QP: completion %v", e.Status)
		}
	}
}

// cpuMultiQP is the CPU-driven comparison: one host thread posts a
// warp's worth of WQEs to each QP in turn, rings, and polls the shared CQ
// whenever a QP has no room.
func cpuMultiQP(nd *strategy.Node, qps []*verbs.QP, cq *verbs.CQ, ws []verbs.WQE, msgs int) error {
	const burst = 32
	sent := make([]int, len(qps))
	for left := len(qps) * msgs; left > 0; {
		for i, qp := range qps {
			k := min(burst, msgs-sent[i], qp.Depth())
			if k == 0 {
				continue
			}
			for qp.Outstanding()+uint64(k) > uint64(qp.Depth()) {
				if e := cq.HostPoll(nd.Host, nd.SW); verbs.Failed(e) {
					return fmt.Errorf("gpurdma multi-QP (cpu): completion %v", e.Status)
				}
			}
			for range k {
				if err := qp.HostPost(nd.Host, nd.SW, ws[i]); err != nil {
					return err
				}
			}
			qp.HostRing(nd.Host)
			sent[i] += k
			left -= k
		}
	}
	for cq.Consumed() < uint64(len(qps)*msgs) {
		if e := cq.HostPoll(nd.Host, nd.SW); verbs.Failed(e) {
			return fmt.Errorf("gpurdma multi-QP (cpu): completion %v", e.Status)
		}
	}
	return nil
}
