package nic_test

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/cpu"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/sim"
)

// xtqEnv is two xtq-preset nodes: node 0 sends tasks, node 1 has a posted
// receive buffer, a user-mode queue, a copy kernel and a signal
// registered at index 42.
type xtqEnv struct {
	t      *testing.T
	c      *cluster.Cluster
	q      *gpu.AQLQueue
	pt     int
	eq     []*nic.EQ
	dst    mem.Addr // KLUT buffer: tasks copy their payload to dst + arg2
	sig    mem.Addr
	obj    uint64
	kargs  [][]uint64 // per launched work-group 0: the 3 arguments it read
	kargAt []mem.Addr
	gap    sim.Time // send: the initiator's pause between tasks
}

const taskIdx = 42

func newXtqEnv(t *testing.T, qsize int, recvBytes uint64, kernelVALU int, opts ...func(*cluster.Spec)) *xtqEnv {
	t.Helper()
	return newXtqEnvN(t, 2, qsize, recvBytes, kernelVALU, opts...)
}

// newXtqEnvN is newXtqEnv on nodes nodes (node 1 the target).
func newXtqEnvN(t *testing.T, nodes, qsize int, recvBytes uint64, kernelVALU int, opts ...func(*cluster.Spec)) *xtqEnv {
	t.Helper()
	s := cluster.XTQ()
	for _, o := range opts {
		o(&s)
	}
	c, err := cluster.New(sim.New(1), s, nodes, true)
	if err != nil {
		t.Fatal(err)
	}
	v := &xtqEnv{t: t, c: c}
	tg := c.Nodes[1]
	if v.q, err = tg.GPU.NewAQLQueue("tasks", qsize); err != nil {
		t.Fatal(err)
	}
	v.dst = tg.Mem.Alloc(mem.GPU, 1<<20, "dst")
	v.sig = tg.GPU.NewSignal("sig", 0)
	v.obj = tg.GPU.LoadKernel(gpu.KernelCode{Name: "copy", Body: func(wg *gpu.WG, kernarg mem.Addr) {
		a := wg.LoadArgs(kernarg, 3)
		if wg.ID == 0 {
			v.kargs = append(v.kargs, a)
			v.kargAt = append(v.kargAt, kernarg)
		}
		wg.VALU(kernelVALU)
		if wg.ID == 0 {
			n := int(binary.LittleEndian.Uint64(wg.Mem().Bytes(kernarg+24, 8)))
			copy(wg.Mem().Bytes(mem.Addr(a[0]+a[2]), n), wg.Mem().Bytes(mem.Addr(a[1]), n))
		}
	}})
	for _, nd := range c.Nodes {
		v.eq = append(v.eq, nd.NIC.NewEQ(0, 0))
		v.pt = nd.NIC.PTAlloc(v.eq[len(v.eq)-1], false)
	}
	if recvBytes > 0 {
		v.post(recvBytes)
	}
	must(t, tg.NIC.XtqRegisterKernel(taskIdx, nic.XtqKernel{Object: v.obj, Buffer: v.dst, Signal: v.sig}))
	must(t, tg.NIC.XtqRegisterQueue(taskIdx, nic.XtqQueue{Base: v.q.Base(), Size: v.q.Size(),
		WriteIndex: v.q.WriteIndex(), ReadIndex: v.q.ReadIndex(), Doorbell: v.q.Doorbell()}))
	return v
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// post appends a MANAGE_LOCAL receive buffer of n bytes on node 1.
func (v *xtqEnv) post(n uint64) mem.Addr {
	nd := v.c.Nodes[1]
	buf := nd.Mem.Alloc(mem.Host, n, "recv")
	nd.NIC.MEAppend(v.pt, nic.ME{Start: buf, Length: n, MatchID: nic.AnyID, IgnoreBits: ^uint64(0),
		Options: nic.MEOpPut | nic.MEManageLocal}, nic.Priority)
	return buf
}

// task is one XtqPut: kernel and queue index, payload bytes, destination
// offset (arg 2) and the copy length (arg 3).
type task struct {
	kernel  uint64
	queue   uint16
	payload []byte
	off     uint64
	signal  mem.Addr // the initiator's completion-signal field
}

// send posts the tasks from node 0, one after another.
func (v *xtqEnv) send(tasks ...task) {
	nd := v.c.Nodes[0]
	v.c.Engine.Spawn("initiator", func(p *sim.Proc) {
		for _, tk := range tasks {
			cmd := nd.Mem.AllocData(mem.Host, 64+32, "cmd")
			pkt := gpu.AQLPacket{Header: gpu.DispatchHeader, WGSize: 64, Grid: 128, KernelObject: tk.kernel,
				QueueIndex: tk.queue, Signal: tk.signal}
			b := pkt.Encode()
			nd.Mem.Write(cmd, b[:])
			nd.Mem.Store64(cmd+64+16, tk.off)
			nd.Mem.Store64(cmd+64+24, uint64(len(tk.payload)))
			pay := nd.Mem.Alloc(mem.Host, uint64(len(tk.payload)), "payload")
			nd.Mem.Write(pay, tk.payload)
			nd.NIC.XtqPut(p, nic.GatherPut{Xtq: true, Target: 1, PT: v.pt, Cmd: cmd, CmdLen: 64 + 32,
				Payload: pay, PayloadLen: uint64(len(tk.payload)), EQ: v.eq[0]})
			p.Sleep(v.gap)
		}
	})
}

func payload(n, seed int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + seed*13 + 1)
	}
	return b
}

