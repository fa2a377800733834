package workload

import (
	"math"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/mpi"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
)

// Level scheduling, the host-driven baselines of the solve (CPU, HDN,
// HDN_OVERLAP, HSA): the host analyses the DAG into levels (rows whose
// dependencies all lie in earlier levels) and, level by level, has its
// rows of that level solved — by one kernel (kernel-boundary) or by its
// cores (host) — then exchanges with MPI the level's x values each other
// node needs, one message per node pair and level that has any. A row's
// remote inputs are gathered straight from the receive buffers they
// arrived in; its x_i is stored into x and into the send slot of every
// node that needs it, so no pack or unpack pass runs. With overlap
// (HDN_OVERLAP) each level's exchange runs while the next level's rows
// that need none of its remote values are solved.

// spTSLevelNode is one node's layout for level scheduling.
type spTSLevelNode struct {
	spTSRows
	x            mem.Addr
	at           map[int32]mem.Addr   // where each remote x_j arrives
	sendAt       map[int32][]mem.Addr // where each local x_i is sent from (one slot per target)
	rows         [][]int              // local rows per level
	sends, recvs [][]spTSMsg          // per level: messages to and from other nodes
}

// spTSMsg is one level's message between two nodes.
type spTSMsg struct {
	peer int
	buf  mem.Addr
	n    int // x values
}

// levelLayout lays out node n's arrays for level scheduling in pool.
func (pl *spTSPlan) levelLayout(m *mem.Memory, pool mem.Pool, n int, level []int32, levels int) *spTSLevelNode {
	a := pl.a
	lo, hi := pl.rows(n)
	l := &spTSLevelNode{spTSRows: allocRows(m, pool, pl, lo, hi), at: map[int32]mem.Addr{}, sendAt: map[int32][]mem.Addr{},
		rows: make([][]int, levels), sends: make([][]spTSMsg, levels), recvs: make([][]spTSMsg, levels)}
	l.x = m.Alloc(pool, 8*uint64(a.N), "spts.x")
	for i := lo; i < hi; i++ {
		l.rows[level[i]] = append(l.rows[level[i]], i)
	}
	// Messages: for every level and ordered node pair, the sender's rows
	// of that level with a dependent on the receiver, in row order.
	vals := make([][][]int32, levels) // [level][peer] rows
	for lv := range levels {
		vals[lv] = make([][]int32, pl.nodes)
	}
	for i := range a.N {
		for _, q := range pl.targets[i] {
			if p := pl.owner(i); p == n || q == n {
				peer := q
				if q == n {
					peer = p
				}
				vals[level[i]][peer] = append(vals[level[i]][peer], int32(i))
			}
		}
	}
	for lv := range levels {
		for peer, is := range vals[lv] {
			if len(is) == 0 {
				continue
			}
			buf := m.Alloc(pool, 8*uint64(len(is)), "spts.msg")
			msg := spTSMsg{peer: peer, buf: buf, n: len(is)}
			for k, i := range is {
				if pl.owner(int(i)) == n {
					l.sendAt[i] = append(l.sendAt[i], buf+mem.Addr(8*k))
				} else {
					l.at[i] = buf + mem.Addr(8*k)
				}
			}
			if pl.owner(int(is[0])) == n {
				l.sends[lv] = append(l.sends[lv], msg)
			} else {
				l.recvs[lv] = append(l.recvs[lv], msg)
			}
		}
	}
	return l
}

// xAddr returns where row i's solve reads x_j.
func (l *spTSLevelNode) xAddr(j int32) mem.Addr {
	if a, ok := l.at[j]; ok {
		return a
	}
	return l.x + mem.Addr(8*j)
}

