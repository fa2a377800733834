package verbs_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/cpu"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/model/verbs"
	"github.com/gpunetsim/gpunetsim/sim"
)

// rig is two gpurdma nodes with a connected QP pair: node 0's QP and CQ
// where spec places them, node 1's in host memory, and a registered
// buffer on each side (node 0 in GPU memory, node 1 in host memory).
type rig struct {
	c      *cluster.Cluster
	d      *verbs.Domain
	qp, tq *verbs.QP
	cq     *verbs.CQ
	src    mem.Addr
	dst    mem.Addr
	smr    *nic.MR
	dmr    *nic.MR
}

const rigBuf = 1 << 20

func newRig(t *testing.T, spec verbs.Spec) *rig {
	t.Helper()
	return newRigWith(t, spec, nil)
}

// clusterSpec is the hardware a rig is built from.
type clusterSpec = cluster.Spec

// r0Link is preset gpurdma's network link.
func r0Link() cluster.Spec { return cluster.GPURDMA() }

// newRigWith is newRig on preset gpurdma changed by hw (nil: as it is).
func newRigWith(t *testing.T, spec verbs.Spec, hw func(*clusterSpec)) *rig {
	t.Helper()
	hs := cluster.GPURDMA()
	if hw != nil {
		hw(&hs)
	}
	c, err := cluster.New(sim.New(1), hs, 2, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Engine.Close)
	d := verbs.NewDomain(c, spec)
	cq, err := d.Node(0).NewCQ(4*spec.QPDepth, verbs.Pool(spec.CQLoc))
	if err != nil {
		t.Fatal(err)
	}
	tcq, _ := d.Node(1).NewCQ(4*spec.QPDepth, mem.Host)
	qp, tq, err := d.Connect(0, 1, verbs.Place{QP: verbs.Pool(spec.QPLoc)}, verbs.Place{QP: mem.Host}, cq, tcq, spec.QPDepth)
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{c: c, d: d, qp: qp, tq: tq, cq: cq}
	r.src = c.Nodes[0].Mem.Alloc(mem.GPU, rigBuf, "src")
	r.dst = c.Nodes[1].Mem.Alloc(mem.Host, rigBuf, "dst")
	r.smr, r.dmr = d.Node(0).RegMR(r.src, rigBuf), d.Node(1).RegMR(r.dst, rigBuf)
	return r
}

// kernel runs body as a one-work-group kernel of one warp on node 0.
func (r *rig) kernel(t *testing.T, body func(wg *gpu.WG)) {
	t.Helper()
	g := r.c.Nodes[0].GPU
	op, _ := g.DispatchOp(gpu.Kernel{Name: "k", WGs: 1, WGSize: 32, Body: body})
	g.Submit(op)
	if err := r.c.Engine.Run(); err != nil {
		t.Fatal(err)
	}
}

func (r *rig) write(k int, size uint32) nic.WQE {
	return nic.WQE{Op: nic.VWrite, Flags: nic.WQESignaled, Length: size, LKey: r.smr.Key, LocalAddr: r.src + mem.Addr(k)*8,
		RemoteAddr: r.dst + mem.Addr(k)*8, RKey: r.dmr.Key}
}