func (v *xtqEnv) run() {
	v.t.Helper()
	if err := v.c.Engine.Run(); err != nil {
		v.t.Fatal(err)
	}
}

// The target NIC rewrites the command packet through its tables: the
// queued packet names the KLUT kernel object and signal, its kernarg points
// just after the packet in the posted buffer, and arguments 0 and 1 hold
// the KLUT buffer and the payload address; argument 2 passes through.
func TestXtqLookupTableRewrite(t *testing.T) {
	v := newXtqEnv(t, 8, 64<<10, 1)
	recv := v.c.Nodes[1].Mem // the first posted buffer lands at its start
	v.c.Nodes[1].Mem.Store64(v.sig, 1)
	p := payload(4096, 1)
	v.send(task{kernel: taskIdx, queue: taskIdx, payload: p, off: 512})
	v.run()
	if len(v.kargs) != 1 {
		t.Fatalf("%d kernels ran, want 1", len(v.kargs))
	}
	a, at := v.kargs[0], v.kargAt[0]
	if mem.Addr(a[0]) != v.dst || mem.Addr(a[1]) != at+32 || a[2] != 512 {
		t.Errorf("args = %#x (kernarg %#x), want [KLUT buffer %#x, payload %#x, 512]", a, at, v.dst, at+32)
	}
	if got := recv.Bytes(v.dst+512, len(p)); string(got) != string(p) {
		t.Error("the kernel did not copy the payload to the KLUT buffer")
	}
	if got := recv.Load64(v.sig); got != 0 {
		t.Errorf("completion signal = %d after one task, want 0 (decremented from 1)", got)
	}
	r := v.q.Runs()[0]
	if r.Signal != v.sig || !r.Finished() || r.Done < r.BodyEnd {
		t.Errorf("run signal %#x finished=%v done %v body end %v", r.Signal, r.Finished(), r.Done, r.BodyEnd)
	}
	ack := drain(v.eq[0])
	if len(ack) != 2 || ack[1].Type != nic.EventAck || ack[1].NIFail != nic.FailOK {
		t.Errorf("initiator events %v, want SEND then ACK OK", ack)
	}
}

