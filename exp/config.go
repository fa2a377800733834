package exp

import (
	"errors"
	"fmt"
	"slices"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/model/mpi"
	"github.com/gpunetsim/gpunetsim/model/shmem"
	spinmodel "github.com/gpunetsim/gpunetsim/model/spin"
	"github.com/gpunetsim/gpunetsim/model/verbs"
	"github.com/gpunetsim/gpunetsim/unit"
	"github.com/gpunetsim/gpunetsim/workload"
)

// RunSpec holds what selects and seeds a run.
type RunSpec struct {
	Preset     string `toml:"preset" doc:"hardware preset the other values start from" src:"RUN"`
	Seed       uint64 `toml:"seed" doc:"seed of every random stream" src:"RUN"`
	Functional bool   `toml:"functional" doc:"carry real bytes and verify every result against a serial reference" src:"RUN"`
	Parallel   int    `toml:"parallel" doc:"simulations run at once in a sweep (0 = one per CPU core)" src:"RUN"`
	// MemLimit caps the memory a run may need (exp.EstimateMemory); a run
	// estimated above it is refused before any work.
	MemLimit unit.Bytes `toml:"mem_limit" doc:"memory a run may use; a run estimated to need more is refused before it starts (0 = the memory available now)" src:"RUN"`
	// MemBudget bounds the estimated memory of the points a sweep runs at
	// once (exp.RunPoints); a point estimated above it runs alone.
	MemBudget unit.Bytes `toml:"mem_budget" doc:"estimated memory the simulations a sweep runs at once may share: a point starts only while its estimate fits beside those running, and one that needs more runs alone (with the cores the others leave); 0 = no budget (allreduce; default 1GiB, so the main job fits a laptop's memory)" src:"RUN"`
	// CheckInvariants verifies the hardware models' conservation and
	// protocol invariants at the end of every simulation (hw/cluster).
	CheckInvariants bool `toml:"check_invariants" doc:"verify conservation and protocol invariants (bytes, packets, counters, queues, blocked agents) at the end of every simulation; a violation fails the run" src:"RUN"`
	// Partitions splits one simulation over that many engines run in
	// parallel (hw/cluster.NewPartitioned, docs/parallel.md); results are
	// those of one engine. 0 picks per point (workload.AutoPartitions).
	// Either way the engines run on at most the cores the sweep gives the
	// point (sim.Group.SetThreads).
	Partitions int `toml:"partitions" doc:"engines one simulation is split into, run in parallel on min(engines, cores) threads, each thread running its engines one after the other in every window (more engines than cores keep each engine's state in the caches: the 1,024-node payload-free GPU-TN ring runs best at 16-32) (allreduce on CPU, HDN, HDN_OVERLAP, GDS, GPUTN, XTQ, HSA, GHN_*, COMPNET, GNN_GIO and GNN_GPURDMA, packet network; 1 = one engine; 0 = auto: where it pays, on the cores the sweep leaves free, one engine per 8 nodes functional or 64 payload-free, at most 2, and GPUTN payload-free from 1,024 nodes 32 engines on those cores' threads; threads never exceed those cores)" src:"RUN"`
}

// AllreduceSpec holds the knobs of the strong-scaled allreduce study
// (the dissertation).
type AllreduceSpec struct {
	Size       unit.Bytes `toml:"size" doc:"vector size in bytes (float32 elements)" src:"DOC"`
	Nodes      []int      `toml:"nodes" doc:"node counts to sweep" src:"DEFAULT"`
	Strategies []string   `toml:"strategies" doc:"strategies to compare, CPU the speedup baseline (default, as the GPU-TN chapter's allreduce runs them, its GHN being GHN_APU: CPU, HDN, GDS, GHN_APU, GPUTN)" src:"DOC"`
	WGs        int        `toml:"wgs" doc:"GPU-TN: work-groups (slices) of the persistent kernel, one triggered put per (step, work-group), at most nic.trig_max_entries; 0 = 16 at every node count and size (the dissertation's §6.3.4 triggers per work-group with no count given; 16 fills its 16 simultaneous trigger operations, §6.1.3), capped by the trigger entries and resident work-groups" src:"DEFAULT"`
	WGSize     int        `toml:"wg_size" doc:"work-items per work-group" src:"DEFAULT"`
	CPUThreads int        `toml:"cpu_threads" doc:"CPU strategy: OpenMP-style threads for the reduction (preset xtq: 1, the XTQ chapter's CPU baselines use the application thread; compnet and gputn: every host core, the ComP-Net and GPU-TN chapters' OpenMP; other presets 8)" src:"DEFAULT"`
	Algorithm  string     `toml:"algorithm" doc:"ring (2(n-1) steps, every strategy) or rhd (recursive halving-doubling, 2 log2 n steps: a libNBC schedule over MPI on CPU, HDN, HDN_OVERLAP, HSA; one-sided puts with trailing flags on GDS, GPUTN, GHN_*, COMPNET, GNN_*; remote tasks counted per step on XTQ)" src:"DEFAULT"`
}

