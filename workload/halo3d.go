package workload

import (
	"bytes"
	"fmt"
	"math"
	"slices"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/gputn"
	"github.com/gpunetsim/gpunetsim/model/mpi"
	"github.com/gpunetsim/gpunetsim/model/rdma"
	"github.com/gpunetsim/gpunetsim/model/shmem"
	"github.com/gpunetsim/gpunetsim/model/stream"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/unit"
)

// Halo3D is the 3-D halo exchange (present-day workloads): the ranks form
// a periodic px × py × pz grid (dimensions as balanced as the rank count
// allows, x fastest, so consecutive ranks — the GPUs of a node — are x
// neighbours) and every rank exchanges a message with each of its 6 face
// neighbours, or its 26 face, edge and corner neighbours, Iters times.
//
// Message sizes: weak scaling (Local zero) sends Face bytes per face, an
// edge of 8·√(Face/8) bytes (a cube's edge of 8-byte cells) and 8 bytes per
// corner whatever the rank count; strong scaling (Local set) derives them
// from the rank's Local cells per dimension (8 bytes each): a face is the
// product of the other two dimensions, an edge the remaining dimension, a
// corner one cell. CPU packs and unpacks on the host's cores; HDN packs in
// a kernel, sends at the kernel boundary and unpacks in a kernel; GDS
// preposts every iteration's puts and its stream runs pack, rings the puts,
// waits on the trailing flags and unpacks; device shmem, GPU-TN and
// device verbs run one persistent kernel whose work-groups pack, send and
// wait per direction — a put through the device runtime, a store that
// fires the direction's triggered put, or a GPU-posted RDMA write.
type Halo3D struct {
	Face       unit.Bytes
	Iters      int
	WGSize     int
	Neighbours int    // 6 or 26 (0: 6)
	Local      [3]int // strong scaling: the rank's cells per dimension
	// CommWGs is the work-groups (SMs) of the persistent kernels of the
	// GPU-initiated implementations, each serving the directions d ≡ w
	// (mod CommWGs); 0: one per direction, at most the GPU's CUs.
	CommWGs int
}

// Halo3DResult is one run.
type Halo3DResult struct {
	Impl     string
	Dims     [3]int
	Bytes    uint64   // bytes a rank sends per exchange (all directions)
	Largest  uint64   // its largest message
	Time     sim.Time // per exchange: every rank released together to the last rank's end, over Iters
	Verified bool
}

// Halo3DDef is the halo exchange's registry entry.
func Halo3DDef() Def {
	na := spinNotApplicable("the halo exchange has no datatype to unpack on the NIC in this form; the sPIN strategies " +
		"run receive-side datatype handlers (the ddt_* experiments)")
	for _, d := range strategy.Registry() {
		switch {
		case d.Caps.Has(strategy.NICTasks):
			na[d.Strategy] = "XTQ's primitive is a put that launches a kernel on the target; a halo exchange moves faces between running kernels"
		}
	}
	return Def{
		Name:     "halo3d",
		Summary:  "3-D halo exchange (6 or 26 neighbours) on a periodic process grid, weak- or strong-scaled",
		Baseline: strategy.CPU,
		// The matrix needs a machine whose NIC runs every family the
		// workload implements (GPU-TN's triggered operations and the
		// GPU-initiated verbs; no present-day NIC has both): the seed
		// preset. The experiment runs on the present-day presets, and
		// run matrix --set matrix.hardware=run --preset NAME checks them.
		Preset: "gputn",
		Impls: []Impl{
			{Name: "triggered", Needs: strategy.Triggers | strategy.Stream | strategy.OneSided},
			{Name: "stream-triggered", Needs: strategy.StreamTriggered | strategy.OneSided},
			{Name: "device-shmem", Needs: strategy.DeviceShmem | strategy.Stream},
			{Name: "device-verbs", Needs: strategy.DeviceVerbs | strategy.Stream},
			{Name: "kernel-boundary", Needs: strategy.TwoSided | strategy.Stream},
			{Name: "host", Needs: strategy.TwoSided | strategy.HostCompute},
		},
		NotApplicable: na,
		Small: func(s strategy.Def, hw cluster.Spec, cfg strategy.Config, seed uint64, functional bool) (Cell, error) {
			ranks := 2 * max(1, hw.Node.GPUs)
			c, err := newCluster(hw, ranks, seed, functional)
			if err != nil {
				return Cell{}, err
			}
			defer c.Engine.Close()
			r, err := Halo3D{Face: 4 * unit.KiB, Iters: 2, WGSize: 256}.Run(c, s.Strategy, cfg)
			return Cell{Impl: r.Impl, Nodes: ranks, Time: r.Time, Events: c.Engine.Events(), Verified: r.Verified}, err
		},
	}
}