// A KLUT entry without a signal keeps the initiator's completion signal.
func TestXtqKeepsInitiatorSignal(t *testing.T) {
	v := newXtqEnv(t, 8, 64<<10, 1)
	tg := v.c.Nodes[1]
	must(t, tg.NIC.XtqRegisterKernel(7, nic.XtqKernel{Object: v.obj, Buffer: v.dst}))
	own := tg.GPU.NewSignal("own", 1)
	v.send(task{kernel: 7, queue: taskIdx, payload: payload(64, 2), signal: own})
	v.run()
	if tg.Mem.Load64(own) != 0 || tg.Mem.Load64(v.sig) != 0 {
		t.Errorf("initiator's signal = %d (want 0), KLUT signal untouched = %d (want 0)", tg.Mem.Load64(own), tg.Mem.Load64(v.sig))
	}
}

// Every doorbell write finds the announced packet's header published, its
// fields rewritten, and the task's payload and arguments in memory.
func TestXtqDoorbellNeverPrecedesDataOrPacket(t *testing.T) {
	v := newXtqEnv(t, 4, 1<<20, 1)
	tg := v.c.Nodes[1]
	m := tg.Mem
	const tasks = 6
	var sent []task
	for i := range tasks {
		sent = append(sent, task{kernel: taskIdx, queue: taskIdx, payload: payload(1024*(i+1), i), off: uint64(i) * 8192})
	}
	m.Store64(v.sig, tasks)
	checked := 0
	probe := v.c.Engine.Spawn("doorbell probe", func(p *sim.Proc) {
		last := uint64(0)
		for {
			p.WaitUntil(m.Watch(v.q.Doorbell()), "doorbell", func() bool { return m.Load64(v.q.Doorbell()) > last })
			last = m.Load64(v.q.Doorbell())
			w := last - 1
			raw := m.Bytes(v.q.Slot(w), 64)
			pk := gpu.DecodeAQL(raw)
			if pk.Header != gpu.DispatchHeader || pk.KernelObject != v.obj || pk.Signal != v.sig {
				t.Errorf("doorbell %d at %v: slot holds header %#x object %#x signal %#x", last, p.Now(), pk.Header, pk.KernelObject, pk.Signal)
				continue
			}
			args := pk.Kernarg
			pay := mem.Addr(m.Load64(args + 8))
			want := sent[w].payload
			if got := m.Bytes(pay, len(want)); pay != args+32 || string(got) != string(want) {
				t.Errorf("doorbell %d at %v: payload not in memory yet", last, p.Now())
			}
			if mem.Addr(m.Load64(args)) != v.dst {
				t.Errorf("doorbell %d: argument 0 not rewritten yet", last)
			}
			checked++
		}
	})
	probe.SetDaemon()
	v.send(sent...)
	v.run()
	if checked != tasks || m.Load64(v.sig) != 0 {
		t.Fatalf("checked %d doorbells, signal %d; want %d and 0", checked, m.Load64(v.sig), tasks)
	}
}

// A queue of two slots under six slow tasks: the NIC holds the tasks it
// cannot enqueue and re-polls; every task runs once, in order, and nothing
// is overwritten.
func TestXtqFullQueueBackPressuresWithoutLoss(t *testing.T) {
	v := newXtqEnv(t, 2, 1<<20, 20000, retryPolicy)
	tg := v.c.Nodes[1]
	const tasks = 6
	tg.Mem.Store64(v.sig, tasks)
	var sent []task
	for i := range tasks {
		sent = append(sent, task{kernel: taskIdx, queue: taskIdx, payload: payload(256, i), off: uint64(i) * 256})
	}
	v.send(sent...)
	v.run()
	st := tg.NIC.XtqStats()
	if len(v.q.Runs()) != tasks || st.Tasks != tasks || st.FullPolls == 0 || st.MaxHeld < 2 {
		t.Fatalf("runs %d, stats %+v: want %d tasks, full polls > 0, several held", len(v.q.Runs()), st, tasks)
	}
	for i, tk := range sent {
		if got := tg.Mem.Bytes(v.dst+mem.Addr(tk.off), 256); string(got) != string(tk.payload) {
			t.Errorf("task %d's payload is missing or overwritten", i)
		}
		if v.kargs[i][2] != tk.off {
			t.Errorf("kernel %d ran task with offset %d, want %d (order)", i, v.kargs[i][2], tk.off)
		}
	}
	if tg.Mem.Load64(v.sig) != 0 {
		t.Errorf("signal = %d, want 0", tg.Mem.Load64(v.sig))
	}
}