// XTQSpec holds the XTQ runtime's schedule options.
type XTQSpec struct {
	// SyncPerRound places the resource-ready sync (the dissertation's
	// §4.3.3.2) before every XtqPut round instead of once before the first.
	SyncPerRound bool `toml:"sync_per_round" doc:"XTQ allreduce: a zero-length resource-ready sync before every XtqPut round, each target re-posting its receive buffer (true), or one sync before the first XtqPut with every round's receive resources posted up front (false: 'a synchronization step ... before any XtqPuts are issued', the dissertation's §4.3.3.2, read as once per schedule)" src:"DEFAULT"`
}

// LatencySpec holds the knobs of the GPU-TN latency decomposition
// (the dissertation's GPU-TN chapter).
type LatencySpec struct {
	Size       unit.Bytes `toml:"size" doc:"bytes the initiator kernel copies and sends" src:"DOC"`
	Strategies []string   `toml:"strategies" doc:"strategies to decompose (default, as the GPU-TN chapter's latency figure runs them: HDN, GDS, GPUTN)" src:"DOC"`
}

// Config is everything one experiment run needs. The embedded cluster.Spec
// gives the hardware parameters their top-level names (link.bandwidth,
// gpu.launch, …).
type Config struct {
	Run RunSpec `toml:"run"`
	cluster.Spec
	SW            cost.Spec         `toml:"sw"`
	MPI           mpi.Spec          `toml:"mpi"`
	Allreduce     AllreduceSpec     `toml:"allreduce"`
	XTQ           XTQSpec           `toml:"xtq"`
	Latency       LatencySpec       `toml:"latency"`
	PingPong      PingPongSpec      `toml:"pingpong"`
	Halo3D        Halo3DSpec        `toml:"halo3d"`
	MoE           MoESpec           `toml:"moe"`
	Today         TodaySpec         `toml:"today"`
	AllreduceHier AllreduceHierSpec `toml:"allreduce_hier"`
	Matrix        MatrixSpec        `toml:"matrix"`
	Shmem         shmem.Spec        `toml:"shmem"`
	TaskSpawn     TaskSpawnSpec     `toml:"taskspawn"`
	DDT           spinmodel.Costs   `toml:"ddt"`
	DDTBench      DDTBenchSpec      `toml:"ddtbench"`
	DDTPULP       DDTPULPSpec       `toml:"ddtpulp"`
	Accumulate    AccumulateSpec    `toml:"accumulate"`
	Reduce        ReduceSpec        `toml:"reduce"`
	Jacobi        JacobiSpec        `toml:"jacobi"`
	Jacobi1D      Jacobi1DSpec      `toml:"jacobi1d"`
	JacobiScale   JacobiScaleSpec   `toml:"jacobiscale"`
	DDTFFT        FFT2DSpec         `toml:"fft2d"`
	ShmemBench    ShmemBenchSpec    `toml:"shmembench"`
	GNN           verbs.Spec        `toml:"gnn"`
	GPURdma       GPURdmaSpec       `toml:"gpurdma"`
	GPI           GPISpec           `toml:"gpi"`
	GIOBench      GIOBenchSpec      `toml:"giobench"`
	SpTS          SpTSSpec          `toml:"spts"`
	ML            MLSpec            `toml:"ml"`
	HostCPU       HostCPUSpec       `toml:"hostcpu"`
}

