package shmemtest

import (
	"bytes"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/shmem"
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
	rep, ok = gioPuts(t, slow)
	if !ok || rep.GIO.TemplateStalls == 0 || rep.GIO.StallTime == 0 {
		t.Fatalf("a slow templater must stall the GPU (counted): %+v", rep.GIO)
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
