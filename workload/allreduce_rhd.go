package workload

import (
	"errors"
	"fmt"
	"math/bits"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/nbc"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
)

// Allreduce algorithms (Allreduce.Algorithm).
const (
	// AlgRing is the ring reduce-scatter + allgather of the dissertation:
	// 2(n−1) steps of one chunk each, every strategy.
	AlgRing = "ring"
	// AlgRHD is recursive halving (reduce-scatter) + recursive doubling
	// (allgather), Rabenseifner's algorithm: 2·log2(p) steps. The
	// two-sided implementations (host and kernel-boundary) run it as a
	// libNBC schedule over MPI; the one-sided ones (GDS, GPU-TN, device
	// shmem, device verbs) as the hierarchical allreduce's one-sided rhd
	// schedule on one GPU per node (runRHDOneSided); remote tasks (XTQ)
	// as the same schedule over the remote-task transport, the halving's
	// messages as tasks, arrivals counted per step (runRHDTasks).
	AlgRHD = "rhd"
)

// rhdRuns reports whether implementation impl runs the RHD schedule: it is
// a libNBC schedule over MPI, which only the two-sided implementations
// execute as such (the one-sided ones map ring steps to pre-registered
// puts and flags laid out for the ring).
func rhdRuns(impl string) bool { return impl == "host" || impl == "kernel-boundary" }

// rhdTasks reports whether implementation impl runs algorithm rhd over
// remote tasks (runRHDTasks).
func rhdTasks(impl string) bool { return impl == "remote-tasks" }

// rhdOneSided reports whether implementation impl runs algorithm rhd as
// the hierarchical allreduce's one-sided schedule (runRHDOneSided).
func rhdOneSided(impl string) bool {
	switch impl {
	case "stream-triggered", "triggered", "device-shmem", "device-verbs":
		return true
	}
	return false
}

// RHDSupported reports whether strategy s can run the allreduce with
// algorithm rhd.
func RHDSupported(s strategy.Strategy) bool {
	im, _, err := AllreduceDef().implFor(s)
	return err == nil && (rhdRuns(im.Name) || rhdOneSided(im.Name) || rhdTasks(im.Name))
}

// RHDOneSided reports whether strategy s runs algorithm rhd as the
// one-sided schedule (runRHDOneSided) rather than over MPI.
func RHDOneSided(s strategy.Strategy) bool {
	im, _, err := AllreduceDef().implFor(s)
	return err == nil && rhdOneSided(im.Name)
}

// RHDRefusal is why strategy s does not run the allreduce with algorithm
// rhd, one line; "" when it does.
func RHDRefusal(s strategy.Strategy) string {
	im, _, err := AllreduceDef().implFor(s)
	if err != nil {
		return err.Error()
	}
	if rhdRuns(im.Name) || rhdOneSided(im.Name) || rhdTasks(im.Name) {
		return ""
	}
	return fmt.Sprintf("allreduce.algorithm = rhd: %s's %s allreduce has no rhd form; use allreduce.algorithm=ring for %s", s, im.Name, s)
}

// AllreduceAlgPartitionable reports whether strategy s runs the allreduce
// with algorithm alg on a partitioned cluster: the one-sided rhd runs on
// one engine (the hierarchical allreduce's start barrier and phase times
// are shared by every node).
func AllreduceAlgPartitionable(s strategy.Strategy, alg string) bool {
	if !AllreducePartitionable(s) {
		return false
	}
	im, _, _ := AllreduceDef().implFor(s)
	return alg != AlgRHD || rhdRuns(im.Name) || rhdTasks(im.Name)
}

// rhdLayout places the vector (elems float32, padded to 8 bytes) and a
// receive area of the same size in one region per node. The vector is cut
// into p blocks, p the largest power of two ≤ n; block b holds elements
// [elems·b/p, elems·(b+1)/p).
type rhdLayout struct {
	n, p      int
	elems     int
	vecBytes  uint64 // data bytes, padded to 8
	totalSize uint64
}

func newRHDLayout(elems, n int) *rhdLayout {
	p := 1 << (bits.Len(uint(n)) - 1)
	vb := pad8(uint64(elems) * 4)
	return &rhdLayout{n: n, p: p, elems: elems, vecBytes: vb, totalSize: 2 * vb}
}

// blockElem is the first element of block b (b = p is the end).
func (l *rhdLayout) blockElem(b int) int { return int(int64(l.elems) * int64(b) / int64(l.p)) }

// blocks returns the byte offset and length of blocks [lo, lo+cnt).
func (l *rhdLayout) blocks(lo, cnt int) (off, nb uint64) {
	a, b := l.blockElem(lo), l.blockElem(lo+cnt)
	return uint64(a) * 4, uint64(b-a) * 4
}

