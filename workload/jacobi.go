package workload

import (
	"fmt"
	"math"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
)

// Jacobi is the 2-D 5-point Jacobi relaxation of the dissertation: a global
// grid of Rows × Cols interior float32 points with fixed boundaries (1.0
// above the first row, 0 on the other three sides), split into equal blocks
// over a PRows × PCols process grid (PRows = nodes, PCols = 1 is the 1-D
// row decomposition of §6.1). Every iteration replaces each point by the
// mean of its four neighbours, exchanges the block edges with the
// neighbouring nodes (halos) and reduces the global residual max |new−old|,
// known on every node before the next iteration starts (the convergence
// test of §6; the run does a fixed Iters iterations, as the documents time
// it).
type Jacobi struct {
	Rows, Cols   int // global interior grid
	PRows, PCols int // process grid; PRows × PCols = nodes
	Iters        int // iterations (the documents report one)
	WGSize       int // work-items per work-group
	// MaxWGs bounds the work-groups of a kernel, or of the persistent
	// kernel (which needs them all resident); 0 = two per CU.
	MaxWGs     int
	CPUThreads int // host compute: OpenMP-style threads
}

// JacobiResult is what one run measured.
type JacobiResult struct {
	Time     sim.Time // first node's start of work to the last node's end
	Verified bool     // every block and every iteration's residual equal to the serial run
	// Residuals is the global residual of each iteration as node 0 saw it.
	Residuals []float32
	// Phases is node 0's time breakdown (the GIO slides) where the
	// implementation separates phases: "comp" (computing: host compute or
	// kernel bodies), "launch" (kernel launch and teardown overhead as the
	// host waits through it), "comm" (halo exchange and residual reduction
	// the host waits for). Overlapped and intra-kernel implementations
	// report what is not hidden.
	Phases map[string]sim.Time
	// Overlapped is, for the overlap implementation, the time node 0's
	// interior kernels ran while its host was inside MPI calls.
	Overlapped sim.Time
	Impl       string
}

// Validate checks the parameters for n nodes; each message names the field.
func (j Jacobi) Validate(n int) error {
	switch {
	case j.Rows < 1 || j.Cols < 1:
		return fmt.Errorf("jacobi grid %d×%d: rows and cols must be ≥ 1", j.Rows, j.Cols)
	case j.PRows < 1 || j.PCols < 1 || j.PRows*j.PCols != n:
		return fmt.Errorf("jacobi process grid %d×%d: must have prows × pcols = %d nodes", j.PRows, j.PCols, n)
	case j.Rows%j.PRows != 0:
		return fmt.Errorf("jacobi process grid %d×%d: prows = %d does not divide rows = %d", j.PRows, j.PCols, j.PRows, j.Rows)
	case j.Cols%j.PCols != 0:
		return fmt.Errorf("jacobi process grid %d×%d: pcols = %d does not divide cols = %d", j.PRows, j.PCols, j.PCols, j.Cols)
	case j.Rows/j.PRows < 3 || j.Cols/j.PCols < 3:
		return fmt.Errorf("jacobi block %d×%d per node: must be at least 3×3 (a halo row and column on each side of an interior point)",
			j.Rows/j.PRows, j.Cols/j.PCols)
	case j.Iters < 1:
		return fmt.Errorf("jacobi iters = %d: must be ≥ 1", j.Iters)
	case j.WGSize < 1 || j.CPUThreads < 1 || j.MaxWGs < 0:
		return fmt.Errorf("jacobi: wg_size and cpu_threads must be ≥ 1, max_wgs ≥ 0 (got %d, %d, %d)", j.WGSize, j.CPUThreads, j.MaxWGs)
	}
	return nil
}