// DefaultConfig returns the configuration of the named preset with every
// software and workload knob at its default.
func DefaultConfig(preset string) (Config, error) {
	hw, err := cluster.Preset(preset)
	if err != nil {
		return Config{}, err
	}
	jac, jac1d, jacScale := defaultJacobi()
	// The main job's sweep (gpunetsim with no arguments, "run allreduce"
	// and the report): powers of two, 24 simulations, about 20 s on two
	// cores. Denser sweeps are a --set allreduce.nodes=2-64/2 away.
	nodes := []int{2, 4, 8, 16, 32, 64}
	cfg := Config{
		Run:  RunSpec{Preset: preset, Seed: 1, Functional: true, CheckInvariants: true, Partitions: 0, MemBudget: unit.GiB},
		Spec: hw,
		SW:   cost.Default(),
		MPI:  mpi.DefaultSpec(),
		Allreduce: AllreduceSpec{Size: 8 * unit.MiB, Nodes: nodes, Strategies: []string{"CPU", "HDN", "GDS", "GHN_APU", "GPUTN"},
			WGs: 0, WGSize: 256, CPUThreads: cpuThreads(preset, hw.CPU.Cores), Algorithm: "ring"},
		Latency:       LatencySpec{Size: 64, Strategies: []string{"HDN", "GDS", "GPUTN"}},
		Matrix:        defaultMatrix(),
		PingPong:      defaultPingPong(),
		Halo3D:        defaultHalo3D(),
		MoE:           defaultMoE(),
		Today:         defaultToday(),
		AllreduceHier: defaultAllreduceHier(),
		Shmem:         shmem.DefaultSpec(),
		TaskSpawn:     TaskSpawnSpec{MinSize: 64, MaxSize: 64 * unit.KiB, Strategies: []string{"CPU", "HSA", "XTQ"}, WGSize: 256, KernelIndex: 42, QueueIndex: 42, CPUTasks: true},
		DDT:           spinmodel.DefaultCosts(),
		DDTBench:      defaultDDTBench(),
		DDTPULP:       defaultDDTPULP(),
		Accumulate:    defaultAccumulate(),
		Reduce:        defaultReduce(),
		Jacobi:        jac, Jacobi1D: jac1d, JacobiScale: jacScale,
		DDTFFT:     defaultFFT2D(),
		ShmemBench: defaultShmemBench(),
		GNN:        verbs.DefaultSpec(),
		GPURdma:    defaultGPURdma(),
		GPI:        defaultGPI(),
		GIOBench:   defaultGIOBench(),
		SpTS:       defaultSpTS(),
		ML:         defaultML(),
		HostCPU:    HostCPUSpec{Size: 64 * unit.MiB, Threads: []int{1, 2, 4, 8, 16}},
	}
	// The GIO study's IKN is ROC_SHMEM's reverse offload: one service
	// thread (its num_threads = 1) plus an MPI progress thread
	// (shmem.progress_thread), queues in host memory with the status
	// flags in GPU memory (shmem.queue_in_gpu = false, its default build).
	if preset == "gio" {
		cfg.Shmem.Threads, cfg.Shmem.ProgressThread, cfg.Shmem.QueueInGPU = 1, true, false
	}
	// Today's GPU-initiated verbs (NVSHMEM IBGDA) share a few RC QPs per
	// peer between the CTAs instead of one per context (the params'
	// source for shmem.gio.qps_per_peer).
	if slices.Contains(cluster.PresentDay(), preset) {
		cfg.Shmem.GIO.QPsPerPeer = 2
	}
	return DropUnavailable(cfg), nil
}

// cpuThreads is the CPU allreduce's reduction threads on a preset: the XTQ
// chapter's CPU baselines "use the application thread for message progress
// and active message execution" (the dissertation's §4.3.1); the ComP-Net
// and GPU-TN chapters parallelise with OpenMP (§5.4.1, §6.3.3), over every
// host core here; elsewhere 8.
func cpuThreads(preset string, cores int) int {
	switch preset {
	case "xtq":
		return 1
	case "gputn", "compnet", "compnet_paper":
		return cores
	}
	return 8
}

