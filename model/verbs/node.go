package verbs

import (
	"fmt"

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
	qa.remote, qb.remote = b.Rank, a.Rank
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
	vis := t.Now()
	for _, i := range words {
		sf, at, posted := q.TemplateWord(k, w, i)
		if !posted {
			continue
		}
		vis = max(vis, at)
		t.SleepUntil(sf)
	}
	return vis
}

// TemplateWord is one word of HostTemplate, issued now: word i of w into
// send slot k, stored at once into host memory (posted false) or sent as
// a posted write over the GPU's link, which lands at visible; the thread
// that writes it is held until senderFree (its side of the write).
func (q *QP) TemplateWord(k uint64, w nic.WQE, i int) (senderFree, visible sim.Time, posted bool) {
	w.QPN = q.nq.Num
	n := q.node
	a, v := q.slot(k)+mem.Addr(8*i), w.Word(i)
	q.sh(k % uint64(q.depth))[i] = v
	if q.pool == mem.Host {
		n.mem.Store64(a, v)
		return 0, 0, false
	}
	sf, at := n.gpuLink.PostedWrite(pcie.Down, n.e.Now(), 8)
	ps, ok := n.stores.Get()
	if !ok {
		ps = new(postedStore)
	}
	*ps = postedStore{n: n, a: a, v: v}
	n.e.AtH(at, ps, 0)
	return sf, at, true
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

// CQRes is a CQ reserved on a node (ReserveBlock, CQAt): its ring's
// address and its number, made by MakeCQ.
type CQRes struct {
	base mem.Addr
	num  int32
}

// CQSpan returns the bytes a CQ for entries completions takes in a
// reserved block (ReserveBlock): its ring of CQRing(entries) slots and the
// guard line after it, where NewCQ would put the next allocation.
func CQSpan(entries int) uint64 { return mem.Gap(uint64(CQRing(entries)) * nic.CQESize) }

// QPSpan returns the bytes a QP of depth takes in a reserved block: its
// send ring, receive ring and doorbell record, each with the guard line
// after it, as newQP allocates them.
func QPSpan(depth int) uint64 {
	ring := uint64(depth) * nic.WQESize
	return 2*mem.Gap(ring) + mem.Gap(16)
}

// ReserveBlock reserves, in one range from the returned base, the memory
// of qps QPs of depth and cqs CQs of cqEntries that consecutive newQP and
// NewCQ calls would allocate now, in whatever order the caller places
// them (QPSpan and CQSpan apart), counting their bytes, and cqs
// consecutive CQ numbers from firstCQ; QPAt and CQAt name one, made on
// first use by MakeConnected and MakeCQ with every later allocation and
// number where it would have been. A runtime that reserves a connection
// to every peer (GIO) keeps two numbers for all of them, not an address
// per ring.
func (n *Node) ReserveBlock(qps, depth, cqs, cqEntries int) (base mem.Addr, firstCQ int) {
	if qps+cqs == 0 {
		return 0, n.nic.ReserveCQs(0) // nothing to place
	}
	ring := uint64(depth) * nic.WQESize
	span := uint64(qps)*QPSpan(depth) + uint64(cqs)*CQSpan(cqEntries)
	base = n.mem.ReserveSpan(span, 3*qps+cqs)
	qb, cb := uint64(qps)*(2*ring+16), uint64(cqs)*uint64(CQRing(cqEntries))*nic.CQESize
	n.footprint += qb + cb
	n.qpBytes += qb
	n.cqBytes += cb
	return base, n.nic.ReserveCQs(cqs)
}

// CQAt names the CQ reserved (ReserveBlock) at base with number num.
func CQAt(base mem.Addr, num int) CQRes { return CQRes{base: base, num: int32(num)} }

// QPAt names the QP reserved (ReserveBlock) at sq, its send ring, with
// number num (one of the numbers ReserveQPNumbers took).
func QPAt(sq mem.Addr, num uint32) QPRes { return QPRes{sq: sq, num: num} }

// MakeCQ makes the CQ r reserved, for entries completions (a ring of
// CQRing(entries) slots, as NewCQ).
func (n *Node) MakeCQ(r CQRes, entries int, pool mem.Pool) (*CQ, error) {
	ring := CQRing(entries)
	n.mem.AllocDataAt(r.base, pool, uint64(ring)*nic.CQESize, "cq")
	nq, err := n.nic.CreateCQAt(int(r.num), r.base, ring)
	if err != nil {
		return nil, fmt.Errorf("node %d: %w", n.Rank, err)
	}
	return &CQ{node: n, nq: nq, pool: pool, qps: map[uint32]*QP{}}, nil
}

// QPRes is a QP reserved on a node (ReserveBlock, QPAt): its rings' and doorbell
// record's addresses and its number, made by MakeConnected.
type QPRes struct {
	sq  mem.Addr
	num uint32
}

// ReserveQPNumbers takes count consecutive QP numbers (nic.NIC.ReserveQPs)
// and returns the first: QPAt gives them to reserved QPs.
func (n *Node) ReserveQPNumbers(count int) uint32 { return n.nic.ReserveQPs(count) }

// Num returns the reserved QP's number.
func (r QPRes) Num() uint32 { return r.num }

// MakeConnected makes the QP r reserved on n and connects it to QP rqpn
// on node remote, touching nothing of the remote node: each end of a
// connection is made by its own node (nic.NIC.SetQPMaker makes the remote
// end when the first packet reaches it), so nodes on different engines
// share no state.
func (n *Node) MakeConnected(r QPRes, p Place, cq *CQ, depth, remote int, rqpn uint32) (*QP, error) {
	q, err := n.makeQP(r, p, cq, depth)
	if err != nil {
		return nil, err
	}
	q.nq.Connect(remote, rqpn)
	q.remote = remote
	return q, nil
}

// SetQPMaker sets f to make this node's reserved QPs that a packet names
// before they were made (nic.NIC.SetQPMaker).
func (n *Node) SetQPMaker(f func(num uint32)) { n.nic.SetQPMaker(f) }

// makeQP makes the QP r reserved.
func (n *Node) makeQP(r QPRes, p Place, cq *CQ, depth int) (*QP, error) {
	if cq == nil || cq.node != n {
		return nil, fmt.Errorf("node %d: QP needs a CQ of the same node", n.Rank)
	}
	ring := uint64(depth) * nic.WQESize
	sq, rq := r.sq, r.sq+mem.Addr(mem.Gap(ring))
	dbr := rq + mem.Addr(mem.Gap(ring))
	n.mem.AllocDataAt(sq, p.QP, ring, "sq")
	n.mem.AllocDataAt(rq, p.QP, ring, "rq")
	n.mem.AllocDataAt(dbr, p.QP, 16, "dbr")
	nq, err := n.nic.CreateQPAt(r.num, nic.QPConfig{SQ: sq, SQEntries: depth, RQ: rq, RQEntries: depth, DBRec: dbr, SendCQ: cq.nq})
	if err != nil {
		return nil, fmt.Errorf("node %d: %w", n.Rank, err)
	}
	q := &QP{node: n, nq: nq, cq: cq, pool: p.QP, sq: sq, rq: rq, dbr: dbr, depth: depth, rdepth: depth,
		shadow: make([][][nic.WQEWords]uint64, (depth+shadowChunk-1)/shadowChunk)}
	cq.qps[nq.Num] = q
	return q, nil
}

// Base returns the address of the reserved CQ's ring.
func (r CQRes) Base() mem.Addr { return r.base }

// HasTemplate reports whether send slot k's shadow holds a template word
// (the rkey and QP number HostTemplate writes; never zero, QP numbers
// start at 1).
func (q *QP) HasTemplate(k uint64) bool { return q.sh(k % uint64(q.depth))[4] != 0 }
