package verbs

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/hw/pcie"
	"github.com/gpunetsim/gpunetsim/sim"
)

// Domain is the verbs state of one run: a Node per cluster node. Host
// initialisation (QP, CQ and buffer creation, registration, doorbell
// mapping) is setup and costs no simulated time.
type Domain struct {
	spec  Spec
	nodes []*Node
}

// NewDomain builds the verbs runtime of every node of c. With
// spec.P2PWriteReorder the NICs' writes into GPU memory get the
// reordering hazard.
func NewDomain(c *cluster.Cluster, spec Spec) *Domain {
	d := &Domain{spec: spec}
	for i, hw := range c.Nodes {
		if spec.P2PWriteReorder {
			hw.NIC.SetReorder(&nic.Reorder{Mean: spec.ReorderMean, Threshold: spec.ReorderThreshold, Window: spec.ReorderWindow})
		}
		if spec.CheckVisibility && hw.Mem.Checker() == nil {
			hw.Mem.SetChecker(&mem.Checker{})
		}
		// Each node on its own engine: its partition's in a partitioned
		// run (cluster.NewPartitioned), the one engine otherwise.
		d.nodes = append(d.nodes, &Node{spec: spec, Rank: i, e: hw.NIC.Engine(), nic: hw.NIC, mem: hw.Mem, gpuLink: hw.GPULink})
	}
	return d
}

// Hazards returns every visibility hazard the nodes' checkers saw
// (gnn.check_visibility), node by node.
func (d *Domain) Hazards() []mem.Hazard {
	var out []mem.Hazard
	for _, n := range d.nodes {
		if c := n.mem.Checker(); c != nil {
			out = append(out, c.Hazards()...)
		}
	}
	return out
}

// Spec returns the domain's knobs.
func (d *Domain) Spec() Spec { return d.spec }

// Node returns node i's runtime.
func (d *Domain) Node(i int) *Node { return d.nodes[i] }

// Size returns the number of nodes.
func (d *Domain) Size() int { return len(d.nodes) }

// Node is one node's verbs runtime.
type Node struct {
	spec      Spec
	Rank      int
	e         *sim.Engine
	nic       *nic.NIC
	mem       *mem.Memory
	gpuLink   *pcie.Link
	footprint uint64
	qpBytes   uint64
	cqBytes   uint64
	stores    sim.FreeList[*postedStore] // HostTemplate's landing stores, reused
}

// postedStore is the landing of one host posted write of a word into GPU
// memory (HostTemplate): an event handler instead of a closure per word.
type postedStore struct {
	n *Node
	a mem.Addr
	v uint64
}

// Handle stores the word and returns the handler to its node's pool.
func (s *postedStore) Handle(uint64) {
	n := s.n
	n.mem.Store64(s.a, s.v)
	n.stores.Put(s)
}

// Mem returns the node's memory.
func (n *Node) Mem() *mem.Memory { return n.mem }

// Spec returns the domain's knobs.
func (n *Node) Spec() Spec { return n.spec }

// Footprint returns the bytes of QP and CQ memory allocated on the node.
func (n *Node) Footprint() uint64 { return n.footprint }

// QPBytes returns the bytes of QP memory allocated on the node: send and
// receive rings and doorbell records.
func (n *Node) QPBytes() uint64 { return n.qpBytes }

// CQBytes returns the bytes of CQ rings allocated on the node.
func (n *Node) CQBytes() uint64 { return n.cqBytes }

// Pool maps a placement knob ("gpu", "host") to a memory pool.
func Pool(loc string) mem.Pool {
	if loc == "host" {
		return mem.Host
	}
	return mem.GPU
}

// RegMR registers [a, a+l) for local and remote access.
func (n *Node) RegMR(a mem.Addr, l uint64) *nic.MR {
	return n.nic.RegMR(a, l, nic.AccessLocalWrite|nic.AccessRemoteWrite|nic.AccessRemoteRead)
}

