package workload

import (
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/net"
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/model/mpi"
	"github.com/gpunetsim/gpunetsim/model/nbc"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/unit"
)

func runRHD(t *testing.T, s strategy.Strategy, nodes int, size unit.Bytes, functional bool) (AllreduceResult, uint64, error) {
	t.Helper()
	e := sim.New(1)
	defer e.Close()
	c, err := cluster.New(e, cluster.GPUTN(), nodes, functional)
	if err != nil {
		t.Fatal(err)
	}
	a := Allreduce{Size: size, WGSize: 256, CPUThreads: 8, Algorithm: AlgRHD}
	res, err := a.Run(c, s, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()})
	return res, e.Events(), err
}

// The simulated RHD allreduce leaves the exact sum on every node, for
// powers of two and not, with uneven blocks (sizes not divisible by the
// node count) and with one element per node.
func TestRHDAllreduceCorrect(t *testing.T) {
	for _, s := range []strategy.Strategy{strategy.CPU, strategy.HDN} {
		for _, n := range []int{2, 3, 4, 5, 6, 7, 8, 12, 13} {
			for _, size := range []unit.Bytes{64*unit.KiB + 12, unit.Bytes(4 * n)} {
				res, _, err := runRHD(t, s, n, size, true)
				if err != nil || !res.Verified || res.Time <= 0 {
					t.Errorf("%s n=%d size=%v: verified=%v time=%v err=%v", s, n, size, res.Verified, res.Time, err)
				}
			}
		}
	}
}

// The one-sided strategies run rhd as the hierarchical allreduce's
// one-sided schedule: exact sums on powers of two and not (folds), uneven
// blocks, one element per node and several work-groups; payload-free it
// takes the functional time; at 32 nodes of 16 KiB it is faster than
// their ring.
func TestRHDOneSided(t *testing.T) {
	for _, s := range []strategy.Strategy{strategy.GDS, strategy.GPUTN, strategy.GHNDGPU, strategy.GHNDGPUHostQ, strategy.GHNAPU, strategy.COMPNET, strategy.GNNGIO, strategy.GNNGPURDMA} {
		if !RHDSupported(s) || RHDRefusal(s) != "" {
			t.Errorf("%s: RHDSupported %v, refusal %q", s, RHDSupported(s), RHDRefusal(s))
		}
		for _, n := range []int{2, 5, 8} {
			for _, size := range []unit.Bytes{16*unit.KiB + 12, unit.Bytes(4 * n)} {
				res, err := runRHDOn(t, s, n, size, true, 0)
				if err != nil || !res.Verified || res.Time <= 0 {
					t.Errorf("%s n=%d size=%v: verified=%v time=%v err=%v", s, n, size, res.Verified, res.Time, err)
				}
			}
		}
		if res, err := runRHDOn(t, s, 6, 16*unit.KiB+12, true, 3); err != nil || !res.Verified || res.Slices != 3 {
			t.Errorf("%s n=6, 3 work-groups: verified=%v slices=%d err=%v", s, res.Verified, res.Slices, err)
		}
		fn, err1 := runRHDOn(t, s, 8, 256*unit.KiB, true, 0)
		pf, err2 := runRHDOn(t, s, 8, 256*unit.KiB, false, 0)
		if err1 != nil || err2 != nil || fn.Time != pf.Time {
			t.Errorf("%s 8 nodes: functional %v (%v), payload-free %v (%v)", s, fn.Time, err1, pf.Time, err2)
		}
		// 2 log2 n steps against the ring's 2(n−1): at 32 nodes of small
		// vectors the latency of the ring's steps dominates.
		ring, _ := runAllreduceOn(t, rhdHW(s), s, 32, 16*unit.KiB, false)
		rhd, err := runRHDOn(t, s, 32, 16*unit.KiB, false, 0)
		t.Logf("%s 32 nodes 16 KiB: rhd %v, ring %v", s, rhd.Time, ring.Time)
		if err != nil || rhd.Time >= ring.Time {
			t.Errorf("%s 32 nodes 16 KiB: rhd %v (%v), ring %v: want faster", s, rhd.Time, err, ring.Time)
		}
	}
	for _, s := range []strategy.Strategy{strategy.CPU, strategy.HDN, strategy.HSA, strategy.XTQ} {
		if !RHDSupported(s) {
			t.Errorf("%s: !RHDSupported", s)
		}
	}
}