// Validate reports every invalid value at once, each naming its field.
func (c Config) Validate() error {
	errs := []error{c.Spec.Validate(), c.SW.Validate(), c.MPI.Validate(), c.Allreduce.validate(), c.Latency.validate(), c.PingPong.validate(), c.AllreduceHier.validate(), c.Halo3D.validate(), c.MoE.validate(), c.Today.validate(), c.Matrix.validate(), c.Shmem.Validate(),
		c.TaskSpawn.validate(), c.DDT.Validate(), c.DDTBench.validate(), c.DDTPULP.validate(), c.DDTPULP.fitsL2(c.Spin),
		c.Accumulate.validate(), c.Reduce.validate()}
	errs = append(errs, c.Jacobi.validate(), c.Jacobi1D.validate(), c.JacobiScale.validate())
	errs = append(errs, c.DDTFFT.validate(), c.ddtInterval(), c.ML.validate())
	errs = append(errs, c.ShmemBench.validate())
	errs = append(errs, c.GNN.Validate(), c.GPURdma.validate(), c.GPI.validate(), c.GIOBench.validate(), c.SpTS.validate())
	errs = append(errs, c.HostCPU.validate())
	errs = append(errs, c.Allreduce.validateAlgorithm())
	errs = append(errs, c.kernelFits()...)
	errs = append(errs, c.unavailable()...)
	if !c.Topology.Ordered() {
		for _, st := range c.Allreduce.Strategies {
			if st == "GDS" || st == "GPUTN" {
				errs = append(errs, fmt.Errorf("topology: %s delivers packets of one pair out of order (topology.in_order = false or topology.routing = %s): the %s allreduce detects arrival by a trailing flag that in-order delivery writes last; use ordered routing or drop %s from allreduce.strategies", c.Topology.Kind, c.Topology.Routing, st, st))
			}
		}
	}
	if c.Allreduce.WGs > 0 && c.Allreduce.WGs > c.NIC.TrigMaxEntries {
		errs = append(errs, fmt.Errorf("allreduce.wgs = %d: must be ≤ nic.trig_max_entries = %d (one trigger entry per slice)", c.Allreduce.WGs, c.NIC.TrigMaxEntries))
	}
	if c.Halo3D.Scaling == "strong" {
		// Every GPU holds at least one cell per dimension: a smaller cube
		// would be rounded up to the grid (domain 3 on a 4x4x2 grid ran a
		// 4x4x4 cube), not split.
		for _, n := range c.Halo3D.Nodes {
			if n < 1 || n > 16384 {
				continue // halo3d.validate names it
			}
			dm := workload.Dims3(n * max(1, c.Node.GPUs))
			if most := max(dm[0], dm[1], dm[2]); c.Halo3D.Domain < most {
				errs = append(errs, fmt.Errorf("halo3d.domain = %d: must be at least %d, the largest side of the %dx%dx%d GPU grid of halo3d.nodes = %d (every GPU holds at least one cell per dimension)", c.Halo3D.Domain, most, dm[0], dm[1], dm[2], n))
				break
			}
		}
	}
	for _, ep := range c.MoE.EP {
		if g := max(1, c.Node.GPUs); ep%g != 0 {
			errs = append(errs, fmt.Errorf("moe.ep contains %d: must be whole nodes of node.gpus = %d GPUs", ep, g))
		}
	}
	if c.Run.Parallel < 0 || c.Run.Parallel > 1024 {
		errs = append(errs, fmt.Errorf("run.parallel = %d: must be in [0, 1024]", c.Run.Parallel))
	}
	if c.Run.MemBudget < 0 {
		errs = append(errs, fmt.Errorf("run.mem_budget = %v: must be at least 0 (0 = no budget)", c.Run.MemBudget))
	}
	if c.Run.Partitions < 0 || c.Run.Partitions > maxPartitions {
		errs = append(errs, fmt.Errorf("run.partitions = %d: must be in [0, %d] (0 = auto)", c.Run.Partitions, maxPartitions))
	}
	return errors.Join(errs...)
}

// maxSlices is the most GPU-TN work-groups the hardware allows: one
// trigger entry each, all resident at once.
func (c Config) maxSlices() int {
	g, a := c.GPU, c.Allreduce
	m := c.NIC.TrigMaxEntries
	if g.WaveSize > 0 && a.WGSize > 0 {
		waves := (a.WGSize + g.WaveSize - 1) / g.WaveSize
		m = min(m, g.SIMDs*g.WavesPerSIMD/waves*g.CUs)
	}
	return max(1, m)
}

// kernelFits checks the allreduce kernels against the GPU: work-group size,
// and for the persistent GPU-TN kernel, all work-groups resident at once
// (they wait on each other's data).
func (c Config) kernelFits() []error {
	g, a := c.GPU, c.Allreduce
	if g.Validate() != nil || a.WGSize < 1 {
		return nil // reported elsewhere
	}
	var errs []error
	if a.WGSize > g.MaxWGSize {
		errs = append(errs, fmt.Errorf("allreduce.wg_size = %d: must be ≤ gpu.max_wg_size = %d", a.WGSize, g.MaxWGSize))
		return errs
	}
	waves := (a.WGSize + g.WaveSize - 1) / g.WaveSize
	perCU := g.SIMDs * g.WavesPerSIMD / waves
	if perCU == 0 {
		return append(errs, fmt.Errorf("allreduce.wg_size = %d: a work-group of %d wavefronts does not fit a CU (gpu.simds_per_cu × gpu.waves_per_simd = %d)",
			a.WGSize, waves, g.SIMDs*g.WavesPerSIMD))
	}
	if resident := perCU * g.CUs; a.WGs > resident || (a.WGs == 0 && resident < 1) {
		errs = append(errs, fmt.Errorf("allreduce.wgs = %d: the persistent GPU-TN kernel needs every work-group resident, but only %d work-groups of %d work-items fit the GPU", a.WGs, resident, a.WGSize))
	}
	return errs
}

