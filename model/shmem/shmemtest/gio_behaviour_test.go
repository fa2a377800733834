package shmemtest

import (
	"bytes"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/shmem"
	"github.com/gpunetsim/gpunetsim/sim"
)

// gioPuts runs PE 0's one work-group putting 16 × 64 B from its heap to
// PE 1, rewriting the source between puts; it returns PE 0's report and
// whether PE 1 received every last version.
func gioPuts(t *testing.T, sp shmem.Spec) (shmem.Report, bool) {
	t.Helper()
	b := Backend{Kind: shmem.GIO, HW: cluster.GIO(), Spec: sp, Nodes: 2}
	const n, k = 64, 16
	c, syms, reps, err := Scenario(b, []uint64{n * k, n}, func(pe int, sym []mem.Addr) Kernel {
		return Kernel{WGs: 1, Body: func(pe int, ctx *shmem.Ctx) error {
			if pe != 0 {
				return nil
			}
			src, dst := sym[1], sym[0]
			m := ctx.WG().Mem()
			for i := range k {
				m.Write(src, bytes.Repeat([]byte{byte(i + 1)}, n)) // the GPU rewrote the source in memory
				if err := ctx.Putmem(dst+mem.Addr(i*n), src, n, 1); err != nil {
					return err
				}
			}
			return nil
		}}
	})
	if err != nil {
		t.Fatal(err)
	}
	got := c.Nodes[1].Mem.Bytes(syms[1][0], n*k)
	ok := true
	for i := range k {
		ok = ok && bytes.Equal(got[i*n:(i+1)*n], bytes.Repeat([]byte{byte(i + 1)}, n))
	}
	return reps[0], ok
}

// The device post path writes the four dynamic fields only; the host
// templated the rest ahead of it (the heap's rkey, the QP number).
func TestGIOTemplatingAndDynamicFields(t *testing.T) {
	rep, ok := gioPuts(t, shmem.DefaultSpec())
	if !ok {
		t.Fatal("PE 1 did not receive every version")
	}
	g := rep.GIO
	if g.Posts != 16 || g.Fields != 4*16 || g.Templates < 16 || g.PPBFlushes != 16 {
		t.Fatalf("GIO stats %+v: want 16 posts of 4 fields each, ≥ 16 templates, a PPB flush per post", g)
	}
	slow := shmem.DefaultSpec()
	slow.GIO.TemplateInstr = 200_000 // the host falls behind
	slow.GIO.TemplateAtInit = false  // and starts filling when the kernel opens its context
	rep, ok = gioPuts(t, slow)
	if !ok || rep.GIO.TemplateStalls == 0 || rep.GIO.StallTime == 0 {
		t.Fatalf("a slow templater must stall the GPU (counted): %+v", rep.GIO)
	}
}

// ROC_SHMEM's GPU-IB init blocks until the template thread's first pass
// has filled every QP, so the kernel's first posts find their templates
// there however slow the host's templating is: 16 puts on a 64-slot QP
// never wait for the templater, and the templater wrote no slot before
// the first completion freed one. Templating that starts with the kernel
// (the old behaviour, template_at_init = false) fills the QP during the
// run, and with a slow host stalls the first put.
func TestGIOTemplatesFilledAtInit(t *testing.T) {
	for _, instr := range []int{60, 200_000} {
		sp := shmem.DefaultSpec()
		sp.GIO.TemplateInstr = instr
		if !sp.GIO.TemplateAtInit {
			t.Fatal("preset default: templates are filled at init")
		}
		rep, ok := gioPuts(t, sp)
		if !ok {
			t.Fatalf("%d template instructions: PE 1 did not receive every version", instr)
		}
		if g := rep.GIO; g.TemplateStalls != 0 || g.StallTime != 0 || g.Templates > g.Posts {
			t.Errorf("%d template instructions, filled at init: %+v, want no stall and only refills of completed slots", instr, g)
		}
		sp.GIO.TemplateAtInit = false
		rep, _ = gioPuts(t, sp)
		if g := rep.GIO; instr == 60 && g.Templates <= g.Posts || instr > 60 && g.TemplateStalls == 0 {
			t.Errorf("%d template instructions, filled with the kernel: %+v, want the QP's fill in the run (and with a slow host the first put stalled)", instr, g)
		}
	}
}

// the GIO slides (2) through the device API: the PPB keeps the lines
// of the first put's source, so without the flush later puts send stale
// bytes.
func TestGIOSkippedPPBFlushSendsStaleBytes(t *testing.T) {
	sp := shmem.DefaultSpec()
	sp.GIO.SkipPPBFlush = true
	if _, ok := gioPuts(t, sp); ok {
		t.Fatal("without the PPB flush the NIC must have sent stale bytes")
	}
}

// gioManyWGs runs 8 work-groups on PE 0, each putting 8 × 256 B to PE 1
// (non-blocking, then quiet); it returns the kernel's end on PE 0, PE 0's
// report and whether PE 1 received every byte.
func gioManyWGs(t *testing.T, qpsPerPeer int) (end sim.Time, rep shmem.Report, ok bool) {
	t.Helper()
	sp := shmem.DefaultSpec()
	sp.GIO.QPsPerPeer = qpsPerPeer
	b := Backend{Kind: shmem.GIO, HW: cluster.GIO(), Spec: sp, Nodes: 2}
	const wgs, k, n = 8, 8, 256
	c, syms, reps, err := Scenario(b, []uint64{wgs * k * n}, func(pe int, sym []mem.Addr) Kernel {
		return Kernel{WGs: wgs, Body: func(pe int, ctx *shmem.Ctx) error {
			if pe != 0 {
				return nil
			}
			wg := ctx.WG()
			for i := range k {
				a := sym[0] + mem.Addr((wg.ID*k+i)*n)
				wg.Mem().Write(a, bytes.Repeat([]byte{byte(wg.ID*k + i + 1)}, n))
				if err := ctx.PutmemNBI(a, a, n, 1); err != nil {
					return err
				}
			}
			err := ctx.Quiet()
			end = max(end, wg.Now())
			return err
		}}
	})
	if err != nil {
		t.Fatal(err)
	}
	got := c.Nodes[1].Mem.Bytes(syms[1][0], wgs*k*n)
	ok = true
	for j := range wgs * k {
		ok = ok && bytes.Equal(got[j*n:(j+1)*n], bytes.Repeat([]byte{byte(j + 1)}, n))
	}
	return end, reps[0], ok
}

