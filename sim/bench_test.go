package sim

import "testing"

type tick struct {
	e *Engine
	n int
}

func (k *tick) Handle(arg uint64) {
	k.n++
	k.e.AtH(k.e.now+Time(1+arg%97), k, arg*2862933555777941757+3037000493)
}

// BenchmarkCallbackEvents measures the steady-state rate of allocation-free
// callback events with 1e3 pending.
func BenchmarkCallbackEvents(b *testing.B) {
	e := New(1)
	k := &tick{e: e}
	for i := range 1000 {
		e.AtH(Time(i), k, uint64(i))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		t, ev := e.queue.pop()
		e.now = t
		e.events++
		ev.h.Handle(ev.arg)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkEngineRun measures whole Run calls of the same workload.
func BenchmarkEngineRun(b *testing.B) {
	e := New(1)
	k := &tick{e: e}
	for i := range 1000 {
		e.AtH(Time(i), k, uint64(i))
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := e.Events()
	for range b.N {
		_ = e.RunUntil(e.now + 1000*Picosecond)
	}
	b.ReportMetric(float64(e.Events()-start)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkProcessSwitch measures one sleep/wake round trip of a process
// (a coroutine switch out and back in) with 1e3 live processes.
func BenchmarkProcessSwitch(b *testing.B) {
	e := New(1)
	const procs = 1000
	for i := range procs {
		e.Spawn("p", func(p *Proc) {
			for {
				p.Sleep(Time(1 + i%13))
			}
		})
	}
	measureSwitches(b, e)
}

// measureSwitches starts e's sleeping processes, then runs b.N of their
// wake-ups and reports the time per wake-up.
func measureSwitches(b *testing.B, e *Engine) {
	_ = e.RunUntil(100) // all started
	b.ReportAllocs()
	b.ResetTimer()
	start := e.Events()
	for e.Events()-start < uint64(b.N) {
		_ = e.RunUntil(e.now + 50)
	}
	b.StopTimer()
	n := e.Events() - start
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/switch")
	e.Close()
}

// BenchmarkRadixHeld is the hold model on the radix heap alone: with
// pending keys in the heap, each op looks at the earliest key, pops it
// and pushes one in its place at now plus a distance. out-of-step draws
// the distances log-uniformly from 256 ps to 1 µs, so nearly every key has
// a time of its own (a remote-task allreduce's nodes, docs/speed.md); in
// step draws them from a few fixed latencies, so keys share times (a
// kernel-boundary ring). Reports ns per op.
func BenchmarkRadixHeld(b *testing.B) {
	for _, c := range []struct {
		name    string
		pending int
		inStep  bool
	}{
		{"out-of-step/256", 256, false},
		{"out-of-step/4096", 4096, false},
		{"in-step/4096", 4096, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			var r radixHeap
			x := uint64(0x9e3779b97f4a7c15)
			dist := func() Time {
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
				if c.inStep {
					return Time(1000 * (1 + x%4))
				}
				return Time(1<<8 + x%(1<<(8+x%13)))
			}
			var seq uint64
			for range c.pending {
				seq++
				r.push(key{t: dist(), seq: seq})
			}
			b.ResetTimer()
			for range b.N {
				_ = r.min()
				k := r.pop()
				seq++
				r.push(key{t: k.t + dist(), seq: seq})
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/hold")
		})
	}
}
