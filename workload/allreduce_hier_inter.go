package workload

import (
	"fmt"

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
// its depth in full message times.

// Inter-node algorithms of allreduce_hier.
const (
	// HierRing is the per-rail ring (the default: the algorithm the
	// workload had first, and NCCL's bandwidth-optimal one).
	HierRing = "ring"
	// HierTree is the per-rail double binary tree.
	HierTree = "tree"
)

// checkInter reports an unknown inter-node algorithm ("" is the ring).
func checkInter(inter string) error {
	switch inter {
	case "", HierRing, HierTree:
		return nil
	}
	return fmt.Errorf("allreduce_hier inter = %q: must be %s or %s", inter, HierRing, HierTree)
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
	if inter == HierTree {
		return treeSlots
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
	if inter == HierTree {
		return treeSchedule(vec, clo, chi, node, N)
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