// CQ is a completion queue and its consumer state. Several QPs may share
// it; polling it retires the WQEs of whichever QP each CQE names.
type CQ struct {
	node *Node
	nq   *nic.CQ
	pool mem.Pool
	ci   uint64
	qps  map[uint32]*QP
	// Errors counts CQEs with an error status seen by pollers.
	Errors uint64
	// Loads counts the poll loop's loads of CQE slots (GPU pollers).
	Loads uint64
}

// NewCQ creates a CQ for entries completions in pool: a ring of
// CQRing(entries) slots, as the verbs provider allocates it.
func (n *Node) NewCQ(entries int, pool mem.Pool) (*CQ, error) {
	if entries < 1 || entries >= nic.MaxCQEntries {
		return nil, fmt.Errorf("node %d: CQ for %d completions: must be in [1, %d]", n.Rank, entries, nic.MaxCQEntries-1)
	}
	ring := CQRing(entries)
	base := n.mem.AllocData(pool, uint64(ring)*nic.CQESize, "cq")
	nq, err := n.nic.CreateCQ(base, ring)
	if err != nil {
		return nil, fmt.Errorf("node %d: %w", n.Rank, err)
	}
	n.footprint += uint64(ring) * nic.CQESize
	n.cqBytes += uint64(ring) * nic.CQESize
	return &CQ{node: n, nq: nq, pool: pool, qps: map[uint32]*QP{}}, nil
}

// CQRing returns the slots of the ring a CQ asked for entries completions
// gets: the next power of two above entries, as the Mellanox verbs
// providers (rdma-core's mlx4 and mlx5 create_cq: align_queue_size(cqe +
// 1)) allocate it, one slot more than asked for rounded up. So a CQ for
// one 1024-WQE queue has 2048 slots of 64 B, 128 KiB: the GPUrdma paper's
// "about 128 KB" per CQ buffer.
func CQRing(entries int) int {
	r := 1
	for r < entries+1 {
		r <<= 1
	}
	return r
}

// Consumed returns the number of CQEs consumed.
func (c *CQ) Consumed() uint64 { return c.ci }

// Entries returns the CQ's size.
func (c *CQ) Entries() int { return c.nq.Entries }

// QP is one end of a reliable connection and its software state: the
// send producer index, the WQEs whose completions were consumed, and a
// shadow of each send slot's last written words (what a GPU thread knows
// is already in memory, for WQE reuse).
type QP struct {
	node    *Node
	nq      *nic.QP
	cq      *CQ
	pool    mem.Pool
	sq, dbr mem.Addr
	rq      mem.Addr
	depth   int
	rdepth  int
	pi      uint64
	done    uint64
	rpi     uint64
	rdone   uint64                   // receive completions consumed
	shadow  [][][nic.WQEWords]uint64 // chunks of shadowChunk slots, each made on first use (sh)
	peer    *QP
	remote  int      // the rank of the node at the other end
	hostVis sim.Time // latest GPU posted write to a host-memory ring
	rung    uint64   // producer index of the last doorbell
	scanned uint64   // collaborative poll: CQ slots already examined for this QP
	stats   Stats
	// onRetire, when set, is called after each consumed completion of
	// this QP (a runtime that indexes its QPs by free slots).
	onRetire func()
	// l1, of GPU l1g: its L1 access time, which a device store's
	// calibrated cost includes (tryStore: gpu.GPU.Spec copies the whole
	// spec, 2 % of a GIO run when read per store).
	// l1inv, its L1 invalidate (the CQ poll's, CQWait).
	l1g       *gpu.GPU
	l1, l1inv sim.Duration
}

// l1Time returns the L1 access time of wg's GPU.
func (q *QP) l1Time(wg *gpu.WG) sim.Duration {
	q.l1Of(wg.GPU())
	return q.l1
}

// l1InvTime returns the L1 invalidate time of wg's GPU.
func (q *QP) l1InvTime(wg *gpu.WG) sim.Duration {
	q.l1Of(wg.GPU())
	return q.l1inv
}