// rhdHW is the gputn preset (xtq for XTQ) in s's GPU mode.
func rhdHW(s strategy.Strategy) cluster.Spec {
	hw := cluster.GPUTN()
	if s == strategy.XTQ {
		hw = cluster.XTQ()
	}
	if d, err := strategy.Lookup(string(s)); err == nil {
		hw = d.Adjust(hw)
	}
	return hw
}

// runRHDOn runs the rhd allreduce under s on its own preset's GPU mode
// (the gputn preset otherwise) with wgs work-groups.
func runRHDOn(t *testing.T, s strategy.Strategy, nodes int, size unit.Bytes, functional bool, wgs int) (AllreduceResult, error) {
	t.Helper()
	e := sim.New(1)
	defer e.Close()
	c, err := cluster.New(e, rhdHW(s), nodes, functional)
	if err != nil {
		t.Fatal(err)
	}
	a := Allreduce{Size: size, WGs: wgs, WGSize: 256, CPUThreads: 8, Algorithm: AlgRHD}
	return a.Run(c, s, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()})
}

// On two nodes recursive halving-doubling and the ring send the same two
// half-vector messages per node, so their simulated times agree — to a
// cache line: the ring's layout puts an 8-byte flag after each chunk, so
// its second chunk straddles one line more than the host's copy of the
// vector left in the caches (HDN, reducing on the GPU, agrees exactly).
func TestRHDEqualsRingOnTwoNodes(t *testing.T) {
	for _, s := range []strategy.Strategy{strategy.CPU, strategy.HDN} {
		ring, _ := runAllreduce(t, s, 2, 256*unit.KiB, false)
		rhd, _, err := runRHD(t, s, 2, 256*unit.KiB, false)
		tol := sim.Time(0)
		if s == strategy.CPU {
			tol = sim.Nanosecond
		}
		if err != nil || rhd.Time > ring.Time+tol || ring.Time > rhd.Time+tol {
			t.Errorf("%s: rhd %v (err %v), ring %v", s, rhd.Time, err, ring.Time)
		}
	}
}

// RHD sends 2·log2(n) messages per node instead of the ring's 2(n−1): in
// the flow model, where a message costs a few events whatever its size,
// 32 nodes take far fewer events (10 steps instead of 62).
func TestRHDFewerMessages(t *testing.T) {
	hw := cluster.GPUTN()
	hw.Network.Model = net.ModelFlow
	ring, ringEv := runAllreduceOn(t, hw, strategy.CPU, 32, 1*unit.MiB, false)
	e := sim.New(1)
	defer e.Close()
	c, err := cluster.New(e, hw, 32, false)
	if err != nil {
		t.Fatal(err)
	}
	a := Allreduce{Size: 1 * unit.MiB, WGSize: 256, CPUThreads: 8, Algorithm: AlgRHD}
	rhd, err := a.Run(c, strategy.CPU, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()})
	// Both first copy the input into the output buffer (the same streaming
	// events), so the ratio of all events is a little under that of the
	// messages.
	if err != nil || e.Events()*5 > ringEv*2 || rhd.Time <= 0 || ring.Time <= 0 {
		t.Errorf("rhd %d events (%v, err %v), ring %d events (%v)", e.Events(), rhd.Time, err, ringEv, ring.Time)
	}
}

// TestRHDScheduleSums executes every node's schedule abstractly (no
// timing): each element carries how often each rank's input is in it;
// sends snapshot the range when their round starts, rounds complete when
// every receive found its matching send (same peers, step and length).
// Every node must end with every rank counted exactly once in every
// element, for every n up to 70, and the sends per node must be
// 2·log2(p) (+1 for the ranks that fold in an extra one).
func TestRHDScheduleSums(t *testing.T) {
	for n := 2; n <= 70; n++ {
		elems := 3*n + 5 // uneven blocks
		l := newRHDLayout(elems, n)
		checkRHDSchedule(t, l)
	}
}

