package spin_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/net"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/hw/pcie"
	"github.com/gpunetsim/gpunetsim/hw/spin"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// env is a sender (node 0) and a sPIN receiver (node 1).
type env struct {
	t    *testing.T
	e    *sim.Engine
	mems [2]*mem.Memory
	nics [2]*nic.NIC
	sp   *spin.NIC
	eq   *nic.EQ
	pt   int
}

func newEnv(t *testing.T, sp spin.Spec) *env {
	t.Helper()
	s := cluster.GPUTN()
	e := sim.New(1)
	fab, err := net.New(e, 2, s.Link, s.Switch, s.Topology)
	if err != nil {
		t.Fatal(err)
	}
	v := &env{t: t, e: e}
	for i := range 2 {
		name := fmt.Sprintf("node[%d]", i)
		v.mems[i] = mem.New(name, true)
		v.nics[i] = nic.New(e, i, name, s.NIC, v.mems[i], pcie.New(s.PCIe), fab, s.Link.Payload)
	}
	v.sp = spin.New(v.nics[1], sp)
	v.eq = v.nics[1].NewEQ(0, 0)
	v.pt = v.nics[1].PTAlloc(v.eq, false)
	return v
}

// put sends n pattern bytes from node 0 to an ME on node 1 bound to ctx
// (nil: plain path) and returns the destination buffer address.
func (v *env) put(n uint64, ctx nic.ExecContext) (dst mem.Addr, src []byte) {
	src = make([]byte, n)
	for i := range src {
		src[i] = byte(i*7 + i>>8)
	}
	a := v.mems[0].Alloc(mem.Host, n, "src")
	v.mems[0].Write(a, src)
	dst = v.mems[1].Alloc(mem.Host, n, "dst")
	v.nics[1].MEAppend(v.pt, nic.ME{Start: dst, Length: n, MatchID: nic.AnyID, Options: nic.MEOpPut | nic.MEUseOnce, Ctx: ctx}, nic.Priority)
	md := &nic.MD{Start: a, Length: n}
	v.e.Spawn("sender", func(p *sim.Proc) {
		v.nics[0].Doorbell(p, nic.Command{Op: nic.CmdPut, MD: md, Length: n, Target: 1, PT: v.pt})
	})
	return dst, src
}

func (v *env) run() nic.Event {
	v.t.Helper()
	if err := v.e.Run(); err != nil {
		v.t.Fatal(err)
	}
	ev, ok := v.eq.Get()
	if !ok {
		v.t.Fatal("no target event")
	}
	return ev
}

func small(hpus int) spin.Spec {
	s := spin.DefaultSpec()
	s.HPUs = hpus
	return s
}

// copyHandler DMAs each packet to its stream offset, as the plain path
// would, in pieces of at most piece bytes, after spending cyc cycles.
func copyHandler(piece uint64, cyc int) spin.Handler {
	return func(h *spin.HandlerCtx) spin.Return {
		h.Cycles(cyc)
		for o := uint64(0); o < h.Packet.Len; o += piece {
			n := min(piece, h.Packet.Len-o)
			h.DMAPayload(o, n, h.Msg.Host()+mem.Addr(h.Packet.Offset+o), spin.NoEvent)
		}
		return spin.Success
	}
}

