package workload

import (
	"slices"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/model/mpi"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/unit"
)

func runHier(t *testing.T, hw cluster.Spec, ranks int, s strategy.Strategy, size unit.Bytes, functional bool) AllreduceHierResult {
	t.Helper()
	return runHierW(t, hw, ranks, s, size, functional, 1)
}

// runHierInter runs it with the inter-node algorithm inter.
func runHierInter(t *testing.T, hw cluster.Spec, ranks int, s strategy.Strategy, size unit.Bytes, functional bool, inter string) AllreduceHierResult {
	t.Helper()
	return runHierWI(t, hw, ranks, s, size, functional, 1, inter)
}

// runHierW runs it with w work-groups in the GPU-initiated kernels.
func runHierW(t *testing.T, hw cluster.Spec, ranks int, s strategy.Strategy, size unit.Bytes, functional bool, w int) AllreduceHierResult {
	t.Helper()
	return runHierWI(t, hw, ranks, s, size, functional, w, HierRing)
}

func runHierWI(t *testing.T, hw cluster.Spec, ranks int, s strategy.Strategy, size unit.Bytes, functional bool, w int, inter string) AllreduceHierResult {
	t.Helper()
	if d, err := strategy.Lookup(string(s)); err == nil {
		hw = d.Adjust(hw)
	}
	c, err := cluster.New(sim.New(1), hw, ranks, functional)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Engine.Close()
	r, err := AllreduceHier{Size: size, WGSize: 256, CommWGs: w, Inter: inter}.Run(c, s, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()})
	if err != nil {
		t.Fatalf("%s %s on %d ranks of %d GPUs: %v", s, inter, ranks, hw.Node.GPUs, err)
	}
	return r
}

// The hierarchical allreduce sums exactly on every rank (odd sizes and
// node counts included, G = 1 the plain ring); with G > 1 the intra-node
// phases take time, with G = 1 they are empty; payload-free runs take the
// same simulated time as functional ones.
func TestAllreduceHier(t *testing.T) {
	h100, err := cluster.Preset("h100-cx7")
	if err != nil {
		t.Fatal(err)
	}
	mi, err := cluster.Preset("mi300a-ss11")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []strategy.Strategy{strategy.CPU, strategy.HDN, strategy.GHNAPU, strategy.GDS, strategy.GPUTN, strategy.GNNGPURDMA} {
		for _, tc := range []struct {
			name  string
			hw    cluster.Spec
			ranks int
			size  unit.Bytes
		}{
			{"h100 3 nodes", h100, 24, 4*unit.KiB + 12},
			{"mi300a 2 nodes", mi, 8, 64 * unit.KiB},
			{"mi300a 1 node", mi, 4, 1 * unit.KiB},
			{"gputn G=1 5 nodes", cluster.GPUTN(), 5, 8 * unit.KiB},
		} {
			if s == strategy.GPUTN && tc.hw.Caps.Model == "connectx7" {
				continue // triggered operations: Cassini (and the seed preset)
			}
			if s == strategy.GNNGPURDMA && tc.hw.Caps.Model == "cassini" {
				continue // GPU-initiated verbs: ConnectX (and the seed preset)
			}
			r := runHier(t, tc.hw, tc.ranks, s, tc.size, true)
			t.Logf("%s %-18s %v phases %v", s, tc.name, r.Time, r.Phases)
			if !r.Verified {
				t.Errorf("%s %s: not verified", s, tc.name)
			}
			g := max(1, tc.hw.Node.GPUs)
			intra := r.Phases[0] > 0 && r.Phases[2] > 0
			if intra != (g > 1) {
				t.Errorf("%s %s: intra-node phases %v with %d GPUs per node", s, tc.name, r.Phases, g)
			}
			if ring := r.Phases[1] > 0; ring != (tc.ranks > g) {
				t.Errorf("%s %s: ring phase %v on %d nodes", s, tc.name, r.Phases[1], tc.ranks/g)
			}
			if off := runHier(t, tc.hw, tc.ranks, s, tc.size, false); off.Time != r.Time || off.Verified {
				t.Errorf("%s %s: payload-free %v (verified %v), functional %v", s, tc.name, off.Time, off.Verified, r.Time)
			}
		}
	}
}

