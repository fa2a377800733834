package verbs

import (
	"github.com/gpunetsim/gpunetsim/hw/cpu"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/hw/pcie"
	"github.com/gpunetsim/gpunetsim/sim"
)

// NewNode returns the verbs runtime of one node outside a Domain, for a
// runtime that wires its own connections (GIO's device library);
// ConnectNodes pairs two of them.
func NewNode(e *sim.Engine, rank int, n *nic.NIC, m *mem.Memory, gpuLink *pcie.Link, spec Spec) *Node {
	return &Node{spec: spec, Rank: rank, e: e, nic: n, mem: m, gpuLink: gpuLink}
}

// ConnectNodes creates a QP on a and one on b, connected to each other
// (Domain.Connect for nodes outside a Domain).
func ConnectNodes(a, b *Node, pa, pb Place, cqa, cqb *CQ, depth int) (*QP, *QP, error) {
	qa, err := a.newQP(pa, cqa, depth)
	if err != nil {
		return nil, nil, err
	}
	qb, err := b.newQP(pb, cqb, depth)
	if err != nil {
		return nil, nil, err
	}
	qa.nq.Connect(b.Rank, qb.nq.Num)
	qb.nq.Connect(a.Rank, qa.nq.Num)
	qa.peer, qb.peer = qb, qa
	return qa, qb, nil
}

// Base returns the address of the CQ ring.
func (c *CQ) Base() mem.Addr { return c.nq.Base }

// Area is a range of memory a QP owns.
type Area struct {
	Addr mem.Addr
	Size uint64
}

// Areas returns the QP's rings and doorbell record (the NIC-visible
// memory a GIO runtime maps L2-uncacheable).
func (q *QP) Areas() []Area {
	ring := uint64(q.depth) * nic.WQESize
	return []Area{{q.sq, ring}, {q.rq, ring}, {q.dbr, 16}}
}

// HostTemplate writes the given words of w into send slot k from host
// thread t (GIO templating): one PCIe posted write each over the GPU's
// link into GPU memory (or a store into host memory). It returns when the
// last word is visible; the thread waits only for its own side.
func (q *QP) HostTemplate(t *cpu.Thread, k uint64, w nic.WQE, words []int) sim.Time {
	w.QPN = q.nq.Num
	s := k % uint64(q.depth)
	base := q.slot(k)
	n := q.node
	vis := t.Now()
	for _, i := range words {
		a, v := base+mem.Addr(8*i), w.Word(i)
		q.sh(s)[i] = v
		if q.pool == mem.Host {
			n.mem.Store64(a, v)
			continue
		}
		sf, at := n.gpuLink.PostedWrite(pcie.Down, t.Now(), 8)
		ps, ok := n.stores.Get()
		if !ok {
			ps = new(postedStore)
		}
		*ps = postedStore{n: n, a: a, v: v}
		n.e.AtH(at, ps, 0)
		vis = max(vis, at)
		t.SleepUntil(sf)
	}
	return vis
}

// TemplateDeferred records what HostTemplate would have left in send
// slot k had it run when nobody could read the slot (GIO's templater
// over a QP nobody had posted to, done in closed form): the shadow of the
// given words of w now, and each word landing in memory at its time in
// landed (the word's posted write arriving): stored now if that is past,
// else an event then. Nothing reads a slot before its QP's first post,
// and the GPU reads only its shadow until the doorbell, so the slot ends
// up as HostTemplate would have left it.
func (q *QP) TemplateDeferred(k uint64, w nic.WQE, words []int, landed []sim.Time) {
	w.QPN = q.nq.Num
	s := k % uint64(q.depth)
	base := q.slot(k)
	n := q.node
	now := n.e.Now()
	for j, i := range words {
		a, v := base+mem.Addr(8*i), w.Word(i)
		q.sh(s)[i] = v
		if q.pool == mem.Host || landed[j] <= now {
			n.mem.Store64(a, v)
			continue
		}
		ps, ok := n.stores.Get()
		if !ok {
			ps = new(postedStore)
		}
		*ps = postedStore{n: n, a: a, v: v}
		n.e.AtH(landed[j], ps, 0)
	}
}

// PostFields writes w into the next send slot from one GPU thread, storing
// the given dynamic words and any other word that differs from what the
// slot holds (its template): GIO's device post path. It fails, naming the
// QP, when the send queue is full.
func (q *QP) PostFields(wg *gpu.WG, w nic.WQE, dynamic []int) error {
	if q.Outstanding() >= uint64(q.depth) {
		return q.errFull()
	}
	start := wg.Now()
	w.QPN = q.nq.Num
	s := q.pi % uint64(q.depth)
	base := q.slot(q.pi)
	for i := range nic.WQEWords {
		v := w.Word(i)
		isDyn := false
		for _, d := range dynamic {
			isDyn = isDyn || d == i
		}
		if !isDyn && q.sh(s)[i] == v {
			continue
		}
		q.store(wg, base+mem.Addr(8*i), v, q.node.spec.FieldStore)
		q.sh(s)[i] = v
		q.stats.Fields++
	}
	q.pi++
	q.stats.Posts++
	q.stats.WQETime += wg.Now() - start
	return nil
}
