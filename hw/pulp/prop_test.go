package pulp_test

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/pulp"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
	"pgregory.net/rapid"
)

// Properties of random request streams: no request finishes before its
// own beats on its narrowest resource and its latency allow; requests of
// one core through the outbound DMA finish in issue order; every L2 byte
// is charged once to the bank its address maps to.
func TestAccelProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := pulp.DefaultSpec()
		a, err := pulp.New(s, 1e9, 32)
		if err != nil {
			t.Fatal(err)
		}
		var now sim.Time
		lastOut := map[int]sim.Time{}
		var l2Beats [2]int64
		n := rapid.IntRange(1, 60).Draw(t, "requests")
		for range n {
			now += sim.Time(rapid.IntRange(0, 200).Draw(t, "gap")) * ns
			core := rapid.IntRange(0, 31).Draw(t, "core")
			size := unit.Bytes(rapid.IntRange(1, 8192).Draw(t, "size"))
			addr := uint64(rapid.IntRange(0, 1<<20).Draw(t, "addr"))
			beats := func(w unit.Bytes) sim.Time { return sim.Time((size+w-1)/w) * ns }
			switch rapid.IntRange(0, 3).Draw(t, "kind") {
			case 0:
				done := a.L2Access(now, core, addr, size)
				addL2(&l2Beats, s, addr, size)
				if min := now + sim.Time(s.L2Latency)*ns + beats(s.L2Width*2); done < min {
					t.Fatalf("L2 access of %v done at %v, before %v", size, done, min)
				}
			case 1:
				done := a.Stage(now, core, addr, size)
				addL2(&l2Beats, s, addr, size)
				if min := now + beats(s.DMAWidth) + sim.Time(s.DMASetup+s.L2Latency+s.L1Latency)*ns; done < min {
					t.Fatalf("stage of %v done at %v, before %v", size, done, min)
				}
			case 2:
				done := a.Out(now, core, size)
				if done < lastOut[core] {
					t.Fatalf("core %d: out done at %v, before its previous one at %v", core, done, lastOut[core])
				}
				lastOut[core] = done
				if min := now + beats(s.DMAWidth) + sim.Time(s.DMASetup+s.L1Latency)*ns; done < min {
					t.Fatalf("out of %v done at %v, before %v", size, done, min)
				}
			case 3:
				done := a.PacketIn(now, addr, size)
				addL2(&l2Beats, s, addr, size)
				if min := now + beats(s.PortWidth) + sim.Time(s.L2Latency)*ns; done < min {
					t.Fatalf("packet of %v in at %v, before %v", size, done, min)
				}
			}
		}
		busy := a.Stats().L2BankBusy
		for b := range 2 {
			if busy[b] != sim.Time(l2Beats[b])*ns {
				t.Fatalf("bank %d busy %v, want %v (its beats)", b, busy[b], sim.Time(l2Beats[b])*ns)
			}
		}
	})
}

// addL2 adds the beats [addr, addr+n) takes on each bank.
func addL2(beats *[2]int64, s pulp.Spec, addr uint64, n unit.Bytes) {
	var share [2]unit.Bytes
	g := uint64(s.L2Interleave)
	for o := addr; o < addr+uint64(n); o++ {
		share[(o/g)%2]++
	}
	for b, x := range share {
		beats[b] += int64((x + s.L2Width - 1) / s.L2Width)
	}
}