// The naive path's steps: the WQE write and the doorbell are the
// calibration (1.6 µs, 1.5 µs); the CQ poll comes out of the models and
// lands near the documents' 3.1 µs.
func TestNaiveStepBreakdown(t *testing.T) {
	spec := verbs.DefaultSpec()
	r := newRig(t, spec)
	const msgs = 16
	r.c.Nodes[0].Mem.Write(r.src, bytes.Repeat([]byte{0xab}, 8*msgs))
	r.kernel(t, func(wg *gpu.WG) {
		for k := range msgs {
			if err := r.qp.Post(wg, r.write(k, 8)); err != nil {
				t.Error(err)
				return
			}
			r.qp.Ring(wg)
			if e, ok := r.cq.WaitQP(wg, r.qp, 0); !ok {
				t.Errorf("error CQE %+v", e)
			}
		}
	})
	st := r.qp.Stats()
	per := func(d sim.Duration) float64 { return d.Micros() / msgs }
	if w := per(st.WQETime); w < 1.59 || w > 1.61 {
		t.Errorf("WQE write %.3f µs per message, want 1.6", w)
	}
	if db := per(st.DoorbellTime); db < 1.5 || db > 1.6 {
		t.Errorf("doorbell %.3f µs per message, want ≈ 1.5", db)
	}
	if p := per(st.PollTime); p < 2 || p > 4.5 {
		t.Errorf("CQ poll %.3f µs per message: want it near 3.1 from the NIC/PCIe/network models", p)
	}
	if st.Fields != 8*msgs {
		t.Errorf("naive path wrote %d fields, want %d", st.Fields, 8*msgs)
	}
	if !bytes.Equal(r.c.Nodes[1].Mem.Bytes(r.dst, 8*msgs), bytes.Repeat([]byte{0xab}, 8*msgs)) {
		t.Error("remote buffer differs")
	}
	t.Logf("per message: WQE %.2f µs, doorbell %.2f µs, poll %.2f µs", per(st.WQETime), per(st.DoorbellTime), per(st.PollTime))
}

// Each optimisation changes exactly its own part of the path.
func TestOptimisationFlags(t *testing.T) {
	run := func(mod func(*verbs.Spec)) verbs.Stats {
		spec := verbs.DefaultSpec()
		spec.QPDepth = 8
		mod(&spec)
		r := newRig(t, spec)
		tmpl := r.write(0, 8)
		tmpl.LocalAddr, tmpl.RemoteAddr = 0, 0
		r.qp.Preinit(tmpl)
		r.kernel(t, func(wg *gpu.WG) {
			for k := range 16 {
				if r.qp.Outstanding() == uint64(spec.QPDepth) {
					r.qp.Ring(wg)
					r.cq.WaitQP(wg, r.qp, 0)
				}
				if err := r.qp.Post(wg, r.write(k, 8)); err != nil {
					t.Error(err)
				}
				if !spec.BatchDoorbell {
					r.qp.Ring(wg)
				}
				if !spec.Pipeline {
					r.cq.WaitQP(wg, r.qp, 0)
				}
			}
			r.qp.Ring(wg)
			r.cq.WaitQP(wg, r.qp, 0)
		})
		return r.qp.Stats()
	}
	naive := run(func(*verbs.Spec) {})
	reuse := run(func(s *verbs.Spec) { s.WQEReuse = true })
	pipe := run(func(s *verbs.Spec) { s.Pipeline = true })
	batch := run(func(s *verbs.Spec) { s.Pipeline, s.BatchDoorbell = true, true })
	if naive.Fields != 16*8 || reuse.Fields != 16*3 || pipe.Fields != naive.Fields {
		// Reuse writes only the per-message fields: size and both
		// addresses.
		t.Errorf("fields written: naive %d, reuse %d, pipeline %d", naive.Fields, reuse.Fields, pipe.Fields)
	}
	if naive.Doorbells != 16 || pipe.Doorbells != 16 || batch.Doorbells != 2 {
		t.Errorf("doorbells: naive %d, pipeline %d, batched %d (want 16, 16, 2)", naive.Doorbells, pipe.Doorbells, batch.Doorbells)
	}
	if !(pipe.PollTime < naive.PollTime/2) {
		t.Errorf("pipelined poll time %v not well below naive %v", pipe.PollTime, naive.PollTime)
	}
}

func TestQPOverflowIsAClearError(t *testing.T) {
	spec := verbs.DefaultSpec()
	spec.QPDepth = 4
	r := newRig(t, spec)
	var err error
	r.kernel(t, func(wg *gpu.WG) {
		for k := range 5 {
			if err = r.qp.Post(wg, r.write(k, 8)); err != nil {
				return
			}
		}
	})
	if err == nil || !strings.Contains(err.Error(), "QP 1") || !strings.Contains(err.Error(), "send queue full") {
		t.Fatalf("overflow error %v: must name the QP and say the queue is full", err)
	}
}

