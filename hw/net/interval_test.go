package net

import (
	"math"
	"testing"

	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
	"pgregory.net/rapid"
)

// TestFlowIntervalDelaysAShare: with network.flow_interval = 1 µs a flow
// that starts 200 ns after the last re-division has no rate until 1 µs,
// while the flow already running keeps the whole link; from then on they
// share it, and the short one's end (long after the interval) re-divides
// at once.
func TestFlowIntervalDelaysAShare(t *testing.T) {
	e, f, r := flowFabric(t, 3, starTopo)
	f.SetFlowInterval(sim.Microsecond)
	f.Send(testMsg{0, 2, 256 << 10, 1})
	e.At(200*sim.Nanosecond, func() { f.Send(testMsg{1, 2, 1 << 20, 2}) })
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	tail := 100 + wireNs(2048) // switch latency and one packet's store-and-forward
	alone := 1000.0            // ns at the whole rate before the re-division
	end1 := alone + 2*(wireNs(256<<10)-alone)
	near(t, "running flow keeps the link until the re-division", r.at[1], end1+tail)
	done2 := (end1 - alone) / 2 // ns of the whole rate's bytes at half rate
	near(t, "waiting flow", r.at[2], end1+wireNs(1<<20)-done2+tail)
	if f.FlowWaits() != 1 {
		t.Fatalf("%d re-divisions waited, want 1", f.FlowWaits())
	}
}

// TestFlowIntervalReplacesAtOnce: a pair's next message replacing its last
// takes its rate at once, even while another change waits for the
// interval, so the pair's messages arrive as without the interval.
func TestFlowIntervalReplacesAtOnce(t *testing.T) {
	times := func(iv sim.Time) map[int]sim.Time {
		e, f, r := flowFabric(t, 4, starTopo)
		f.SetFlowInterval(iv)
		f.Send(testMsg{0, 1, 4 << 10, 1})
		f.Send(testMsg{0, 1, 4 << 10, 2}) // queued: replaces 1 at its end
		e.At(100*sim.Nanosecond, func() { f.Send(testMsg{2, 3, 4 << 10, 3}) })
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		return r.at
	}
	exact, iv := times(0), times(sim.Microsecond)
	for _, id := range []int{1, 2} {
		if exact[id] != iv[id] {
			t.Errorf("pair message %d: %v with the interval, %v without", id, iv[id], exact[id])
		}
	}
	near(t, "the other pair's message waits for 1 µs", iv[3], 1000+wireNs(4<<10)+100+wireNs(2048))
}

