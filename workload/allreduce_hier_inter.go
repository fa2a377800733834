package workload

import (
	"fmt"
	"math/bits"

	"github.com/gpunetsim/gpunetsim/hw/mem"
)

// The inter-node phase of the hierarchical allreduce, per rail, as one
// schedule of sends and receives that every implementation runs (MPI on
// the host, device shmem, GDS's pre-posted puts, GPU-TN's triggered puts).
//
// The ring is the bandwidth-optimal ring allreduce: 2(N−1) steps on every
// rank, each a piece of 1/N of the chunk, so a rail moves 2N(N−1) messages
// and the time grows with N. The tree is NCCL's double binary tree (NCCL's
// ncclGetDtree): two binary trees over the rail's nodes, the second the
// mirror of the first (or the first shifted by one when N is odd), so that
// a node is interior in at most one of them; each carries half the chunk,
// reduced up to its root and broadcast back down. A rail moves 4(N−1)
// messages and the time grows with log2 N. Unlike NCCL, a tree edge moves
// its half in one message (no pipelining in slices), so a deep tree pays
// its depth in full message times. The rhd is Rabenseifner's recursive
// halving-doubling (the allreduce workload's algorithm rhd) over the rail:
// with p the largest power of two ≤ N, log2 p halving steps (send the half
// of the current part the partner keeps, add the half it sends) and log2 p
// doubling steps (exchange the parts each holds reduced), after the extra
// N − p nodes fold their chunk into a neighbour and before it hands the
// result back: 2 log2 p messages per node, halving in size, so a rail moves
// about 2 N log2 N messages but each node only about twice its chunk.

// Inter-node algorithms of allreduce_hier.
const (
	// HierRing is the per-rail ring (the default: the algorithm the
	// workload had first, and NCCL's bandwidth-optimal one).
	HierRing = "ring"
	// HierTree is the per-rail double binary tree.
	HierTree = "tree"
	// HierRHD is the per-rail recursive halving-doubling.
	HierRHD = "rhd"
)

// checkInter reports an unknown inter-node algorithm ("" is the ring).
func checkInter(inter string) error {
	switch inter {
	case "", HierRing, HierTree, HierRHD:
		return nil
	}
	return fmt.Errorf("allreduce_hier inter = %q: must be %s, %s or %s", inter, HierRing, HierTree, HierRHD)
}

// interStep is one send or receive of a rank's inter-node schedule; nodes
// and slots count within the rail and within the phase's slot block.
type interStep struct {
	send  bool
	slot  int      // send: its staging slot; receive: its receive slot
	rslot int      // send: the receiver's slot
	peer  int      // send: the receiving node (receive: the sending node)
	at    mem.Addr // send: the data; receive: where it goes in the vector
	nb    uint64
	add   bool // receive: add into the vector (else copy)
	bcast bool // tree: a step of the broadcast (the reduction's steps come first)
}

// interSlots is the number of slots the inter-node phase uses on N nodes:
// one per ring step, or the tree's block (below).
func interSlots(inter string, N int) int {
	if N <= 1 {
		return 0
	}
	switch inter {
	case HierTree:
		return treeSlots
	case HierRHD:
		return rhdSlots(N)
	}
	return 2 * (N - 1)
}

// The tree's slot block: receive slots 2t+j for child j's half in tree t
// and 4+t for the parent's broadcast in tree t; staging slots 2t+j for the
// send up (j: the sender's position among its parent's children, so the
// receive slot has the same index) and 6+2t+j for the broadcast to child j.
const treeSlots = 10

// interSchedule is the inter-node schedule of the rank at node of a rail
// of N nodes on the chunk [clo, chi) of the float32 vector at vec.
func interSchedule(inter string, vec mem.Addr, clo, chi, node, N int) []interStep {
	if N <= 1 {
		return nil
	}
	switch inter {
	case HierTree:
		return treeSchedule(vec, clo, chi, node, N)
	case HierRHD:
		return rhdInterSchedule(vec, clo, chi, node, N)
	}
	right, left := (node+1)%N, (node+N-1)%N
	steps := make([]interStep, 0, 4*(N-1))
	for st := range 2 * (N - 1) {
		sa, sn, ra, rn := hierRingStep(vec, clo, chi, node, N, st)
		steps = append(steps, interStep{send: true, slot: st, rslot: st, peer: right, at: sa, nb: sn},
			interStep{slot: st, peer: left, at: ra, nb: rn, add: st < N-1})
	}
	return steps
}

