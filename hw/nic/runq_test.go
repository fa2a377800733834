package nic_test

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/sim"
)

// TestVerbsRunQueueStaysSmall: the engines' run queue holds at most one
// entry per QP, and its array stays within a few times that even when it
// never empties (8 QPs on one engine, 4,096 WQEs: each WQE's release
// queues its QP again behind the others). It grew by one entry per WQE
// while the queue was not empty, the consumed head kept.
func TestVerbsRunQueueStaysSmall(t *testing.T) {
	const qps, msgs = 8, 512
	v := newEnv(t, 2, false, func(s *cluster.Spec) { s.NIC.VerbsEngines = 1 })
	var qs [2][]*nic.QP
	var bufs [2]mem.Addr
	var keys [2]uint32
	for i := range 2 {
		m := v.mems[i]
		cq, _ := v.nics[i].CreateCQ(m.AllocData(mem.Host, 256*nic.CQESize, "cq"), 256)
		bufs[i] = m.AllocData(mem.Host, 4096, "buf")
		keys[i] = v.nics[i].RegMR(bufs[i], 4096, nic.AccessRemoteWrite).Key
		for range qps {
			q, _ := v.nics[i].CreateQP(nic.QPConfig{SQ: m.AllocData(mem.Host, msgs*nic.WQESize, "sq"), SQEntries: msgs,
				DBRec: m.AllocData(mem.Host, 16, "dbr"), SendCQ: cq})
			qs[i] = append(qs[i], q)
		}
	}
	for k := range qps {
		qs[0][k].Connect(1, qs[1][k].Num)
		qs[1][k].Connect(0, qs[0][k].Num)
		for j := range msgs {
			w := nic.WQE{Op: nic.VWrite, Length: 64, LKey: keys[0], LocalAddr: bufs[0],
				RemoteAddr: bufs[1], RKey: keys[1], QPN: qs[0][k].Num}
			var b [nic.WQESize]byte
			w.Encode(b[:])
			v.mems[0].Write(qs[0][k].Config().SQ+mem.Addr(j*nic.WQESize), b[:])
		}
		q := qs[0][k]
		v.e.Spawn("host", func(p *sim.Proc) { q.Doorbell(p, msgs) })
	}
	v.run()
	for k, q := range qs[0] {
		if q.Retired() != msgs {
			t.Fatalf("QP %d retired %d WQEs, want %d", k, q.Retired(), msgs)
		}
	}
	if c := nic.RunQueueCap(v.nics[0]); c > 4*qps+16 {
		t.Errorf("run queue array of %d entries for %d QPs (%d WQEs)", c, qps, qps*msgs)
	}
}