func checkRHDSchedule(t *testing.T, l *rhdLayout) {
	t.Helper()
	n := l.n
	words := int(l.totalSize / 4)
	memv := make([][][]uint8, n) // node → element word → count per rank
	scheds := make([]nbc.Schedule, n)
	for i := range n {
		memv[i] = make([][]uint8, words)
		for w := range words {
			memv[i][w] = make([]uint8, n)
			if w < l.elems {
				memv[i][w][i] = 1
			}
		}
		scheds[i] = rhdSchedule(l, 0, i)
	}
	type key struct{ src, dst, step int }
	type msg struct {
		data [][]uint8
	}
	mail := map[key]msg{}
	round := make([]int, n)
	post := func(i int) {
		if round[i] >= len(scheds[i]) {
			return
		}
		for _, op := range scheds[i][round[i]] {
			if op.Kind != nbc.Send {
				continue
			}
			var d [][]uint8
			for w := range int(op.Len / 4) {
				d = append(d, append([]uint8(nil), memv[i][int(op.Addr/4)+w]...))
			}
			mail[key{i, op.Peer, op.Step}] = msg{d}
		}
	}
	for i := range n {
		post(i)
	}
	m := 0
	for l.p>>m > 1 {
		m++
	}
	for progress := true; progress; {
		progress = false
		for i := range n {
			if round[i] >= len(scheds[i]) {
				continue
			}
			ready := true
			for _, op := range scheds[i][round[i]] {
				if op.Kind == nbc.Recv {
					if _, ok := mail[key{op.Peer, i, op.Step}]; !ok {
						ready = false
					}
				}
			}
			if !ready {
				continue
			}
			for _, op := range scheds[i][round[i]] {
				switch op.Kind {
				case nbc.Recv:
					k := key{op.Peer, i, op.Step}
					got := mail[k]
					delete(mail, k)
					if uint64(len(got.data))*4 != op.Len {
						t.Fatalf("n=%d node %d step %d: received %d words, expected %d B", n, i, op.Step, len(got.data), op.Len)
					}
					for w, c := range got.data {
						copy(memv[i][int(op.Addr/4)+w], c)
					}
				case nbc.Reduce:
					for w := range int(op.Len / 4) {
						dst, src := memv[i][int(op.Addr/4)+w], memv[i][int(op.Src/4)+w]
						for r := range dst {
							dst[r] += src[r]
						}
					}
				}
			}
			round[i]++
			post(i)
			progress = true
		}
	}
	if len(mail) != 0 {
		t.Fatalf("n=%d: %d messages never received", n, len(mail))
	}
	for i := range n {
		if round[i] != len(scheds[i]) {
			t.Fatalf("n=%d: node %d stuck in round %d of %d", n, i, round[i], len(scheds[i]))
		}
		for w := range l.elems {
			for r, c := range memv[i][w] {
				if c != 1 {
					t.Fatalf("n=%d: node %d element %d counts rank %d %d times", n, i, w, r, c)
				}
			}
		}
		sends := scheds[i].Sends()
		want := 2 * m
		if i < 2*l.rest() {
			want = 2*m + 1
			if i%2 == 0 {
				want = 1
			}
		}
		if sends != want {
			t.Errorf("n=%d node %d: %d sends, want %d", n, i, sends, want)
		}
	}
}