// runLevels is the level-scheduled solve of implementation impl (host,
// kernel-boundary or overlap).
func (p SpTS) runLevels(c *cluster.Cluster, s strategy.Strategy, cfg strategy.Config, pl *spTSPlan, impl string) (SpTSResult, error) {
	a := pl.a
	level, levels := a.Levels()
	var res SpTSResult
	start, end := sim.Time(math.MaxInt64), sim.Time(0)
	lays := make([]*spTSLevelNode, len(c.Nodes))
	g := strategy.Spawn(c, s, cfg, func(nd *strategy.Node) error {
		l := pl.levelLayout(nd.Mem, nd.Pool, nd.Rank, level, levels)
		lays[nd.Rank] = l
		start = min(start, nd.Host.Now())
		var err error
		if impl == "overlap" {
			err = pl.levelsOverlap(nd, l, level, levels, p.WGs)
		} else {
			err = pl.levelsInOrder(nd, l, levels, p.WGs, impl == "host")
		}
		if err != nil {
			return err
		}
		end = max(end, nd.Host.Now())
		return nil
	})
	if err := runGroup(c, g); err != nil {
		return res, err
	}
	res.Time = end - start
	for _, l := range lays {
		for _, ms := range l.sends {
			for _, m := range ms {
				res.RemoteValues += uint64(m.n)
			}
		}
	}
	if !c.Nodes[0].Mem.Functional() {
		return res, nil
	}
	x := make([]float64, a.N)
	for n, nd := range c.Nodes {
		for i := lays[n].lo; i < lays[n].hi; i++ {
			x[i] = math.Float64frombits(nd.Mem.Load64(lays[n].x + mem.Addr(8*i)))
		}
	}
	return res, pl.verify(x, &res)
}

// levelsInOrder runs the levels one after the other: solve (one kernel,
// or the host's cores), then the level's exchange.
func (pl *spTSPlan) levelsInOrder(nd *strategy.Node, l *spTSLevelNode, levels, wgs int, host bool) error {
	for lv := range levels {
		rs, err := l.exchange(nd, lv, l.recvs[lv], nd.MPI.Irecv)
		if err != nil {
			return err
		}
		if host {
			pl.hostLevel(nd, l, l.rows[lv])
		} else if len(l.rows[lv]) > 0 {
			nd.Stream.Wait(nd.Stream.Launch(pl.levelKernel(nd, l, l.rows[lv], wgs)))
		}
		ss, err := l.exchange(nd, lv, l.sends[lv], nd.MPI.Isend)
		if err != nil {
			return err
		}
		nd.MPI.Waitall(append(rs, ss...)...)
	}
	return nil
}

// levelsOverlap overlaps each level's exchange with the next level's
// independent work (HDN_OVERLAP): the rows of level lv that need no value
// of level lv−1 from another node run in one kernel while the host
// completes level lv−1's exchange; the others run in a second kernel
// after it.
func (pl *spTSPlan) levelsOverlap(nd *strategy.Node, l *spTSLevelNode, level []int32, levels, wgs int) error {
	var pending []*mpi.Request
	for lv := range levels {
		rs, err := l.exchange(nd, lv, l.recvs[lv], nd.MPI.Irecv)
		if err != nil {
			return err
		}
		var inner, outer []int
		for _, i := range l.rows[lv] {
			if pl.needsLevel(i, level, int32(lv-1)) {
				outer = append(outer, i)
			} else {
				inner = append(inner, i)
			}
		}
		var runs []*gpu.Run
		if len(inner) > 0 {
			runs = append(runs, nd.Stream.Launch(pl.levelKernel(nd, l, inner, wgs)))
		}
		nd.MPI.Waitall(pending...)
		if len(outer) > 0 {
			runs = append(runs, nd.Stream.Launch(pl.levelKernel(nd, l, outer, wgs)))
		}
		for _, r := range runs {
			nd.Stream.Wait(r)
		}
		ss, err := l.exchange(nd, lv, l.sends[lv], nd.MPI.Isend)
		if err != nil {
			return err
		}
		pending = append(rs, ss...)
	}
	nd.MPI.Waitall(pending...)
	return nil
}