// TestFlowIntervalProperties runs random traffic (an all-to-all or random
// pairs, on the topologies of TestIncrementalMatchesFull) with a random
// interval and checks after every reallocation that no port carries more
// than its capacity, that a re-division runs at least the interval after
// the one before, and that whenever no change is waiting the rates are
// bit for bit the whole machine's max-min rates (the changes that waited
// re-divide exactly as if they had happened at once); at the end every
// message arrived, each pair's in order.
func TestFlowIntervalProperties(t *testing.T) {
	topos := []TopologySpec{
		{Kind: "star", LeafSize: 16, InOrder: true},
		{Kind: "fattree", LeafSize: 2, InOrder: true},
		railSplit,
		dfSplit,
	}
	waited := 0
	rapid.Check(t, func(t *rapid.T) {
		const n = 8
		e, f := drawFlowFabric(t, topos, n)
		iv := sim.Time(rapid.IntRange(1, 40).Draw(t, "interval")) * 100 * sim.Nanosecond
		f.SetFlowInterval(iv)
		r := &recorder{e: e, at: map[int]sim.Time{}}
		for i := range n {
			f.Attach(i, r)
		}
		type send struct{ src, dst int }
		var sends []send
		if rapid.Bool().Draw(t, "all-to-all") {
			for src := range n {
				for off := 1; off < n; off++ {
					for range rapid.IntRange(1, 3).Draw(t, "per pair") {
						sends = append(sends, send{src, (src + off) % n})
					}
				}
			}
		} else {
			for range rapid.IntRange(1, 40).Draw(t, "messages") {
				src := rapid.IntRange(0, n-1).Draw(t, "src")
				sends = append(sends, send{src, (src + rapid.IntRange(1, n-1).Draw(t, "offset")) % n})
			}
		}
		last, ran := sim.Time(0), false
		f.fl.afterRealloc = func() {
			fs := f.fl
			for _, pt := range fs.all {
				c := fs.cap
				if pt.capacity > 0 {
					c = pt.capacity
				}
				sum := 0.0
				for _, g := range pt.flows {
					sum += g.rate
				}
				if sum > c*(1+1e-9) {
					t.Fatalf("at %v: port %s carries %v, capacity %v", e.Now(), pt.name, sum, c)
				}
			}
			if fs.ran && (!ran || fs.lastFull != last) {
				if ran && fs.lastFull-last < iv {
					t.Fatalf("re-divisions at %v and %v, interval %v", last, fs.lastFull, iv)
				}
				last, ran = fs.lastFull, true
			}
			if len(fs.waitPorts) == 0 {
				for fl, want := range fullRates(fs) {
					if math.Float64bits(fl.rate) != math.Float64bits(want) {
						t.Fatalf("at %v, nothing waiting: flow %v rate %v, whole machine %v", e.Now(), fl.p, fl.rate, want)
					}
				}
			}
		}
		var order []int // message ids in the order they are sent
		for i, sd := range sends {
			src, dst := sd.src, sd.dst
			size := unit.Bytes(rapid.IntRange(1, 64<<10).Draw(t, "bytes"))
			at := sim.Time(rapid.IntRange(0, 40).Draw(t, "instant")) * 100 * sim.Nanosecond
			e.At(at, func() { order = append(order, i); f.Send(testMsg{src, dst, size, i}) })
		}
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		waited += f.FlowWaits()
		if len(r.at) != len(sends) || f.ActiveFlows() != 0 || len(f.fl.waitPorts) != 0 {
			t.Fatalf("%d of %d messages delivered, %d flows left, %d ports waiting", len(r.at), len(sends), f.ActiveFlows(), len(f.fl.waitPorts))
		}
		pos := map[int]int{}
		for i, id := range r.seq {
			pos[id] = i
		}
		prev := map[send]int{}
		for _, i := range order {
			sd := sends[i]
			if j, ok := prev[sd]; ok && pos[j] > pos[i] {
				t.Fatalf("pair %v: message %d arrived at %v, after %d sent later (%v)", sd, j, r.at[j], i, r.at[i])
			}
			prev[sd] = i
		}
	})
	if waited == 0 {
		t.Fatal("no re-division waited: the test does not reach the interval's path")
	}
}

// TestFlowIntervalWaitedReplacement: a pair's message that ended and the
// pair's next that started while both waited for the interval meet at
// the re-division as a replacement: the next takes the ended one's rate
// from then (not from when it was sent), so its bytes are counted from
// the re-division when a later flow halves its rate.
func TestFlowIntervalWaitedReplacement(t *testing.T) {
	e, f, r := flowFabric(t, 3, starTopo)
	f.SetFlowInterval(sim.Microsecond)
	f.Send(testMsg{0, 1, 4 << 10, 1})                                        // ends alone at 338 ns: waits
	e.At(500*sim.Nanosecond, func() { f.Send(testMsg{0, 1, 64 << 10, 2}) })  // waits for 1 µs
	e.At(2000*sim.Nanosecond, func() { f.Send(testMsg{2, 1, 64 << 10, 3}) }) // shares 1's downlink
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	tail := 100 + wireNs(2048)
	end2 := 2000 + 2*(wireNs(64<<10)-1000) // 1 µs at the whole rate, then half
	near(t, "replacement after the wait", r.at[2], end2+tail)
	near(t, "the third flow", r.at[3], end2+(wireNs(64<<10)-(end2-2000)/2)+tail)
	if f.FlowWaits() != 2 {
		t.Fatalf("%d re-divisions waited, want 2", f.FlowWaits())
	}
}
