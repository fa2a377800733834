package spin

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/gpunetsim/gpunetsim/datatype"
	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/hw/pulp"
	hwspin "github.com/gpunetsim/gpunetsim/hw/spin"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// StaticResult is one static run on a node's sPIN side (the dissertation
// §11.10–11.11): data preloaded in NIC memory, statically assigned to the
// HPUs, no network.
type StaticResult struct {
	Bytes    int            // bytes delivered to host memory
	HPUTimes []sim.Duration // per HPU: start to the end of its last handler
	Slowest  sim.Duration   // the slowest HPU's total time
	Drained  sim.Duration   // start to the last DMA's source read done (pulp: out of the output port into the PCIe FIFO)
	Visible  sim.Duration   // start to the last write visible in host memory
	IPC      []float64      // per handler: charged cycles over elapsed cycles
	Stats    hwspin.Stats
	Accel    *pulp.Stats // the PULP accelerator's counters (hpu_model = pulp)
	Plan     *Plan       // the kernel's plan (nil for the bandwidth test)
	Verified bool        // host memory holds what it must (functional runs)
}

// MedianIPC is the median of the handlers' IPC.
func (r StaticResult) MedianIPC() float64 {
	if len(r.IPC) == 0 {
		return 0
	}
	v := slices.Clone(r.IPC)
	slices.Sort(v)
	if n := len(v); n%2 == 0 {
		return (v[n/2-1] + v[n/2]) / 2
	}
	return v[len(v)/2]
}

// Bandwidth is the accelerator bandwidth test of the SC'19 paper on
// node 0 of c: total bytes in blocks of block bytes, preloaded in NIC
// memory (L2 on pulp), block i assigned to HPU i mod P. Each block moves
// to its HPU's local memory (pulp: the cluster DMA, L2 → L1), then the
// HPU's handler DMAs it to host memory (L1 → output port → PCIe FIFO).
func Bandwidth(c *cluster.Cluster, block, total int) (StaticResult, error) {
	if block < 1 || total < block {
		return StaticResult{}, fmt.Errorf("bandwidth test: block = %d B, total = %d B: need 1 ≤ block ≤ total", block, total)
	}
	nd := c.Nodes[0]
	sp := hwspin.New(nd.NIC, c.Spec.Spin)
	nblk := total / block
	total = nblk * block
	dst := nd.Mem.Alloc(mem.Host, uint64(total), "pulp.bw.dst")
	var src []byte
	if nd.Mem.Functional() {
		src = staticPattern(total)
	}
	ctx, err := sp.NewContext(hwspin.Handlers{Payload: func(h *hwspin.HandlerCtx) hwspin.Return {
		h.DMAPayload(0, h.Packet.Len, dst+mem.Addr(h.Packet.Offset), hwspin.NoEvent)
		return hwspin.Success
	}}, hwspin.Policy{}, 0)
	if err != nil {
		return StaticResult{}, err
	}
	lists := make([][]nic.CtxPacket, min(sp.Spec().HPUs, nblk))
	for i := range nblk {
		off := i * block
		pk := nic.CtxPacket{Index: i, Offset: uint64(off), Len: uint64(block)}
		if src != nil {
			pk.Data = src[off : off+block]
		}
		lists[i%len(lists)] = append(lists[i%len(lists)], pk)
	}
	res, err := runStatic(c, sp, ctx, lists)
	if err != nil {
		return res, err
	}
	res.Bytes = total
	if got := nd.Mem.Bytes(dst, total); got != nil {
		res.Verified = bytes.Equal(got, src)
	}
	return res, nil
}

