package workload

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/gpi"
	"github.com/gpunetsim/gpunetsim/strategy"
)

// The device-verbs implementations of the present-day workloads (ping-pong,
// halo exchange, MoE) on GNN_GPURDMA, written against the device-verbs
// capability (strategy.DeviceVerbs): as NVSHMEM IBGDA and rocSHMEM GDA do
// without their shmem layer, GPU work-groups build WQEs, fence and ring the
// NIC's doorbell themselves (model/verbs costs) for RDMA writes of a message
// and its trailing flag word (the RC transport places a write's bytes in
// order, so the flag lands last), and the receivers poll the flag with
// system-scope acquires. Every rank has one GPI segment (segment 0) holding
// all of its buffers, so a write names offsets into the two ranks'
// segments. Each GPU has gnn.qps QPs to every peer it talks to; work-group
// w posts on QP w mod gnn.qps of the peer it writes to, and work-groups
// that share a QP — the same peer and the same QP index — take turns
// through that QP's ticket lock in GPU memory (one WQE build and doorbell
// at a time), which is what the QP count decides; work-groups writing to
// different peers use different QPs and never wait for each other (as
// NVSHMEM IBGDA, whose per-QP reservation serialises only the warps of one
// QP). Inside a node the writes take the NIC's path (GPU-initiated verbs
// have no peer-store transport).

// dvWorld is the run-wide GPI world of one device-verbs run: built by the
// first rank that asks (node setups run one after the other at time 0).
type dvWorld struct{ sharedWorld }

// get returns the world in which rank r's segment 0 has size(r) bytes (GPU
// memory, registered) and each of the domain's gnn.qps queues connects
// every rank r with the ranks of peers(r).
func (v *dvWorld) get(nd *strategy.Node, size func(r int) uint64, peers func(r int) []int) (*gpi.World, error) {
	d, err := verbsOf(nd)
	if err != nil {
		return nil, err
	}
	qps := d.Spec().QPs
	return v.world(nd, gpuSides(nd.Size), 1, func(w *gpi.World) error {
		for r := range nd.Size {
			w.SegmentCreate(0, r, size(r))
		}
		w.SetCQPeers(mostConnected(nd.Size, peers))
		for q := range qps {
			for r := range nd.Size {
				for _, p := range peers(r) {
					if p > r { // each pair once: a connection has both ends
						if err := w.ConnectPair(q, r, p); err != nil {
							return err
						}
					}
				}
			}
		}
		return nil
	})
}

// mostConnected returns the most ranks any rank is connected with when
// every rank r connects with the ranks of peers(r) (either end may list
// the pair): what each of its CQs must take completions from.
func mostConnected(ranks int, peers func(r int) []int) int {
	with := make([]map[int]bool, ranks)
	for r := range ranks {
		for _, p := range peers(r) {
			if p == r || p < 0 || p >= ranks {
				continue
			}
			for _, e := range [2][2]int{{r, p}, {p, r}} {
				if with[e[0]] == nil {
					with[e[0]] = map[int]bool{}
				}
				with[e[0]][e[1]] = true
			}
		}
	}
	most := 0
	for _, m := range with {
		most = max(most, len(m))
	}
	return most
}

// dvRank is one rank's device-verbs handle for a kernel of wgs
// work-groups: its GPI device, segment base, QP count and the QPs' locks.
type dvRank struct {
	dev   *gpi.Device
	seg   mem.Addr
	qps   int
	wgs   int
	locks mem.Addr // per peer and QP: a ticket word, then a now-serving word
	peers []int
	slot  map[int]int // a peer's index in peers: its locks' place
}

// newDVRank returns nd's handle on w for a kernel of wgs work-groups that
// talks to peers.
func newDVRank(nd *strategy.Node, w *gpi.World, wgs int, peers []int) (*dvRank, error) {
	d, err := verbsOf(nd)
	if err != nil {
		return nil, err
	}
	qps := d.Spec().QPs
	v := &dvRank{dev: w.Device(nd.Rank), seg: w.SegmentAddr(0, nd.Rank), qps: qps, wgs: wgs, peers: peers}
	if wgs > qps { // some QP may be shared: a lock for each
		v.slot = make(map[int]int, len(peers))
		for i, p := range peers {
			v.slot[p] = i
		}
		v.locks = nd.Mem.AllocData(mem.GPU, 16*uint64(qps*len(peers)), "dverbs.qp_locks")
	}
	return v, nil
}

// off is a's offset in the rank's segment.
func (v *dvRank) off(a mem.Addr) uint64 { return uint64(a - v.seg) }

// write posts an RDMA write of n bytes at local address src to offset
// dstOff of rank to's segment, on the work-group's QP to that rank (taking
// the QP's turn when work-groups share it), and rings its doorbell.
func (v *dvRank) write(wg *gpu.WG, src mem.Addr, to int, dstOff, n uint64) error {
	q := wg.ID % v.qps
	if v.locks == 0 {
		return v.dev.Write(wg, 0, v.off(src), to, 0, dstOff, n, q)
	}
	i, ok := v.slot[to]
	if !ok {
		return fmt.Errorf("device verbs: write to rank %d, which this rank has no QPs to", to)
	}
	l := v.locks + mem.Addr(16*(i*v.qps+q))
	ticket, serving := l, l+8
	t := wg.AtomicAdd64(ticket, 1)
	wg.PollDevice(serving, "its turn on a shared QP", func(x uint64) bool { return x == t })
	err := v.dev.Write(wg, 0, v.off(src), to, 0, dstOff, n, q)
	wg.Release(gpu.Device)
	wg.AtomicAdd64(serving, 1)
	return err
}

// drain is gaspi_wait on the work-group's own QPs: work-group q < gnn.qps
// waits for every write of QP q to its peers to complete. Call it after
// every work-group has posted its last write (a grid barrier).
func (v *dvRank) drain(wg *gpu.WG) error {
	if wg.ID >= v.qps {
		return nil
	}
	return v.dev.WaitPeers(wg, wg.ID, v.peers)
}