// haloDirs returns the neighbour offsets: the 6 faces (±x, ±y, ±z, in
// that order) or all 26 offsets in {−1, 0, 1}³ but the origin.
func haloDirs(n int) [][3]int {
	if n != 26 {
		return [][3]int{{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}}
	}
	var out [][3]int
	for z := -1; z <= 1; z++ {
		for y := -1; y <= 1; y++ {
			for x := -1; x <= 1; x++ {
				if x != 0 || y != 0 || z != 0 {
					out = append(out, [3]int{x, y, z})
				}
			}
		}
	}
	return out
}

// sizes returns the message size of every direction.
func (h Halo3D) sizes(dirs [][3]int) []uint64 {
	out := make([]uint64, len(dirs))
	edge := max(8, 8*uint64(math.Round(math.Sqrt(float64(h.Face)/8))))
	for i, o := range dirs {
		zeros := 0
		cells := uint64(1)
		for k := range 3 {
			if o[k] == 0 {
				zeros++
				cells *= uint64(max(1, h.Local[k]))
			}
		}
		switch {
		case h.Local != [3]int{}:
			out[i] = 8 * cells
		case zeros == 2:
			out[i] = uint64(h.Face)
		case zeros == 1:
			out[i] = edge
		default:
			out[i] = 8
		}
	}
	return out
}

// RegionBytes is the size of one rank's send (or receive) region: every
// direction's message and its 8-byte flag, the region Run allocates twice
// (send and receive) and the one-sided implementations double-buffer. The
// memory estimate sizes a functional run's payload by it.
func (h Halo3D) RegionBytes() uint64 {
	dirs := haloDirs(h.Neighbours)
	var total uint64
	for _, s := range h.sizes(dirs) {
		total += s + 8
	}
	return total
}

// dims3 returns the most balanced px ≥ py ≥ pz with px·py·pz = p.
func dims3(p int) [3]int {
	best := [3]int{p, 1, 1}
	for z := 1; z*z*z <= p; z++ {
		if p%z != 0 {
			continue
		}
		for y := z; y*y <= p/z; y++ {
			if (p/z)%y != 0 {
				continue
			}
			x := p / z / y
			if x-z < best[0]-best[2] {
				best = [3]int{x, y, z}
			}
		}
	}
	return best
}

// haloByte is byte k of the face rank r sends in direction d at iteration i.
func haloByte(r, d, i, k int) byte { return byte(r*31 + d*7 + i*13 + k) }