// Under the drop policy a task that finds the queue full fails with
// XTQ_QUEUE_FULL (event at the target, failed ack) and the run ends.
func TestXtqFullQueueDropPolicy(t *testing.T) {
	v := newXtqEnv(t, 1, 1<<20, 20000, func(s *cluster.Spec) { s.NIC.XtqFullPolicy = "drop" })
	var sent []task
	for i := range 4 {
		sent = append(sent, task{kernel: taskIdx, queue: taskIdx, payload: payload(64, i)})
	}
	v.send(sent...)
	v.run()
	fails := 0
	for _, ev := range drain(v.eq[1]) {
		if ev.Type == nic.EventTask && ev.NIFail == nic.FailTaskQueueFull {
			fails++
		}
	}
	if fails == 0 || fails+len(v.q.Runs()) != 4 {
		t.Errorf("%d dropped + %d ran, want some dropped and 4 in all", fails, len(v.q.Runs()))
	}
}

// Bad input is a failure event naming the problem and a failed ack, never
// a panic or a hang.
func TestXtqFailureEvents(t *testing.T) {
	cases := []struct {
		name   string
		recv   uint64
		tk     task
		fail   nic.FailType
		hdrIdx uint64
	}{
		{"unknown kernel", 1 << 16, task{kernel: 5, queue: taskIdx, payload: payload(64, 0)}, nic.FailTaskNoKernel, 5},
		{"unknown queue", 1 << 16, task{kernel: taskIdx, queue: 9, payload: payload(64, 0)}, nic.FailTaskNoQueue, 9},
		{"payload larger than the posted buffer", 1024, task{kernel: taskIdx, queue: taskIdx, payload: payload(4096, 0)}, nic.FailTaskTooLarge, 0},
		{"no posted buffer", 0, task{kernel: taskIdx, queue: taskIdx, payload: payload(64, 0)}, nic.FailTaskNoBuffer, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := newXtqEnv(t, 4, tc.recv, 1)
			v.send(tc.tk)
			v.run()
			evs := drain(v.eq[1])
			if len(evs) != 1 || evs[0].Type != nic.EventTask || evs[0].NIFail != tc.fail {
				t.Fatalf("target events %v, want one TASK %v", evs, tc.fail)
			}
			if tc.hdrIdx != 0 && evs[0].HdrData != tc.hdrIdx {
				t.Errorf("event names index %d, want %d", evs[0].HdrData, tc.hdrIdx)
			}
			var ack *nic.Event
			for _, ev := range drain(v.eq[0]) {
				if ev.Type == nic.EventAck {
					ack = &ev
				}
			}
			if ack == nil || ack.NIFail != tc.fail {
				t.Errorf("initiator ack %v, want failure %v", ack, tc.fail)
			}
			if len(v.q.Runs()) != 0 {
				t.Error("a failed task launched a kernel")
			}
			if fmt.Sprint(tc.fail) == "FAIL?" {
				t.Errorf("failure %d has no name", tc.fail)
			}
		})
	}
}

// Registration rejects indices beyond the table.
func TestXtqRegisterRange(t *testing.T) {
	v := newXtqEnv(t, 4, 0, 1)
	n := v.c.Nodes[1].NIC
	if err := n.XtqRegisterKernel(64, nic.XtqKernel{}); err == nil {
		t.Error("kernel index 64 accepted with a 64-entry table")
	}
	if err := n.XtqRegisterQueue(0, nic.XtqQueue{Size: 3}); err == nil {
		t.Error("queue of 3 slots accepted")
	}
}