// GDS's intra-node phases go by the copy engines over the GPU fabric: on
// one 8-GPU h100-cx7 node no NIC sends a packet and every rank's sum is
// exact.
func TestAllreduceHierGDSPeerCopies(t *testing.T) {
	hw := cluster.H100CX7()
	c, err := cluster.New(sim.New(1), hw, 8, true)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Engine.Close()
	r, err := AllreduceHier{Size: 64 * unit.KiB, WGSize: 256}.Run(c, strategy.GDS, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()})
	if err != nil {
		t.Fatal(err)
	}
	pk, copies := nicPacketsAndPeerCopies(c)
	if !r.Verified || pk != 0 || copies == 0 {
		t.Errorf("one node: verified %v, %d NIC packets, %d peer copies; want verified, none, some", r.Verified, pk, copies)
	}
}

// The GPU-initiated kernels split the vector over their work-groups (each
// with its own slots) and still sum exactly, odd work-group counts and
// G = 1 included. A work-group streams at most gpu.lsu_bytes per cycle, so
// on h100-cx7 one work-group is slower than without the per-SM limit, and
// four gain more over one than they do without it (where one work-group
// already streams at the memory's rate and the others mostly add
// messages).
func TestAllreduceHierCommWGs(t *testing.T) {
	h100 := cluster.H100CX7()
	mi := cluster.MI300ASS11()
	few := mi // fewer trigger entries than one work-group's puts: the registrations gate the stores
	few.NIC.TrigMaxEntries = 2
	for _, s := range []strategy.Strategy{strategy.GNNGIO, strategy.GHNDGPU, strategy.GNNGPURDMA, strategy.GPUTN} {
		for _, tc := range []struct {
			name  string
			hw    cluster.Spec
			ranks int
		}{{"h100 2 nodes", h100, 16}, {"gputn G=1 3 nodes", cluster.GPUTN(), 3}, {"mi300a 3 nodes", mi, 12}, {"mi300a 2 trigger entries", few, 12}} {
			if s == strategy.GPUTN && tc.hw.Caps.Model == "connectx7" || s != strategy.GPUTN && tc.hw.Caps.Model == "cassini" {
				continue // no triggered operations on ConnectX; the Cassini cases are GPU-TN's
			}
			r := runHierW(t, tc.hw, tc.ranks, s, 4*unit.KiB+12, true, 3)
			if !r.Verified {
				t.Errorf("%s %s, 3 work-groups: not verified", s, tc.name)
			}
		}
	}
	// GPU-TN's work-groups each stage their slice (at most gpu.lsu_bytes
	// per cycle) and fire their own triggered puts: four finish a 1 MiB
	// vector sooner than one.
	tn1 := runHierW(t, mi, 8, strategy.GPUTN, 1*unit.MiB, false, 1)
	tn4 := runHierW(t, mi, 8, strategy.GPUTN, 1*unit.MiB, false, 4)
	t.Logf("GPUTN 1 MiB on two mi300a-ss11 nodes: 1 WG %v, 4 WGs %v", tn1.Time, tn4.Time)
	if tn4.Time >= tn1.Time {
		t.Errorf("GPUTN: 4 work-groups %v, 1 work-group %v; want faster with 4", tn4.Time, tn1.Time)
	}
	free := h100
	free.GPU.LSUBytes = 0
	lim1 := runHierW(t, h100, 8, strategy.GNNGIO, 1*unit.MiB, false, 1)
	lim4 := runHierW(t, h100, 8, strategy.GNNGIO, 1*unit.MiB, false, 4)
	free1 := runHierW(t, free, 8, strategy.GNNGIO, 1*unit.MiB, false, 1)
	free4 := runHierW(t, free, 8, strategy.GNNGIO, 1*unit.MiB, false, 4)
	t.Logf("GNN_GIO 1 MiB on one node: per-SM limit 1 WG %v, 4 WGs %v; none 1 WG %v, 4 WGs %v", lim1.Time, lim4.Time, free1.Time, free4.Time)
	if lim1.Time <= free1.Time {
		t.Errorf("one work-group: %v with the per-SM limit, %v without; want slower with it", lim1.Time, free1.Time)
	}
	if lim1.Time-lim4.Time <= free1.Time-free4.Time {
		t.Errorf("4 work-groups gain %v over 1 with the per-SM limit, %v without; want more with it", lim1.Time-lim4.Time, free1.Time-free4.Time)
	}
}

