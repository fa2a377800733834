package gpu

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// Behind a memory-side L2 (gpu.l2_memory_side, NVIDIA) the L2 serves the
// GPU's own memory and every write to it passes through: a system-scope
// load misses once and then hits, and sees a write another agent (the
// NIC) made to the line in between; a GPU store is in memory, where the
// NIC reads, one L2 lookup after it leaves the L1, with no system release;
// a system-scope acquire has no line of that memory to drop, so a plain
// load after it still hits. Without the property (the AMD rule) the
// store stays in the write-back L2 until a release and every
// system-scope load goes to memory.
func TestMemorySideL2ServesTheGPUsOwnMemory(t *testing.T) {
	for _, memSide := range []bool{false, true} {
		e, spec, m, g := memSideGPU(memSide)
		flag := m.Alloc(mem.GPU, 64, "flag")
		word := m.Alloc(mem.GPU, 64, "word")
		var first, second, third sim.Duration
		var v, inMem, plain uint64
		op, _ := g.DispatchOp(Kernel{Name: "poll", WGs: 1, WGSize: 64, Body: func(wg *WG) {
			t0 := wg.Now()
			wg.AtomicLoad64(flag)
			first = wg.Now() - t0
			m.Store64(flag, 7) // the NIC's write
			t0 = wg.Now()
			v = wg.AtomicLoad64(flag)
			second = wg.Now() - t0
			wg.Store64(word, 5)
			wg.Sleep(spec.Cycles(spec.L2Cycles) + sim.Nanosecond)
			inMem = m.Load64(word)
			wg.Acquire(System)
			t0 = wg.Now()
			plain = wg.Load64(word)
			third = wg.Now() - t0
		}})
		g.Submit(op)
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		miss, hit := spec.MissLatency(), spec.Cycles(spec.L2Cycles)
		if v != 7 || plain != 5 {
			t.Errorf("memory-side %v: the second load read %d, the plain load %d: want 7 and 5", memSide, v, plain)
		}
		if !memSide {
			if first != miss || second != miss || inMem != 0 {
				t.Errorf("AMD rule: loads %v, %v, want two misses %v; the store in memory before a release: %d, want 0", first, second, miss, inMem)
			}
			continue
		}
		if first != miss || second != hit || third != hit {
			t.Errorf("memory-side: loads %v, %v, %v, want a miss %v then two L2 hits %v", first, second, third, miss, hit)
		}
		if inMem != 5 {
			t.Errorf("memory-side: the store is not in memory one L2 lookup after it left (%d)", inMem)
		}
	}
}

// A CP core's store to the GPU's own memory behind a memory-side L2 is in
// memory at once, where the work-groups' loads of that memory read it (the
// L2's values of it are memory's); with the AMD rule it stays in the
// write-back L2's functional copy until a system release. Before the fix
// a COMPNET CP's published ring read index stayed in that copy on
// h100-cx7, and MoE's throughput mode at EP 16 deadlocked with every
// producer waiting for a free slot.
func TestMemorySideL2TakesTheCPsStores(t *testing.T) {
	for _, memSide := range []bool{false, true} {
		e, _, m, g := memSideGPU(memSide)
		idx := m.Alloc(mem.GPU, 64, "read index")
		var inMem, seen uint64
		op, _ := g.DispatchOp(Kernel{Name: "producer", WGs: 1, WGSize: 64, Body: func(wg *WG) {
			g.CPStore64(wg.Proc, idx, 9)
			inMem = m.Load64(idx)
			wg.Acquire(System)
			seen = wg.Load64(idx)
		}})
		g.Submit(op)
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		if seen != 9 {
			t.Errorf("memory-side %v: the work-group read %d after the CP stored 9", memSide, seen)
		}
		if want := map[bool]uint64{false: 0, true: 9}[memSide]; inMem != want {
			t.Errorf("memory-side %v: memory holds %d right after the CP's store, want %d", memSide, inMem, want)
		}
	}
}

// memSideGPU returns an engine and a dGPU with a 64 KiB L2, memory-side
// (the NVIDIA rule) or write-back (the AMD rule), its spec and its memory.
func memSideGPU(memSide bool) (*sim.Engine, Spec, *mem.Memory, *GPU) {
	e := sim.New(1)
	spec := testSpec("dgpu")
	spec.L2MemorySide = memSide
	m := mem.New("node[0].mem", true)
	g := New(e, "node[0].gpu", spec, m, mem.NewServer(100e9))
	g.UseL2(L2Spec{Size: 64 * unit.KiB, Ways: 16})
	return e, spec, m, g
}