// Sixteen slow tasks into a two-slot queue: at most nic.xtq_hold_depth
// (8) are held on the NIC at once, the others wait at the ingress, and
// every task still runs once, in order, with its own payload.
func TestXtqHoldBufferBoundedWithoutLoss(t *testing.T) {
	for _, depth := range []int{8, 1} {
		v := newXtqEnv(t, 2, 1<<20, 20000, retryPolicy, func(s *cluster.Spec) { s.NIC.XtqHoldDepth = depth })
		tg := v.c.Nodes[1]
		const tasks = 16
		tg.Mem.Store64(v.sig, tasks)
		var sent []task
		for i := range tasks {
			sent = append(sent, task{kernel: taskIdx, queue: taskIdx, payload: payload(256, i), off: uint64(i) * 256})
		}
		v.send(sent...)
		v.run()
		st := tg.NIC.XtqStats()
		if st.MaxHeld != depth || st.MaxBacklog == 0 || st.IngressWaits == 0 || st.IngressWaitTime <= 0 {
			t.Errorf("depth %d: stats %+v: want the hold buffer filled to exactly %d and headers waiting at the ingress", depth, st, depth)
		}
		if len(v.q.Runs()) != tasks || st.Tasks != tasks || tg.Mem.Load64(v.sig) != 0 {
			t.Fatalf("depth %d: %d runs, %d enqueued, signal %d: want %d, %d, 0", depth, len(v.q.Runs()), st.Tasks, tg.Mem.Load64(v.sig), tasks, tasks)
		}
		for i, tk := range sent {
			if got := tg.Mem.Bytes(v.dst+mem.Addr(tk.off), 256); string(got) != string(tk.payload) {
				t.Errorf("depth %d: task %d's payload is missing or overwritten", depth, i)
			}
			if v.kargs[i][2] != tk.off {
				t.Errorf("depth %d: kernel %d ran the task with offset %d, want %d (order)", depth, i, v.kargs[i][2], tk.off)
			}
		}
	}
}

// hostTables puts the lookup tables in host memory behind a cache of the
// given entries and ways.
// retryPolicy selects the retry extension (hold and re-poll a full queue)
// instead of the default drop.
func retryPolicy(s *cluster.Spec) { s.NIC.XtqFullPolicy = "retry" }

// The default queue-full policy is the documents': a full queue drops the
// task (a TASK failure event at the target), nothing is retried.
func TestXtqFullQueueDropsByDefault(t *testing.T) {
	if p := cluster.XTQ().NIC.XtqFullPolicy; p != "drop" {
		t.Fatalf("preset xtq: nic.xtq_full_policy = %s, want drop", p)
	}
	v := newXtqEnv(t, 2, 1<<20, 20000)
	tg := v.c.Nodes[1]
	var sent []task
	for i := range 6 {
		sent = append(sent, task{kernel: taskIdx, queue: taskIdx, payload: payload(64, i), off: uint64(i) * 64})
	}
	tg.Mem.Store64(v.sig, 6)
	v.send(sent...)
	v.run()
	st := tg.NIC.XtqStats()
	if st.Failures == 0 || st.Tasks+st.Failures != 6 || st.FullPolls != st.Failures {
		t.Fatalf("stats %+v: want some of 6 tasks dropped on the 2-slot queue (one full read each), the rest enqueued", st)
	}
}

func hostTables(entries, ways int) func(*cluster.Spec) {
	return func(s *cluster.Spec) {
		s.NIC.XtqTables, s.NIC.XtqCacheEntries, s.NIC.XtqCacheWays = "host", entries, ways
	}
}

// sendTasks runs n copy tasks (kernel and queue index 42) and returns the
// target NIC's XTQ counters.
func sendTasks(t *testing.T, n int, gap sim.Time, opts ...func(*cluster.Spec)) (nic.XtqStats, *xtqEnv) {
	t.Helper()
	v := newXtqEnv(t, 8, 1<<20, 1, opts...)
	v.gap = gap
	tg := v.c.Nodes[1]
	tg.Mem.Store64(v.sig, uint64(n))
	var sent []task
	for i := range n {
		sent = append(sent, task{kernel: taskIdx, queue: taskIdx, payload: payload(128, i), off: uint64(i) * 128})
	}
	v.send(sent...)
	v.run()
	if len(v.q.Runs()) != n || tg.Mem.Load64(v.sig) != 0 {
		t.Fatalf("%d of %d tasks ran", len(v.q.Runs()), n)
	}
	return tg.NIC.XtqStats(), v
}