func TestHandlerCopyEqualsPlainPath(t *testing.T) {
	const n = 64*1024 + 100
	plain := newEnv(t, small(4))
	pd, src := plain.put(n, nil)
	pev := plain.run()
	if got := plain.mems[1].Bytes(pd, n); !bytes.Equal(got, src) {
		t.Fatal("plain path: wrong bytes")
	}
	v := newEnv(t, small(4))
	ctx, err := v.sp.NewContext(spin.Handlers{Payload: copyHandler(300, 100)}, spin.Policy{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	d, src := v.put(n, ctx)
	ev := v.run()
	if got := v.mems[1].Bytes(d, n); !bytes.Equal(got, src) {
		t.Fatal("sPIN path: wrong bytes")
	}
	if ev.Type != nic.EventPut || ev.NIFail != nic.FailOK || ev.MLength != n {
		t.Fatalf("event %+v", ev)
	}
	if ev.Time <= pev.Time {
		t.Fatalf("sPIN completion %v not later than the plain path's %v", ev.Time, pev.Time)
	}
	st := v.sp.Stats()
	if st.Handlers[spin.Payload] != uint64(st.Packets) || st.DMAWrites < (st.Packets-1)*7 {
		t.Fatalf("stats %+v", st)
	}
	if plain.sp.Stats().Packets != 0 {
		t.Fatal("an ME without a context reached the sPIN side")
	}
}

// TestBackPressure: a packet buffer of two packets and slow handlers stall
// the inbound engine; nothing is lost and the bytes are right.
func TestBackPressure(t *testing.T) {
	const n = 256 * 1024
	sp := small(2)
	sp.PktBuffer = 4 * unit.KiB
	v := newEnv(t, sp)
	ctx, err := v.sp.NewContext(spin.Handlers{Payload: copyHandler(512, 4000)}, spin.Policy{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	d, src := v.put(n, ctx)
	v.run()
	if got := v.mems[1].Bytes(d, n); !bytes.Equal(got, src) {
		t.Fatal("wrong bytes after back-pressure")
	}
	st := v.sp.Stats()
	if st.Stalls == 0 || st.BufMax > sp.PktBuffer || st.Packets != n/2048 {
		t.Fatalf("stalls %d, buffer max %v (cap %v), packets %d", st.Stalls, st.BufMax, sp.PktBuffer, st.Packets)
	}
}

// TestDMAEventFIFO: DMAs of different sizes from several HPUs raise their
// events in FIFO order, each after every earlier write is visible.
func TestDMAEventFIFO(t *testing.T) {
	const n = 32 * 1024
	v := newEnv(t, small(8))
	var issued []uint64
	h := func(h *spin.HandlerCtx) spin.Return {
		h.Cycles(int(h.Packet.Index%3) * 500) // handlers finish out of order
		piece := uint64(64 << (h.Packet.Index % 4))
		for o := uint64(0); o < h.Packet.Len; o += piece {
			k := min(piece, h.Packet.Len-o)
			h.DMAPayload(o, k, h.Msg.Host()+mem.Addr(h.Packet.Offset+o), 0)
			issued = append(issued, h.Packet.Offset+o)
		}
		return spin.Success
	}
	ctx, err := v.sp.NewContext(spin.Handlers{Payload: h}, spin.Policy{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	d, src := v.put(n, ctx)
	v.run()
	if !bytes.Equal(v.mems[1].Bytes(d, n), src) {
		t.Fatal("wrong bytes")
	}
	evs := v.sp.DMAEvents()
	if len(evs) != len(issued) {
		t.Fatalf("%d events for %d DMAs", len(evs), len(issued))
	}
	for i := 1; i < len(evs); i++ {
		if evs[i].Seq <= evs[i-1].Seq || evs[i].Time < evs[i-1].Time {
			t.Fatalf("event %d (seq %d at %v) before event %d (seq %d at %v)", i, evs[i].Seq, evs[i].Time, i-1, evs[i-1].Seq, evs[i-1].Time)
		}
	}
	if v.sp.Stats().DMAFIFOMax < 2 {
		t.Fatalf("DMA FIFO max %d: the burst never queued", v.sp.Stats().DMAFIFOMax)
	}
}

// TestHappensBefore: the header handler ends before any payload handler
// starts; the completion handler starts after every payload handler ends.
func TestHappensBefore(t *testing.T) {
	const n = 20 * 2048
	v := newEnv(t, small(8))
	var hdrEnd, lastPayloadEnd, compStart sim.Time
	firstPayloadStart := sim.MaxTime
	payload := copyHandler(2048, 300)
	ctx, err := v.sp.NewContext(spin.Handlers{
		Header: func(h *spin.HandlerCtx) spin.Return {
			h.Cycles(20000)
			h.NICMem(64)
			hdrEnd = h.Now()
			return spin.Success
		},
		Payload: func(h *spin.HandlerCtx) spin.Return {
			firstPayloadStart = min(firstPayloadStart, h.Now())
			r := payload(h)
			lastPayloadEnd = max(lastPayloadEnd, h.Now())
			return r
		},
		Completion: func(h *spin.HandlerCtx) spin.Return {
			compStart = h.Now()
			h.DMAToHost(nil, 0, h.Msg.Host(), 0)
			return spin.Success
		},
	}, spin.Policy{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	d, src := v.put(n, ctx)
	ev := v.run()
	if !bytes.Equal(v.mems[1].Bytes(d, n), src) {
		t.Fatal("wrong bytes")
	}
	if !(hdrEnd <= firstPayloadStart && lastPayloadEnd <= compStart && compStart < ev.Time) {
		t.Fatalf("header end %v, first payload %v, last payload end %v, completion %v, event %v",
			hdrEnd, firstPayloadStart, lastPayloadEnd, compStart, ev.Time)
	}
	evs := v.sp.DMAEvents()
	if len(evs) != 1 || evs[0].Len != 0 || evs[0].Time > ev.Time {
		t.Fatalf("completion DMA events %+v (PUT at %v)", evs, ev.Time)
	}
}

// TestBlockedRR: with Δp = 3 and 2 vHPUs, no two HPUs ever run handlers of
// the same sequence at once, and each packet runs on vHPU ⌊i/3⌋ mod 2.
func TestBlockedRR(t *testing.T) {
	const n = 30 * 2048
	v := newEnv(t, small(8))
	type run struct {
		seq        int
		start, end sim.Time
	}
	var runs []run
	h := func(h *spin.HandlerCtx) spin.Return {
		if want := (h.Packet.Index / 3) % 2; h.VHPU != want {
			t.Errorf("packet %d on vHPU %d, want %d", h.Packet.Index, h.VHPU, want)
		}
		s := h.Now()
		copyHandler(2048, 1500)(h)
		runs = append(runs, run{h.Packet.Index / 3, s, h.Now()})
		return spin.Success
	}
	ctx, err := v.sp.NewContext(spin.Handlers{Payload: h}, spin.Policy{BlockedRR: true, Delta: 3, VHPUs: 2}, 0)
	if err != nil {
		t.Fatal(err)
	}
	d, src := v.put(n, ctx)
	v.run()
	if !bytes.Equal(v.mems[1].Bytes(d, n), src) {
		t.Fatal("wrong bytes")
	}
	for i, a := range runs {
		for _, b := range runs[i+1:] {
			if a.seq%2 == b.seq%2 && a.start < b.end && b.start < a.end {
				t.Fatalf("vHPU %d ran twice at once: %+v and %+v", a.seq%2, a, b)
			}
		}
	}
}

// TestHandlerFail: a handler returning FAIL ends the message with a
// HANDLER_FAIL event; later handlers do not run.
func TestHandlerFail(t *testing.T) {
	const n = 10 * 2048
	v := newEnv(t, small(1))
	ran := 0
	ctx, err := v.sp.NewContext(spin.Handlers{Payload: func(h *spin.HandlerCtx) spin.Return {
		ran++
		if h.Packet.Index == 2 {
			return spin.Fail
		}
		return spin.Success
	}}, spin.Policy{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	v.put(n, ctx)
	ev := v.run()
	if ev.NIFail != nic.FailHandler || ev.NIFail.String() != "HANDLER_FAIL" {
		t.Fatalf("event %+v: want HANDLER_FAIL", ev)
	}
	if ran != 3 || v.sp.Stats().Failed != 1 {
		t.Fatalf("%d handlers ran, %d failed messages", ran, v.sp.Stats().Failed)
	}
}

func TestNICMemoryExhausted(t *testing.T) {
	v := newEnv(t, small(1))
	if _, err := v.sp.NewContext(spin.Handlers{}, spin.Policy{}, 7*unit.MiB); err == nil {
		t.Fatal("a 7MiB context fit a 6MiB NIC memory")
	}
	if _, err := v.sp.NewContext(spin.Handlers{}, spin.Policy{BlockedRR: true}, 0); err == nil {
		t.Fatal("blocked-RR with Δp = 0 accepted")
	}
}

func TestSpecValidate(t *testing.T) {
	if err := spin.DefaultSpec().Validate(); err != nil {
		t.Fatal(err)
	}
	s := spin.DefaultSpec()
	s.HPUs = 0
	if err := s.Validate(); err == nil {
		t.Fatal("0 HPUs accepted")
	}
}

// TestIovec scatters a message by an iovec list of 100-byte regions with
// 50-byte gaps, fetching entries every v = 32.
func TestIovec(t *testing.T) {
	const regions, rl, gap = 300, 100, 50
	v := newEnv(t, small(1))
	var list []spin.IOVec
	for i := range regions {
		list = append(list, spin.IOVec{Off: uint64(i * (rl + gap)), Len: rl})
	}
	io := v.sp.NewIovec(list)
	n := uint64(regions * rl)
	src := make([]byte, n)
	for i := range src {
		src[i] = byte(i * 13)
	}
	a := v.mems[0].Alloc(mem.Host, n, "src")
	v.mems[0].Write(a, src)
	span := uint64(regions * (rl + gap))
	dst := v.mems[1].Alloc(mem.Host, span, "dst")
	v.nics[1].MEAppend(v.pt, nic.ME{Start: dst, Length: span, MatchID: nic.AnyID, Options: nic.MEOpPut | nic.MEUseOnce, Ctx: io}, nic.Priority)
	v.e.Spawn("sender", func(p *sim.Proc) {
		v.nics[0].Doorbell(p, nic.Command{Op: nic.CmdPut, MD: &nic.MD{Start: a, Length: n}, Length: n, Target: 1, PT: v.pt})
	})
	v.run()
	got := v.mems[1].Bytes(dst, int(span))
	for i := range regions {
		if !bytes.Equal(got[i*(rl+gap):i*(rl+gap)+rl], src[i*rl:(i+1)*rl]) {
			t.Fatalf("region %d wrong", i)
		}
	}
	if want := (regions+31)/32 - 1; io.Fetches() != want {
		t.Fatalf("%d fetches, want %d", io.Fetches(), want)
	}
}

// TestHandlerCommand: a header handler pushes a Put into the NIC command
// queue; it reaches the initiator like any put.
func TestHandlerCommand(t *testing.T) {
	v := newEnv(t, small(2))
	back := v.mems[0].Alloc(mem.Host, 64, "back")
	eq0 := v.nics[0].NewEQ(0, 0)
	pt0 := v.nics[0].PTAlloc(eq0, false)
	v.nics[0].MEAppend(pt0, nic.ME{Start: back, Length: 8, MatchID: nic.AnyID, Options: nic.MEOpPut}, nic.Priority)
	reply := v.mems[1].Alloc(mem.Host, 64, "reply")
	v.mems[1].Write(reply, []byte("handler!"))
	ctx, err := v.sp.NewContext(spin.Handlers{Header: func(h *spin.HandlerCtx) spin.Return {
		h.Command(nic.Command{Op: nic.CmdPut, MD: &nic.MD{Start: reply, Length: 8}, Length: 8, Target: h.Msg.Src(), PT: pt0})
		return spin.Success
	}}, spin.Policy{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	v.put(4096, ctx)
	v.run()
	if got := v.mems[0].Bytes(back, 8); string(got) != "handler!" || v.sp.Stats().Commands != 1 {
		t.Fatalf("initiator got %q after %d handler commands", got, v.sp.Stats().Commands)
	}
}

// TestStreamingPut: three regions streamed as one message arrive as one
// message (one match, one PUT event), packetized over the concatenated
// stream, on the plain path and through a sPIN context.
func TestStreamingPut(t *testing.T) {
	for _, withCtx := range []bool{false, true} {
		v := newEnv(t, small(4))
		regions := [][2]uint64{{100, 1000}, {5000, 3000}, {20000, 500}} // (offset, size) in the source buffer
		src := make([]byte, 32768)
		for i := range src {
			src[i] = byte(i * 11)
		}
		a := v.mems[0].Alloc(mem.Host, uint64(len(src)), "src")
		v.mems[0].Write(a, src)
		var want []byte
		for _, r := range regions {
			want = append(want, src[r[0]:r[0]+r[1]]...)
		}
		dst := v.mems[1].Alloc(mem.Host, 8192, "dst")
		me := nic.ME{Start: dst, Length: 8192, MatchID: nic.AnyID, Options: nic.MEOpPut | nic.MEUseOnce}
		if withCtx {
			ctx, err := v.sp.NewContext(spin.Handlers{Payload: copyHandler(700, 50)}, spin.Policy{}, 0)
			if err != nil {
				t.Fatal(err)
			}
			me.Ctx = ctx
		}
		v.nics[1].MEAppend(v.pt, me, nic.Priority)
		md := &nic.MD{Start: a, Length: uint64(len(src))}
		v.e.Spawn("streamer", func(p *sim.Proc) {
			s := v.nics[0].SPutStart(nic.Command{Op: nic.CmdPut, MD: md, LocalOffset: regions[0][0], Length: regions[0][1], Target: 1, PT: v.pt})
			p.Sleep(2 * sim.Microsecond) // the CPU finds the next region meanwhile
			s.Stream(md, regions[1][0], regions[1][1], false)
			p.Sleep(2 * sim.Microsecond)
			s.Stream(md, regions[2][0], regions[2][1], true)
		})
		ev := v.run()
		if got := v.mems[1].Bytes(dst, len(want)); !bytes.Equal(got, want) {
			t.Fatalf("ctx=%v: streamed bytes differ", withCtx)
		}
		if ev.Type != nic.EventPut || ev.MLength != uint64(len(want)) || ev.RLength != uint64(len(want)) {
			t.Fatalf("ctx=%v: event %+v; want a PUT of %d bytes", withCtx, ev, len(want))
		}
		if un, _ := v.eq.Get(); un.Type != nic.EventAutoUnlink || v.eq.Len() != 0 {
			t.Fatalf("ctx=%v: after the PUT %+v and %d more; want only the AUTO_UNLINK", withCtx, un, v.eq.Len())
		}
		if st := v.nics[1].Stats(); st.PacketsRx != 3 || st.Matches != 1 {
			t.Fatalf("ctx=%v: %d packets, %d matches; want 3 packets (4500 B over 2 KiB), one match", withCtx, st.PacketsRx, st.Matches)
		}
	}
}

// TestBlockingDMA: a blocking DMA to host returns once the bytes are
// visible; a blocking DMA read returns the host's bytes.
func TestBlockingDMA(t *testing.T) {
	v := newEnv(t, small(1))
	probe := v.mems[1].Alloc(mem.Host, 64, "probe")
	v.mems[1].Write(probe, []byte("from the host"))
	var seenAfter, readBack []byte
	var nbEnd, bEnd sim.Duration
	ctx, err := v.sp.NewContext(spin.Handlers{Payload: func(h *spin.HandlerCtx) spin.Return {
		if h.Packet.Index != 0 {
			return spin.Success
		}
		dst := h.Msg.Host()
		start := h.Now()
		h.DMAToHostB(h.Packet.Data[:64], 64, dst, spin.NoEvent)
		bEnd = h.Now() - start
		seenAfter = append([]byte(nil), v.mems[1].Bytes(dst, 64)...)
		start = h.Now()
		h.DMAPayload(64, 64, dst+64, spin.NoEvent)
		nbEnd = h.Now() - start
		readBack = make([]byte, 13)
		h.DMAFromHostB(probe, 13, readBack)
		return spin.Success
	}}, spin.Policy{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, src := v.put(4096, ctx)
	v.run()
	if !bytes.Equal(seenAfter, src[:64]) {
		t.Fatal("the blocking DMA returned before its bytes were visible")
	}
	if nbEnd >= bEnd {
		t.Fatalf("non-blocking issue took %v, blocking %v: the blocking one should wait for the PCIe write", nbEnd, bEnd)
	}
	if string(readBack) != "from the host" || v.sp.Stats().DMAReads != 1 {
		t.Fatalf("DMA read got %q", readBack)
	}
}

// After real handler runs every packet taken was freed and no HPU holds
// work: the NIC's check (with sPIN's attached) finds nothing.
func TestSpinInvariantsHoldAfterARun(t *testing.T) {
	v := newEnv(t, small(4))
	ctx, err := v.sp.NewContext(spin.Handlers{Payload: copyHandler(300, 100)}, spin.Policy{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	v.put(64<<10, ctx)
	v.run()
	if got := v.nics[1].Invariants(v.e.Now()); len(got) != 0 {
		t.Errorf("violations after a clean run: %v", got)
	}
	if st := v.sp.Stats(); st.Packets == 0 {
		t.Fatal("no packet went through the packet buffer")
	}
}
