package workload

import (
	"fmt"
	"math"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
)

// SpTS is the sparse triangular solve A x = y of the GIO slides, with
// A lower triangular (fp64), its rows partitioned over the nodes in
// contiguous blocks.
//
// Device-shmem (GNN_GIO, GHN, ComP-Net): one persistent kernel per node.
// Its work-groups (one wavefront each) take the node's rows round-robin in
// increasing order; a row waits until its in-degree counter of local
// dependencies reaches zero (device-scope atomics, sync-free) and until
// the flag of every remote x_j it needs is set, reads its row (bulk, L2
// model), gathers x, solves, stores x_i, decrements its local dependents'
// counters with one vector atomic, and for every other node owning a
// dependent row puts x_i there, fences, and puts x_i's flag — from inside
// the kernel, through the device OpenSHMEM API. x, the flags and the
// counters live in the symmetric heap (L2-uncacheable on GNN_GIO unless
// shmem.gio.shader_l2_maintenance), the matrix in plain GPU memory. Every
// value the arithmetic uses is read from node memory (spts_rows.go; in a
// payload-free run the matrix comes from the host copy), so a stale or
// missing x, counter or flag would change the answer.
//
// Kernel-boundary (HDN, HSA), overlap (HDN_OVERLAP) and host (CPU): level
// scheduling (spts_levels.go).
type SpTS struct {
	Matrix *TriMatrix
	WGs    int    // work-groups per node (device-shmem; kernel-boundary: at most this many per level kernel)
	Seed   uint64 // right-hand side
}

// SpTSResult is one solve.
type SpTSResult struct {
	Time          sim.Time // first kernel launch (or host start) to the last node done
	Verified      bool
	Residual      float64 // ‖A x − y‖∞ / ‖y‖∞
	Levels        int     // dependency levels of the matrix
	RemoteValues  uint64  // x values sent to another node
	BulkHitRate   float64 // L2 hit rate of the bulk lines (matrix, x gathers), all nodes
	UncachedLines uint64  // bulk lines of L2-uncacheable pages
}

// SpTSDef is the solve's registry entry.
func SpTSDef() Def {
	return Def{
		Name:     "spts",
		Summary:  "distributed sparse triangular solve, synthetic SuiteSparse-class matrices (the GIO slides)",
		Baseline: strategy.CPU,
		Preset:   "gio", // the GIO slides' SpTS
		Impls: []Impl{
			{Name: "device-shmem", Needs: strategy.DeviceShmem | strategy.Stream},
			{Name: "device-verbs", Needs: strategy.DeviceVerbs | strategy.Stream},
			{Name: "overlap", Needs: strategy.TwoSided | strategy.Stream | strategy.Overlap},
			{Name: "kernel-boundary", Needs: strategy.TwoSided | strategy.Stream},
			{Name: "host", Needs: strategy.TwoSided | strategy.HostCompute},
		},
		NotApplicable: spTSNotApplicable(),
		Small: func(s strategy.Def, hw cluster.Spec, cfg strategy.Config, seed uint64, functional bool) (Cell, error) {
			const nodes = 2
			c, err := newCluster(hw, nodes, seed, functional)
			if err != nil {
				return Cell{}, err
			}
			defer c.Engine.Close()
			a, err := GenSynthetic(512, 512*4, ClassKKT, seed)
			if err != nil {
				return Cell{}, err
			}
			r, err := SpTS{Matrix: a, WGs: 16, Seed: seed}.Run(c, s.Strategy, cfg)
			im, _ := SpTSDef().Impl(s)
			return Cell{Impl: im.Name, Nodes: nodes, Time: r.Time, Events: c.Engine.Events(), Verified: r.Verified}, err
		},
	}
}

// spTSNotApplicable gives every strategy without an implementation its
// reason.
func spTSNotApplicable() map[strategy.Strategy]string {
	m := spinNotApplicable("the solve computes rows on GPU or host cores; the sPIN strategies offload datatype processing to NIC handlers")
	m[strategy.GDS] = "not implemented: GDS rings pre-posted puts only at kernel boundaries, so it would be level scheduling with one " +
		"kernel and one pre-posted put set per level; the documents compare GIO with IKN (GHN_DGPU) only"
	m[strategy.GPUTN] = "not implemented: a triggered solve would pre-register one triggered put (and flag put) per (x_j, remote owner) " +
		"pair — thousands per matrix, beyond the NIC's trigger list — before the kernel; the documents compare GIO with IKN (GHN_DGPU) only"
	m[strategy.XTQ] = "not implemented: remote tasks would launch a kernel per arriving x_j batch; the documents compare GIO with IKN (GHN_DGPU) only"
	return m
}