// rest is the number of ranks beyond the power of two: ranks 0..2·rest−1
// pair up (the even one hands its vector to the odd one and takes the
// result back at the end); the odd ones and ranks ≥ 2·rest run the
// power-of-two algorithm as virtual ranks 0..p−1.
func (l *rhdLayout) rest() int { return l.n - l.p }

// real maps virtual rank v to its node.
func (l *rhdLayout) real(v int) int {
	if r := l.rest(); v < r {
		return 2*v + 1
	}
	return v + l.rest()
}

// halvingStep is step j of recursive halving for virtual rank v whose
// blocks start at lo: the d blocks it keeps and the d it gives (first
// indices), and its partner's real rank.
func (l *rhdLayout) halvingStep(v, lo, j int) (keep, give, d, peer int) {
	d = l.p >> (j + 1)
	keep, give = lo, lo+d
	if v&d != 0 {
		keep, give = lo+d, lo
	}
	return keep, give, d, l.real(v ^ d)
}

// doublingStep is step j of recursive doubling for virtual rank v that
// holds the d blocks from lo: the partner's blocks (first index) and its
// real rank.
func (l *rhdLayout) doublingStep(v, lo, j int) (other, d, peer int) {
	d = 1 << j
	other = lo ^ d
	return other, d, l.real(v ^ d)
}

// rhdSchedule returns node i's schedule: tag 0 the fold-in of the extra
// ranks, tags 1..m recursive halving (reduce-scatter: send the half the
// partner keeps, receive and reduce the half this node keeps), tags
// m+1..2m recursive doubling (allgather in place), tag 2m+1 the result
// handed back to the extra ranks. m = log2(p).
func rhdSchedule(l *rhdLayout, base mem.Addr, i int) nbc.Schedule {
	m := bits.Len(uint(l.p)) - 1
	data, recv := base, base+mem.Addr(l.vecBytes)
	whole := uint64(l.elems) * 4
	r := l.rest()
	if i < 2*r && i%2 == 0 { // extra rank: hand the vector over, take the result back
		return nbc.Schedule{
			{{Kind: nbc.Send, Peer: i + 1, Step: 0, Addr: data, Len: whole}},
			{{Kind: nbc.Recv, Peer: i + 1, Step: 2*m + 1, Addr: data, Len: whole}},
		}
	}
	var sched nbc.Schedule
	v := i - r
	if i < 2*r {
		v = i / 2
		sched = append(sched, nbc.Round{
			{Kind: nbc.Recv, Peer: i - 1, Step: 0, Addr: recv, Len: whole},
			{Kind: nbc.Reduce, Step: 0, Addr: data, Src: recv, Len: whole},
		})
	}
	lo := 0
	for j := range m { // recursive halving: distance p/2, p/4, …, 1 blocks
		keep, give, d, peer := l.halvingStep(v, lo, j)
		sOff, sLen := l.blocks(give, d)
		kOff, kLen := l.blocks(keep, d)
		sched = append(sched, nbc.Round{
			{Kind: nbc.Send, Peer: peer, Chunk: give, Step: 1 + j, Addr: data + mem.Addr(sOff), Len: sLen},
			{Kind: nbc.Recv, Peer: peer, Chunk: keep, Step: 1 + j, Addr: recv + mem.Addr(kOff), Len: kLen},
			{Kind: nbc.Reduce, Chunk: keep, Step: 1 + j, Addr: data + mem.Addr(kOff), Src: recv + mem.Addr(kOff), Len: kLen},
		})
		lo = keep
	}
	for j := range m { // recursive doubling: distance 1, 2, …, p/2 blocks
		other, d, peer := l.doublingStep(v, lo, j)
		oOff, oLen := l.blocks(lo, d)
		pOff, pLen := l.blocks(other, d)
		sched = append(sched, nbc.Round{
			{Kind: nbc.Send, Peer: peer, Chunk: lo, Step: 1 + m + j, Addr: data + mem.Addr(oOff), Len: oLen},
			{Kind: nbc.Recv, Peer: peer, Chunk: other, Step: 1 + m + j, Addr: data + mem.Addr(pOff), Len: pLen},
		})
		lo = min(lo, other)
	}
	if i < 2*r {
		sched = append(sched, nbc.Round{{Kind: nbc.Send, Peer: i - 1, Step: 2*m + 1, Addr: data, Len: whole}})
	}
	return sched
}

