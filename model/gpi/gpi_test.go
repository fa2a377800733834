package gpi_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/cpu"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/model/gpi"
	"github.com/gpunetsim/gpunetsim/model/verbs"
	"github.com/gpunetsim/gpunetsim/sim"
)

// world is rank 0 on a host thread, rank 1 on the GPU (or the host).
func world(t *testing.T, worker gpi.Side) (*cluster.Cluster, *gpi.World) {
	t.Helper()
	c, err := cluster.New(sim.New(1), cluster.GPURDMA(), 2, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Engine.Close)
	w, err := gpi.New(verbs.NewDomain(c, verbs.DefaultSpec()), []gpi.Side{gpi.CPUSide, worker}, 64)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Connect(0); err != nil {
		t.Fatal(err)
	}
	return c, w
}

func kernel(c *cluster.Cluster, node, wgs int, body func(wg *gpu.WG)) {
	g := c.Nodes[node].GPU
	op, _ := g.DispatchOp(gpu.Kernel{Name: "k", WGs: wgs, WGSize: 1024, Body: body})
	g.Submit(op)
}

// The ping-pong of the GPUrdma paper: the CPU notifies, the GPU block's
// notify_waitsome sees it and notifies back; write_notify delivers data
// before its flag.
func TestPingPongAndWriteNotify(t *testing.T) {
	c, w := world(t, gpi.GPUSide)
	src := w.SegmentCreate(1, 0, 4096)
	w.SegmentCreate(1, 1, 4096)
	data := bytes.Repeat([]byte("gpi!"), 1024)
	c.Nodes[0].Mem.Write(src, data)
	var rtt sim.Duration
	var errs []error
	kernel(c, 1, 1, func(wg *gpu.WG) {
		d := w.Device(1)
		id, v, err := d.NotifyWaitsome(wg, 0, 8)
		if err != nil || id != 3 || v != 9 {
			t.Errorf("waitsome got id %d value %d err %v", id, v, err)
		}
		d.NotifyReset(wg, id)
		id, _, _ = d.NotifyWaitsome(wg, 10, 1)
		if got := wg.Mem().Bytes(w.SegmentAddr(1, 1), 4096); !bytes.Equal(got, data) {
			t.Error("write_notify: flag seen before the data")
		}
		errs = append(errs, d.Notify(wg, 0, 5, 1, 0), d.Wait(wg, 0))
	})
	c.Nodes[0].CPU.Spawn("master", func(th *cpu.Thread) {
		h := w.Host(0, th, cost.Default())
		t0 := th.Now()
		errs = append(errs, h.Notify(1, 3, 9, 0), h.WriteNotify(1, 0, 1, 1, 0, 4096, 10, 1, 0))
		if id, _, err := h.NotifyWaitsome(5, 1); err != nil || id != 5 {
			t.Errorf("host waitsome %d %v", id, err)
		}
		rtt = th.Now() - t0
		errs = append(errs, h.Wait(0))
	})
	if err := c.Engine.Run(); err != nil {
		t.Fatal(err)
	}
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if rtt < 5*sim.Microsecond || rtt > 40*sim.Microsecond {
		t.Fatalf("round trip %v: implausible", rtt)
	}
	t.Logf("CPU-GPU GPI round trip with a 4 KiB write_notify: %v", rtt)
}

func TestBadArgumentsAreErrors(t *testing.T) {
	c, w := world(t, gpi.GPUSide)
	var errs []error
	c.Nodes[0].CPU.Spawn("h", func(th *cpu.Thread) {
		h := w.Host(0, th, cost.Default())
		errs = append(errs, h.Notify(1, 64, 1, 0), h.Notify(1, 1, 0, 0), h.Write(7, 0, 1, 7, 0, 8, 0), h.Notify(0, 1, 1, 0))
	})
	if err := c.Engine.Run(); err != nil {
		t.Fatal(err)
	}
	want := []string{"notification 64", "value 0", "segment not created", "target rank 0"}
	for i, err := range errs {
		if err == nil || !strings.Contains(err.Error(), want[i]) {
			t.Errorf("call %d: error %v, want one mentioning %q", i, err, want[i])
		}
	}
}

// The host's notify_waitsome over flags on several lines polls round by
// round: it finds a notification the GPU sends, and when the GPU itself
// waits for a notification nobody sends, the run ends as a deadlock
// naming both waits instead of polling forever.
func TestHostWaitsomeOverLinesEndsInDeadlock(t *testing.T) {
	for _, send := range []bool{true, false} {
		c, w := world(t, gpi.GPUSide)
		var got int
		var herr error
		kernel(c, 1, 1, func(wg *gpu.WG) {
			d := w.Device(1)
			if !send {
				d.NotifyWaitsome(wg, 30, 1) // nobody notifies it
			}
			if err := d.Notify(wg, 0, 12, 1, 0); err != nil {
				t.Error(err)
			}
		})
		c.Nodes[0].CPU.Spawn("master", func(th *cpu.Thread) {
			got, _, herr = w.Host(0, th, cost.Default()).NotifyWaitsome(0, 16)
		})
		err := c.Engine.RunUntil(sim.Second)
		if send {
			if err != nil || herr != nil || got != 12 {
				t.Fatalf("waitsome over two lines: id %d, %v, %v", got, herr, err)
			}
			continue
		}
		var dl *sim.DeadlockError
		if !errors.As(err, &dl) || c.Engine.Now() > sim.Millisecond {
			t.Fatalf("err = %v at %v, want a deadlock at once", err, c.Engine.Now())
		}
		first, _, _ := strings.Cut(err.Error(), "\n")
		if !strings.Contains(first, "polls gpi notifications [0, +16) of rank 0") || !strings.Contains(first, "waits on") {
			t.Errorf("first line %q", first)
		}
	}
}
