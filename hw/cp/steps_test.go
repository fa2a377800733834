package cp

import (
	"fmt"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
)

// opKind is one operation of a scripted CP thread (a service thread's
// dequeue: its line read, stores, the mutex's test-and-set, the system
// release, instructions, acquire markers, word loads).
type opKind uint8

const (
	opLine opKind = iota
	opLoad
	opStore
	opRMW
	opRelease
	opInstr
	opAcquire
)

type op struct {
	k opKind
	a mem.Addr
	v uint64
}

// scriptSteps runs a script with the Begin*/Try step forms, lent by the
// thread's coroutine (sim.Proc.RunSteps); got collects what the loads and
// RMWs returned.
type scriptSteps struct {
	th    *Thread
	ops   []op
	i     int
	begun bool
	got   *[]uint64
}

func (s *scriptSteps) Step(p *sim.Proc) bool {
	for s.i < len(s.ops) {
		o := s.ops[s.i]
		if !s.begun {
			switch o.k {
			case opLine:
				s.th.BeginLoadLine(o.a)
			case opLoad:
				s.th.BeginLoad64(o.a)
			case opStore:
				s.th.BeginStore64(o.a, o.v)
			case opRMW:
				s.th.BeginRMW(o.a, addV(o.v))
			case opRelease:
				s.th.BeginReleaseSystem()
			case opInstr:
				s.th.BeginInstr(int(o.v))
			case opAcquire:
				s.th.BeginAcquire()
			}
			s.begun = true
		}
		if !s.th.Try() {
			if !p.Waited() {
				panic("Try reported false without a wait")
			}
			return false
		}
		s.begun = false
		switch o.k {
		case opLine:
			l := s.th.LoadedLine()
			*s.got = append(*s.got, uint64(l[0])|uint64(l[8])<<8|uint64(l[16])<<16)
		case opLoad, opRMW:
			*s.got = append(*s.got, s.th.Loaded())
		}
		s.i++
	}
	return true
}

// addV returns an RMW's function adding v.
func addV(v uint64) func(uint64) uint64 { return func(o uint64) uint64 { return o + v } }

// runBlocking runs a script with the blocking forms.
func runBlocking(th *Thread, ops []op, got *[]uint64) {
	for _, o := range ops {
		switch o.k {
		case opLine:
			l := th.LoadLine(o.a)
			*got = append(*got, uint64(l[0])|uint64(l[8])<<8|uint64(l[16])<<16)
		case opLoad:
			*got = append(*got, th.Load64(o.a))
		case opStore:
			th.Store64(o.a, o.v)
		case opRMW:
			*got = append(*got, th.RMW(o.a, addV(o.v)))
		case opRelease:
			th.ReleaseSystem()
		case opInstr:
			th.Instr(int(o.v))
		case opAcquire:
			th.Acquire()
		}
	}
}

// The step forms of a dequeue's accesses (LoadLine, Store64, RMW,
// ReleaseSystem, with Instr, Acquire and Load64) are the blocking ones:
// CP threads time-sliced on fewer cores than threads, contending for the
// same RMW words (an L2 line a CP RMW holds makes the others wait), with
// a store buffer of 0, 2 and 32 entries (stalls when full, drains before
// an RMW and a release, loads of a line with a store in flight) and a
// 2-line L1 (evictions), end at the same times, read the same values,
// leave the same memory and counts, in the same number of events, run
// either way, on a dGPU's write-back L2 and on an APU's write-through one
// (stores done past it, at the directory's ack).
func TestDequeueStepsMatchBlocking(t *testing.T) {
	type out struct {
		ends   []sim.Time
		got    [][]uint64
		counts []Counts
		busy   []sim.Duration
		mem    []uint64
		events uint64
	}
	const threads = 4
	run := func(steps, apu bool, depth, l1, cores int) out {
		e, c, g := newCPMode(t, cores, apu)
		c.spec.StoreBuffer, c.spec.L1Lines = depth, l1
		a := g.Mem().AllocData(mem.GPU, 16*64, "x")
		o := out{ends: make([]sim.Time, threads), got: make([][]uint64, threads), counts: make([]Counts, threads), busy: make([]sim.Duration, threads)}
		for i := range threads {
			var ops []op
			for k := range 14 {
				w := a + mem.Addr(64*((i+k)%5)) // lines shared with the other threads
				switch (i + 3*k) % 7 {
				case 0:
					ops = append(ops, op{k: opLine, a: mem.Line(w)})
				case 1:
					ops = append(ops, op{k: opStore, a: w + 8, v: uint64(100*i + k)}, op{k: opStore, a: w + 64*8, v: uint64(k)}, op{k: opStore, a: w + 16, v: 1})
				case 2:
					ops = append(ops, op{k: opRMW, a: a + 64*9, v: 1}, op{k: opInstr, v: uint64(7 * (k + 1))})
				case 3:
					ops = append(ops, op{k: opStore, a: w, v: uint64(k)}, op{k: opRelease})
				case 4:
					ops = append(ops, op{k: opAcquire}, op{k: opLoad, a: w + 8})
				case 5:
					ops = append(ops, op{k: opRMW, a: w + 24, v: uint64(i + 1)})
				default:
					ops = append(ops, op{k: opStore, a: w, v: 3}, op{k: opLoad, a: w}, op{k: opInstr, v: 0})
				}
			}
			c.Spawn(fmt.Sprint("t", i), func(th *Thread) {
				th.Sleep(sim.Duration(i) * 130 * sim.Nanosecond)
				if steps {
					th.RunSteps(&scriptSteps{th: th, ops: ops, got: &o.got[i]})
				} else {
					runBlocking(th, ops, &o.got[i])
				}
				o.ends[i], o.counts[i], o.busy[i] = th.Now(), th.Counts(), th.BusyTime()
			})
		}
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		for k := range 16 * 8 {
			o.mem = append(o.mem, g.CoherentLoad64(a+mem.Addr(8*k)))
		}
		o.events = e.Events()
		return o
	}
	for _, apu := range []bool{false, true} {
		for _, depth := range []int{0, 2, 32} {
			for _, l1 := range []int{2, 512} {
				for _, cores := range []int{1, 2, threads} {
					name := fmt.Sprintf("apu %v, store buffer %d, L1 %d lines, %d cores", apu, depth, l1, cores)
					a, b := run(false, apu, depth, l1, cores), run(true, apu, depth, l1, cores)
					if fmt.Sprint(a) != fmt.Sprint(b) {
						t.Errorf("%s:\nblocking %v\nsteps    %v", name, a, b)
					}
					if a.events == 0 || a.ends[threads-1] == 0 {
						t.Errorf("%s: nothing ran", name)
					}
				}
			}
		}
	}
}