// JacobiDef is the Jacobi relaxation's registry entry.
func JacobiDef() Def {
	return Def{
		Name:     "jacobi",
		Summary:  "2-D 5-point fp32 Jacobi with halo exchange and global residual (the dissertation)",
		Baseline: strategy.HDN, // §6.2: speedup vs HDN
		Preset:   "gputn",      // the GPU-TN chapter's N×N study (Table 6.1)
		Impls: []Impl{
			{Name: "triggered", Needs: strategy.Triggers | strategy.Stream | strategy.OneSided},
			{Name: "stream-triggered", Needs: strategy.StreamTriggered | strategy.Stream | strategy.OneSided},
			{Name: "device-shmem", Needs: strategy.DeviceShmem | strategy.Stream},
			{Name: "device-verbs", Needs: strategy.DeviceVerbs | strategy.Stream},
			{Name: "overlap", Needs: strategy.TwoSided | strategy.Stream | strategy.Overlap},
			{Name: "kernel-boundary", Needs: strategy.TwoSided | strategy.Stream},
			{Name: "host", Needs: strategy.TwoSided | strategy.HostCompute},
		},
		NotApplicable: xtqNotApplicable(spinNotApplicable("the Jacobi relaxation computes on host or GPU cores and exchanges contiguous halos; "+
			"the sPIN strategies provide receive-side datatype handlers on the NIC only"),
			"not implemented: a halo exchange as remote tasks (a kernel launched per arriving halo) would add a launch per neighbour per iteration; the XTQ chapter runs no Jacobi (the documents run it with ComP-Net, GPU-TN and GIO)"),
		Small: func(s strategy.Def, hw cluster.Spec, cfg strategy.Config, seed uint64, functional bool) (Cell, error) {
			const nodes = 6 // a non-square 2×3 process grid
			c, err := newCluster(hw, nodes, seed, functional)
			if err != nil {
				return Cell{}, err
			}
			defer c.Engine.Close()
			j := Jacobi{Rows: 48, Cols: 48, PRows: 2, PCols: 3, Iters: 3, WGSize: 64, MaxWGs: 8, CPUThreads: hw.CPU.Cores}
			r, err := j.Run(c, s.Strategy, cfg)
			return Cell{Impl: r.Impl, Nodes: nodes, Time: r.Time, Events: c.Engine.Events(), Verified: r.Verified}, err
		},
	}
}

// Directions of the halos, and the opposite of each.
const (
	north = iota
	south
	west
	east
)

func opposite(d int) int { return d ^ 1 }

// boundaryValue is the fixed value outside the global grid on side d
// ([DEFAULT] the dissertation: 1.0 on one side, 0 elsewhere).
func boundaryValue(d int) float32 {
	if d == north {
		return 1
	}
	return 0
}

// initialValue is the starting value of global interior point (r, c): a
// pattern that differs between neighbours, so every point and the residual
// change in the first iteration and a misplaced halo shows.
func initialValue(r, c int) float32 { return float32((r*31+c*17)%64) / 64 }

// relax is the 5-point update, in one fixed order so the parallel runs and
// the serial reference round identically.
func relax(up, down, left, right float32) float32 { return 0.25 * (up + down + left + right) }

// jacobiLayout places one node's data in one exposed region: the two
// block arrays (state t in arrays[t%2]), per state parity and direction a
// halo receive slot and a send slot (values, padding to 8 bytes, then a
// sequence word: state s's halos carry s+1, written last), and per
// iteration the residual words (on their own cache lines: they are updated
// with device-scope atomics and polled).
type jacobiLayout struct {
	j          Jacobi
	n          int
	ly, lx     int // block rows, cols
	pr, pc     int // this node's process-grid coordinates
	arrays     [2]uint64
	recv, send [2][4]uint64 // slot offsets
	ctrl       uint64       // first residual line
	rounds     int          // residual exchange slots per iteration
	total      uint64
}

// ctrlLine is the spacing of residual words: one cache line each.
const ctrlLine = mem.LineSize

// Residual lines per iteration: the accumulator (max bits, work-group
// count), the global result (value, set flag), then per exchange slot k
// an outgoing and an incoming line (value, arrival flag).
const (
	accLine    = 0
	globalLine = 1
	slotLines  = 2
)

func newJacobiLayout(j Jacobi, n, rank, rounds int) *jacobiLayout {
	l := &jacobiLayout{j: j, n: n, ly: j.Rows / j.PRows, lx: j.Cols / j.PCols, pr: rank / j.PCols, pc: rank % j.PCols, rounds: rounds}
	var pos uint64
	for p := range 2 {
		l.arrays[p] = pos
		pos += pad8(uint64(l.ly * l.lx * 4))
	}
	for p := range 2 {
		for d := range 4 {
			l.recv[p][d] = pos
			pos += l.slotBytes(d)
			l.send[p][d] = pos
			pos += l.slotBytes(d)
		}
	}
	pos = (pos + ctrlLine - 1) &^ (ctrlLine - 1)
	l.ctrl = pos
	l.total = pos + uint64(j.Iters)*l.linesPerIter()*ctrlLine
	return l
}

func (l *jacobiLayout) linesPerIter() uint64 { return uint64(slotLines + 2*l.rounds) }

// edgeLen is the number of values of a halo on side d.
func (l *jacobiLayout) edgeLen(d int) int {
	if d == north || d == south {
		return l.lx
	}
	return l.ly
}

// slotBytes is a halo slot's size: values, padding, sequence word.
func (l *jacobiLayout) slotBytes(d int) uint64 { return pad8(uint64(l.edgeLen(d)*4)) + 8 }

// seqOff is the offset of the sequence word within a slot of side d.
func (l *jacobiLayout) seqOff(d int) uint64 { return pad8(uint64(l.edgeLen(d) * 4)) }