// Run runs the exchange under s on every rank of c.
func (h Halo3D) Run(c *cluster.Cluster, s strategy.Strategy, cfg strategy.Config) (Halo3DResult, error) {
	if h.Local == [3]int{} && (h.Face < 8 || h.Face%8 != 0) {
		return Halo3DResult{}, fmt.Errorf("halo3d face %v: must be a positive multiple of 8 bytes", h.Face)
	}
	if h.Iters < 1 || h.WGSize < 1 || h.WGSize > 1024 {
		return Halo3DResult{}, fmt.Errorf("halo3d iters = %d, wg_size = %d: need iters >= 1 and wg_size in [1, 1024]", h.Iters, h.WGSize)
	}
	if h.Neighbours != 0 && h.Neighbours != 6 && h.Neighbours != 26 {
		return Halo3DResult{}, fmt.Errorf("halo3d neighbours = %d: must be 6 or 26", h.Neighbours)
	}
	if h.CommWGs < 0 || h.CommWGs > 1024 {
		return Halo3DResult{}, fmt.Errorf("halo3d comm_wgs = %d: must be in [0, 1024] (0: one per direction)", h.CommWGs)
	}
	im, _, err := Halo3DDef().implFor(s)
	if err != nil {
		return Halo3DResult{}, err
	}
	P := len(c.Nodes)
	dm := dims3(P)
	dirs := haloDirs(h.Neighbours)
	D := len(dirs)
	size := h.sizes(dirs)
	// Slot d of a region: the message of direction d, then its 8-byte
	// flag (used by the one-sided implementations).
	off := make([]uint64, D+1)
	for d := range D {
		off[d+1] = off[d] + size[d] + 8
	}
	opp := make([]int, D)
	for d, o := range dirs {
		for e, q := range dirs {
			if q == [3]int{-o[0], -o[1], -o[2]} {
				opp[d] = e
			}
		}
	}
	coords := func(r int) [3]int { return [3]int{r % dm[0], r / dm[0] % dm[1], r / dm[0] / dm[1]} }
	rankOf := func(x [3]int) int {
		for k := range 3 {
			x[k] = ((x[k] % dm[k]) + dm[k]) % dm[k]
		}
		return x[0] + dm[0]*(x[1]+dm[1]*x[2])
	}
	// neighbour(r, d) is the rank at offset d from r.
	neighbour := func(r, d int) int {
		x := coords(r)
		for k := range 3 {
			x[k] += dirs[d][k]
		}
		return rankOf(x)
	}
	ends := make([]sim.Time, P)
	// recvBases[r] is rank r's receive region, where the GDS stream's
	// peer copies of a partner on its node land (set before the first
	// barrier; a node's GPUs run on one engine).
	recvBases := make([]mem.Addr, P)
	var (
		start    sim.Time
		ready    int
		readySig sim.Signal
		bad      error
	)
	barrier := func(nd *strategy.Node) {
		ready++
		readySig.Notify()
		nd.Host.Proc.WaitUntil(&readySig, "halo3d start", func() bool { return ready == P })
		if nd.Rank == 0 {
			start = nd.Host.Now()
		}
	}
	total := off[D]
	var msgBytes uint64
	for d := range D {
		msgBytes += size[d]
	}
	// peersOf lists the ranks r exchanges with (itself excluded).
	peersOf := func(r int) []int {
		var out []int
		for d := range D {
			if p := neighbour(r, d); p != r && !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
		return out
	}
	var dvw dvWorld
	e := c.Engine
	g := strategy.Spawn(c, s, cfg, func(nd *strategy.Node) error {
		r := nd.Rank
		mm := nd.Mem
		var sendB, recvB mem.Addr
		// The one-sided implementations double-buffer the receive region
		// by iteration parity: a neighbour runs at most one exchange ahead.
		recvLen := total
		if im.Name != "host" && im.Name != "kernel-boundary" {
			recvLen = 2 * total
		}
		// W is the persistent kernels' work-groups.
		W := min(D, nd.GPU.CUs)
		if h.CommWGs > 0 {
			W = h.CommWGs
		}
		var dev *shmem.Device
		var dv *dvRank
		switch im.Name {
		case "device-verbs":
			// One segment: the send, then the receive region.
			w, err := dvw.get(nd, func(int) uint64 { return 2 * recvLen }, peersOf)
			if err != nil {
				return err
			}
			if dv, err = newDVRank(nd, w, W, peersOf(r)); err != nil {
				return err
			}
			sendB, recvB = dv.seg, dv.seg+mem.Addr(recvLen)
		case "device-shmem":
			var err error
			if dev, err = shmemDevice(nd, W); err != nil {
				return err
			}
			if sendB, err = dev.MallocPayload(recvLen); err == nil {
				recvB, err = dev.MallocPayload(recvLen)
			}
			if err != nil {
				dev.Finalize()
				return err
			}
		default:
			sendB = mm.Alloc(nd.Pool, recvLen, "halo3d.send")
			recvB = mm.Alloc(nd.Pool, recvLen, "halo3d.recv")
		}
		recvBases[r] = recvB
		// The flag words are control words where a flag is read: the
		// one-sided implementations. The two-sided ones send the messages
		// alone, and a message whose range touched a flag's line would
		// carry a whole payload buffer through a payload-free run (the
		// lines straddle the slots; at 8,192 GPUs these buffers were most
		// of the memory).
		if recvLen > total { // one-sided: double-buffered, flags in both halves
			for d := range D {
				for _, b := range []mem.Addr{sendB, recvB} {
					mm.MarkControl(b+mem.Addr(off[d]+size[d]), 8)
					mm.MarkControl(b+mem.Addr(total+off[d]+size[d]), 8)
				}
			}
		}
		// parity is the offset of iteration i's half of a double-buffered
		// region (the one-sided implementations': a put of exchange i may
		// still be read while exchange i+1 packs).
		parity := func(i int) mem.Addr {
			if recvLen > total && i%2 == 1 {
				return mem.Addr(total)
			}
			return 0
		}
		// sendSlot and recvSlot are slot d of iteration i's regions.
		sendSlot := func(d, i int) mem.Addr { return sendB + parity(i) + mem.Addr(off[d]) }
		recvSlot := func(d, i int) mem.Addr { return recvB + parity(i) + mem.Addr(off[d]) }
		// fillDir writes direction d's message of exchange i (the interior
		// computation's result, not timed); a direction whose neighbour is
		// the rank itself (a grid dimension of 1) is delivered in place.
		fillDir := func(d, i int) {
			if b := mm.Bytes(sendSlot(d, i), int(size[d])); b != nil {
				for k := range b {
					b[k] = haloByte(r, d, i, k)
				}
				if neighbour(r, d) == r {
					copy(mm.Bytes(recvSlot(d, i), int(size[d])), b)
				}
			}
		}
		fill := func(i int) {
			for d := range D {
				fillDir(d, i)
			}
		}
		// checkDir verifies direction d's message of exchange i where it is
		// unpacked.
		checkDir := func(d, i int) {
			got := mm.Bytes(recvSlot(d, i), int(size[d]))
			if got == nil || bad != nil {
				return
			}
			from := neighbour(r, opp[d])
			want := make([]byte, size[d])
			for k := range want {
				want[k] = haloByte(from, d, i, k)
			}
			if !bytes.Equal(got, want) {
				bad = fmt.Errorf("%s halo3d: rank %d direction %v at iteration %d differs from rank %d's", s, r, dirs[d], i, from)
			}
		}
		check := func(i int) {
			for d := range D {
				checkDir(d, i)
			}
		}
		// selfCopy delivers the directions whose neighbour is the rank
		// itself (a grid dimension of 1).
		selfCopy := func(i int) {
			for d := range D {
				if neighbour(r, d) == r {
					if dst, src := mm.Bytes(recvSlot(d, i), int(size[d])), mm.Bytes(sendSlot(d, i), int(size[d])); dst != nil {
						copy(dst, src)
					}
				}
			}
		}
		var packs packWGs
		packKernel := func(name string, body func()) gpu.Kernel {
			wgs := max(1, min(int(msgBytes)/(4*h.WGSize), nd.GPU.CUs))
			return packs.kernel(name, wgs, h.WGSize, 2*msgBytes/uint64(wgs), body)
		}
		pack := func(name string) {
			if nd.Stream == nil {
				nd.Host.Compute(2*msgBytes, max(1, nd.Threads))
				return
			}
			nd.Stream.Wait(nd.Stream.Launch(packKernel(name, nil)))
		}
		switch im.Name {
		case "host", "kernel-boundary":
			barrier(nd)
			var reqs []*mpi.Request
			for i := range h.Iters {
				fill(i) // the interior computation's result (not timed)
				pack("halo3d.pack")
				selfCopy(i)
				for d := range D {
					from, to := neighbour(r, opp[d]), neighbour(r, d)
					if to == r {
						continue
					}
					q, err := nd.MPI.Irecv(recvSlot(d, i), size[d], from, i*D+d)
					if err != nil {
						return err
					}
					reqs = append(reqs, q)
					if q, err = nd.MPI.Isend(sendSlot(d, i), size[d], to, i*D+d); err != nil {
						return err
					}
					reqs = append(reqs, q)
				}
				nd.MPI.Waitall(reqs...)
				reqs = reqs[:0]
				pack("halo3d.unpack")
				check(i)
			}
			ends[r] = nd.Host.Now()
		case "stream-triggered":
			// The pattern is static: every iteration's puts are preposted
			// before the exchange starts (the use GDS was designed for).
			// Neighbours on this node's GPU fabric are reached by the copy
			// engines instead, one batch per exchange (cudaMemcpyBatchAsync;
			// NVSHMEM's on-stream puts to P2P peers likewise use the
			// fabric, not the NIC): data and flag word in one copy into the
			// slot the put would fill.
			nd.RDMA.Expose(recvB, recvLen)
			var nicDirs, peerDirs []int
			for d := range D {
				switch nb := neighbour(r, d); {
				case nb == r:
				case nd.Stream.ReachesPeer(nb):
					peerDirs = append(peerDirs, d)
				default:
					nicDirs = append(nicDirs, d)
				}
			}
			remote := func(d, i int) uint64 {
				ro := off[d]
				if i%2 == 1 {
					ro += total
				}
				return ro
			}
			var first rdma.Deferred
			if len(nicDirs) > 0 {
				first = nd.RDMA.PrepostBlock(h.Iters*len(nicDirs), func(k int) rdma.Put {
					i, d := k/len(nicDirs), nicDirs[k%len(nicDirs)]
					return rdma.Put{Src: sendSlot(d, i), Length: size[d] + 8, Target: neighbour(r, d), RemoteOffset: remote(d, i)}
				})
			}
			done := mm.AllocData(mem.Host, 8, "halo3d.done")
			barrier(nd)
			probe := e.Spawn("halo3d.probe", func(p *sim.Proc) {
				p.WaitUntil(mm.Watch(done), "halo3d done", func() bool { return mm.Load64(done) != 0 })
				ends[r] = p.Now()
			})
			probe.SetDaemon()
			for i := range h.Iters {
				nd.Stream.Launch(packKernel("halo3d.pack", func() {
					fill(i)
					selfCopy(i)
					for d := range D {
						mm.Store64(sendSlot(d, i)+mem.Addr(size[d]), uint64(i+1))
					}
				}))
				if len(nicDirs) > 0 {
					ids := make([]rdma.Deferred, len(nicDirs))
					for j := range nicDirs {
						ids[j] = first + rdma.Deferred(i*len(nicDirs)+j)
					}
					nd.Stream.NicTrigger(ids...)
				}
				var copies []stream.PeerCopy
				for _, d := range peerDirs {
					nb := neighbour(r, d)
					copies = append(copies, stream.PeerCopy{PE: nb, Dst: recvBases[nb] + mem.Addr(remote(d, i)), Src: sendSlot(d, i), N: size[d] + 8})
				}
				nd.Stream.CopyPeers(copies)
				for d := range D {
					if neighbour(r, d) == r {
						continue
					}
					v := uint64(i + 1)
					nd.Stream.WaitValue(recvSlot(d, i)+mem.Addr(size[d]), "halo3d arrival", func(x uint64) bool { return x >= v })
				}
				nd.Stream.Launch(packKernel("halo3d.unpack", func() { check(i) }))
			}
			nd.Stream.Marker(done, 1)
			nd.Stream.Synchronize()
		case "triggered", "device-verbs":
			return h.persistent(nd, im.Name, dv, W, haloRank{
				D: D, size: size, off: off, total: total, iters: h.Iters,
				neighbour: func(d int) int { return neighbour(r, d) },
				sendSlot:  sendSlot, recvSlot: recvSlot, fillDir: fillDir, check: check,
				ready: func() { barrier(nd) }, end: &ends[r],
			}, recvB, recvLen)
		case "device-shmem":
			// One persistent kernel: work-group w packs, puts (message and
			// trailing flag), awaits and unpacks the directions d ≡ w
			// (mod W), then all meet at a grid counter before the next
			// exchange. A work-group writes (fillDir) and verifies
			// (checkDir) only its own directions, where it packs and
			// unpacks them: the grid counter orders nothing between one
			// work-group's wake-up and another's (their polls see the
			// last arrival at different times), so a message written by
			// another work-group after the counter could be put stale,
			// and one verified after it could already be overwritten.
			cnt := mm.AllocData(mem.GPU, 8, "halo3d.count")
			errs := make([]error, W)
			k := gpu.Kernel{Name: "halo3d.shmem", WGs: W, WGSize: h.WGSize, Body: func(wg *gpu.WG) {
				ctx, err := dev.CtxCreate(wg)
				if err != nil {
					errs[wg.ID] = err
					return
				}
				for i := range h.Iters {
					for d := wg.ID; d < D; d += W {
						fillDir(d, i)
						wg.VALU(2)
						wg.StreamOut(2*size[d], size[d]) // pack: the face written
						wg.Store64(sendSlot(d, i)+mem.Addr(size[d]), uint64(i+1))
						if to := neighbour(r, d); to != r {
							dst := recvB + mem.Addr(off[d])
							if i%2 == 1 {
								dst += mem.Addr(total)
							}
							if errs[wg.ID] = ctx.PutmemNBI(dst, sendSlot(d, i), size[d]+8, to); errs[wg.ID] != nil {
								return
							}
						}
					}
					for d := wg.ID; d < D; d += W {
						if neighbour(r, d) == r {
							checkDir(d, i) // delivered in place by fillDir
							continue
						}
						if _, errs[wg.ID] = ctx.WaitUntil(recvSlot(d, i)+mem.Addr(size[d]), 8, shmem.CmpGE, uint64(i+1)); errs[wg.ID] != nil {
							return
						}
						checkDir(d, i)
						wg.StreamOut(2*size[d], size[d]) // unpack: the face written
					}
					if errs[wg.ID] = ctx.Quiet(); errs[wg.ID] != nil {
						return
					}
					wg.Release(gpu.Device)
					wg.AtomicAdd64(cnt, 1)
					wg.PollUntil(cnt, true, "halo3d exchange done", func(v uint64) bool { return v >= uint64(W*(i+1)) })
				}
				ends[r] = max(ends[r], wg.Now())
				errs[wg.ID] = ctx.Destroy()
			}}
			barrier(nd)
			return runShmemKernel(nd, dev, k, errs)
		}
		return nil
	})
	if err := e.Run(); err != nil {
		return Halo3DResult{}, err
	}
	if err := g.Err(); err != nil {
		return Halo3DResult{}, err
	}
	res := Halo3DResult{Impl: im.Name, Dims: dm, Bytes: msgBytes}
	for _, x := range size {
		res.Largest = max(res.Largest, x)
	}
	for _, t := range ends {
		res.Time = max(res.Time, t-start)
	}
	res.Time /= sim.Time(h.Iters)
	if bad != nil {
		return res, bad
	}
	res.Verified = c.Nodes[0].Mem.Functional()
	return res, nil
}

// haloRank is what the persistent GPU-initiated implementations need of
// one rank's exchange.
type haloRank struct {
	D                  int
	size, off          []uint64
	total              uint64
	iters              int
	neighbour          func(d int) int
	sendSlot, recvSlot func(d, i int) mem.Addr
	fillDir            func(d, i int)
	check              func(i int)
	ready              func() // the zero-cost start barrier
	end                *sim.Time
}

// persistent runs GPU-TN's ("triggered") or device verbs' exchange: one
// kernel of W work-groups; work-group w packs the directions d ≡ w (mod W)
// of each exchange, stores each one's trailing flag and sends it — a store
// to the NIC's trigger address firing the direction's triggered put, which
// the host registers while the kernel runs (relaxed synchronization), or
// an RDMA write it posts itself — then polls the flags of its directions'
// arrivals with system-scope acquires and unpacks; all work-groups meet at
// a grid counter before the next exchange. GPU-TN's puts are registered in
// the order the exchanges need them; with more puts than the NIC's trigger
// entries (nic.trig_max_entries) a work-group fires a put only once the
// NIC has counted its registration in effect, so early triggers never
// fill the entries.
func (h Halo3D) persistent(nd *strategy.Node, impl string, dv *dvRank, W int, x haloRank, recvB mem.Addr, recvLen uint64) error {
	mm := nd.Mem
	// k(i, d) numbers the sends of the run (self-directions excluded), in
	// exchange then direction order: the registration order.
	kOf := make([]int, x.iters*x.D)
	type send struct{ i, d int }
	var sends []send
	for i := range x.iters {
		for d := range x.D {
			kOf[i*x.D+d] = -1
			if x.neighbour(d) != nd.Rank {
				kOf[i*x.D+d] = len(sends)
				sends = append(sends, send{i, d})
			}
		}
	}
	remote := func(d, i int) uint64 { // the receive slot's offset in recvB
		return uint64(x.recvSlot(d, i) - recvB)
	}
	var (
		trig  gputn.TrigAddr
		reg   mem.Addr
		limit int
	)
	if impl == "triggered" {
		nd.RDMA.Expose(recvB, recvLen)
		trig = nd.TN.TriggerAddr()
		if limit = nd.TN.EntryLimit(); limit > 0 && len(sends) > limit {
			reg = nd.Mem.AllocData(nd.Pool, 8, "halo3d.registered")
		}
	}
	cnt := mm.AllocData(mem.GPU, 8, "halo3d.count")
	errs := make([]error, W)
	k := gpu.Kernel{Name: "halo3d." + impl, WGs: W, WGSize: h.WGSize, Body: func(wg *gpu.WG) {
		for i := range x.iters {
			for d := wg.ID; d < x.D; d += W {
				x.fillDir(d, i)
				wg.VALU(2)
				wg.StreamOut(2*x.size[d], x.size[d]) // pack: the face written
				flag := x.sendSlot(d, i) + mem.Addr(x.size[d])
				wg.Store64(flag, uint64(i+1))
				to := x.neighbour(d)
				if to == nd.Rank {
					continue
				}
				kk := kOf[i*x.D+d]
				if impl == "device-verbs" {
					// The target's receive region follows its send region.
					if errs[wg.ID] = dv.write(wg, x.sendSlot(d, i), to, recvLen+remote(d, i), x.size[d]+8); errs[wg.ID] != nil {
						return
					}
					continue
				}
				wg.Release(gpu.System)
				if reg != 0 {
					need := uint64(kk + 1)
					wg.PollUntil(reg, true, "registration of its triggered put", func(v uint64) bool { return v >= need })
				}
				gputn.Trigger(wg, trig, uint64(1+kk))
			}
			for d := wg.ID; d < x.D; d += W {
				if x.neighbour(d) == nd.Rank {
					continue
				}
				v := uint64(i + 1)
				wg.PollUntil(x.recvSlot(d, i)+mem.Addr(x.size[d]), true, "halo3d arrival", func(u uint64) bool { return u >= v })
				wg.StreamOut(2*x.size[d], x.size[d]) // unpack: the face written
			}
			wg.Release(gpu.Device)
			wg.AtomicAdd64(cnt, 1)
			wg.PollUntil(cnt, true, "halo3d exchange done", func(v uint64) bool { return v >= uint64(W*(i+1)) })
			if wg.ID == 0 {
				x.check(i)
			}
		}
		*x.end = max(*x.end, wg.Now())
		if dv != nil {
			errs[wg.ID] = dv.drain(wg)
		}
	}}
	x.ready()
	run := nd.Stream.Launch(k)
	if impl == "triggered" && len(sends) > 0 {
		pt := nd.RDMA.PT()
		nd.TN.TrigPutBlockCounted(len(sends), func(k int) uint64 { return uint64(1 + k) }, func(k int) gputn.Put {
			sd := sends[k]
			return gputn.Put{Src: x.sendSlot(sd.d, sd.i), Length: x.size[sd.d] + 8, Target: x.neighbour(sd.d), PT: pt,
				RemoteOffset: remote(sd.d, sd.i)}
		}, 1, reg)
	}
	nd.Stream.Wait(run)
	return firstErr(errs)
}

// packWGs makes a rank's pack and unpack kernels: work-group 0 first runs
// the kernel's effect (body: GDS's fill or check, run where the kernel
// runs), then every work-group issues 2 vector instructions and streams
// its share of the messages (read and written). The work-groups run as
// steps (callback events, gpu.Kernel.Steps) instead of coroutines: they
// wait at the same points as the straight-line body, so they make the same
// events at the same times, without two coroutine switches per wait and a
// goroutine per work-group (228 per kernel on mi300a-ss11; 7.5 M in the
// 8,192-GPU weak exchange). The work-groups' states are one slice per rank,
// reused from kernel to kernel: a rank's kernels run one after another on
// its stream (kernel panics when a work-group of an earlier one has not
// finished when a later one starts).
type packWGs struct {
	wgs  []packWG
	busy int // work-groups started and not finished
}

// packKernel is one pack or unpack kernel's parameters.
type packKernel struct {
	ws     *packWGs
	body   func()
	stream uint64 // bytes each work-group streams
}

// kernel returns a kernel of wgs work-groups of wgSize items.
func (ws *packWGs) kernel(name string, wgs, wgSize int, stream uint64, body func()) gpu.Kernel {
	if len(ws.wgs) < wgs {
		ws.wgs = make([]packWG, wgs) // work-groups of an earlier kernel keep the old slice
	}
	k := &packKernel{ws: ws, body: body, stream: stream}
	return gpu.Kernel{Name: name, WGs: wgs, WGSize: wgSize, Steps: k.steps}
}

// steps is the kernel's gpu.Kernel.Steps: work-group wg's state.
func (k *packKernel) steps(wg *gpu.WG) gpu.StepBody {
	ws := k.ws
	if wg.ID == 0 && ws.busy != 0 {
		panic(fmt.Sprintf("halo3d: kernel %s started while %d work-groups of an earlier one still run", wg.Name(), ws.busy))
	}
	b := &ws.wgs[wg.ID]
	*b = packWG{k: k}
	ws.busy++
	return b
}

// packWG is one work-group of a pack or unpack kernel as steps.
type packWG struct {
	k     *packKernel
	phase uint8
}

// Step implements gpu.StepBody: one operation per call, as the rule for
// step bodies asks.
func (p *packWG) Step(wg *gpu.WG) bool {
	switch p.phase {
	case 0:
		if wg.ID == 0 && p.k.body != nil {
			p.k.body()
		}
		p.phase = 1
		wg.VALU(2)
		return false
	case 1:
		p.phase = 2
		wg.StreamOut(p.k.stream, p.k.stream/2) // a pack or unpack: half of it written
		return false
	}
	p.k.ws.busy--
	return true
}

// Dims3 returns the process grid the halo exchange lays p ranks out on
// (px ≥ py ≥ pz, as balanced as p allows).
func Dims3(p int) [3]int { return dims3(p) }