// With the tables in host memory the first task misses on its kernel and
// queue entries and pays a DMA read round trip for them (issued
// together); later tasks hit and pay what on-NIC tables cost. A
// one-entry cache keeps missing.
func TestXtqHostTablesCache(t *testing.T) {
	const gap = 5 * sim.Microsecond // each task lands after the previous one's lookups
	onNIC, v := sendTasks(t, 1, gap)
	spec := v.c.Nodes[1].NIC.Spec()
	hit := 2 * spec.XtqLookup // the cost of two on-NIC lookups
	if onNIC.LookupTime != hit || onNIC.CacheHits+onNIC.CacheMisses != 0 {
		t.Fatalf("on-NIC tables: lookup time %v, cache %d/%d; want %v and no cache use", onNIC.LookupTime, onNIC.CacheHits, onNIC.CacheMisses, hit)
	}
	one, v := sendTasks(t, 1, gap, hostTables(16, 4))
	pcie := v.c.Nodes[1].NIC.Link().Spec()
	roundTrip := 2*pcie.Latency + pcie.Overhead
	if v.c.Nodes[1].NIC.Link().OnChip() {
		// On the APU's coherent directory a miss is a coherent read:
		// the directory lookup and the memory access.
		roundTrip = v.c.Spec.SoC.DirLatency + v.c.Spec.CPU.DRAMLatency
	}
	if one.CacheMisses != 2 || one.CacheHits != 0 || one.LookupTime < roundTrip || one.LookupTime > roundTrip+100*sim.Nanosecond {
		t.Errorf("host tables, cold: %d misses, %d hits, lookup %v; want 2 misses costing one DMA read round trip (%v)",
			one.CacheMisses, one.CacheHits, one.LookupTime, roundTrip)
	}
	three, _ := sendTasks(t, 3, gap, hostTables(16, 4))
	if three.CacheMisses != 2 || three.CacheHits != 4 || three.LookupTime-one.LookupTime != 2*spec.XtqLookup {
		t.Errorf("host tables, warm: %d misses, %d hits, lookup %v (cold task %v); want the later tasks to hit at %v each",
			three.CacheMisses, three.CacheHits, three.LookupTime, one.LookupTime, spec.XtqLookup)
	}
	thrash, _ := sendTasks(t, 3, gap, hostTables(1, 1))
	// One entry: the kernel and queue entries evict each other, so every
	// task misses on the one it looked up longest ago.
	if thrash.CacheMisses != 4 || thrash.CacheHits != 2 || thrash.LookupTime < 3*roundTrip {
		t.Errorf("one-entry cache: %d misses, %d hits, lookup %v; want a miss per task after the first two", thrash.CacheMisses, thrash.CacheHits, thrash.LookupTime)
	}
	// Back to back, the later tasks find the entries' reads in flight and
	// wait for them instead of reading again.
	burst, _ := sendTasks(t, 3, 0, hostTables(16, 4))
	if burst.CacheMisses != 2 || burst.CacheMerged+burst.CacheHits != 4 || burst.CacheMerged == 0 {
		t.Errorf("burst: %d misses, %d merged, %d hits; want 2 reads and the other lookups merged or hit", burst.CacheMisses, burst.CacheMerged, burst.CacheHits)
	}
}

