package spin_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/hw/spin"
	"github.com/gpunetsim/gpunetsim/sim"
)

func pulpSpec(hpus int) spin.Spec {
	s := spin.DefaultSpec()
	s.Model, s.HPUs, s.HPUFreq = spin.ModelPULP, hpus, 1e9
	return s
}

// On the PULP model a handler's packet lands in L2, is staged into L1
// before the handler runs, and leaves through the cluster DMA and the
// output port: the bytes are those of the plain path, the DMA events stay
// in FIFO order, and the traffic shows on the accelerator's counters.
func TestPULPHandlerPath(t *testing.T) {
	const n = 64*1024 + 100
	v := newEnv(t, pulpSpec(8))
	var events []uint64
	ctx, err := v.sp.NewContext(spin.Handlers{Payload: copyHandler(300, 100), Completion: func(h *spin.HandlerCtx) spin.Return {
		h.DMAToHost(nil, 0, h.Msg.Host(), 0)
		return spin.Success
	}}, spin.Policy{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	d, src := v.put(n, ctx)
	ev := v.run()
	if got := v.mems[1].Bytes(d, n); !bytes.Equal(got, src) {
		t.Fatal("pulp path: wrong bytes")
	}
	if ev.Type != nic.EventPut || ev.NIFail != nic.FailOK {
		t.Fatalf("event %+v", ev)
	}
	for _, e := range v.sp.DMAEvents() {
		events = append(events, e.Seq)
	}
	if len(events) != 1 || events[0] != v.sp.Stats().DMAWrites {
		t.Fatalf("completion DMA event seq %v, want the last of %d writes", events, v.sp.Stats().DMAWrites)
	}
	st := v.sp.Stats()
	a := v.sp.Accel().Stats()
	if st.StageWait <= 0 || a.OutBytes < n || a.L2Bytes < 2*n {
		t.Fatalf("stage wait %v, out %d B, L2 %d B: want staging, ≥ %d B out, packets written and staged through L2", st.StageWait, a.OutBytes, a.L2Bytes, n)
	}
	if st.HandlerWork <= 0 || st.HandlerWork > st.HandlerBusy {
		t.Fatalf("handler work %v of busy %v", st.HandlerWork, st.HandlerBusy)
	}
}

// Bring moves an object into the L1 of the running core's cluster once,
// waits for it there within the cluster, and moves it across clusters.
func TestPULPBring(t *testing.T) {
	v := newEnv(t, pulpSpec(8))
	const obj = 612
	var done [3]sim.Time
	ctx, err := v.sp.NewContext(spin.Handlers{Payload: func(h *spin.HandlerCtx) spin.Return {
		h.Bring(0, obj)
		done[h.Packet.Index] = h.Now()
		return spin.Success
	}}, spin.Policy{}, 4096)
	if err != nil {
		t.Fatal(err)
	}
	// HPU 0 and HPU 4 share cluster 0; HPU 1 is in cluster 1.
	lists := make([][]nic.CtxPacket, 5)
	lists[0] = []nic.CtxPacket{{Index: 0, Len: 8}}
	lists[4] = []nic.CtxPacket{{Index: 1, Offset: 8, Len: 8}}
	st, err := v.sp.RunStatic(ctx, lists)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.e.Run(); err != nil {
		t.Fatal(err)
	}
	a := v.sp.Accel().Stats()
	// Two packet stagings + one object stage.
	if a.Transfers != 3 || done[1] < done[0] {
		t.Fatalf("transfers %d (want 3), HPU 4 had the object at %v, HPU 0's stage ended %v", a.Transfers, done[1], done[0])
	}
	if !st.Ended || len(st.Runs) != 2 {
		t.Fatalf("static run ended %v with %d handler runs", st.Ended, len(st.Runs))
	}
	lists = make([][]nic.CtxPacket, 2)
	lists[1] = []nic.CtxPacket{{Index: 2, Offset: 16, Len: 8}}
	if _, err := v.sp.RunStatic(ctx, lists); err != nil {
		t.Fatal(err)
	}
	if err := v.e.Run(); err != nil {
		t.Fatal(err)
	}
	if a2 := v.sp.Accel().Stats(); a2.Transfers != 5 { // its packet + the move
		t.Fatalf("transfers %d after a run in cluster 1, want 5", a2.Transfers)
	}
}

// A static run's handlers each report their IPC; a handler that only
// computes runs at IPC 1, one that waits on memory below it.
func TestStaticIPC(t *testing.T) {
	v := newEnv(t, pulpSpec(2))
	ctx, err := v.sp.NewContext(spin.Handlers{Payload: func(h *spin.HandlerCtx) spin.Return {
		h.Cycles(100)
		if h.Packet.Index == 1 {
			h.SharedMem(0, 64)
		}
		return spin.Success
	}}, spin.Policy{}, 64)
	if err != nil {
		t.Fatal(err)
	}
	st, err := v.sp.RunStatic(ctx, [][]nic.CtxPacket{{{Index: 0, Len: 64}}, {{Index: 1, Offset: 64, Len: 64}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := v.e.Run(); err != nil {
		t.Fatal(err)
	}
	for _, r := range st.Runs {
		want := 1.0
		if r.Index == 1 {
			want = 150.0 / 162 // 50 invoke + 100 cycles, then 2 beats + 10 cycles of L2
		}
		if got := r.IPC(); got < want-1e-9 || got > want+1e-9 {
			t.Errorf("handler %d IPC %v, want %v", r.Index, got, want)
		}
	}
	if ts := st.HPUTimes(); len(ts) != 2 || ts[1] <= ts[0] {
		t.Fatalf("HPU times %v: the HPU that waited on L2 must be slower", ts)
	}
}

func TestPULPSpecValidate(t *testing.T) {
	s := pulpSpec(33)
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "spin.hpus = 33: the pulp model has spin.pulp.clusters × spin.pulp.cores = 32 cores") {
		t.Fatalf("Validate() = %v", err)
	}
	s = pulpSpec(4)
	s.PULP.DMAWidth = 0
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "spin.pulp.dma_width") {
		t.Fatalf("Validate() = %v", err)
	}
	s = pulpSpec(4)
	s.MemSize = 8 << 20
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "the pulp model keeps both in L2") {
		t.Fatalf("Validate() = %v", err)
	}
	s.Model = "gpu"
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), `spin.hpu_model = "gpu": must be arm or pulp`) {
		t.Fatalf("Validate() = %v", err)
	}
}

