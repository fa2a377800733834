package shmem_test

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/shmem"
	"github.com/gpunetsim/gpunetsim/model/shmem/shmemtest"
)

// In a payload-free run a work-group queue's ring keeps bytes only in the
// lines its producer claimed (and the read index's): the slots of three
// puts and a quiet, not the 60 never used; the functional run's ring
// keeps them all. The puts complete either way (their entries, read from
// the marked lines, are whole).
func TestQueueRingBacksClaimedSlotsOnly(t *testing.T) {
	for _, kind := range []shmem.Kind{shmem.GHNDGPU, shmem.GHNHostQ, shmem.GHNAPU, shmem.CompNetCP} {
		for _, payloadFree := range []bool{false, true} {
			mode := "dgpu"
			if kind == shmem.GHNAPU {
				mode = "apu"
			}
			sp := shmem.DefaultSpec()
			var ring mem.Addr
			var entries int
			c, _, _, err := shmemtest.Scenario(shmemtest.Backend{Kind: kind, HW: hw(mode), Spec: sp, Nodes: 2, PayloadFree: payloadFree},
				[]uint64{64}, func(pe int, s []mem.Addr) shmemtest.Kernel {
					return shmemtest.Kernel{WGs: 1, Body: func(pe int, x *shmem.Ctx) error {
						if pe == 0 {
							ring, entries = x.QueueRing()
						}
						for i := range 3 {
							if err := x.PutmemNBI(s[0]+mem.Addr(8*i), s[0], 8, 1-pe); err != nil {
								return err
							}
						}
						return x.Quiet()
					}}
				})
			if err != nil {
				t.Fatalf("%s payload-free=%v: %v", kind, payloadFree, err)
			}
			if entries != sp.QueueEntries {
				t.Fatalf("%s: ring of %d entries, want %d", kind, entries, sp.QueueEntries)
			}
			m := c.Nodes[0].Mem
			used := int(m.Load64(ring + mem.Addr(64*entries))) // the read index: entries consumed
			if used < 4 || used > 8 {
				t.Fatalf("%s payload-free=%v: read index %d after three puts and a quiet (and the context's end), want 4 to 8", kind, payloadFree, used)
			}
			for _, chk := range []struct {
				slot int
				want bool
			}{{0, true}, {used - 1, true}, {used, !payloadFree}, {entries - 1, !payloadFree}, {entries, true}} { // slot entries: the read index's line
				if got := m.HasData(ring+mem.Addr(64*chk.slot), 64); got != chk.want {
					t.Errorf("%s payload-free=%v: line %d of the ring (%d used) holds bytes: %v, want %v", kind, payloadFree, chk.slot, used, got, chk.want)
				}
			}
		}
	}
}

// GIO's shared QP sets: in a payload-free run only the ticket locks of the
// connections made hold bytes (PE 0 puts to PE 1 of three), and a
// context records its last post for the PEs it posted to, not for every
// PE.
func TestGIOSharedLocksBackUsedConnectionsOnly(t *testing.T) {
	for _, payloadFree := range []bool{false, true} {
		sp := shmem.DefaultSpec()
		sp.GIO.QPsPerPeer = 1
		var used, unused mem.Addr
		var posted int
		c, _, _, err := shmemtest.Scenario(shmemtest.Backend{Kind: shmem.GIO, HW: cluster.GIO(), Spec: sp, Nodes: 3, PayloadFree: payloadFree},
			[]uint64{256}, func(pe int, s []mem.Addr) shmemtest.Kernel {
				return shmemtest.Kernel{WGs: 2, Body: func(pe int, x *shmem.Ctx) error {
					if pe != 0 {
						return nil
					}
					if err := x.PutmemNBI(s[0], s[0], 64, 1); err != nil {
						return err
					}
					err := x.Quiet()
					if x.WG().ID == 0 {
						used, _ = x.GIOLock(1)
						unused, posted = x.GIOLock(2)
					}
					return err
				}}
			})
		if err != nil {
			t.Fatalf("payload-free=%v: %v", payloadFree, err)
		}
		if used == 0 {
			t.Fatalf("payload-free=%v: no shared lock", payloadFree)
		}
		m := c.Nodes[0].Mem
		if !m.HasData(used, 32) || m.Load64(used) != 2 || m.Load64(used+8) != 2 {
			t.Errorf("payload-free=%v: the lock to PE 1 after two work-groups' posts: ticket %d, serving %d, want 2 and 2",
				payloadFree, m.Load64(used), m.Load64(used+8))
		}
		if got := m.HasData(unused, 32); got != !payloadFree {
			t.Errorf("payload-free=%v: the lock to PE 2, never taken, holds bytes: %v", payloadFree, got)
		}
		if posted != 1 {
			t.Errorf("payload-free=%v: the context records a last post for %d PEs, want 1 (it posted to PE 1 only)", payloadFree, posted)
		}
	}
}