// l1Of caches g's L1 times.
func (q *QP) l1Of(g *gpu.GPU) {
	if g != q.l1g {
		s := g.Spec()
		q.l1g, q.l1, q.l1inv = g, s.Cycles(s.L1Cycles), s.Cycles(s.L1InvCycles)
	}
}

// OnRetire sets f to be called after each completion of q is consumed
// (Completed may have grown).
func (q *QP) OnRetire(f func()) { q.onRetire = f }

// Stats are a QP's post-path counters and step times.
type Stats struct {
	Posts, Fields, Doorbells, Polls, CQEs uint64
	WQETime, DoorbellTime, PollTime       sim.Duration
}

// Stats returns the QP's counters.
func (q *QP) Stats() Stats { return q.stats }

// Num returns the QP number.
func (q *QP) Num() uint32 { return q.nq.Num }

// Node returns the QP's node runtime.
func (q *QP) Node() *Node { return q.node }

// Peer returns the other end (nil for a QP made by Node.MakeConnected,
// whose other end its own node makes).
func (q *QP) Peer() *QP { return q.peer }

// PeerRank returns the rank of the node at the other end of the
// connection.
func (q *QP) PeerRank() int { return q.remote }

// Depth returns the send-queue size.
func (q *QP) Depth() int { return q.depth }

// Outstanding returns the WQEs posted and not yet completed (seen in a
// CQE by a poller).
func (q *QP) Outstanding() uint64 { return q.pi - q.done }

// Posted returns the send producer index.
func (q *QP) Posted() uint64 { return q.pi }

// Completed returns the WQEs whose completions were consumed.
func (q *QP) Completed() uint64 { return q.done }

// Place says where a QP's rings and its CQ live.
type Place struct {
	QP mem.Pool
}

// Connect creates a QP on node a and one on node b, connected to each
// other, with send depth depth (receive queues of the same depth), ring
// placement pa/pb and completion queues cqa/cqb.
func (d *Domain) Connect(a, b int, pa, pb Place, cqa, cqb *CQ, depth int) (*QP, *QP, error) {
	qa, err := d.nodes[a].newQP(pa, cqa, depth)
	if err != nil {
		return nil, nil, err
	}
	qb, err := d.nodes[b].newQP(pb, cqb, depth)
	if err != nil {
		return nil, nil, err
	}
	qa.nq.Connect(b, qb.nq.Num)
	qb.nq.Connect(a, qa.nq.Num)
	qa.peer, qb.peer = qb, qa
	qa.remote, qb.remote = b, a
	return qa, qb, nil
}

func (n *Node) newQP(p Place, cq *CQ, depth int) (*QP, error) {
	if cq == nil || cq.node != n {
		return nil, fmt.Errorf("node %d: QP needs a CQ of the same node", n.Rank)
	}
	ring := uint64(depth) * nic.WQESize
	sq := n.mem.AllocData(p.QP, ring, "sq")
	rq := n.mem.AllocData(p.QP, ring, "rq")
	dbr := n.mem.AllocData(p.QP, 16, "dbr")
	nq, err := n.nic.CreateQP(nic.QPConfig{SQ: sq, SQEntries: depth, RQ: rq, RQEntries: depth, DBRec: dbr, SendCQ: cq.nq})
	if err != nil {
		return nil, fmt.Errorf("node %d: %w", n.Rank, err)
	}
	n.footprint += 2*ring + 16
	n.qpBytes += 2*ring + 16
	q := &QP{node: n, nq: nq, cq: cq, pool: p.QP, sq: sq, rq: rq, dbr: dbr, depth: depth, rdepth: depth,
		shadow: make([][][nic.WQEWords]uint64, (depth+shadowChunk-1)/shadowChunk)}
	cq.qps[nq.Num] = q
	return q, nil
}