// A cluster DMA queues at most spin.pulp.dma_queue outbound transfers: a
// handler issuing many large DMAs stalls on it (and not without the
// bound); the bytes are right either way.
func TestPULPDMAQueue(t *testing.T) {
	for _, q := range []int{0, 4} {
		sp := pulpSpec(32)
		sp.PULP.DMAQueue = q
		v := newEnv(t, sp)
		ctx, err := v.sp.NewContext(spin.Handlers{Payload: copyHandler(256, 0)}, spin.Policy{}, 0)
		if err != nil {
			t.Fatal(err)
		}
		const n = 64 * 2048
		d, src := v.put(n, ctx)
		v.run()
		if got := v.mems[1].Bytes(d, n); !bytes.Equal(got, src) {
			t.Fatalf("dma_queue %d: wrong bytes", q)
		}
		if w := v.sp.Stats().DMAQueueWait; (q == 0) != (w == 0) {
			t.Fatalf("dma_queue %d: handlers stalled %v on the cluster DMA queue", q, w)
		}
	}
}

// A static run refuses what it cannot do, naming it.
func TestStaticErrors(t *testing.T) {
	v := newEnv(t, pulpSpec(2))
	noPayload, err := v.sp.NewContext(spin.Handlers{}, spin.Policy{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, err := v.sp.NewContext(spin.Handlers{Payload: copyHandler(64, 10)}, spin.Policy{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	pk := []nic.CtxPacket{{Index: 0, Len: 64}}
	for _, tc := range []struct {
		ctx   *spin.Context
		lists [][]nic.CtxPacket
		want  string
	}{
		{noPayload, [][]nic.CtxPacket{pk}, "without a payload handler"},
		{ctx, [][]nic.CtxPacket{pk, pk, pk}, "static run over 3 HPUs, spin.hpus = 2"},
		{ctx, [][]nic.CtxPacket{nil}, "static run without packets"},
	} {
		if _, err := v.sp.RunStatic(tc.ctx, tc.lists); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("RunStatic = %v, want %q", err, tc.want)
		}
	}
	if _, err := v.sp.RunStatic(ctx, [][]nic.CtxPacket{pk}); err != nil {
		t.Fatal(err)
	}
	if _, err := v.sp.RunStatic(ctx, [][]nic.CtxPacket{pk}); err == nil || !strings.Contains(err.Error(), "HPU 0, which is busy") {
		t.Errorf("a second static run on a busy HPU: %v", err)
	}
}