// neighbour returns the rank across side d, or -1 at the global boundary.
func (l *jacobiLayout) neighbour(d int) int {
	r, c := l.pr, l.pc
	switch d {
	case north:
		r--
	case south:
		r++
	case west:
		c--
	case east:
		c++
	}
	if r < 0 || r >= l.j.PRows || c < 0 || c >= l.j.PCols {
		return -1
	}
	return r*l.j.PCols + c
}

// ctrlAddr returns the address of residual line k of iteration t.
func (l *jacobiLayout) ctrlAddr(base mem.Addr, t, k int) mem.Addr {
	return base + mem.Addr(l.ctrl+(uint64(t)*l.linesPerIter()+uint64(k))*ctrlLine)
}

// outSlot and inSlot are exchange slot k's outgoing and incoming lines.
func (l *jacobiLayout) outSlot(base mem.Addr, t, k int) mem.Addr {
	return l.ctrlAddr(base, t, slotLines+2*k)
}
func (l *jacobiLayout) inSlot(base mem.Addr, t, k int) mem.Addr {
	return l.ctrlAddr(base, t, slotLines+2*k+1)
}

// fill writes the initial block and the state-0 halos (the neighbours'
// initial edges, known from the global pattern: the host prepares the data
// without communication), and marks the control words.
func (l *jacobiLayout) fill(m *mem.Memory, base mem.Addr) {
	if a := l.array(m, base, 0); a != nil {
		for i := range l.ly {
			for k := range l.lx {
				a[i*l.lx+k] = initialValue(l.pr*l.ly+i, l.pc*l.lx+k)
			}
		}
	}
	for d := range 4 {
		for p := range 2 {
			m.MarkControl(base+mem.Addr(l.recv[p][d]+l.seqOff(d)), 8)
			m.MarkControl(base+mem.Addr(l.send[p][d]+l.seqOff(d)), 8)
			vals := l.halo(m, base, p, d)
			for k := range vals {
				vals[k] = l.outsideValue(d, k)
			}
		}
		m.Store64(base+mem.Addr(l.recv[0][d]+l.seqOff(d)), 1)
	}
	m.MarkControl(base+mem.Addr(l.ctrl), int(l.total-l.ctrl))
}

// outsideValue is value k of the state-0 halo on side d: the global
// boundary, or the neighbour's initial edge.
func (l *jacobiLayout) outsideValue(d, k int) float32 {
	if l.neighbour(d) < 0 {
		return boundaryValue(d)
	}
	r0, c0 := l.pr*l.ly, l.pc*l.lx
	switch d {
	case north:
		return initialValue(r0-1, c0+k)
	case south:
		return initialValue(r0+l.ly, c0+k)
	case west:
		return initialValue(r0+k, c0-1)
	}
	return initialValue(r0+k, c0+l.lx)
}

// array returns state parity p's block values (nil in payload-free runs).
func (l *jacobiLayout) array(m *mem.Memory, base mem.Addr, p int) []float32 {
	return f32(m.Bytes(base+mem.Addr(l.arrays[p]), l.ly*l.lx*4))
}

// halo returns the received halo values of state parity p on side d.
func (l *jacobiLayout) halo(m *mem.Memory, base mem.Addr, p, d int) []float32 {
	return f32(m.Bytes(base+mem.Addr(l.recv[p][d]), l.edgeLen(d)*4))
}

// rect is a rectangle of block points, rows [r0, r1) and cols [c0, c1).
type rect struct{ r0, r1, c0, c1 int }

func (r rect) cells() int {
	if r.r1 <= r.r0 || r.c1 <= r.c0 {
		return 0
	}
	return (r.r1 - r.r0) * (r.c1 - r.c0)
}

// sweep computes state t+1 on rectangle r from state t and state t's halos
// and returns max |new−old| over r (functional part; 0 in payload-free
// runs).
func (l *jacobiLayout) sweep(m *mem.Memory, base mem.Addr, t int, r rect) float32 {
	src, dst := l.array(m, base, t%2), l.array(m, base, (t+1)%2)
	if src == nil || dst == nil {
		return 0
	}
	var h [4][]float32
	for d := range 4 {
		h[d] = l.halo(m, base, t%2, d)
	}
	lx, ly := l.lx, l.ly
	var res float32
	for i := r.r0; i < r.r1; i++ {
		for k := r.c0; k < r.c1; k++ {
			var up, down, left, right float32
			if i > 0 {
				up = src[(i-1)*lx+k]
			} else {
				up = h[north][k]
			}
			if i < ly-1 {
				down = src[(i+1)*lx+k]
			} else {
				down = h[south][k]
			}
			if k > 0 {
				left = src[i*lx+k-1]
			} else {
				left = h[west][i]
			}
			if k < lx-1 {
				right = src[i*lx+k+1]
			} else {
				right = h[east][i]
			}
			v := relax(up, down, left, right)
			dst[i*lx+k] = v
			res = max(res, abs32(v-src[i*lx+k]))
		}
	}
	return res
}

