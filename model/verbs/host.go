package verbs

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/cpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/model/cost"
)

// The host-side post path, for CPU-driven baselines: a host thread builds
// the WQE in a host-memory ring (the verbs post software, charged as the
// Portals post path of the cost model, the closest it has), rings the
// MMIO doorbell over the NIC's link and polls the CQ in host memory, which
// NIC DMA writes keep coherent.

// HostPost writes w into the next send slot from host thread t. The
// ring must be in host memory.
func (q *QP) HostPost(t *cpu.Thread, sw cost.Spec, w nic.WQE) error {
	if q.pool != mem.Host {
		return fmt.Errorf("node %d QP %d: a host thread posts only to a host-memory ring", q.node.Rank, q.nq.Num)
	}
	if q.Outstanding() >= uint64(q.depth) {
		return q.errFull()
	}
	t.Instr(sw.PortalsPost)
	w.QPN = q.nq.Num
	var b [nic.WQESize]byte
	w.Encode(b[:])
	q.node.mem.Write(q.slot(q.pi), b[:])
	s := q.pi % uint64(q.depth)
	for i := range nic.WQEWords {
		q.sh(s)[i] = w.Word(i)
	}
	q.pi++
	q.stats.Posts++
	return nil
}

// HostRing writes the doorbell record and the MMIO doorbell from t.
func (q *QP) HostRing(t *cpu.Thread) {
	if q.rung == q.pi {
		return
	}
	q.node.mem.Store64(q.dbr, q.pi)
	q.nq.Doorbell(t.Proc, q.pi)
	q.rung = q.pi
	q.stats.Doorbells++
}

// HostPoll waits for the next CQE from host thread t (a cached poll of
// host memory; the CQE's dispatch is the cost model's event dispatch)
// and consumes it.
func (c *CQ) HostPoll(t *cpu.Thread, sw cost.Spec) nic.CQE {
	k := c.ci
	a := c.nq.SlotAddr(k)
	owner := uint64(nic.OwnerFor(k, c.nq.Entries))
	t.WaitWord(a+56, "CQE", func(v uint64) bool { return v>>56 == owner })
	t.Instr(sw.EventDispatch)
	e, _ := c.cqeAt(k)
	c.consume(e)
	return e
}

// HostWaitQP polls from t until q has at most keep WQEs outstanding and
// returns the first error CQE seen, if any.
func (c *CQ) HostWaitQP(t *cpu.Thread, sw cost.Spec, q *QP, keep uint64) (bad nic.CQE, ok bool) {
	ok = true
	for q.Outstanding() > keep {
		e := c.HostPoll(t, sw)
		if e.Status != nic.WCSuccess && ok {
			bad, ok = e, false
		}
	}
	return bad, ok
}