// Preinit writes template w into every send slot (host setup, free): the
// static fields a GPU thread with WQE reuse does not rewrite.
func (q *QP) Preinit(w nic.WQE) {
	w.QPN = q.nq.Num
	var b [nic.WQESize]byte
	w.Encode(b[:])
	for s := range q.depth {
		q.node.mem.Write(q.slot(uint64(s)), b[:])
		for i := range nic.WQEWords {
			q.sh(uint64(s))[i] = w.Word(i)
		}
	}
}

// shadowChunk is the number of send slots whose shadow is made at once: a
// QP of 1024 slots of which a run uses a few costs a chunk, not 64 KiB.
const shadowChunk = 32

// sh returns the shadow of send slot s (s < depth), zero until written.
func (q *QP) sh(s uint64) *[nic.WQEWords]uint64 {
	c := s / shadowChunk
	if q.shadow[c] == nil {
		q.shadow[c] = make([][nic.WQEWords]uint64, min(shadowChunk, uint64(q.depth)-c*shadowChunk))
	}
	return &q.shadow[c][s%shadowChunk]
}

func (q *QP) slot(k uint64) mem.Addr { return q.sq + mem.Addr(k%uint64(q.depth)*nic.WQESize) }

// errFull is the QP-overflow error, naming the QP.
func (q *QP) errFull() error {
	return fmt.Errorf("node %d QP %d: send queue full (%d WQEs outstanding, gnn.qp_depth = %d): poll the CQ before posting more",
		q.node.Rank, q.nq.Num, q.Outstanding(), q.depth)
}

// PostRecv adds a receive WQE (host setup path, free): the buffer a
// send or a write-with-immediate consumes.
func (q *QP) PostRecv(r nic.RecvWQE) error {
	if q.rpi-q.rdone >= uint64(q.rdepth) {
		return fmt.Errorf("node %d QP %d: receive queue full", q.node.Rank, q.nq.Num)
	}
	var b [nic.WQESize]byte
	r.Encode(b[:])
	q.node.mem.Write(q.rq+mem.Addr(q.rpi%uint64(q.rdepth)*nic.WQESize), b[:])
	q.rpi++
	q.node.mem.Store64(q.dbr+8, q.rpi)
	return nil
}

// retire records that a CQE for q was consumed.
func (q *QP) retire(e nic.CQE) {
	if e.Recv {
		q.rdone++
	} else {
		q.done++
	}
	q.stats.CQEs++
	if q.onRetire != nil {
		q.onRetire()
	}
}

// cqeAt decodes the CQE in slot k if its owner bit says it is valid.
func (c *CQ) cqeAt(k uint64) (nic.CQE, bool) {
	var b [nic.CQESize]byte
	c.node.mem.Read(c.nq.SlotAddr(k), b[:])
	e := nic.DecodeCQE(b[:])
	return e, e.Owner == nic.OwnerFor(k, c.nq.Entries)
}

// consume takes CQE ci and retires it on its QP.
func (c *CQ) consume(e nic.CQE) {
	c.ci++
	if e.Status != nic.WCSuccess {
		c.Errors++
	}
	if q := c.qps[e.QPN]; q != nil {
		q.retire(e)
	}
}

// MR is a registered memory region (hw/nic's), named here so that callers
// above the model layer need not import the NIC.
type MR = nic.MR

// WQE is a send work request (hw/nic's).
type WQE = nic.WQE

// CQE is a completion-queue entry (hw/nic's).
type CQE = nic.CQE

// Write returns the signalled RDMA write of size bytes from laddr (inside
// local) to raddr (inside remote).
func Write(local *MR, laddr mem.Addr, remote *MR, raddr mem.Addr, size uint64) nic.WQE {
	return nic.WQE{Op: nic.VWrite, Flags: nic.WQESignaled, Length: uint32(size), LKey: local.Key, LocalAddr: laddr,
		RemoteAddr: raddr, RKey: remote.Key}
}

// Failed reports whether a completion carries an error status.
func Failed(e CQE) bool { return e.Status != nic.WCSuccess }