// treeSchedule is the double binary tree's schedule of node. The
// reduction handles first a tree in which the node is a leaf (its send up
// waits for nothing), the broadcast first a tree in which it is interior
// (its children wait for it); a node interior in both takes tree 0 first.
// Either order is free of deadlock when every rank waits in its
// schedule's order: tree 0's steps never wait for tree 1's.
func treeSchedule(vec mem.Addr, clo, chi, node, N int) []interStep {
	var up [2]int
	var down [2][2]int
	for t := range 2 {
		up[t], down[t] = dbtree(N, node, t)
	}
	interior := func(t int) bool { return down[t][0] >= 0 || down[t][1] >= 0 }
	half := func(t int) (mem.Addr, uint64) {
		lo, hi := span(chi-clo, t, 2)
		return vec + mem.Addr((clo+lo)*4), uint64(hi-lo) * 4
	}
	var steps []interStep
	order := [2]int{0, 1}
	if interior(0) && !interior(1) {
		order = [2]int{1, 0}
	}
	for _, t := range order { // reduce
		at, nb := half(t)
		for j, c := range down[t] {
			if c >= 0 {
				steps = append(steps, interStep{slot: 2*t + j, peer: c, at: at, nb: nb, add: true})
			}
		}
		if up[t] >= 0 {
			j := childIndex(N, up[t], node, t)
			steps = append(steps, interStep{send: true, slot: 2*t + j, rslot: 2*t + j, peer: up[t], at: at, nb: nb})
		}
	}
	order = [2]int{0, 1}
	if !interior(0) && interior(1) {
		order = [2]int{1, 0}
	}
	for _, t := range order { // broadcast
		at, nb := half(t)
		if up[t] >= 0 {
			steps = append(steps, interStep{slot: 4 + t, peer: up[t], at: at, nb: nb, bcast: true})
		}
		for j, c := range down[t] {
			if c >= 0 {
				steps = append(steps, interStep{send: true, slot: 6 + 2*t + j, rslot: 4 + t, peer: c, at: at, nb: nb, bcast: true})
			}
		}
	}
	return steps
}

// childIndex is child's position (0 or 1) among parent's children in
// tree t.
func childIndex(N, parent, child, t int) int {
	_, d := dbtree(N, parent, t)
	if d[1] == child {
		return 1
	}
	return 0
}

// btree is rank's parent and children in NCCL's binary tree over n ranks
// (ncclGetBtree): rooted at 0, which has one child; rank r's parent
// clears r's lowest set bit and sets the next one up (or only clears it
// when that leaves the range). -1 is none.
func btree(n, r int) (up int, down [2]int) {
	bit := 1
	for ; bit < n; bit <<= 1 {
		if bit&r != 0 {
			break
		}
	}
	if r == 0 {
		up, down = -1, [2]int{-1, -1}
		if n > 1 {
			down[1] = bit >> 1
		}
		return up, down
	}
	up = (r ^ bit) | (bit << 1)
	if up >= n {
		up = r ^ bit
	}
	down = [2]int{-1, -1}
	low := bit >> 1
	if low > 0 {
		down[0] = r - low
	}
	for low > 0 && r+low >= n {
		low >>= 1
	}
	if low > 0 {
		down[1] = r + low
	}
	return up, down
}

// dbtree is rank's parent and children in tree t of NCCL's double binary
// tree over n ranks (ncclGetDtree): tree 0 is btree, tree 1 its mirror
// (rank n−1−r) for even n and its shift by one for odd n.
func dbtree(n, r, t int) (up int, down [2]int) {
	if t == 0 {
		return btree(n, r)
	}
	to, from := func(x int) int { return n - 1 - x }, func(x int) int { return n - 1 - x }
	if n%2 == 1 {
		to, from = func(x int) int { return (x - 1 + n) % n }, func(x int) int { return (x + 1) % n }
	}
	u, d := btree(n, to(r))
	m := func(x int) int {
		if x < 0 {
			return -1
		}
		return from(x)
	}
	return m(u), [2]int{m(d[0]), m(d[1])}
}

// The rhd's slot block on N nodes (p the largest power of two ≤ N, m =
// log2 p): slot 0 the chunk an extra node folds in, 1+j halving step j's
// part (p/2^(j+1) blocks), 1+m+j doubling step j's part (2^j blocks),
// 1+2m the result handed back to the extra node. A send's staging slot
// has the receive slot's index.
func rhdSlots(N int) int { return 2*rhdLog(N) + 2 }

// rhdLog is log2 p, p the largest power of two ≤ N.
func rhdLog(N int) int { return bits.Len(uint(N)) - 1 }

