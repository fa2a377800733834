package spin_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/datatype"
	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	hwspin "github.com/gpunetsim/gpunetsim/hw/spin"
	spinmodel "github.com/gpunetsim/gpunetsim/model/spin"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// recvSeq runs receives of the given types, in order, from node 0 to node
// 1 under RW-CP with one checkpoint per packet, and checks every buffer
// against datatype.Unpack. prio gives each type's user priority.
func recvSeq(t *testing.T, costs spinmodel.Costs, memSize unit.Bytes, types []*datatype.Committed, prio []int, seq []int) ([]spinmodel.RecvResult, spinmodel.ResidencyStats) {
	return recvSeqWith(t, costs, memSize, types, func(i int, p *spinmodel.Plan) { p.Priority = prio[i] }, seq)
}

// recvSeqWith is recvSeq with the user's hints set by hint on each plan.
func recvSeqWith(t *testing.T, costs spinmodel.Costs, memSize unit.Bytes, types []*datatype.Committed, hint func(int, *spinmodel.Plan), seq []int) ([]spinmodel.RecvResult, spinmodel.ResidencyStats) {
	t.Helper()
	hw := cluster.Spin()
	hw.Spin.MemSize = memSize
	cl, err := cluster.New(sim.New(1), hw, 2, true)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Engine.Close()
	lv := spinmodel.LinkView{PacketTime: cl.Fabric.Serialization(hw.Link.Payload)}
	snd := spinmodel.NewEndpoint(cl.Nodes[0].NIC, spinmodel.RWCP, hw.Spin, costs, lv)
	rcv := spinmodel.NewEndpoint(cl.Nodes[1].NIC, spinmodel.RWCP, hw.Spin, costs, lv)
	plans := make([]*spinmodel.Plan, len(types))
	for i, ty := range types {
		if plans[i], err = spinmodel.NewPlan(spinmodel.RWCP, ty, 1, rcv.Env()); err != nil {
			t.Fatal(err)
		}
		hint(i, plans[i])
	}
	var results []spinmodel.RecvResult
	var failure error
	cl.Engine.Spawn("snd", func(p *sim.Proc) {
		for _, i := range seq {
			size := plans[i].Size
			buf := cl.Nodes[0].Mem.Alloc(mem.Host, uint64(size), "packed")
			cl.Nodes[0].Mem.Write(buf, pattern(size, i))
			snd.Send(p, buf, size, 1)
		}
	})
	cl.Engine.Spawn("rcv", func(p *sim.Proc) {
		for _, i := range seq {
			pl := plans[i]
			span := pl.Hi - pl.Lo
			buf := cl.Nodes[1].Mem.Alloc(mem.Host, uint64(span), "recv")
			want := bytes.Repeat([]byte{0xA5}, span)
			cl.Nodes[1].Mem.Write(buf, want)
			r, err := rcv.Recv(p, pl, buf, 0)
			if err != nil {
				failure = err
				return
			}
			if _, err := pl.C.Unpack(want, -pl.Lo, pattern(pl.Size, i), 1); err != nil {
				failure = err
				return
			}
			if !bytes.Equal(cl.Nodes[1].Mem.Bytes(buf, span), want) {
				t.Errorf("receive %d (type %d): buffer differs from datatype.Unpack", len(results), i)
			}
			results = append(results, r)
		}
	})
	if err := cl.Engine.Run(); err != nil {
		t.Fatal(err)
	}
	if failure != nil {
		t.Fatal(failure)
	}
	return results, rcv.Residency()
}

func pattern(n, salt int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*13 + i>>8 + salt*71)
	}
	return b
}

// Three 16 KiB vector types, each with 8 checkpoints (one per packet) and
// their masters: about 10 KB of NIC memory each; 25 KB hold two.
func threeTypes(t *testing.T) []*datatype.Committed {
	var out []*datatype.Committed
	for _, bl := range []int{16, 32, 64} {
		out = append(out, vector(t, 16<<10, bl))
	}
	return out
}

func checkpointEveryPacket() spinmodel.Costs {
	c := spinmodel.DefaultCosts()
	c.Interval = 2 * unit.KiB
	return c
}

