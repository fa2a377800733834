package xtq_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/cpu"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/model/xtq"
	"github.com/gpunetsim/gpunetsim/sim"
)

// cpuSpawn runs CPU tasks on two xtq-preset nodes: node 1 registers an
// "add" function at index 7, a CPU agent queue at index 3 and a GPU queue
// at index 4, then waits for its signal to count tasks down; node 0 sends
// tasks CPU tasks of n bytes aimed at function f and queue q (a GPU task
// when gpuTask). It returns the run's error, the target's runtime and
// agent queue, its buffer and the payload.
func cpuSpawn(t *testing.T, mode xtq.Mode, f uint64, q uint32, n uint64, tasks int, gpuTask bool) (error, *xtq.Runtime, *cpu.AgentQueue, []byte, []byte) {
	t.Helper()
	c, err := cluster.New(sim.New(1), cluster.XTQ(), 2, true)
	if err != nil {
		t.Fatal(err)
	}
	var rts [2]*xtq.Runtime
	var aq *cpu.AgentQueue
	var dst mem.Addr
	want := make([]byte, n)
	for i := range want {
		want[i] = byte(5*i + 3)
	}
	add := func(call xtq.Call) {
		a := call.Args
		m := call.T.CPU().Mem()
		d, s := m.Bytes(mem.Addr(a[0]), int(a[2])), m.Bytes(mem.Addr(a[1]), int(a[2]))
		for i := range d {
			d[i] += s[i]
		}
		call.T.Compute(2*a[2], 1)
	}
	for i, nd := range c.Nodes {
		nd.CPU.Spawn("app", func(th *cpu.Thread) {
			rt, err := xtq.New(th, nd.NIC, nd.GPU, i, 2, mode, cost.Default())
			if err != nil {
				t.Error(err)
				return
			}
			rts[i] = rt
			if i == 0 {
				pay := nd.Mem.Alloc(mem.Host, n, "payload")
				nd.Mem.Write(pay, want)
				rt.Barrier()
				for range tasks {
					if gpuTask {
						err = rt.Put(xtq.Task{Target: 1, Kernel: f, Queue: uint16(q), Grid: 64, WGSize: 64, Args: []uint64{0, 0, n}, Payload: pay, PayloadLen: n})
					} else {
						err = rt.PutCPU(xtq.CPUTask{Target: 1, Function: f, Queue: q, Args: [4]uint64{0, 0, n}, Payload: pay, PayloadLen: n})
					}
					if err != nil {
						t.Error(err)
					}
				}
				return
			}
			dst = nd.Mem.Alloc(mem.Host, n, "dst")
			rt.PostBuffer(nd.Mem.Alloc(mem.Host, 1<<16, "recv"), 1<<16)
			if aq, err = rt.TaskingInitCPU(3, 4); err != nil {
				t.Error(err)
			}
			if _, err := rt.TaskingInit(4, 4); err != nil {
				t.Error(err)
			}
			sig := rt.NewSignal("sig", uint64(tasks))
			if _, err := rt.RegisterFunction(7, "add", add, dst, sig); err != nil {
				t.Error(err)
			}
			if _, err := rt.RegisterKernel(7, gpu.KernelCode{Name: "nop", Body: func(wg *gpu.WG, _ mem.Addr) { wg.VALU(1) }}, dst, sig); err != nil {
				t.Error(err)
			}
			rt.Barrier()
			rt.SignalWait(sig, "tasks", func(v uint64) bool { return v == 0 })
		})
	}
	err = c.Engine.Run()
	return err, rts[1], aq, c.Nodes[1].Mem.Bytes(dst, int(n)), want
}

// A CPU task runs its registered function on the agent thread with the
// rewritten arguments (the registered buffer, the payload's address) and
// decrements the registered signal, under XTQ (the NIC enqueues) and HSA
// (the progress thread does).
func TestCPUTasksRunInBothModes(t *testing.T) {
	for _, mode := range []xtq.Mode{xtq.XTQ, xtq.HSA} {
		const tasks = 4
		err, rt, aq, got, want := cpuSpawn(t, mode, 7, 3, 700, tasks, false)
		if err != nil || len(rt.Failures()) != 0 {
			t.Fatalf("%v: %v %v", mode, err, rt.Failures())
		}
		for i := range got {
			if got[i] != byte(tasks)*want[i] {
				t.Fatalf("%v: byte %d = %d, want %d (every task added once)", mode, i, got[i], byte(tasks)*want[i])
			}
		}
		runs := aq.Runs()
		if len(runs) != tasks || aq.Stats().Calls != tasks {
			t.Fatalf("%v: %d calls, want %d", mode, len(runs), tasks)
		}
		for _, r := range runs {
			if r.Function != "add" || !(r.Seen <= r.Start && r.Start < r.End && r.End < r.Done) {
				t.Errorf("%v: run %+v: want add, seen ≤ start < end < signal", mode, r)
			}
		}
	}
}

// Bad CPU tasks are named failures: an unregistered function index, a CPU
// task aimed at a GPU queue, a kernel aimed at a CPU queue.
func TestBadCPUTasksAreNamedFailures(t *testing.T) {
	cases := []struct {
		name    string
		f       uint64
		q       uint32
		gpuTask bool
		want    string
	}{
		{"unregistered function", 9, 3, false, "XTQ_NO_FUNCTION: function index 9 is not registered"},
		{"unregistered queue", 7, 5, false, "XTQ_NO_QUEUE: queue index 5 is not registered"},
		{"CPU task into a GPU queue", 7, 4, false, "XTQ_WRONG_AGENT: queue index 4 is a queue of the other agent"},
		{"kernel into a CPU queue", 7, 3, true, "XTQ_WRONG_AGENT: queue index 3 is a queue of the other agent"},
	}
	for _, mode := range []xtq.Mode{xtq.XTQ, xtq.HSA} {
		for _, tc := range cases {
			err, rt, _, _, _ := cpuSpawn(t, mode, tc.f, tc.q, 64, 1, tc.gpuTask)
			var dl *sim.DeadlockError
			if !errors.As(err, &dl) {
				t.Errorf("%v %s: run ended with %v, want the target reported waiting", mode, tc.name, err)
			}
			f := rt.Failures()
			if len(f) != 1 || !strings.Contains(f[0].Error(), tc.want) {
				t.Errorf("%v %s: failures %v, want one naming %q", mode, tc.name, f, tc.want)
			}
		}
	}
}
