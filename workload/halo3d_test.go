package workload

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/model/mpi"
	"github.com/gpunetsim/gpunetsim/model/verbs"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/unit"
)

func TestDims3(t *testing.T) {
	for p, want := range map[int][3]int{1: {1, 1, 1}, 2: {2, 1, 1}, 8: {2, 2, 2}, 12: {3, 2, 2}, 16: {4, 2, 2}, 7: {7, 1, 1}, 64: {4, 4, 4}} {
		if got := dims3(p); got != want {
			t.Errorf("dims3(%d) = %v, want %v", p, got, want)
		}
	}
}

// Every implementation delivers each neighbour's message of every
// iteration (grids with dimensions of 1, 2 and more; 6 and 26 neighbours;
// weak and strong sizing); a larger face takes longer; payload-free runs
// take the functional time.
func TestHalo3D(t *testing.T) {
	h100, err := cluster.Preset("h100-cx7")
	if err != nil {
		t.Fatal(err)
	}
	mi300a, err := cluster.Preset("mi300a-ss11")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []strategy.Strategy{strategy.CPU, strategy.HDN, strategy.GDS, strategy.GNNGIO, strategy.GNNGPURDMA, strategy.GPUTN} {
		hw := h100
		if s == strategy.GPUTN { // triggered operations: Cassini
			hw = mi300a
		}
		for _, tc := range []struct {
			ranks, neighbours int
			local             [3]int
		}{{8, 6, [3]int{}}, {16, 26, [3]int{}}, {24, 6, [3]int{}}, {16, 26, [3]int{16, 32, 32}}} {
			ranks := tc.ranks
			run := func(face unit.Bytes, functional bool) Halo3DResult {
				c, err := cluster.New(sim.New(1), hw, ranks, functional)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Engine.Close()
				local := tc.local
				if local != [3]int{} && face > 1*unit.KiB {
					local = [3]int{4 * local[0], 4 * local[1], 4 * local[2]}
				}
				r, err := Halo3D{Face: face, Iters: 2, WGSize: 256, Neighbours: tc.neighbours, Local: local}.Run(c, s, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()})
				if err != nil {
					t.Fatalf("%s %d ranks %d neighbours: %v", s, ranks, tc.neighbours, err)
				}
				return r
			}
			small, big, off := run(1*unit.KiB, true), run(64*unit.KiB, true), run(1*unit.KiB, false)
			t.Logf("%-7s %d ranks %v %2d nb local %v: small %v (%d B), big %v (%d B)", s, ranks, small.Dims, tc.neighbours, tc.local, small.Time, small.Bytes, big.Time, big.Bytes)
			if !small.Verified || !big.Verified || off.Verified {
				t.Errorf("%s %d ranks: verified %v %v, payload-free %v", s, ranks, small.Verified, big.Verified, off.Verified)
			}
			if big.Time <= small.Time {
				t.Errorf("%s %d ranks: 64 KiB faces %v, 1 KiB %v", s, ranks, big.Time, small.Time)
			}
			if off.Time != small.Time {
				t.Errorf("%s %d ranks: payload-free %v, functional %v", s, ranks, off.Time, small.Time)
			}
		}
	}
}

// Message sizes: 6 faces; 26 adds 12 edges of 8·√(face/8) bytes and 8
// corners of 8 bytes; strong sizing from the local cells.
func TestHalo3DSizes(t *testing.T) {
	sum := func(v []uint64) (s uint64) {
		for _, x := range v {
			s += x
		}
		return s
	}
	if got := sum(Halo3D{Face: 32 * unit.KiB}.sizes(haloDirs(6))); got != 6*32*1024 {
		t.Errorf("6 faces of 32 KiB: %d bytes", got)
	}
	if got := sum(Halo3D{Face: 32 * unit.KiB, Neighbours: 26}.sizes(haloDirs(26))); got != 6*32768+12*8*64+8*8 {
		t.Errorf("26 neighbours at 32 KiB faces: %d bytes", got)
	}
	// 10 x 20 x 40 cells: faces 20·40, 10·40, 10·20 cells (two each),
	// edges 10, 20, 40 (four each), 8 corners.
	want := uint64(8 * (2*(800+400+200) + 4*(10+20+40) + 8))
	if got := sum(Halo3D{Local: [3]int{10, 20, 40}, Neighbours: 26}.sizes(haloDirs(26))); got != want {
		t.Errorf("strong 10x20x40: %d bytes, want %d", got, want)
	}
}