// XTQ runs rhd over remote tasks (rhdTaskSchedule): exact sums on powers
// of two and not (the fold-in as a task, the hand-back as a put), uneven
// blocks, one element per node, receive resources posted up front or
// re-posted and synced per step; payload-free it takes the functional
// time and events; at 32 nodes of 16 KiB it is faster than its ring; a
// partitioned run gives the sequential one's time and events.
func TestRHDRemoteTasks(t *testing.T) {
	run := func(n int, size unit.Bytes, functional, perRound bool) (AllreduceResult, uint64, error) {
		t.Helper()
		e := sim.New(1)
		defer e.Close()
		c, err := cluster.New(e, rhdHW(strategy.XTQ), n, functional)
		if err != nil {
			t.Fatal(err)
		}
		a := Allreduce{Size: size, WGSize: 256, CPUThreads: 8, Algorithm: AlgRHD, SyncPerRound: perRound}
		res, err := a.Run(c, strategy.XTQ, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()})
		return res, e.Events(), err
	}
	if !RHDSupported(strategy.XTQ) || RHDOneSided(strategy.XTQ) || RHDRefusal(strategy.XTQ) != "" || !AllreduceAlgPartitionable(strategy.XTQ, AlgRHD) {
		t.Errorf("XTQ: RHDSupported %v, one-sided %v, refusal %q", RHDSupported(strategy.XTQ), RHDOneSided(strategy.XTQ), RHDRefusal(strategy.XTQ))
	}
	for _, perRound := range []bool{false, true} {
		for _, n := range []int{2, 3, 5, 6, 8, 13} {
			for _, size := range []unit.Bytes{16*unit.KiB + 12, unit.Bytes(4 * n)} {
				res, _, err := run(n, size, true, perRound)
				if err != nil || !res.Verified || res.Time <= 0 {
					t.Errorf("per round %v n=%d size=%v: verified=%v time=%v err=%v", perRound, n, size, res.Verified, res.Time, err)
				}
			}
		}
		for _, n := range []int{5, 8} {
			fn, fe, err1 := run(n, 256*unit.KiB, true, perRound)
			pf, pe, err2 := run(n, 256*unit.KiB, false, perRound)
			if err1 != nil || err2 != nil || fn.Time != pf.Time || fe != pe {
				t.Errorf("per round %v, %d nodes: functional %v, %d events (%v); payload-free %v, %d events (%v)", perRound, n, fn.Time, fe, err1, pf.Time, pe, err2)
			}
		}
	}
	ring, _ := runAllreduceOn(t, rhdHW(strategy.XTQ), strategy.XTQ, 32, 16*unit.KiB, false)
	rhd, _, err := run(32, 16*unit.KiB, false, false)
	t.Logf("XTQ 32 nodes 16 KiB: rhd %v, ring %v", rhd.Time, ring.Time)
	if err != nil || rhd.Time >= ring.Time {
		t.Errorf("XTQ 32 nodes 16 KiB: rhd %v (%v), ring %v: want faster", rhd.Time, err, ring.Time)
	}
	for _, n := range []int{6, 8} {
		want, wantEv := partitionedAllreduce(t, rhdHW(strategy.XTQ), strategy.XTQ, AlgRHD, n, 0, 24*unit.KiB+8, true)
		got, ev := partitionedAllreduce(t, rhdHW(strategy.XTQ), strategy.XTQ, AlgRHD, n, 3, 24*unit.KiB+8, true)
		if !got.Verified || got.Time != want.Time || ev != wantEv {
			t.Errorf("n=%d, 3 partitions: verified=%v %v, %d events; sequential %v, %d events", n, got.Verified, got.Time, ev, want.Time, wantEv)
		}
	}
	// Node 0's notification queue holds the barrier's fan-in whatever
	// nic.eq_size (the ring runs on 1-entry queues); a run that stops
	// because a full queue lost an arrival says so.
	for _, alg := range []string{AlgRing, AlgRHD} {
		hw := rhdHW(strategy.XTQ)
		hw.NIC.EQSize = 1
		c, err := cluster.New(sim.New(1), hw, 8, false)
		if err != nil {
			t.Fatal(err)
		}
		a := Allreduce{Size: 64 * unit.KiB, WGSize: 256, CPUThreads: 8, Algorithm: alg}
		_, err = a.Run(c, strategy.XTQ, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()})
		c.Close()
		if alg == AlgRing && err != nil {
			t.Errorf("ring on 1-entry event queues: %v", err)
		}
		if alg == AlgRHD && (err == nil || !strings.Contains(err.Error(), "were full and lost") || !strings.Contains(err.Error(), "nic.eq_size = 1")) {
			t.Errorf("rhd on 1-entry event queues: %v, want the lost events named", err)
		}
	}
}