func abs32(v float32) float32 { return math.Float32frombits(math.Float32bits(v) &^ (1 << 31)) }

// pack copies the part [lo, hi) of state s's block edge on side d into
// the send slot of parity s%2 (functional part).
func (l *jacobiLayout) pack(m *mem.Memory, base mem.Addr, s, d, lo, hi int) {
	a := l.array(m, base, s%2)
	out := f32(m.Bytes(base+mem.Addr(l.send[s%2][d]), l.edgeLen(d)*4))
	if a == nil || out == nil {
		return
	}
	for k := lo; k < hi; k++ {
		switch d {
		case north:
			out[k] = a[k]
		case south:
			out[k] = a[(l.ly-1)*l.lx+k]
		case west:
			out[k] = a[k*l.lx]
		case east:
			out[k] = a[k*l.lx+l.lx-1]
		}
	}
}

// edgeRange returns the part of side d's edge that rectangle r holds, as
// [lo, hi) along the edge, or false when r does not touch side d.
func (l *jacobiLayout) edgeRange(r rect, d int) (int, int, bool) {
	switch d {
	case north:
		return r.c0, r.c1, r.r0 == 0 && r.cells() > 0
	case south:
		return r.c0, r.c1, r.r1 == l.ly && r.cells() > 0
	case west:
		return r.r0, r.r1, r.c0 == 0 && r.cells() > 0
	}
	return r.r0, r.r1, r.c1 == l.lx && r.cells() > 0
}

// jacobiSerial runs the whole grid serially for iters iterations and
// returns the final state (row-major, Rows × Cols) and each iteration's
// residual.
func jacobiSerial(rows, cols, iters int) ([]float32, []float32) {
	cur, next := make([]float32, rows*cols), make([]float32, rows*cols)
	for r := range rows {
		for c := range cols {
			cur[r*cols+c] = initialValue(r, c)
		}
	}
	at := func(a []float32, r, c int) float32 {
		switch {
		case r < 0:
			return boundaryValue(north)
		case r >= rows:
			return boundaryValue(south)
		case c < 0:
			return boundaryValue(west)
		case c >= cols:
			return boundaryValue(east)
		}
		return a[r*cols+c]
	}
	res := make([]float32, iters)
	for t := range iters {
		var m float32
		for r := range rows {
			for c := range cols {
				v := relax(at(cur, r-1, c), at(cur, r+1, c), at(cur, r, c-1), at(cur, r, c+1))
				next[r*cols+c] = v
				m = max(m, abs32(v-cur[r*cols+c]))
			}
		}
		res[t] = m
		cur, next = next, cur
	}
	return cur, res
}

// verify compares the node's final block with the serial grid, bit for
// bit (same operations in the same order).
func (l *jacobiLayout) verify(m *mem.Memory, base mem.Addr, want []float32) error {
	got := l.array(m, base, l.j.Iters%2)
	for i := range l.ly {
		for k := range l.lx {
			gr, gc := l.pr*l.ly+i, l.pc*l.lx+k
			if w := want[gr*l.j.Cols+gc]; got[i*l.lx+k] != w {
				return fmt.Errorf("point (%d,%d) = %v, want %v", gr, gc, got[i*l.lx+k], w)
			}
		}
	}
	return nil
}

// tiles splits a ly × lx block into at most w rectangles, as close to
// square as the counts allow (work-group tiles).
func tiles(ly, lx, w int) []rect {
	ty := max(1, min(ly, w, int(math.Round(math.Sqrt(float64(w)*float64(ly)/float64(lx))))))
	tx := max(1, min(lx, w/ty))
	var out []rect
	for a := range ty {
		for b := range tx {
			out = append(out, rect{a * ly / ty, (a + 1) * ly / ty, b * lx / tx, (b + 1) * lx / tx})
		}
	}
	return out
}

// exterior returns the block's boundary ring as four disjoint rectangles
// (north and south rows whole, west and east columns without the corners)
// and interior the rest; the ring is what needs halos.
func exterior(ly, lx int) []rect {
	return []rect{{0, 1, 0, lx}, {ly - 1, ly, 0, lx}, {1, ly - 1, 0, 1}, {1, ly - 1, lx - 1, lx}}
}

func interior(ly, lx int) rect { return rect{1, ly - 1, 1, lx - 1} }

// disseminationRounds is ceil(log2 n): the rounds of the dissemination
// max-allreduce, which any node count can use (max is idempotent, so the
// overlapping coverage of a non-power-of-two count does no harm).
func disseminationRounds(n int) int {
	r := 0
	for 1<<r < n {
		r++
	}
	return r
}