// fill writes node r's input into the vector.
func (l *rhdLayout) fill(m *mem.Memory, base mem.Addr, r int) {
	if b := m.Bytes(base, l.elems*4); b != nil {
		newPattern(func(j int) float32 { return inputValue(r, j) }).copyTo(b, 0)
	}
}

// verify compares the vector with the serial reference byte for byte.
func (l *rhdLayout) verify(m *mem.Memory, base mem.Addr, ref *pattern) error {
	got := m.Bytes(base, l.elems*4)
	if j, ok := ref.equal(got, 0); !ok {
		return fmt.Errorf("element %d = %v, want %v", j, f32(got)[j], ref.at(j))
	}
	return nil
}

// runRHD is Run for algorithm rhd: the schedule runs over MPI like the
// ring's (twoSided), reductions on the host or in a kernel per step.
func (a Allreduce) runRHD(c *cluster.Cluster, s strategy.Strategy, cfg strategy.Config, impl string) (AllreduceResult, error) {
	n := len(c.Nodes)
	if rhdOneSided(impl) {
		return a.runRHDOneSided(c, s, cfg)
	}
	if rhdTasks(impl) {
		return a.runRHDTasks(c, s, cfg)
	}
	if !rhdRuns(impl) {
		return AllreduceResult{}, errors.New(RHDRefusal(s))
	}
	lay := newRHDLayout(int(a.Size/4), n)
	return runRHDNodes(c, s, cfg, lay, lay.totalSize, func(nd *strategy.Node, base mem.Addr) error {
		a.copyIn(nd, base) // the input into the output buffer, as the ring does
		return a.wait(nd, nbc.Start(nbc.OverMPI(nd.MPI), a.localReduce(nd), rhdSchedule(lay, base, nd.Rank)))
	})
}

// runRHDNodes runs body on every node over a buffer of size bytes filled
// with the node's input by lay, and checks every node's result exactly
// when the memory is functional: what the rhd forms (over MPI, over remote
// tasks) share around their schedules.
func runRHDNodes(c *cluster.Cluster, s strategy.Strategy, cfg strategy.Config, lay *rhdLayout, size uint64,
	body func(nd *strategy.Node, base mem.Addr) error) (AllreduceResult, error) {
	n := len(c.Nodes)
	res := AllreduceResult{Finish: make([]sim.Time, n), Slices: 1}
	bases := make([]mem.Addr, n)
	g := strategy.Spawn(c, s, cfg, func(nd *strategy.Node) error {
		base := nd.Mem.Alloc(nd.Pool, size, "allreduce")
		bases[nd.Rank] = base
		lay.fill(nd.Mem, base, nd.Rank)
		err := body(nd, base)
		res.Finish[nd.Rank] = nd.Host.Now()
		return err
	})
	if err := runTasks(c, g); err != nil {
		return res, err
	}
	for _, t := range res.Finish {
		res.Time = max(res.Time, t)
	}
	if c.Nodes[0].Mem.Functional() {
		ref := (&ringLayout{n: n}).reference()
		for i, nd := range c.Nodes {
			if err := lay.verify(nd.Mem, bases[i], ref); err != nil {
				return res, fmt.Errorf("%s allreduce (rhd) on %d nodes: node %d: %w", s, n, i, err)
			}
		}
		res.Verified = true
	}
	return res, nil
}

// runRHDOneSided is Run for algorithm rhd on the one-sided implementations
// (GDS, GPU-TN, device shmem, device verbs): the hierarchical allreduce
// with one GPU per node (no intra-node phases, whatever node.gpus) and the
// rhd across the nodes, so every node runs the same recursive halving and
// doubling as the two-sided rhd over the same blocks, each message a put
// of its part with a trailing flag into a receive slot of its own, staged
// and added or copied by the strategy's own agents: GDS's pre-posted puts
// rung by the stream between staging and reduction kernels, GPU-TN's
// triggered puts fired by a persistent kernel's stores, the device shmem
// runtime's puts and waits, device verbs' RDMA writes. Its kernels run
// allreduce.wgs work-groups (1 when 0), each on a slice of the vector with
// slots of its own. Inputs and the check are the hierarchical
// allreduce's (exact sums); the time runs from every node's release by a
// zero-cost start barrier.
func (a Allreduce) runRHDOneSided(c *cluster.Cluster, s strategy.Strategy, cfg strategy.Config) (AllreduceResult, error) {
	w := max(1, a.WGs)
	h := AllreduceHier{Size: a.Size, WGSize: a.WGSize, CommWGs: w, Inter: HierRHD, flat: true}
	r, err := h.Run(c, s, cfg)
	return AllreduceResult{Time: r.Time, Finish: r.Finish, Verified: r.Verified, Slices: w}, err
}