// Re-registering an index rewrites its host-memory entry and invalidates
// the cached copy: the next task uses the new entry.
func TestXtqHostTableReRegistration(t *testing.T) {
	v := newXtqEnv(t, 8, 1<<20, 1, hostTables(16, 4))
	tg := v.c.Nodes[1]
	other := tg.Mem.Alloc(mem.GPU, 4096, "other")
	tg.Mem.Store64(v.sig, 2)
	first, second := payload(64, 1), payload(64, 2)
	v.send(task{kernel: taskIdx, queue: taskIdx, payload: first})
	v.c.Engine.At(50*sim.Microsecond, func() {
		must(t, tg.NIC.XtqRegisterKernel(taskIdx, nic.XtqKernel{Object: v.obj, Buffer: other, Signal: v.sig}))
		v.send(task{kernel: taskIdx, queue: taskIdx, payload: second})
	})
	v.run()
	st := tg.NIC.XtqStats()
	if got := tg.Mem.Bytes(v.dst, 64); string(got) != string(first) {
		t.Error("the first task did not reach the first buffer")
	}
	if got := tg.Mem.Bytes(other, 64); string(got) != string(second) {
		t.Errorf("the second task did not reach the re-registered buffer (cache %d hits, %d misses)", st.CacheHits, st.CacheMisses)
	}
	if st.CacheMisses != 3 || st.CacheHits != 1 {
		t.Errorf("cache %d misses, %d hits; want the kernel entry missed again after re-registration (3, 1)", st.CacheMisses, st.CacheHits)
	}
}

// A CPU task (agent-dispatch packet): the NIC rewrites it through the
// Function Lookup Table (function pointer, argument 0 = FLUT buffer,
// argument 1 = payload address, 2 and 3 passed through, FLUT signal) and
// enqueues it into the CPU agent queue; at the doorbell the packet is
// published and the payload is in memory; the agent thread runs the
// function, which copies the payload, and decrements the signal.
func TestXtqCPUTaskRewriteAndDoorbellOrder(t *testing.T) {
	v := newXtqEnv(t, 8, 1<<20, 1)
	tg, in := v.c.Nodes[1], v.c.Nodes[0]
	m := tg.Mem
	aq, err := tg.CPU.NewAgentQueue("ctasks", 4)
	must(t, err)
	var got [][4]uint64
	ptr := tg.CPU.LoadFunction(cpu.Function{Name: "copy", Body: func(th *cpu.Thread, a [4]uint64) {
		got = append(got, a)
		copy(m.Bytes(mem.Addr(a[0]+a[2]), int(a[3])), m.Bytes(mem.Addr(a[1]), int(a[3])))
		th.Compute(2*a[3], 1)
	}})
	sig := tg.GPU.NewSignal("csig", 2)
	must(t, tg.NIC.XtqRegisterFunction(5, nic.XtqFunction{Pointer: ptr, Buffer: v.dst, Signal: sig}))
	must(t, tg.NIC.XtqRegisterQueue(6, nic.XtqQueue{Base: aq.Base(), Size: aq.Size(), WriteIndex: aq.WriteIndex(),
		ReadIndex: aq.ReadIndex(), Doorbell: aq.Doorbell(), Agent: nic.AgentCPU}))
	pays := [][]byte{payload(300, 1), payload(2000, 2)}
	checked := 0
	probe := v.c.Engine.Spawn("doorbell probe", func(p *sim.Proc) {
		last := uint64(0)
		for {
			p.WaitUntil(m.Watch(aq.Doorbell()), "doorbell", func() bool { return m.Load64(aq.Doorbell()) > last })
			last = m.Load64(aq.Doorbell())
			pk := cpu.DecodeAgent(m.Bytes(aq.Slot(last-1), 64))
			want := pays[last-1]
			if pk.Header != cpu.AgentDispatchHeader || pk.Function != ptr || pk.Signal != sig || mem.Addr(pk.Args[0]) != v.dst ||
				pk.Args[2] != 4096*(last-1) || pk.Args[3] != uint64(len(want)) || pk.QueueIndex != 0 {
				t.Errorf("doorbell %d: slot holds %+v", last, pk)
			} else if string(m.Bytes(mem.Addr(pk.Args[1]), len(want))) != string(want) {
				t.Errorf("doorbell %d: the payload is not in memory yet", last)
			}
			checked++
		}
	})
	probe.SetDaemon()
	v.c.Engine.Spawn("initiator", func(p *sim.Proc) {
		for i, pay := range pays {
			cmd := in.Mem.AllocData(mem.Host, 64, "cmd")
			b := cpu.AgentPacket{Header: cpu.AgentDispatchHeader, QueueIndex: 6, Function: 5,
				Args: [4]uint64{0, 0, 4096 * uint64(i), uint64(len(pay))}}.Encode()
			in.Mem.Write(cmd, b[:])
			src := in.Mem.Alloc(mem.Host, uint64(len(pay)), "payload")
			in.Mem.Write(src, pay)
			in.NIC.XtqPut(p, nic.GatherPut{Xtq: true, Target: 1, PT: v.pt, Cmd: cmd, CmdLen: 64, Payload: src, PayloadLen: uint64(len(pay))})
		}
	})
	v.run()
	if checked != 2 || len(got) != 2 || m.Load64(sig) != 0 || aq.Stats().Calls != 2 {
		t.Fatalf("%d doorbells checked, %d calls, signal %d: want 2, 2, 0", checked, len(got), m.Load64(sig))
	}
	for i, pay := range pays {
		if string(m.Bytes(v.dst+mem.Addr(4096*i), len(pay))) != string(pay) {
			t.Errorf("task %d: the function did not copy the payload into the FLUT buffer", i)
		}
		if got[i][1] != got[0][1]+uint64(i)*(64+300) && i > 0 {
			t.Errorf("task %d's payload at %#x: want it right after the first task (MANAGE_LOCAL)", i, got[i][1])
		}
	}
}