// Contexts sharing QPs take turns: with one QP per peer the 8 work-groups'
// posts serialise (turn time counted) and the kernel ends later than with
// a QP per context; with as many QPs as contexts nothing is shared and the
// times are those of a QP per context, to the picosecond.
func TestGIOSharedQPsTakeTurns(t *testing.T) {
	own, repOwn, ok := gioManyWGs(t, 0)
	if !ok {
		t.Fatal("a QP per context: PE 1 did not receive every byte")
	}
	one, repOne, ok := gioManyWGs(t, 1)
	if !ok {
		t.Fatal("one shared QP: PE 1 did not receive every byte")
	}
	all, _, ok := gioManyWGs(t, 8)
	if !ok {
		t.Fatal("8 QPs for 8 contexts: PE 1 did not receive every byte")
	}
	t.Logf("kernel end: %v with a QP per context, %v with one shared QP (turns %v), %v with 8 QPs", own, one, repOne.GIO.TurnTime, all)
	if repOwn.GIO.TurnTime != 0 || repOne.GIO.TurnTime == 0 {
		t.Errorf("turn time: %v with a QP per context (want 0), %v with one shared QP (want > 0)", repOwn.GIO.TurnTime, repOne.GIO.TurnTime)
	}
	if one <= own {
		t.Errorf("one shared QP ended at %v, a QP per context at %v: sharing must cost time", one, own)
	}
	if all != own {
		t.Errorf("8 QPs per peer for 8 contexts ended at %v, a QP per context at %v: want identical", all, own)
	}
	if repOne.GIO.Posts != repOwn.GIO.Posts {
		t.Errorf("posts %d shared vs %d own: the same puts", repOne.GIO.Posts, repOwn.GIO.Posts)
	}
}

// Finalize ends the templater's work: a PE whose kernel is over has
// nothing left to post, so the run ends with the last slot being written
// instead of when the templater has filled every QP to every PE.
func TestGIOFinalizeStopsTheTemplater(t *testing.T) {
	sp := shmem.DefaultSpec()
	sp.GIO.TemplateInstr = 20_000 // about 7 us per slot: filling 7 peers' QPs takes milliseconds
	b := Backend{Kind: shmem.GIO, HW: cluster.GIO(), Spec: sp, Nodes: 8}
	var end sim.Time
	c, _, reps, err := Scenario(b, []uint64{64}, func(pe int, sym []mem.Addr) Kernel {
		return Kernel{WGs: 1, Body: func(pe int, ctx *shmem.Ctx) error {
			if pe != 0 {
				return nil
			}
			err := ctx.Putmem(sym[0], sym[0], 64, 1)
			end = ctx.WG().Now()
			return err
		}}
	})
	if err != nil {
		t.Fatal(err)
	}
	slots := uint64(7 * sp.QueueEntries) // one context's QPs to the 7 other PEs
	if g := reps[0].GIO; g.Templates >= slots {
		t.Fatalf("PE 0 templated %d slots by its finalize, want fewer than the %d of its QPs (the test needs a templater still busy)", g.Templates, slots)
	}
	if tail := c.Engine.Now() - end; tail > 100*sim.Microsecond {
		t.Fatalf("the run went on %v after the kernel's last put: the templater kept filling QPs after finalize", tail)
	}
}

// ROC_SHMEM's GPU-IB fence is not free: it posts, on the context's QP to
// every other PE, a 4 B RDMA write to that PE's HDP flush register (one
// post each, rung like a put). PE 0 of three puts to PE 1, fences and
// puts a flag: four posts, two of them the fence's.
func TestGIOFenceWritesEveryPEsHDPFlushRegister(t *testing.T) {
	posts := func(fence bool) uint64 {
		b := Backend{Kind: shmem.GIO, HW: cluster.GIO(), Spec: shmem.DefaultSpec(), Nodes: 3}
		_, _, reps, err := Scenario(b, []uint64{64, 8}, func(pe int, sym []mem.Addr) Kernel {
			return Kernel{WGs: 1, Body: func(pe int, ctx *shmem.Ctx) error {
				if pe != 0 {
					return nil
				}
				if err := ctx.PutmemNBI(sym[0], sym[0], 64, 1); err != nil {
					return err
				}
				if fence {
					if err := ctx.Fence(); err != nil {
						return err
					}
				}
				if err := ctx.P(sym[1], 1, 8, 1); err != nil {
					return err
				}
				return ctx.Quiet()
			}}
		})
		if err != nil {
			t.Fatal(err)
		}
		return reps[0].GIO.Posts
	}
	if without, with := posts(false), posts(true); without != 2 || with != 4 {
		t.Fatalf("posts without a fence %d, with one %d: want 2 and 4 (a 4 B write to each of the two other PEs)", without, with)
	}
}