// LRU: A, B, C evicts A; B is then a hit (nothing copied); A evicts C, the
// least recently used, and every buffer is right.
func TestResidencyLRU(t *testing.T) {
	res, st := recvSeq(t, checkpointEveryPacket(), 25000, threeTypes(t), []int{0, 0, 0}, []int{0, 1, 2, 1, 0, 1})
	want := spinmodel.ResidencyStats{Hits: 2, Misses: 4, Evictions: 2, Entries: 2}
	st.Resident = 0
	if st != want {
		t.Fatalf("residency %+v, want %+v", st, want)
	}
	if res[2].Evicted != 1 || res[3].Evicted != 0 || !res[3].Resident || res[3].Post != 0 || res[0].Post == 0 {
		t.Fatalf("third receive evicted %d; fourth: evicted %d, resident %v, post %v (first post %v)",
			res[2].Evicted, res[3].Evicted, res[3].Resident, res[3].Post, res[0].Post)
	}
	// B (used 4th) survived A's return; C (used 3rd) did not: the 6th receive is a hit.
	if !res[5].Resident {
		t.Fatal("B was evicted although C was less recently used")
	}
}

// Priority first: a low-priority type goes before a less recently used
// high-priority one.
func TestResidencyPriority(t *testing.T) {
	res, st := recvSeq(t, checkpointEveryPacket(), 25000, threeTypes(t), []int{5, 0, 0}, []int{0, 1, 2, 0})
	if st.Evictions != 1 || !res[3].Resident {
		t.Fatalf("evictions %d, A resident on return %v: want B (priority 0) evicted, A (priority 5) kept", st.Evictions, res[3].Resident)
	}
}

// Policy fallback: no eviction; the receive that finds no room unpacks on
// the host (still verified) and the handlers never see it.
func TestResidencyFallback(t *testing.T) {
	c := checkpointEveryPacket()
	c.NICPolicy = spinmodel.PolicyFallback
	res, st := recvSeq(t, c, 25000, threeTypes(t), []int{0, 0, 0}, []int{0, 1, 2})
	if st.Evictions != 0 || st.Fallbacks != 1 || !res[2].Fallback || res[2].Unpack == 0 {
		t.Fatalf("residency %+v, third receive fallback %v unpack %v", st, res[2].Fallback, res[2].Unpack)
	}
	if res[2].Stats.Handlers[1] != res[1].Stats.Handlers[1] {
		t.Fatalf("payload handlers ran for the fallen-back receive: %d → %d", res[1].Stats.Handlers[1], res[2].Stats.Handlers[1])
	}
}

// A datatype whose structures can never fit the NIC memory is refused
// before anything is sent, with an error naming it.
func TestTooLargeForNICMemory(t *testing.T) {
	hw := cluster.Spin()
	hw.Spin.MemSize = 8000
	env := spinmodel.Env{Spin: hw.Spin, Costs: checkpointEveryPacket(), K: 2048, TPkt: 100 * sim.Nanosecond}
	ty := vector(t, 16<<10, 16)
	_, err := spinmodel.NewPlan(spinmodel.RWCP, ty, 1, env)
	if !errors.Is(err, spinmodel.ErrNICMemory) && !errors.Is(err, spinmodel.ErrInterval) {
		t.Fatalf("error %v, want ErrNICMemory or ErrInterval", err)
	}
	env.Costs.Interval = 0
	_, err = spinmodel.NewPlan(spinmodel.HPULocal, vector(t, 16<<10, 16), 1, spinmodel.Env{Spin: func() (s hwspin.Spec) {
		s = hw.Spin
		s.HPUs, s.MemSize = 64, 4096
		return s
	}(), Costs: env.Costs, K: 2048, TPkt: env.TPkt})
	if !errors.Is(err, spinmodel.ErrNICMemory) || !strings.Contains(err.Error(), ty.Type().String()) || !strings.Contains(err.Error(), "spin.mem_size = 4KiB") {
		t.Fatalf("error %v: want ErrNICMemory naming %v and spin.mem_size", err, ty.Type())
	}
}

// The "do not offload" hint: the receive lands contiguously and the host
// unpacks it; nothing is made resident.
func TestNoOffloadHint(t *testing.T) {
	res, st := recvSeqWith(t, checkpointEveryPacket(), 6<<20, threeTypes(t), func(i int, p *spinmodel.Plan) { p.NoOffload = i == 1 }, []int{0, 1})
	if res[1].Unpack == 0 || res[1].Post != 0 || res[1].Stats.Handlers[1] != res[0].Stats.Handlers[1] || st.Entries != 1 {
		t.Fatalf("no-offload receive: unpack %v, post %v, payload handlers %d → %d, resident entries %d",
			res[1].Unpack, res[1].Post, res[0].Stats.Handlers[1], res[1].Stats.Handlers[1], st.Entries)
	}
}
