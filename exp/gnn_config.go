package exp

import (
	"errors"
	"fmt"
)

// GPURdmaSpec holds the knobs of the GPUrdma microbenchmarks
// (the GPUrdma paper).
type GPURdmaSpec struct {
	Sizes         []int    `toml:"sizes" doc:"single-thread benchmark message sizes in bytes (2 B … 4 MB)" src:"DEFAULT"`
	Msgs          int      `toml:"msgs" doc:"RDMA writes one GPU thread issues (fills one QP)" src:"DOC"`
	Variants      []string `toml:"variants" doc:"single-thread variants, cumulative: naive, reuse (+WQE reuse), pipeline (+pipelining), batch (+reduced doorbells); cpu: the CPU-driven baseline (one host thread, standard verbs, one doorbell per post, pipelined)" src:"DOC"`
	MultiSizes    []int    `toml:"multi_sizes" doc:"multi-QP message sizes in bytes (2 B – 1 KB)" src:"DOC"`
	MultiMsgs     int      `toml:"multi_msgs" doc:"multi-QP: RDMA writes per QP" src:"DEFAULT"`
	MultiModes    []string `toml:"multi_modes" doc:"multi-QP posters: warp (QP per warp), block (QP per threadblock, collaborative), cpu (host-driven)" src:"DOC"`
	PlacementSize int      `toml:"placement_size" doc:"QP/CQ placement: message size in bytes of the bandwidth run" src:"DEFAULT"`
}

// GPISpec holds the knobs of the GPI workloads (the GPUrdma paper).
type GPISpec struct {
	PingPongIters  int   `toml:"pingpong_iters" doc:"latency ping-pong round trips averaged" src:"DEFAULT"`
	ThroughputSize int   `toml:"throughput_size" doc:"throughput ping-pong bytes sent and returned (180 MB)" src:"DOC"`
	Queues         int   `toml:"queues" doc:"GPI queues = worker thread blocks returning equal slices" src:"DOC"`
	Rounds         int   `toml:"rounds" doc:"throughput ping-pong rounds of the whole buffer (the paper gives none; 10 is the specification's run length; 2, the fewest in which the overlapped variant resends slices as they come back, gives the same one-direction rates within 2 % in a third of the time)" src:"DEFAULT"`
	MatVecBatches  []int `toml:"matvec_batches" doc:"matrix-vector stream batch sizes in bytes (60–1920 KB)" src:"DOC"`
	MatVecTotal    int   `toml:"matvec_total" doc:"bytes of vectors streamed per batch size (the documents stream 2.4 GB; 16 MiB gives the vector rates of 64 MiB within 1.5 % in a quarter of the time)" src:"DEFAULT"`
	Blocks         int   `toml:"blocks" doc:"matrix-vector worker thread blocks" src:"DOC"`
	Threads        int   `toml:"threads" doc:"matrix-vector threads per block" src:"DOC"`
}

func defaultGPURdma() GPURdmaSpec {
	var sizes []int
	for s := 2; s <= 4<<20; s *= 4 {
		sizes = append(sizes, s)
	}
	return GPURdmaSpec{Sizes: append(sizes, 4<<20), Msgs: 1024, Variants: []string{"naive", "reuse", "pipeline", "batch", "cpu"},
		MultiSizes: []int{2, 8, 32, 128, 512, 1024}, MultiMsgs: 1024, MultiModes: []string{"warp", "block", "cpu"},
		PlacementSize: 64 << 10}
}

func defaultGPI() GPISpec {
	return GPISpec{PingPongIters: 100, ThroughputSize: 180_000_000, Queues: 30, Rounds: 10,
		MatVecBatches: []int{60_000, 120_000, 240_000, 480_000, 960_000, 1_920_000}, MatVecTotal: 16 << 20,
		Blocks: 30, Threads: 1024}
}

func inRange(errs *[]error, name string, v, lo, hi int) {
	if v < lo || v > hi {
		*errs = append(*errs, fmt.Errorf("%s = %d: must be in [%d, %d]", name, v, lo, hi))
	}
}

func listInRange(errs *[]error, name string, vs []int, lo, hi int) {
	if len(vs) == 0 {
		*errs = append(*errs, fmt.Errorf("%s is empty: give at least one value in [%d, %d]", name, lo, hi))
	}
	for _, v := range vs {
		if v < lo || v > hi {
			*errs = append(*errs, fmt.Errorf("%s contains %d: values must be in [%d, %d]", name, v, lo, hi))
			return
		}
	}
}

func oneOf(errs *[]error, name string, vs []string, allowed ...string) {
	if len(vs) == 0 {
		*errs = append(*errs, fmt.Errorf("%s is empty: give some of %v", name, allowed))
	}
	for _, v := range vs {
		ok := false
		for _, a := range allowed {
			ok = ok || v == a
		}
		if !ok {
			*errs = append(*errs, fmt.Errorf("%s contains %q: must be among %v", name, v, allowed))
			return
		}
	}
}

func (g GPURdmaSpec) validate() error {
	var errs []error
	listInRange(&errs, "gpurdma.sizes", g.Sizes, 1, 1<<30)
	inRange(&errs, "gpurdma.msgs", g.Msgs, 1, 1<<20)
	oneOf(&errs, "gpurdma.variants", g.Variants, "naive", "reuse", "pipeline", "batch", "cpu")
	listInRange(&errs, "gpurdma.multi_sizes", g.MultiSizes, 1, 1<<30)
	inRange(&errs, "gpurdma.multi_msgs", g.MultiMsgs, 1, 1<<20)
	oneOf(&errs, "gpurdma.multi_modes", g.MultiModes, "warp", "block", "cpu")
	inRange(&errs, "gpurdma.placement_size", g.PlacementSize, 1, 1<<30)
	return errors.Join(errs...)
}

func (g GPISpec) validate() error {
	var errs []error
	inRange(&errs, "gpi.pingpong_iters", g.PingPongIters, 1, 1<<20)
	inRange(&errs, "gpi.queues", g.Queues, 1, 1024)
	inRange(&errs, "gpi.rounds", g.Rounds, 1, 1000)
	// The lower bound takes gpi.queues within its own range: out of it,
	// that line names it, and a bound of 2^63−1 would be nonsense.
	inRange(&errs, "gpi.throughput_size", g.ThroughputSize, max(1, min(g.Queues, 1024)), 1<<32)
	listInRange(&errs, "gpi.matvec_batches", g.MatVecBatches, 128, 1<<30)
	inRange(&errs, "gpi.matvec_total", g.MatVecTotal, 128, 16<<30) // the documents stream 2.4 GB; 16 GiB is hours of simulation already
	inRange(&errs, "gpi.blocks", g.Blocks, 1, 1024)
	inRange(&errs, "gpi.threads", g.Threads, 1, 1024)
	return errors.Join(errs...)
}