// Kernel is the RW-CP microkernel of the SC'19 paper on node 0 of c:
// the packed stream of count elements of t, in packets of the link payload
// k preloaded in NIC memory (L2 on pulp), runs of `run` consecutive packets
// assigned statically, run j to HPU j mod P (blocked round-robin without a
// scheduler), with one checkpoint per run (Δr = run·k) that the run's HPU
// brings into its local memory (pulp: its cluster's L1) and progresses in
// place. The receive buffer must equal datatype.Unpack of the stream.
func Kernel(c *cluster.Cluster, t *datatype.Committed, count, run int, costs Costs) (StaticResult, error) {
	nd := c.Nodes[0]
	k := int(nd.NIC.MaxPayload())
	if run < 1 {
		return StaticResult{}, fmt.Errorf("kernel: %d packets per run: must be ≥ 1", run)
	}
	costs.Interval = unit.Bytes(run * k)
	env := Env{Spin: c.Spec.Spin, Costs: costs, K: k, TPkt: c.Fabric.Serialization(c.Spec.Link.Payload)}
	plan, err := NewPlan(RWCP, t, count, env)
	if err != nil {
		return StaticResult{}, fmt.Errorf("kernel: %w", err)
	}
	sp := hwspin.New(nd.NIC, c.Spec.Spin)
	span := plan.Hi - plan.Lo
	buf := nd.Mem.Alloc(mem.Host, uint64(span), "pulp.kernel.recv")
	functional := nd.Mem.Functional()
	var stream, want []byte
	if functional {
		stream = staticPattern(plan.Size)
		want = bytes.Repeat([]byte{0xA5}, span)
		nd.Mem.Write(buf, want)
	}
	var bd Breakdown
	st := newRecvState(plan, costs, buf-mem.Addr(plan.Lo), sp.Spec().HPUs, &bd)
	hs, _ := st.handlers(sp.Spec().HPUs)
	ctx, err := sp.NewContext(hwspin.Handlers{Payload: hs.Payload}, hwspin.Policy{}, plan.Mem.Total())
	if err != nil {
		return StaticResult{}, fmt.Errorf("kernel: %w: %w", ErrNICMemory, err)
	}
	npkt := (plan.Size + k - 1) / k
	lists := make([][]nic.CtxPacket, min(sp.Spec().HPUs, (npkt+run-1)/run))
	for i := range npkt {
		off := i * k
		pk := nic.CtxPacket{Index: i, Offset: uint64(off), Len: uint64(min(k, plan.Size-off)), Last: i == npkt-1}
		if stream != nil {
			pk.Data = stream[off : off+int(pk.Len)]
		}
		h := (i / run) % len(lists)
		lists[h] = append(lists[h], pk)
	}
	res, err := runStatic(c, sp, ctx, lists)
	if err != nil {
		return res, err
	}
	res.Bytes, res.Plan = plan.Size, plan
	if got := nd.Mem.Bytes(buf, span); functional && got != nil {
		if _, err := t.Unpack(want, -plan.Lo, stream, count); err != nil {
			return res, err
		}
		res.Verified = bytes.Equal(got, want)
	}
	return res, nil
}

// runStatic runs the static lists to the end and collects the result.
func runStatic(c *cluster.Cluster, sp *hwspin.NIC, ctx *hwspin.Context, lists [][]nic.CtxPacket) (StaticResult, error) {
	var res StaticResult
	st, err := sp.RunStatic(ctx, lists)
	if err != nil {
		return res, err
	}
	if err := c.Engine.Run(); err != nil {
		return res, err
	}
	if !st.Ended {
		return res, fmt.Errorf("static run: the handlers did not finish")
	}
	res.HPUTimes = st.HPUTimes()
	res.Slowest = slices.Max(res.HPUTimes)
	res.Visible = st.LastVisible() - st.Start()
	res.Drained = st.LastRead() - st.Start()
	for _, r := range st.Runs {
		res.IPC = append(res.IPC, r.IPC())
	}
	res.Stats = sp.Stats()
	if a := sp.Accel(); a != nil {
		as := a.Stats()
		res.Accel = &as
	}
	return res, nil
}

// staticPattern is the data of a static run: bytes that differ between
// neighbours and across 256-byte periods.
func staticPattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*131 + i>>9 + 7)
	}
	return b
}
