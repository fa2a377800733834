package workload

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/rdma"
	"github.com/gpunetsim/gpunetsim/model/stream"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
)

// peerBases holds every rank's exposed region, where a GDS stream's peer
// copies from a partner on the same node land (the address a put's
// RemoteOffset is counted from). A node's GPUs run on one engine, so a
// rank that needs a partner's base before the partner has allocated it
// waits for it, at no simulated cost (the address exchange of
// cudaIpcGetMemHandle happens before the timed run).
type peerBases struct {
	at  []mem.Addr
	set []bool
	sig sim.Signal
}

func newPeerBases(n int) *peerBases {
	return &peerBases{at: make([]mem.Addr, n), set: make([]bool, n)}
}

// put records rank r's region.
func (b *peerBases) put(r int, a mem.Addr) {
	b.at[r], b.set[r] = a, true
	b.sig.Notify()
}

// of returns rank r's region, waiting on nd's host until r has set it.
func (b *peerBases) of(nd *strategy.Node, r int) mem.Addr {
	nd.Host.Proc.WaitUntil(&b.sig, fmt.Sprintf("rank %d's region address", r), func() bool { return b.set[r] })
	return b.at[r]
}

// copyOf returns put as a peer copy into rank p.Target's region.
func (b *peerBases) copyOf(nd *strategy.Node, p rdma.Put) stream.PeerCopy {
	return stream.PeerCopy{PE: p.Target, Dst: b.of(nd, p.Target) + mem.Addr(p.RemoteOffset), Src: p.Src, N: p.Length}
}

// gdsSplit divides a GDS node's sends into the puts its NIC carries (to
// other nodes: pre-posted, their deferred ids returned) and the copies its
// copy engines make over the node's GPU fabric (to GPUs of its node), each
// in the order given.
func gdsSplit(nd *strategy.Node, b *peerBases, puts []rdma.Put) ([]rdma.Deferred, []stream.PeerCopy) {
	var ids []rdma.Deferred
	var copies []stream.PeerCopy
	for _, p := range puts {
		if nd.Stream.ReachesPeer(p.Target) {
			copies = append(copies, b.copyOf(nd, p))
			continue
		}
		ids = append(ids, nd.RDMA.Prepost(p))
	}
	return ids, copies
}

// gdsSend enqueues a GDS node's sends on its stream: the NIC triggers of
// the pre-posted puts (ids), then one batch of peer copies. With no
// copies the trigger operation is enqueued even for no ids, as the
// single-GPU paths always did.
func gdsSend(nd *strategy.Node, ids []rdma.Deferred, copies []stream.PeerCopy) {
	if len(ids) > 0 || len(copies) == 0 {
		nd.Stream.NicTrigger(ids...)
	}
	nd.Stream.CopyPeers(copies)
}