// NCCL's double binary tree: each of the two trees spans the N nodes from
// one root (parent and child links agree, no cycle), every node has at most
// two children, and for even N no node is interior in both trees (the
// property that lets both trees move data at full rate).
func TestDoubleBinaryTree(t *testing.T) {
	for n := 1; n <= 70; n++ {
		interiorBoth := 0
		for tr := range 2 {
			roots := 0
			for r := range n {
				up, down := dbtree(n, r, tr)
				if up < 0 {
					roots++
				} else if _, pd := dbtree(n, up, tr); pd[0] != r && pd[1] != r {
					t.Fatalf("n=%d tree %d: %d's parent %d does not list it (%v)", n, tr, r, up, pd)
				}
				for _, c := range down {
					if c >= 0 {
						if cu, _ := dbtree(n, c, tr); cu != r {
							t.Fatalf("n=%d tree %d: %d's child %d has parent %d", n, tr, r, c, cu)
						}
					}
				}
				// Walking up reaches the root within n steps.
				x, steps := r, 0
				for ; x >= 0 && steps <= n; steps++ {
					x, _ = dbtree(n, x, tr)
				}
				if steps > n {
					t.Fatalf("n=%d tree %d: %d does not reach a root", n, tr, r)
				}
			}
			if roots != 1 {
				t.Fatalf("n=%d tree %d: %d roots", n, tr, roots)
			}
		}
		for r := range n {
			_, d0 := dbtree(n, r, 0)
			_, d1 := dbtree(n, r, 1)
			if max(d0[0], d0[1]) >= 0 && max(d1[0], d1[1]) >= 0 {
				interiorBoth++
			}
		}
		if n%2 == 0 && interiorBoth > 0 {
			t.Errorf("n=%d: %d nodes interior in both trees", n, interiorBoth)
		}
	}
}

// The tree sums exactly on every strategy that runs the ring, on node
// counts that make full, partial and one-sided trees (odd counts use the
// shifted second tree); its inter-node phase is shorter than the ring's at
// 9 nodes of small vectors (depth 2 log2 N against 2(N−1) steps), and a
// payload-free run takes the functional run's time.
func TestAllreduceHierTree(t *testing.T) {
	mi, err := cluster.Preset("mi300a-ss11")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []strategy.Strategy{strategy.CPU, strategy.HDN, strategy.GNNGIO, strategy.GNNGPURDMA, strategy.GDS, strategy.GPUTN} {
		for _, tc := range []struct {
			hw    cluster.Spec
			ranks int
		}{{cluster.GPUTN(), 2}, {cluster.GPUTN(), 3}, {cluster.GPUTN(), 6}, {cluster.GPUTN(), 9}, {mi, 12}} {
			hw := tc.hw
			if s == strategy.GNNGPURDMA && hw.Caps.Model == "cassini" {
				continue // GPU-posted verbs: ConnectX (and the seed preset)
			}
			r := runHierInter(t, hw, tc.ranks, s, 4*unit.KiB+12, true, HierTree)
			t.Logf("%s %d ranks: tree %v phases %v", s, tc.ranks, r.Time, r.Phases)
			if !r.Verified {
				t.Errorf("%s %d ranks: tree not verified", s, tc.ranks)
			}
			if tc.ranks == 9 {
				ring := runHierInter(t, hw, tc.ranks, s, 4*unit.KiB+12, false, HierRing)
				if r.Phases[1] >= ring.Phases[1] {
					t.Errorf("%s 9 nodes: tree's inter-node phase %v, ring's %v: want shorter", s, r.Phases[1], ring.Phases[1])
				}
				if off := runHierInter(t, hw, tc.ranks, s, 4*unit.KiB+12, false, HierTree); off.Time != r.Time {
					t.Errorf("%s 9 nodes tree: payload-free %v, functional %v", s, off.Time, r.Time)
				}
				if s == strategy.GNNGIO || s == strategy.GNNGPURDMA { // work-groups on slices of the vector
					if w3 := runHierWI(t, hw, tc.ranks, s, 4*unit.KiB+12, true, 3, HierTree); !w3.Verified {
						t.Errorf("%s 9 nodes tree, 3 work-groups: not verified", s)
					}
				}
			}
		}
	}
}

