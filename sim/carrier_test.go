package sim

import (
	"errors"
	"runtime"
	"testing"
	"time"
)

// Processes spawned one after another reuse finished coroutines; each
// still runs its own body, at its own times, and joiners see it finish.
func TestCarriersReused(t *testing.T) {
	e := New(1)
	var got []int
	e.Spawn("driver", func(d *Proc) {
		for i := range 50 {
			q := e.Spawn("child", func(p *Proc) {
				p.Sleep(3)
				got = append(got, i)
			})
			d.Join(q)
			d.Sleep(7)
		}
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if len(got) != 50 || e.Now() != 500 {
		t.Fatalf("ran %d bodies, ended at %v", len(got), e.Now())
	}
	for i, v := range got {
		if v != i {
			t.Fatalf("body %d ran as %d", i, v)
		}
	}
	if len(e.idle) != 2 { // the children's one coroutine, then the driver's
		t.Fatalf("%d idle coroutines after 50 sequential processes, want 2", len(e.idle))
	}
	e.Close()
}

// A panic in a body that runs on a reused coroutine is reported with the
// process's name, and Close releases idle and live coroutines alike.
func TestCarrierPanicAndClose(t *testing.T) {
	before := runtime.NumGoroutine()
	e := New(1)
	e.Spawn("first", func(p *Proc) { p.Sleep(1) })
	e.SpawnAt(5, "second", func(p *Proc) { panic("boom") })
	var sig Signal
	e.SpawnAt(5, "stuck", func(p *Proc) { p.Wait(&sig, "never") })
	err := e.Run()
	var pe *PanicError
	if !errors.As(err, &pe) || pe.Proc != "second" {
		t.Fatalf("err = %v, want a panic of process second", err)
	}
	e.Close()
	for range 100 {
		if runtime.NumGoroutine() <= before {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("%d goroutines after Close, %d before", runtime.NumGoroutine(), before)
}
