package net

import (
	"cmp"
	"fmt"
	"math/bits"
	"slices"

	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// Packet is what the network carries. Route gives the source and destination
// endpoint indices; Payload is the packet's payload bytes (the header is
// added by the link).
type Packet interface {
	Route() (src, dst int)
	PayloadBytes() unit.Bytes
}

// Detacher is a packet that may refer to its sender's state (a payload
// still in the sender's memory): Detach, called before the packet crosses
// to another partition, makes it self-contained.
type Detacher interface {
	Detach()
}

// Endpoint receives packets whose last bit has arrived.
type Endpoint interface {
	Receive(p Packet)
}

// port is one direction of a link: a FIFO byte server feeding the next hop.
//
// The flow model's fields come first: a reallocation reads them for every
// port of every flow of its set (the packet model's, after them, it never
// reads).
type port struct {
	// capacity is an intra-node fabric port's rate in bytes per ps; 0 for
	// network ports, which run at the link's.
	capacity float64

	// Flow model (flow.go).
	flows    []*flow // active flows crossing this port
	mark     uint64  // component search epoch
	capLeft  float64 // water-filling: capacity not yet given out
	unfrozen int     // water-filling: flows without a rate yet
	heapAt   int32   // water-filling: position in the heap, -1 when out
	share    float64 // water-filling: capLeft / unfrozen when last computed
	id       int32   // water-filling: order among equal shares; given on first use, 1, 2, …
	touched  uint64  // water-filling: the step that last changed it
	neck     bool    // water-filling: chosen by a step, or left full, when last filled (a bottleneck)
	checked  uint64  // reallocate: widen's pass that last looked at it
	// load is the sum of its flows' rates, kept up to date as they change
	// (in whatever order they do, so it may differ from the sum in the
	// flows' order by rounding): widen adds the rates up exactly only at
	// a port whose load is near its capacity.
	load float64
	// base is the capacity the flows of this reallocation's set may share:
	// the port's capacity less the rates of its flows the reallocation
	// keeps (below flowState.floor), taken away in ascending order, as a
	// water-filling over every flow takes them (settle).
	base float64
	// kept counts its flows below the floor (settle).
	kept int
	// neckWas is neck as it stood before the running reallocation's
	// settled fill (settled.go) or floor fill (collect), given back when
	// that fill is abandoned.
	neckWas bool
	// lastSub is the rate the settled fill last took from the port's
	// capacity (lazy.go: a different rate within floorSlack of it is a
	// possible reordering by rounding).
	lastSub float64
	lastK   *flow // the kept flow whose rate lastSub was (nil: a step of the set's)

	name  string
	owner int      // the partition serving it (partition.go); 0 unsplit
	free  sim.Time // when the server is next idle
	bytes uint64   // wire bytes sent, for statistics
	pkts  uint64
	// Wire bytes and packets that reached the far end of the link: equal
	// to bytes and pkts whenever nothing is on the link (invariant.go).
	doneBytes uint64
	donePkts  uint64

	// arrivals holds the packets this port has sent, as the events of
	// their arrival at the next hop: a FIFO server's completions come due
	// in order, so only the first is in the engine's queue (sim.Chain).
	arrivals sim.Chain

	// before is free as it stood before the first packet of picosecond
	// setAt: UGAL reads a port's backlog without this picosecond's
	// packets, whose order one engine and partitions may tie differently
	// (the backlog after them is the same in any order).
	before, setAt sim.Time

	// tied holds the packets waiting for the port's flush event in this
	// picosecond (inflight.next, Fabric.sortTies).
	tied []*inflight
}

// Fabric joins endpoints 0..n-1 through a topology.
type Fabric struct {
	e       *sim.Engine
	link    LinkSpec
	sw      SwitchSpec
	topo    TopologySpec
	ends    []Endpoint
	up      []*port   // endpoint → its (leaf) switch
	down    []*port   // (leaf) switch → endpoint
	leafUp  [][]*port // fattree: leaf l → spine s
	spineDn [][]*port // fattree: spine s → leaf l
	// spineSeed keys the route draws of packets that may take one of
	// several paths (draw): a hash of it, the source and the source's
	// packet count, so a packet's path is the same whichever partition's
	// engine sends it and in whatever order other sources send.
	spineSeed uint64
	perByte   float64
	free      [][]byte   // recycled payload buffers (GetBuf/PutBuf)
	fl        *flowState // non-nil in the flow model

	big      map[int][][]byte // recycled larger buffers by log2 capacity
	bigBytes int

	// Per endpoint: packets and payload bytes handed to Send and handed to
	// the endpoint's Receive (invariant.go).
	sent, delivered []endCount

	spare sim.FreeList[*inflight] // delivered packets' hop state, reused by Send

	shard *shardState // non-nil when split over partitions (partition.go)

	// Peer-access packets (Local) sent and arrived, kept apart from the
	// endpoints' counts, which the NICs check against their own.
	localSent, localGot endCount

	tp   topology    // railfattree and dragonfly (topo.go); nil for star and fattree
	node *nodeFabric // GPUs of one node joined by their fabric (node.go); nil for one GPU per node

	// sortTies serves the packets that reach one switch output port in
	// the same picosecond in the order of their keys, not of their
	// arrival events (tied): on topologies with several paths per pair
	// the packets of different partitions meet at ports, and the order in
	// which an engine runs same-picosecond events from another partition
	// differs from one engine's (sim.Group).
	sortTies bool

	// place maps an endpoint (a rank) to the GPU slot it sits on (Place);
	// nil: endpoint e is slot e.
	place []int
}

// New builds a fabric for n endpoints. Attach endpoints before sending.
func New(e *sim.Engine, n int, link LinkSpec, sw SwitchSpec, topo TopologySpec) (*Fabric, error) {
	if n < 1 {
		return nil, fmt.Errorf("net: %d endpoints: need at least 1", n)
	}
	if err := errorsJoin(link.Validate(), sw.Validate(), topo.Validate()); err != nil {
		return nil, err
	}
	f := &Fabric{e: e, link: link, sw: sw, topo: topo, ends: make([]Endpoint, n),
		spineSeed: e.Stream("net.spine").Uint64(), perByte: link.Bandwidth.PerByte(), sent: make([]endCount, n), delivered: make([]endCount, n)}
	for i := range n {
		f.up = append(f.up, &port{name: fmt.Sprintf("node[%d].up", i)})
		f.down = append(f.down, &port{name: fmt.Sprintf("node[%d].down", i)})
	}
	if err := f.buildTopology(n); err != nil {
		return nil, err
	}
	f.sortTies = !topo.Ordered()
	if topo.Kind == "fattree" {
		leaves := (n + topo.LeafSize - 1) / topo.LeafSize
		spines := topo.LeafSize
		for l := range leaves {
			var ups []*port
			for s := range spines {
				ups = append(ups, &port{name: fmt.Sprintf("leaf[%d].up[%d]", l, s)})
			}
			f.leafUp = append(f.leafUp, ups)
		}
		for s := range spines {
			var dns []*port
			for l := range leaves {
				dns = append(dns, &port{name: fmt.Sprintf("spine[%d].down[%d]", s, l)})
			}
			f.spineDn = append(f.spineDn, dns)
		}
	}
	return f, nil
}

func errorsJoin(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Attach connects endpoint i.
func (f *Fabric) Attach(i int, ep Endpoint) { f.ends[f.at(i)] = ep }

// Endpoints returns the number of endpoints (the placed ones, after Place).
func (f *Fabric) Endpoints() int {
	if f.place != nil {
		return len(f.place)
	}
	return len(f.ends)
}

// Place puts endpoint e on GPU slot slots[e] of the fabric built for
// more slots than endpoints: the slots' node and rail decide its routes
// and its node fabric, and the slots nobody is placed on stay idle (no
// endpoint, no traffic). Call it before Attach and the first Send; a
// placed fabric cannot be partitioned.
func (f *Fabric) Place(slots []int) error {
	if f.place != nil {
		return fmt.Errorf("net: endpoints already placed")
	}
	seen := make([]bool, len(f.ends))
	for e, s := range slots {
		if s < 0 || s >= len(f.ends) || seen[s] {
			return fmt.Errorf("net: endpoint %d on slot %d: must be a free slot in [0, %d)", e, s, len(f.ends))
		}
		seen[s] = true
	}
	f.place = slices.Clone(slots)
	return nil
}

// at returns the slot of endpoint e.
func (f *Fabric) at(e int) int {
	if f.place != nil {
		return f.place[e]
	}
	return e
}

// Serialization returns the wire time of a packet with the given payload.
func (f *Fabric) Serialization(payload unit.Bytes) sim.Duration {
	return sim.FromPicoseconds(float64(payload+f.link.Header) * f.perByte)
}

// inflight is one packet moving hop by hop.
type inflight struct {
	f     *Fabric
	p     Packet
	ser   sim.Duration
	route [maxHops]*port
	hops  int
	hop   int
	intra bool // on the node's GPU fabric, not the network
	// wire is the packet's bytes on a link (payload and header), taken
	// once at Send: each hop's forward and arrival counted them through
	// the packet, a cold read of it at every switch at a thousand nodes.
	wire uint64
	// key orders packets that reach one switch output port in the same
	// picosecond (Fabric.sortTies): the source slot and its packet count.
	key uint64
}

// Send injects p at the source endpoint's uplink now. The packet reaches the
// destination's Receive after serialisation on every link, the switch
// latency at every switch, and any queueing at busy output ports.
func (f *Fabric) Send(p Packet) {
	src, dst := p.Route()
	src, dst = f.at(src), f.at(dst)
	if _, ok := p.(Local); ok {
		f.sendLocal(p, src, dst)
		return
	}
	f.sent[src].add(p)
	if nf := f.node; nf != nil && nf.sameNode(src, dst) {
		f.sendIntra(p, src, dst)
		return
	}
	route, hops := f.route(src, dst)
	if f.fl != nil {
		f.sendFlow(p, route, hops)
		return
	}
	in, ok := f.spare.Get()
	if !ok {
		in = new(inflight)
	}
	pb := p.PayloadBytes()
	*in = inflight{f: f, p: p, ser: f.Serialization(pb), route: route, hops: hops,
		key: uint64(src)<<40 | f.sent[src].Pkts, wire: uint64(pb + f.link.Header)}
	in.forward(f.e.Now())
}

// sendIntra moves p between two GPUs of one node over their fabric.
func (f *Fabric) sendIntra(p Packet, src, dst int) {
	route, hops := f.node.route(src, dst)
	if f.fl != nil {
		f.sendFlow(p, route, hops)
		return
	}
	in, ok := f.spare.Get()
	if !ok {
		in = new(inflight)
	}
	pb := p.PayloadBytes()
	*in = inflight{f: f, p: p, ser: f.node.serialization(f, pb), route: route, hops: hops, intra: true,
		wire: uint64(pb + f.link.Header)}
	in.forward(f.e.Now())
}

// route returns the output ports a packet from src to dst crosses.
func (f *Fabric) route(src, dst int) (route [maxHops]*port, hops int) {
	if f.tp != nil {
		return f.tp.route(f, src, dst)
	}
	route[0] = f.up[src]
	if f.topo.Kind == "fattree" {
		ls, ld := src/f.topo.LeafSize, dst/f.topo.LeafSize
		if ls != ld {
			s := dst % f.topo.LeafSize
			if !f.topo.InOrder {
				s = f.draw(src, f.topo.LeafSize)
			}
			route[1], route[2], route[3] = f.leafUp[ls][s], f.spineDn[s][ld], f.down[dst]
			return route, 4
		}
	}
	route[1] = f.down[dst]
	return route, 2
}

// draw returns a uniform choice in [0, k) for the packet slot src is
// sending now (its spine, or a dragonfly's intermediate group): a hash
// (SplitMix64's finaliser) of the fabric's seed, src and how many packets
// src has sent, so the choice depends on the packet alone. One random
// stream drawn in event order would give each partition's engine its own
// sequence, and a partitioned run other paths than one engine's.
func (f *Fabric) draw(src, k int) int {
	z := f.spineSeed ^ (uint64(src)<<40 + f.sent[src].Pkts)
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	z ^= z >> 31
	hi, _ := bits.Mul64(z, uint64(k))
	return int(hi)
}

// forward serialises the packet on its current hop starting no earlier than
// t and schedules its arrival at the next switch or at the destination.
func (in *inflight) forward(t sim.Time) {
	pt := in.route[in.hop]
	if pt.setAt != t || pt.pkts == 0 {
		pt.before, pt.setAt = pt.free, t
	}
	start := max(t, pt.free)
	pt.free = start + in.ser
	pt.pkts++
	pt.bytes += in.wire
	lat, swLat := in.f.link.Latency, in.f.sw.Latency
	if in.intra {
		lat, swLat = in.f.node.latency(in.hop), 0
	}
	arrive := pt.free + lat
	in.hop++
	if in.hop == in.hops {
		pt.arrivals.AtH(in.f.e, arrive, in, 1)
		return
	}
	next := arrive + swLat
	if sh := in.f.shard; sh != nil {
		if owner := in.route[in.hop].owner; owner != sh.part {
			in.handOver(next, owner)
			return
		}
	}
	pt.arrivals.AtH(in.f.e, next, in, 0)
}

// Handle advances the packet: arg 0 = at a switch output, 1 = delivered,
// handedOver = at a switch output of another partition (partition.go).
func (in *inflight) Handle(arg uint64) {
	if arg != handedOver {
		done := in.route[in.hop-1] // the link the packet just crossed
		done.donePkts++
		done.doneBytes += in.wire
	}
	if arg == 1 {
		f, p := in.f, in.p
		*in = inflight{} // the queue no longer holds it: reuse it for a later packet
		f.spare.Put(in)
		f.receive(p)
		return
	}
	in.next()
}

// next forwards the packet on its next hop now, or, where the fabric
// sorts ties (sortTies), once every packet reaching that switch output
// port in this picosecond has arrived: the port's flush event, scheduled
// by the first of them, runs after every event already due now (the
// arrivals at a switch were scheduled a hop earlier; the merged events of
// other partitions too), and forwards them in key order.
func (in *inflight) next() {
	f := in.f
	if !f.sortTies || in.intra {
		in.forward(f.e.Now())
		return
	}
	pt := in.route[in.hop]
	pt.tied = append(pt.tied, in)
	if len(pt.tied) == 1 {
		f.e.AtH(f.e.Now(), pt, 0)
	}
}

// Handle is a port's flush of its tied packets (inflight.next): forwarded
// in key order, each on its own partition's shard (in.f).
func (pt *port) Handle(uint64) {
	tied := pt.tied
	if len(tied) > 1 {
		slices.SortFunc(tied, func(a, b *inflight) int { return cmp.Compare(a.key, b.key) })
	}
	for i, in := range tied {
		tied[i] = nil
		in.forward(in.f.e.Now())
	}
	pt.tied = tied[:0]
}

// Stats returns wire bytes and packets sent through every port, by name.
func (f *Fabric) Stats() (bytes, pkts uint64) {
	for _, p := range f.up {
		bytes += p.bytes
		pkts += p.pkts
	}
	return bytes, pkts
}

// GetBuf returns a byte slice of length n for a packet payload, reusing one
// released by PutBuf. Functional runs move gigabytes of payload through
// short-lived buffers, and flow-model messages are whole messages;
// recycling keeps the heap (and the run's resident memory) flat.
// Link-sized buffers come back as they were left (callers overwrite them);
// larger ones come back zeroed.
func (f *Fabric) GetBuf(n int) []byte {
	size := int(f.link.Payload)
	if n > size {
		return f.getBig(n)
	}
	if k := len(f.free); k > 0 {
		b := f.free[k-1]
		f.free = f.free[:k-1]
		return b[:n]
	}
	return make([]byte, n, size)
}

// PutBuf releases a buffer from GetBuf once its bytes have been consumed.
// The caller must not use b afterwards.
func (f *Fabric) PutBuf(b []byte) {
	if cap(b) == int(f.link.Payload) && len(f.free) < 1<<16 {
		f.free = append(f.free, b[:0])
		return
	}
	f.putBig(b)
}

// bigPoolBytes bounds the bytes kept in the pool of larger buffers.
const bigPoolBytes = 64 << 20

// getBig returns a zeroed buffer of length n from the size class of the
// next power of two.
func (f *Fabric) getBig(n int) []byte {
	c := bits.Len(uint(n - 1))
	if k := len(f.big[c]); k > 0 {
		b := f.big[c][k-1]
		f.big[c] = f.big[c][:k-1]
		f.bigBytes -= cap(b)
		b = b[:n]
		clear(b)
		return b
	}
	return make([]byte, n, 1<<c)
}

func (f *Fabric) putBig(b []byte) {
	c := bits.Len(uint(cap(b) - 1))
	if cap(b) != 1<<c || cap(b) <= int(f.link.Payload) || f.bigBytes+cap(b) > bigPoolBytes {
		return
	}
	if f.big == nil {
		f.big = map[int][][]byte{}
	}
	f.big[c] = append(f.big[c], b[:0])
	f.bigBytes += cap(b)
}