// nicPacketsAndPeerCopies sums, over c's nodes, the packets their NICs
// sent and the copies their GPU fabrics made: whether a run stayed inside
// its nodes.
func nicPacketsAndPeerCopies(c *cluster.Cluster) (packets, copies uint64) {
	for _, nd := range c.Nodes {
		packets += nd.NIC.Stats().PacketsTx
		copies += nd.Peer.Stats().Copies
	}
	return packets, copies
}

// The rhd sums exactly on every implementation of the inter-node phase,
// on node counts that are powers of two and ones that fold extra nodes
// in (3, 5, 6, 7), with nodes of several GPUs too; payload-free it takes
// the functional run's time; at 8 nodes of 64 KiB its inter-node phase is
// shorter than the ring's (2 log2 N steps against 2(N−1)).
func TestAllreduceHierRHD(t *testing.T) {
	mi, err := cluster.Preset("mi300a-ss11")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []strategy.Strategy{strategy.CPU, strategy.HDN, strategy.GNNGIO, strategy.GHNDGPU, strategy.GNNGPURDMA, strategy.GDS, strategy.GPUTN} {
		for _, tc := range []struct {
			hw    cluster.Spec
			ranks int
		}{{cluster.GPUTN(), 2}, {cluster.GPUTN(), 3}, {cluster.GPUTN(), 5}, {cluster.GPUTN(), 6}, {cluster.GPUTN(), 7}, {cluster.GPUTN(), 8}, {mi, 12}} {
			hw := tc.hw
			if s == strategy.GNNGPURDMA && hw.Caps.Model == "cassini" {
				continue // GPU-posted verbs: ConnectX (and the seed preset)
			}
			r := runHierInter(t, hw, tc.ranks, s, 4*unit.KiB+12, true, HierRHD)
			if !r.Verified {
				t.Errorf("%s %d ranks: rhd not verified", s, tc.ranks)
			}
			if tc.ranks == 7 && (s == strategy.GNNGIO || s == strategy.GNNGPURDMA || s == strategy.GPUTN) {
				if w3 := runHierWI(t, hw, tc.ranks, s, 4*unit.KiB+12, true, 3, HierRHD); !w3.Verified {
					t.Errorf("%s 7 nodes rhd, 3 work-groups: not verified", s)
				}
			}
			if tc.ranks == 8 {
				big := runHierInter(t, hw, tc.ranks, s, 64*unit.KiB, true, HierRHD)
				ring := runHierInter(t, hw, tc.ranks, s, 64*unit.KiB, false, HierRing)
				t.Logf("%s 8 nodes 64 KiB: rhd %v, ring %v", s, big.Phases[1], ring.Phases[1])
				if big.Phases[1] >= ring.Phases[1] {
					t.Errorf("%s 8 nodes: rhd's inter-node phase %v, ring's %v: want shorter", s, big.Phases[1], ring.Phases[1])
				}
				if off := runHierInter(t, hw, tc.ranks, s, 64*unit.KiB, false, HierRHD); off.Time != big.Time {
					t.Errorf("%s 8 nodes rhd: payload-free %v, functional %v", s, off.Time, big.Time)
				}
			}
		}
	}
}