// Run solves on c under s: every node of c takes a contiguous row block.
func (p SpTS) Run(c *cluster.Cluster, s strategy.Strategy, cfg strategy.Config) (SpTSResult, error) {
	a := p.Matrix
	if a == nil || a.N < len(c.Nodes) {
		return SpTSResult{}, fmt.Errorf("spts: a matrix of at least one row per node (%d nodes) is needed", len(c.Nodes))
	}
	if p.WGs < 1 || p.WGs > 4096 {
		return SpTSResult{}, fmt.Errorf("spts work-groups = %d: must be in [1, 4096]", p.WGs)
	}
	im, _, err := SpTSDef().implFor(s)
	if err != nil {
		return SpTSResult{}, err
	}
	pl := newSpTSPlan(a, len(c.Nodes), p.Seed)
	var res SpTSResult
	switch im.Name {
	case "device-shmem":
		res, err = p.runShmem(c, s, cfg, pl)
	case "device-verbs":
		res, err = p.runVerbs(c, s, cfg, pl)
	default:
		res, err = p.runLevels(c, s, cfg, pl, im.Name)
	}
	if err != nil {
		return res, err
	}
	_, res.Levels = a.Levels()
	var hits, lines uint64
	for _, nd := range c.Nodes {
		st := nd.GPU.Stats()
		hits += st.BulkHits
		lines += st.BulkHits + st.BulkMisses
		res.UncachedLines += st.BulkUncached
	}
	if lines > 0 {
		res.BulkHitRate = float64(hits) / float64(lines)
	}
	return res, nil
}

// spTSPlan is the host-side analysis every implementation starts from:
// the row blocks, the dependents, and per row its local in-degree, its
// remote dependencies and the remote owners of its dependents.
type spTSPlan struct {
	a        *TriMatrix
	nodes    int
	block    int
	y        []float64
	deps     [][]int32  // dependents of each row
	localIn  []int32    // off-diagonal columns owned by the row's node
	remoteIn [][]int32  // off-diagonal columns owned by another node
	targets  [][]int    // other nodes owning a dependent of the row
	xAt      []mem.Addr // each node's x array (device-shmem)
}

func newSpTSPlan(a *TriMatrix, nodes int, seed uint64) *spTSPlan {
	pl := &spTSPlan{a: a, nodes: nodes, block: (a.N + nodes - 1) / nodes, y: spTSRHS(a.N, seed), deps: a.Dependents(),
		localIn: make([]int32, a.N), xAt: make([]mem.Addr, nodes), remoteIn: make([][]int32, a.N), targets: make([][]int, a.N)}
	for i := range a.N {
		cs, _ := a.Row(i)
		for _, j := range cs[:len(cs)-1] {
			if pl.owner(int(j)) == pl.owner(i) {
				pl.localIn[i]++
			} else {
				pl.remoteIn[i] = append(pl.remoteIn[i], j)
			}
		}
		for _, d := range pl.deps[i] {
			if q := pl.owner(int(d)); q != pl.owner(i) && (len(pl.targets[i]) == 0 || pl.targets[i][len(pl.targets[i])-1] != q) {
				pl.targets[i] = append(pl.targets[i], q) // dependents are in increasing order, so owners are too
			}
		}
	}
	return pl
}

// owner returns the node owning row i.
func (pl *spTSPlan) owner(i int) int { return i / pl.block }

// rows returns node n's row block [lo, hi).
func (pl *spTSPlan) rows(n int) (lo, hi int) {
	return min(n*pl.block, pl.a.N), min((n+1)*pl.block, pl.a.N)
}

// verify checks x against the solve's tolerance.
func (pl *spTSPlan) verify(x []float64, res *SpTSResult) error {
	res.Residual = pl.a.Residual(x, pl.y)
	if math.IsNaN(res.Residual) || res.Residual > 1e-6 {
		return fmt.Errorf("spts %s: verification failed: ‖Ax−y‖∞/‖y‖∞ = %.3g, want ≤ 1e-6", pl.a.Class, res.Residual)
	}
	res.Verified = true
	return nil
}