// nic.trig_max_entries decides GPU-TN's halo: with fewer entries than one
// exchange's puts the kernel waits for the host to register each put in
// turn as entries free up; the exchange still delivers every face.
func TestHalo3DTriggerEntries(t *testing.T) {
	run := func(entries int) Halo3DResult {
		hw, err := cluster.Preset("mi300a-ss11")
		if err != nil {
			t.Fatal(err)
		}
		hw.NIC.TrigMaxEntries = entries
		c, err := cluster.New(sim.New(1), hw, 16, true)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Engine.Close()
		r, err := Halo3D{Face: 1 * unit.KiB, Iters: 2, WGSize: 256, Neighbours: 26}.Run(c, strategy.GPUTN, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()})
		if err != nil {
			t.Fatalf("%d entries: %v", entries, err)
		}
		return r
	}
	few, many := run(4), run(64)
	t.Logf("26 neighbours: %v with 4 trigger entries, %v with 64", few.Time, many.Time)
	if !few.Verified || !many.Verified || few.Time <= many.Time {
		t.Errorf("4 entries %+v, 64 entries %+v: want both verified and the fewer entries slower", few, many)
	}
}

// GDS's neighbours on the same node are reached by batched copy-engine
// copies over the GPU fabric, not by the NIC: on one 8-GPU h100-cx7 node
// no NIC sends a packet and every face arrives (verified); on two nodes
// the NICs carry only the faces between the nodes.
func TestHalo3DGDSPeerCopies(t *testing.T) {
	hw, err := cluster.Preset("h100-cx7")
	if err != nil {
		t.Fatal(err)
	}
	run := func(ranks int) (Halo3DResult, uint64, uint64) {
		c, err := cluster.New(sim.New(1), hw, ranks, true)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Engine.Close()
		r, err := Halo3D{Face: 4 * unit.KiB, Iters: 2, WGSize: 256, Neighbours: 6}.Run(c, strategy.GDS, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()})
		if err != nil {
			t.Fatal(err)
		}
		pk, copies := nicPacketsAndPeerCopies(c)
		return r, pk, copies
	}
	one, pk, copies := run(8)
	if !one.Verified || pk != 0 || copies == 0 {
		t.Errorf("one node: verified %v, %d NIC packets, %d peer copies; want verified, none, some", one.Verified, pk, copies)
	}
	two, pk, copies := run(16)
	if !two.Verified || pk == 0 || copies == 0 {
		t.Errorf("two nodes: verified %v, %d NIC packets, %d peer copies; want verified and both paths used", two.Verified, pk, copies)
	}
}

// Device shmem's persistent kernel at a slow GPU clock (h100-cx7, one
// node, 26 neighbours, 64 B faces, 150 MHz down to 30 MHz): its
// work-groups leave the grid counter at different times (the polls see
// the last arrival up to microseconds apart), and every face of every
// exchange still arrives as its neighbour wrote it. Each work-group
// writes the messages it puts and verifies the ones it unpacks; when
// work-group 0 wrote every direction after the counter, a faster
// work-group put iteration 1's slot before it was written (rank 7's
// direction [0 -1 -1] from rank 1 differed at 150 MHz).
func TestHalo3DShmemSlowClock(t *testing.T) {
	for _, mhz := range []float64{150, 100, 30} {
		for _, iters := range []int{2, 5} {
			hw, err := cluster.Preset("h100-cx7")
			if err != nil {
				t.Fatal(err)
			}
			hw.GPU.Freq = unit.Freq(mhz * 1e6)
			c, err := cluster.New(sim.New(1), hw, 8, true)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Halo3D{Face: 64, Iters: iters, WGSize: 256, Neighbours: 26}.Run(c, strategy.GNNGIO, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()})
			c.Engine.Close()
			if err != nil || !r.Verified {
				t.Errorf("%v MHz, %d exchanges: verified %v, %v", mhz, iters, r.Verified, err)
			}
		}
	}
}