// Every node's rhd schedule pairs with its partners': a send of slot k
// to a peer meets a receive of slot k from this node of the same length,
// and the slots a node sends or receives fit the slot sizes.
func TestRHDInterSchedulePairs(t *testing.T) {
	for N := 2; N <= 40; N++ {
		const elems = 1000
		type key struct{ from, to, slot int }
		sends, recvs := map[key]uint64{}, map[key]uint64{}
		for node := range N {
			for _, st := range rhdInterSchedule(0, 0, elems, node, N) {
				if lim := uint64(rhdSlotElems(elems, N, st.slot)) * 4; st.nb > lim {
					t.Fatalf("N=%d node %d slot %d: %d bytes, slot holds %d", N, node, st.slot, st.nb, lim)
				}
				if st.send {
					sends[key{node, st.peer, st.rslot}] = st.nb
				} else {
					recvs[key{st.peer, node, st.slot}] = st.nb
				}
			}
			peers := rhdPeers(node, N)
			for _, st := range rhdInterSchedule(0, 0, elems, node, N) {
				if !slices.Contains(peers, st.peer) {
					t.Fatalf("N=%d node %d: peer %d not in rhdPeers %v", N, node, st.peer, peers)
				}
			}
		}
		if len(sends) != len(recvs) {
			t.Fatalf("N=%d: %d sends, %d receives", N, len(sends), len(recvs))
		}
		for k, nb := range sends {
			if got, ok := recvs[k]; !ok || got != nb {
				t.Fatalf("N=%d: send %+v of %d bytes meets receive %d (%v)", N, k, nb, got, ok)
			}
		}
	}
}

// The device-shmem ring and tree put only their piece and its flag: at 8
// nodes of one GPU the NICs together send the ring's 2(N−1)/N of the
// vector per node (plus flags and headers), not a whole chunk per step
// (the slot size), which moved N times the data.
func TestAllreduceHierShmemPutsOnlyThePiece(t *testing.T) {
	const N, size = 8, 64 * unit.KiB
	for _, s := range []strategy.Strategy{strategy.GNNGIO, strategy.GHNDGPU} {
		for _, inter := range []string{HierRing, HierTree} {
			hw := cluster.GPUTN()
			if d, err := strategy.Lookup(string(s)); err == nil {
				hw = d.Adjust(hw)
			}
			c, err := cluster.New(sim.New(1), hw, N, true)
			if err != nil {
				t.Fatal(err)
			}
			r, err := AllreduceHier{Size: size, WGSize: 256, CommWGs: 1, Inter: inter}.Run(c, s, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()})
			if err != nil || !r.Verified {
				t.Fatalf("%s %s: %v (verified %v)", s, inter, err, r.Verified)
			}
			var sent uint64
			for _, nd := range c.Nodes {
				sent += nd.NIC.Stats().BytesTx
			}
			c.Engine.Close()
			// Ring: 2(N−1) pieces of size/N per node. Tree: each half of
			// the vector goes up one tree and down the other, at most
			// 2 × size per node.
			limit := uint64(2*(N-1)) * uint64(size) * 11 / 10
			if inter == HierTree {
				limit = uint64(2*N) * uint64(size) * 11 / 10
			}
			t.Logf("%s %s: %d bytes sent, limit %d", s, inter, sent, limit)
			if sent > limit {
				t.Errorf("%s %s: the NICs sent %d bytes, more than %d: puts carry more than their pieces", s, inter, sent, limit)
			}
		}
	}
}