// rhdSlotBlocks is the number of the p blocks slot k of the rhd's block
// holds at most (p for the folds).
func rhdSlotBlocks(N, k int) int {
	m := rhdLog(N)
	p := 1 << m
	switch {
	case k == 0 || k == 2*m+1:
		return p
	case k <= m:
		return p >> k
	}
	return 1 << (k - 1 - m)
}

// rhdSlotElems bounds the elements slot k carries for a chunk of at most
// elems elements: d of p blocks of the chunk span at most ⌈elems·d/p⌉
// elements.
func rhdSlotElems(elems, N, k int) int {
	d, p := rhdSlotBlocks(N, k), 1<<rhdLog(N)
	return (elems*d + p - 1) / p
}

// rhdVirtual maps node to its virtual rank among the p that run the
// power-of-two algorithm, or −1 for an extra node (an even node below
// 2(N − p), which hands its chunk to the odd node above it), as the
// allreduce workload's rhd does.
func rhdVirtual(node, N int) int {
	r := N - 1<<rhdLog(N)
	switch {
	case node >= 2*r:
		return node - r
	case node%2 == 1:
		return node / 2
	}
	return -1
}

// rhdReal maps virtual rank v back to its node.
func rhdReal(v, N int) int {
	if r := N - 1<<rhdLog(N); v < r {
		return 2*v + 1
	}
	return v + N - 1<<rhdLog(N)
}

// rhdPeers is every node node sends to or receives from in the rhd.
func rhdPeers(node, N int) []int {
	v := rhdVirtual(node, N)
	if v < 0 {
		return []int{node + 1}
	}
	var out []int
	if node < 2*(N-1<<rhdLog(N)) {
		out = append(out, node-1)
	}
	for d := 1; d < 1<<rhdLog(N); d <<= 1 {
		out = append(out, rhdReal(v^d, N))
	}
	return out
}

// rhdInterSchedule is node's rhd schedule on the chunk [clo, chi) of the
// vector at vec (the allreduce workload's rhdSchedule as one-sided steps:
// every receive is into a slot of its own, added or copied into the
// vector once its flag says it landed).
func rhdInterSchedule(vec mem.Addr, clo, chi, node, N int) []interStep {
	m := rhdLog(N)
	p := 1 << m
	elems := chi - clo
	blocks := func(lo, cnt int) (mem.Addr, uint64) {
		a := int(int64(elems) * int64(lo) / int64(p))
		b := int(int64(elems) * int64(lo+cnt) / int64(p))
		return vec + mem.Addr((clo+a)*4), uint64(b-a) * 4
	}
	whole := uint64(elems) * 4
	at := vec + mem.Addr(clo*4)
	v := rhdVirtual(node, N)
	if v < 0 { // extra node: hand the chunk over, take the result back
		return []interStep{
			{send: true, slot: 0, rslot: 0, peer: node + 1, at: at, nb: whole},
			{slot: 2*m + 1, peer: node + 1, at: at, nb: whole},
		}
	}
	folds := node < 2*(N-p)
	steps := make([]interStep, 0, 4*m+2)
	if folds {
		steps = append(steps, interStep{slot: 0, peer: node - 1, at: at, nb: whole, add: true})
	}
	lo := 0
	for j := range m { // recursive halving: p/2, p/4, …, 1 blocks
		d := p >> (j + 1)
		keep, give := lo, lo+d
		if v&d != 0 {
			keep, give = lo+d, lo
		}
		peer := rhdReal(v^d, N)
		sa, sn := blocks(give, d)
		ka, kn := blocks(keep, d)
		steps = append(steps, interStep{send: true, slot: 1 + j, rslot: 1 + j, peer: peer, at: sa, nb: sn},
			interStep{slot: 1 + j, peer: peer, at: ka, nb: kn, add: true})
		lo = keep
	}
	for j := range m { // recursive doubling: 1, 2, …, p/2 blocks
		d := 1 << j
		other := lo ^ d
		peer := rhdReal(v^d, N)
		oa, on := blocks(lo, d)
		pa, pn := blocks(other, d)
		steps = append(steps, interStep{send: true, slot: 1 + m + j, rslot: 1 + m + j, peer: peer, at: oa, nb: on},
			interStep{slot: 1 + m + j, peer: peer, at: pa, nb: pn})
		lo = min(lo, other)
	}
	if folds {
		steps = append(steps, interStep{send: true, slot: 2*m + 1, rslot: 2*m + 1, peer: node - 1, at: at, nb: whole})
	}
	return steps
}