// While task headers wait at node 1's ingress for a hold slot, a plain
// put from another source is not stuck behind them: it lands long before
// the held tasks drain (they wait for 20,000-cycle kernels).
func TestXtqHoldBufferLetsOtherSourcesPass(t *testing.T) {
	v := newXtqEnvN(t, 3, 2, 1<<20, 20000, retryPolicy, func(s *cluster.Spec) { s.NIC.XtqHoldDepth = 2 })
	tg, other := v.c.Nodes[1], v.c.Nodes[2]
	const tasks = 8
	tg.Mem.Store64(v.sig, tasks)
	var sent []task
	for i := range tasks {
		sent = append(sent, task{kernel: taskIdx, queue: taskIdx, payload: payload(256, i), off: uint64(i) * 256})
	}
	v.send(sent...)
	// A second portal on every node for plain puts.
	var plainPT int
	plainEQ := make([]*nic.EQ, 3)
	for i, nd := range v.c.Nodes {
		plainEQ[i] = nd.NIC.NewEQ(0, 0)
		plainPT = nd.NIC.PTAlloc(plainEQ[i], false)
	}
	dst := tg.Mem.Alloc(mem.Host, 64, "plain dst")
	tg.NIC.MEAppend(plainPT, nic.ME{Start: dst, Length: 64, MatchID: nic.AnyID, IgnoreBits: ^uint64(0), Options: nic.MEOpPut}, nic.Priority)
	want := payload(64, 9)
	var landed sim.Time
	v.c.Engine.Spawn("other source", func(p *sim.Proc) {
		p.Sleep(10 * sim.Microsecond) // the hold buffer is full by then
		if tg.NIC.XtqStats().MaxBacklog == 0 {
			t.Error("no task header was waiting when the plain put was sent")
		}
		src := other.Mem.Alloc(mem.Host, 64, "plain src")
		other.Mem.Write(src, want)
		other.NIC.Doorbell(p, nic.Command{Op: nic.CmdPut, MD: &nic.MD{Start: src, Length: 64}, Length: 64, Target: 1, PT: plainPT})
		p.WaitUntil(plainEQ[1].Signal(), "the plain put's PUT event", func() bool { return plainEQ[1].Len() > 0 })
		landed = p.Now()
	})
	v.run()
	if string(tg.Mem.Bytes(dst, 64)) != string(want) || landed == 0 || landed > 20*sim.Microsecond {
		t.Errorf("plain put landed at %v: want it within 10us of its send, not after the held tasks", landed)
	}
	if len(v.q.Runs()) != tasks || tg.Mem.Load64(v.sig) != 0 || tg.NIC.XtqStats().MaxHeld != 2 {
		t.Errorf("%d of %d tasks ran, max held %d (want 2)", len(v.q.Runs()), tasks, tg.NIC.XtqStats().MaxHeld)
	}
}