// needsLevel reports whether row i reads a value of level lv computed on
// another node.
func (pl *spTSPlan) needsLevel(i int, level []int32, lv int32) bool {
	for _, j := range pl.remoteIn[i] {
		if level[j] == lv {
			return true
		}
	}
	return false
}

// exchange starts level lv's messages msgs with op (Isend or Irecv).
func (l *spTSLevelNode) exchange(nd *strategy.Node, lv int, msgs []spTSMsg, op func(mem.Addr, uint64, int, int) (*mpi.Request, error)) ([]*mpi.Request, error) {
	var rs []*mpi.Request
	for _, m := range msgs {
		r, err := op(m.buf, 8*uint64(m.n), m.peer, lv)
		if err != nil {
			return nil, err
		}
		rs = append(rs, r)
	}
	return rs, nil
}

// levelKernel solves rows (one level of the node's block): up to wgs
// work-groups of one wavefront, rows round-robin.
func (pl *spTSPlan) levelKernel(nd *strategy.Node, l *spTSLevelNode, rows []int, wgs int) gpu.Kernel {
	n := min(wgs, len(rows))
	return gpu.Kernel{Name: "spts-level", WGs: n, WGSize: spTSWaves, Body: func(wg *gpu.WG) {
		for k := wg.ID; k < len(rows); k += n {
			i := rows[k]
			cs, vs, yi := l.row(wg.Mem(), pl, i)
			off := l.offset(pl, i)
			wg.StreamLines(l.rowPtr+mem.Addr(8*(i-l.lo)), 16)
			wg.StreamRanges(gpu.Range{Addr: l.col + mem.Addr(4*off), Bytes: 4 * uint64(len(cs))},
				gpu.Range{Addr: l.val + mem.Addr(8*off), Bytes: 8 * uint64(len(cs))},
				gpu.Range{Addr: l.rhs + mem.Addr(8*(i-l.lo)), Bytes: 8})
			xs := make([]float64, 0, len(cs))
			addrs := make([]mem.Addr, 0, spTSWaves)
			bits := make([]uint64, spTSWaves)
			inner := cs[:len(cs)-1]
			for c0 := 0; c0 < len(inner); c0 += spTSWaves {
				addrs = addrs[:0]
				for _, j := range inner[c0:min(c0+spTSWaves, len(inner))] {
					addrs = append(addrs, l.xAddr(j))
				}
				wg.LoadLanes(addrs, bits)
				for _, b := range bits[:len(addrs)] {
					xs = append(xs, math.Float64frombits(b))
				}
			}
			wg.VALU(spTSRowInstr(len(cs)))
			q := 0
			xi := math.Float64bits(rowSolve(cs, vs, yi, func(int32) float64 { q++; return xs[q-1] }))
			wg.Store64(l.x+mem.Addr(8*i), xi)
			for _, at := range l.sendAt[int32(i)] {
				wg.Store64(at, xi)
			}
		}
	}}
}

// hostLevel solves rows on the host's cores: an OpenMP-style region
// streaming the rows' matrix entries, gathered x values and results.
func (pl *spTSPlan) hostLevel(nd *strategy.Node, l *spTSLevelNode, rows []int) {
	if len(rows) == 0 {
		return
	}
	var bytes uint64
	m := nd.Mem
	for _, i := range rows {
		cs, vs, yi := l.row(m, pl, i)
		bytes += 24 + 20*uint64(len(cs)) // row bounds and y; per nonzero index, value and gathered x
		xi := math.Float64bits(rowSolve(cs, vs, yi, func(j int32) float64 { return math.Float64frombits(m.Load64(l.xAddr(j))) }))
		m.Store64(l.x+mem.Addr(8*i), xi)
		for _, at := range l.sendAt[int32(i)] {
			m.Store64(at, xi)
		}
	}
	nd.Host.Compute(bytes, min(nd.Threads, len(rows)))
}
