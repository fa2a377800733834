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