// Without the system fence the WQE stays in the GPU's write-back L2 and
// the NIC fetches a stale slot: an error CQE, not a panic and not a send.
// That is an L2 the NIC's reads pass by (gpu.l2_memory_side = false, the
// AMD dGPUs'); behind a memory-side L2 (NVIDIA) the NIC reads what the
// GPU's stores left in the L2, and the fence only orders them before the
// doorbell.
func TestMissingFenceSendsStaleWQE(t *testing.T) {
	for _, fence := range []bool{true, false} {
		r := newRigWith(t, verbs.DefaultSpec(), func(s *clusterSpec) { s.GPU.L2MemorySide = false })
		r.c.Nodes[0].Mem.Store64(r.src, 42)
		var e nic.CQE
		r.kernel(t, func(wg *gpu.WG) {
			r.qp.Post(wg, r.write(0, 8))
			if fence {
				r.qp.Ring(wg)
			} else {
				r.qp.RingUnfenced(wg)
			}
			e = r.cq.Poll(wg)
		})
		got := r.c.Nodes[1].Mem.Load64(r.dst)
		if fence && (e.Status != nic.WCSuccess || got != 42) {
			t.Fatalf("fenced: CQE %v, target %d", e.Status, got)
		}
		if !fence && (e.Status == nic.WCSuccess || got == 42) {
			t.Fatalf("unfenced: CQE %v, target %d: the NIC must have read a stale WQE", e.Status, got)
		}
	}
}

// QP and CQ placement: a host-memory CQ makes every poll a PCIe round
// trip; a host-memory QP makes every field store a PCIe posted write.
func TestPlacementCosts(t *testing.T) {
	lat := func(qp, cq string) sim.Duration {
		spec := verbs.DefaultSpec()
		spec.QPLoc, spec.CQLoc = qp, cq
		r := newRig(t, spec)
		var d sim.Duration
		r.kernel(t, func(wg *gpu.WG) {
			t0 := wg.Now()
			r.qp.Post(wg, r.write(0, 8))
			r.qp.Ring(wg)
			r.cq.WaitQP(wg, r.qp, 0)
			d = wg.Now() - t0
		})
		if got := r.c.Nodes[1].Mem.Load64(r.dst); got != r.c.Nodes[0].Mem.Load64(r.src) {
			t.Fatalf("qp=%s cq=%s: data differs", qp, cq)
		}
		return d
	}
	gg, gh := lat("gpu", "gpu"), lat("gpu", "host")
	if gh <= gg {
		t.Errorf("CQ in host memory (%v) must cost more than in GPU memory (%v)", gh, gg)
	}
	hg := lat("host", "gpu")
	if hg == gg {
		t.Errorf("QP placement changed nothing (%v)", hg)
	}
}

type cpuThread = cpu.Thread

func costDefault() cost.Spec { return cost.Default() }

// The PCIe switch between the devices and the root complex
// (pcie.switch_latency) lies only on host-memory paths: the CQ poll of a
// host-memory CQ (a round trip per load) and the CQE write into it, and
// a host-memory QP's stores, the fence's flush read and the HCA's WQE
// fetch: each host placement pays at least two crossings more per
// message.
func TestSwitchLatencyOnHostPlacementsOnly(t *testing.T) {
	lat := func(qp, cq string, sw sim.Duration) sim.Duration {
		spec := verbs.DefaultSpec()
		spec.QPLoc, spec.CQLoc = qp, cq
		r := newRigWith(t, spec, func(s *clusterSpec) { s.PCIe.SwitchLatency = sw })
		var d sim.Duration
		r.kernel(t, func(wg *gpu.WG) {
			t0 := wg.Now()
			if err := r.qp.Post(wg, r.write(0, 8)); err != nil {
				t.Error(err)
			}
			r.qp.Ring(wg)
			r.cq.WaitQP(wg, r.qp, 0)
			d = wg.Now() - t0
		})
		return d
	}
	const x = 100 * sim.Nanosecond
	for _, c := range []struct{ qp, cq string }{{"gpu", "host"}, {"host", "gpu"}, {"host", "host"}} {
		// At least the flush read's or the poll's two crossings.
		if without, with := lat(c.qp, c.cq, 0), lat(c.qp, c.cq, x); with < without+2*x {
			t.Errorf("qp=%s cq=%s: %v with a 100 ns switch, %v without: want at least 200 ns more", c.qp, c.cq, with, without)
		}
	}
}