func (a AllreduceSpec) validate() error {
	var errs []error
	sizeOK := a.Size >= 4 && a.Size%4 == 0 && a.Size <= 16*unit.GiB
	if !sizeOK {
		errs = append(errs, fmt.Errorf("allreduce.size = %v: must be a positive multiple of 4 bytes (float32), at most 16GiB", a.Size))
	}
	if len(a.Nodes) == 0 {
		errs = append(errs, errors.New("allreduce.nodes is empty: give at least one node count"))
	}
	if err := listedTwice("allreduce.nodes", a.Nodes); err != nil {
		errs = append(errs, err)
	}
	for _, n := range a.Nodes {
		if n < 2 || n > 65536 {
			errs = append(errs, fmt.Errorf("allreduce.nodes contains %d: node counts must be in [2, 65536]", n))
		} else if sizeOK && int64(a.Size/4) < int64(n) {
			errs = append(errs, fmt.Errorf("allreduce.nodes contains %d: the ring needs at least one float32 per node (allreduce.size = %v)", n, a.Size))
		}
	}
	errs = append(errs, checkStrategies("allreduce.strategies", a.Strategies, workloadStrategies("allreduce")))
	if a.WGs < 0 || a.WGs > 1024 {
		errs = append(errs, fmt.Errorf("allreduce.wgs = %d: must be in [0, 1024] (0 = automatic)", a.WGs))
	}
	if a.WGSize < 1 || a.WGSize > 1024 {
		errs = append(errs, fmt.Errorf("allreduce.wg_size = %d: must be in [1, 1024]", a.WGSize))
	}
	if a.CPUThreads < 1 || a.CPUThreads > 1024 {
		errs = append(errs, fmt.Errorf("allreduce.cpu_threads = %d: must be in [1, 1024]", a.CPUThreads))
	}
	return errors.Join(errs...)
}

func (l LatencySpec) validate() error {
	var errs []error
	if l.Size < 8 || l.Size%8 != 0 || l.Size > 64*unit.MiB {
		errs = append(errs, fmt.Errorf("latency.size = %v: must be a multiple of 8 bytes in [8B, 64MiB]", l.Size))
	}
	errs = append(errs, checkStrategies("latency.strategies", l.Strategies, workloadStrategies("latency")))
	return errors.Join(errs...)
}

func checkStrategies(field string, got, allowed []string) error {
	if len(got) == 0 {
		return fmt.Errorf("%s is empty: must list some of %v", field, allowed)
	}
	if err := listedTwice(field, got); err != nil {
		return err
	}
	for _, s := range got {
		ok := false
		for _, a := range allowed {
			ok = ok || s == a
		}
		if !ok {
			return fmt.Errorf("%s contains %q: must be among %v", field, s, allowed)
		}
	}
	return nil
}

// checkMember checks a strategy named beside a strategy list (a
// baseline, a profile) against that list when the list is valid (listErr
// nil), else against the strategies the list may hold, without naming
// the list: a line naming it is dropped as following from the list's own
// (cmd dropDerived), and a value bad on its own must still be reported.
func checkMember(field, value, listField string, list []string, listErr error, allowed []string, note string) error {
	switch {
	case listErr == nil && !slices.Contains(list, value):
		return fmt.Errorf("%s = %q: must be one of %s %v%s", field, value, listField, list, note)
	case listErr != nil && !slices.Contains(allowed, value):
		return fmt.Errorf("%s = %q: must be among %v%s", field, value, allowed, note)
	}
	return nil
}

// listedTwice refuses a list parameter that names a value twice: the
// sweep would run the value twice and its tables compare a strategy with
// itself (a ping-pong's runner-up the winner, margin 0) or give one
// preset's answer twice.
func listedTwice[T comparable](field string, v []T) error {
	seen := make(map[T]bool, len(v))
	for _, x := range v {
		if seen[x] {
			return fmt.Errorf("%s lists %v twice: list each value once", field, x)
		}
		seen[x] = true
	}
	return nil
}