// Device shmem's persistent kernel on a grid with a dimension of 1 (four
// GPUs of one h100-cx7 node: 2×2×1, 26 neighbours): the directions whose
// neighbour is the rank itself are delivered by the work-group that packs
// them and verified where it would unpack them. Verification covers them
// (a self direction left undelivered fails it), so the run verifies only
// when they arrive.
func TestHalo3DShmemSelfDirections(t *testing.T) {
	hw, err := cluster.Preset("h100-cx7")
	if err != nil {
		t.Fatal(err)
	}
	c, err := cluster.New(sim.New(1), hw, 4, true)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Engine.Close()
	if d := Dims3(4); d[2] != 1 {
		t.Fatalf("grid %v has no dimension of 1", d)
	}
	r, err := Halo3D{Face: 64, Iters: 3, WGSize: 256, Neighbours: 26}.Run(c, strategy.GNNGIO, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()})
	if err != nil || !r.Verified {
		t.Errorf("2×2×1 grid: verified %v, %v", r.Verified, err)
	}
}

// GIO on preset compnet (dGPU, L2-uncacheable heap), 2 nodes, 26
// neighbours, 64 B faces, at a 100 MHz GPU clock: the 8 B corner slots of
// several work-groups share a 64 B line of the send region, so one
// context's put makes the NIC read (and the PCIe-path cache keep) a line
// whose other slot's flag another work-group has just stored, the store
// still on its way to memory (the L2's 100 cycles are 1 µs here). The
// put's PPB flush does not pass that store (model/verbs
// TestPPBFlushLeavesBehindEarlierStores), so it empties the line after the
// flag landed; a flush that reached the PPB at its issue was over before
// that read, the put's payload went out with its flag 0 and the receiver
// waited forever (a deadlock report, functional and payload-free).
func TestHalo3DGIOStaleLineSlowClock(t *testing.T) {
	for _, functional := range []bool{true, false} {
		hw, err := cluster.Preset("compnet")
		if err != nil {
			t.Fatal(err)
		}
		hw.GPU.Freq = 100e6
		c, err := cluster.New(sim.New(1), hw, 2, functional)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Halo3D{Face: 64, Iters: 4, WGSize: 256, Neighbours: 26}.Run(c, strategy.GNNGIO, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()})
		c.Engine.Close()
		if err != nil || r.Verified != functional {
			t.Errorf("functional %v: verified %v, %v", functional, r.Verified, err)
		}
	}
}

// A QP belongs to one peer: GNN_GPURDMA's work-groups that write to
// different neighbours post on different QPs and never take turns, however
// few QPs per peer (gnn.qps) there are. On a 4×4×4 grid every rank's 26
// neighbours are distinct ranks, one work-group each, so one QP per peer
// gives the exchange of 26 QPs per peer to within the NIC's arbitration;
// with one lock per QP index shared by every peer, the 26 posts took turns
// and the exchange took 8.6 times as long (91.0 µs against 10.6).
func TestHalo3DDeviceVerbsQPsPerPeer(t *testing.T) {
	hw, err := cluster.Preset("h100-cx7")
	if err != nil {
		t.Fatal(err)
	}
	run := func(qps int) Halo3DResult {
		c, err := cluster.New(sim.New(1), hw, 64, false)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Engine.Close()
		gnn := verbs.DefaultSpec()
		gnn.QPs = qps
		r, err := Halo3D{Face: 4 * unit.KiB, Iters: 2, WGSize: 256, Neighbours: 26}.Run(c, strategy.GNNGPURDMA,
			strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec(), GNN: gnn})
		if err != nil {
			t.Fatalf("gnn.qps = %d: %v", qps, err)
		}
		return r
	}
	one, each := run(1), run(26)
	t.Logf("26 neighbours on %v: %v with 1 QP per peer, %v with 26", one.Dims, one.Time, each.Time)
	if one.Dims != [3]int{4, 4, 4} {
		t.Fatalf("grid %v, want 4x4x4 (26 distinct neighbours)", one.Dims)
	}
	if d := float64(one.Time-each.Time) / float64(each.Time); d > 0.05 || d < -0.05 {
		t.Errorf("1 QP per peer %v, 26 per peer %v: %+.1f %%, want within 5 %% (no two work-groups share a QP)", one.Time, each.Time, 100*d)
	}
}
