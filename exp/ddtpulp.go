package exp

import (
	"errors"
	"fmt"

	"github.com/gpunetsim/gpunetsim/exp/report"
	"github.com/gpunetsim/gpunetsim/hw/cluster"
	hwspin "github.com/gpunetsim/gpunetsim/hw/spin"
	spinmodel "github.com/gpunetsim/gpunetsim/model/spin"
	"github.com/gpunetsim/gpunetsim/unit"
)

// DDTPULPSpec holds the knobs of the PULP accelerator studies
// (the SC'19 paper). They run on the pulp HPU model
// (--preset pulp); the ARM comparison uses the spin preset's HPUs on the
// same node.
type DDTPULPSpec struct {
	BWBlocks []int      `toml:"bw_blocks" doc:"block sizes of the bandwidth test in bytes" src:"DOC"`
	BWTotal  unit.Bytes `toml:"bw_total" doc:"bytes the bandwidth test moves per block size (spread over the cores)" src:"DEFAULT"`
	Size     unit.Bytes `toml:"size" doc:"vector message of the RW-CP microkernels" src:"DOC"`
	Blocks   []int      `toml:"blocks" doc:"vector block sizes of the microkernels in bytes (stride = 2 × block)" src:"DEFAULT"`
	Run      int        `toml:"run" doc:"consecutive packets statically assigned to a core (emulating blocked-RR); also the checkpoint interval in packets" src:"DOC"`
	ARMHPUs  int        `toml:"arm_hpus" doc:"HPUs of the ARM comparison (spin preset model); 0 = the spin preset's count" src:"DEFAULT"`
}

func defaultDDTPULP() DDTPULPSpec {
	return DDTPULPSpec{BWBlocks: []int{256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072}, BWTotal: 8 * unit.MiB,
		Size: unit.MiB, Blocks: []int{4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048}, Run: 4}
}

func (d DDTPULPSpec) validate() error {
	var errs []error
	totalOK := d.BWTotal >= 256 && d.BWTotal <= 256*unit.MiB
	if !totalOK {
		errs = append(errs, fmt.Errorf("ddtpulp.bw_total = %v: must be in [256B, 256MiB]", d.BWTotal))
	}
	if len(d.BWBlocks) == 0 {
		errs = append(errs, errors.New("ddtpulp.bw_blocks is empty: give at least one block size"))
	}
	errs = append(errs, blocksWithin("ddtpulp.bw_blocks", d.BWBlocks, "ddtpulp.bw_total", d.BWTotal, totalOK, 256*unit.MiB)...)
	sizeOK := d.Size >= 2*unit.KiB && d.Size <= 64*unit.MiB
	if !sizeOK {
		errs = append(errs, fmt.Errorf("ddtpulp.size = %v: must be in [2KiB, 64MiB]", d.Size))
	}
	if len(d.Blocks) == 0 {
		errs = append(errs, errors.New("ddtpulp.blocks is empty: give at least one block size"))
	}
	errs = append(errs, blocksWithin("ddtpulp.blocks", d.Blocks, "ddtpulp.size", d.Size, sizeOK, 64*unit.MiB)...)
	if d.Run < 1 || d.Run > 4096 {
		errs = append(errs, fmt.Errorf("ddtpulp.run = %d: must be in [1, 4096]", d.Run))
	}
	if d.ARMHPUs < 0 || d.ARMHPUs > 4096 {
		errs = append(errs, fmt.Errorf("ddtpulp.arm_hpus = %d: must be in [0, 4096] (0 = the spin preset's)", d.ARMHPUs))
	}
	return errors.Join(errs...)
}

// fitsL2 checks that what the studies preload fits the PULP L2 (the
// bandwidth test's blocks; the microkernel's packets). The PULP values
// are checked first, on every preset (spin's own Validate checks them
// only under the pulp model): out of range, their product could wrap
// int64 and they would go unnamed.
func (d DDTPULPSpec) fitsL2(s hwspin.Spec) error {
	p := s.PULP
	if err := p.Validate(); err != nil {
		if s.Model == hwspin.ModelPULP {
			return nil // hwspin.Spec.Validate names them
		}
		return err
	}
	l2 := unit.Bytes(p.L2Banks) * p.L2BankSize
	var errs []error
	if d.BWTotal > l2 {
		errs = append(errs, fmt.Errorf("ddtpulp.bw_total = %v: the blocks are preloaded in L2 (spin.pulp.l2_banks × spin.pulp.l2_bank_size = %v); must be ≤ that", d.BWTotal, l2))
	}
	if d.Size > l2 {
		errs = append(errs, fmt.Errorf("ddtpulp.size = %v: the packets are preloaded in L2 (spin.pulp.l2_banks × spin.pulp.l2_bank_size = %v); must be ≤ that", d.Size, l2))
	}
	return errors.Join(errs...)
}

// usePULP switches a configuration on the arm HPU model to the pulp
// preset's hardware (the report runs every experiment on one preset).
func usePULP(cfg *Config) {
	if cfg.Spin.Model != hwspin.ModelPULP {
		cfg.Spec, cfg.Run.Preset = cluster.PULP(), "pulp"
	}
}

// quickPULP shrinks the PULP studies to a fraction of a second.
func quickPULP(cfg *Config) {
	usePULP(cfg)
	cfg.DDTPULP.BWBlocks = []int{256, 4096, 65536}
	cfg.DDTPULP.BWTotal = 2 * unit.MiB
	cfg.DDTPULP.Size = 256 * unit.KiB
	cfg.DDTPULP.Blocks = []int{16, 256, 2048}
}

// pulpModels returns the PULP configuration and its ARM comparison: the
// same node with the spin preset's HPUs. A configuration on the arm model
// takes the pulp preset's sPIN side (hpu_model, HPUs, clock, spin.pulp.*);
// the report notes it.
func pulpModels(cfg Config) (pulpCfg, armCfg Config, switched bool, err error) {
	if err := cfg.Validate(); err != nil {
		return cfg, cfg, false, err
	}
	if cfg.Spin.Model != hwspin.ModelPULP {
		cfg.Spin, switched = cluster.PULP().Spin, true
	}
	arm := cfg
	arm.Spin = cluster.Spin().Spin
	if cfg.DDTPULP.ARMHPUs > 0 {
		arm.Spin.HPUs = cfg.DDTPULP.ARMHPUs
	}
	return cfg, arm, switched, nil
}

// switchedNote says when the PULP side came from the pulp preset.
func switchedNote(switched bool) []string {
	if !switched {
		return nil
	}
	return []string{"spin.hpu_model = arm in this configuration: the PULP side uses the pulp preset's spin.* values (run with --preset pulp to set them)"}
}

func pulpNote(cfg Config) string {
	p := cfg.Spin.PULP
	return fmt.Sprintf("pulp: %d clusters × %d cores at %v (%d used), L2 %d banks × %v (%d B/cycle, %d cycles + queueing), DMA %d B/cycle per cluster and direction, ports %d B/cycle",
		p.Clusters, p.Cores, cfg.Spin.HPUFreq, cfg.Spin.HPUs, p.L2Banks, p.L2BankSize, p.L2Width, p.L2Latency, p.DMAWidth, p.PortWidth)
}

func armNote(cfg Config) string {
	return fmt.Sprintf("arm: %d HPUs at %v on %v NIC memory (the spin preset)", cfg.Spin.HPUs, cfg.Spin.HPUFreq, cfg.Spin.MemBandwidth)
}

// runDDTPULPBW is the SC'19 paper: the cores DMA blocks L2 → L1 →
// PCIe FIFO; throughput vs block size.
func runDDTPULPBW(cfg Config, env Env) (*report.Result, error) {
	pc, arm, switched, err := pulpModels(cfg)
	if err != nil {
		return nil, err
	}
	blocks := cfg.DDTPULP.BWBlocks
	models := []Config{pc, arm}
	outs := make([]spinmodel.StaticResult, len(blocks)*len(models))
	err = forEach(cfg, env, len(outs), func(i int) error {
		mc, bl := models[i%len(models)], blocks[i/len(models)]
		c, err := newRun(mc, env, fmt.Sprintf("%s bw b=%d", mc.Spin.Model, bl), 1, "")
		if err != nil {
			return err
		}
		defer c.Engine.Close()
		outs[i], err = spinmodel.Bandwidth(c, bl, int(cfg.DDTPULP.BWTotal))
		return staticCheck(cfg, outs[i], err, fmt.Sprintf("%s bw b=%d", mc.Spin.Model, bl))
	})
	if err != nil {
		return nil, err
	}
	t := report.Table{Name: "pulp_bandwidth", Columns: []string{"model", "block", "bytes", "fifo_time", "bandwidth_GBps", "visible_GBps", "dma_transfers", "out_port_util", "verified"},
		Units: map[string]string{"block": "B", "bytes": "B"}}
	plot := &report.Plot{Title: fmt.Sprintf("PULP bandwidth test: blocks L2 → L1 → PCIe FIFO, %v", cfg.DDTPULP.BWTotal),
		XLabel: "block size (B)", YLabel: "throughput (GB/s)", LogX: true}
	ser := []report.Series{{Name: "pulp: into the PCIe FIFO"}, {Name: "pulp: visible in host memory"}, {Name: "arm: visible in host memory"}}
	for i, o := range outs {
		mc, bl := models[i%len(models)], blocks[i/len(models)]
		tp, vis := gbps(o.Bytes, o.Drained), gbps(o.Bytes, o.Visible)
		var transfers any = "-"
		var util any = "-"
		if o.Accel != nil {
			transfers = o.Accel.Transfers
			util = round3(float64(o.Accel.OutBusy) / float64(o.Drained))
			ser[0].X, ser[0].Y = append(ser[0].X, float64(bl)), append(ser[0].Y, tp)
			ser[1].X, ser[1].Y = append(ser[1].X, float64(bl)), append(ser[1].Y, vis)
		} else {
			ser[2].X, ser[2].Y = append(ser[2].X, float64(bl)), append(ser[2].Y, vis)
		}
		t.Rows = append(t.Rows, []any{mc.Spin.Model, bl, o.Bytes, o.Drained, tp, vis, transfers, util, o.Verified})
	}
	plot.Series = ser
	res := &report.Result{Experiment: "ddt_pulp_bw", Seed: cfg.Run.Seed, Tables: []report.Table{t}, Plot: plot}
	res.Notes = append(append(res.Notes, switchedNote(switched)...), pulpNote(pc), armNote(arm),
		"block i goes to core i mod P; the cluster DMA stages it L2 → L1, the core's handler DMAs it L1 → output port → PCIe FIFO",
		"bandwidth [GB/s] = bytes / time until the last block has passed the output port into the PCIe FIFO; visible [GB/s] = until the last byte is in host memory (a request posts its TLPs once its read is done, so a 128 KiB block does not overlap its PCIe transfer)",
		staticVerified(cfg, outs, "every host buffer equals the bytes preloaded in NIC memory"))
	return res, nil
}

// runDDTPULPKernels is the SC'19 paper: RW-CP handlers on a vector
// message, packets preloaded and statically assigned, PULP vs ARM.
func runDDTPULPKernels(cfg Config, env Env) (*report.Result, error) {
	pc, arm, switched, err := pulpModels(cfg)
	if err != nil {
		return nil, err
	}
	size := int(cfg.DDTPULP.Size)
	blocks := cfg.DDTPULP.Blocks
	models := []Config{pc, arm}
	outs := make([]spinmodel.StaticResult, len(blocks)*len(models))
	err = forEach(cfg, env, len(outs), func(i int) error {
		mc, bl := models[i%len(models)], blocks[i/len(models)]
		ty, err := vectorType(size, bl)
		if err != nil {
			return err
		}
		c, err := newRun(mc, env, fmt.Sprintf("%s kernel b=%d", mc.Spin.Model, bl), 1, "")
		if err != nil {
			return err
		}
		defer c.Engine.Close()
		outs[i], err = spinmodel.Kernel(c, ty, 1, cfg.DDTPULP.Run, mc.DDT)
		return staticCheck(cfg, outs[i], err, fmt.Sprintf("%s kernel b=%d", mc.Spin.Model, bl))
	})
	if err != nil {
		return nil, err
	}
	t := report.Table{Name: "pulp_kernels", Columns: []string{"model", "block", "gamma", "handlers", "slowest_core", "bandwidth_GBps", "fifo_GBps", "ipc_median", "instr_per_B", "stage_wait", "dma_queue_wait", "l2_wait", "verified"},
		Units: map[string]string{"block": "B"}}
	plot := &report.Plot{Title: fmt.Sprintf("RW-CP microkernels, %v vector, %d packets per core run", cfg.DDTPULP.Size, cfg.DDTPULP.Run),
		XLabel: "block size (B)", YLabel: "throughput (GB/s)", LogX: true}
	ser := []report.Series{{Name: "pulp"}, {Name: "arm"}}
	for i, o := range outs {
		mc, bl := models[i%len(models)], blocks[i/len(models)]
		tp := gbps(o.Bytes, o.Slowest)
		var l2 any = "-"
		if o.Accel != nil {
			l2 = o.Accel.L2Wait
		}
		t.Rows = append(t.Rows, []any{mc.Spin.Model, bl, round3(o.Plan.Gamma), len(o.IPC), o.Slowest, tp, gbps(o.Bytes, o.Drained),
			round3(o.MedianIPC()), round3(instrPerByte(mc, o)), o.Stats.StageWait, o.Stats.DMAQueueWait, l2, o.Verified})
		s := &ser[i%len(models)]
		s.X, s.Y = append(s.X, float64(bl)), append(s.Y, tp)
	}
	plot.Series = ser
	res := &report.Result{Experiment: "ddt_pulp_kernels", Seed: cfg.Run.Seed, Tables: []report.Table{t}, Plot: plot}
	res.Notes = append(append(res.Notes, switchedNote(switched)...), pulpNote(pc), armNote(arm),
		fmt.Sprintf("packets of %v preloaded in NIC memory (pulp: L2), runs of %d consecutive packets on core (run mod P), one checkpoint per run brought to the core's L1 (pulp) and progressed in place; dataloops read from L2 (pulp)", cfg.Link.Payload, cfg.DDTPULP.Run),
		"bandwidth [GB/s] = message / slowest core's total time (the SC'19 paper); fifo [GB/s] = until the last DMA has left into the PCIe FIFO",
		fmt.Sprintf("instr_per_B = handler instructions (charged cycles) per message byte, the DDT operational intensity that sizes the design's compute (the SC'19 paper): %d cores at %v sustain the %v line while it is ≤ %.2f",
			pc.Spin.HPUs, pc.Spin.HPUFreq, cfg.Link.Bandwidth, float64(pc.Spin.HPUs)*float64(pc.Spin.HPUFreq)/(float64(cfg.Link.Bandwidth.BytesPerSecond()))),
		"IPC = cycles the handler charged (the ddt.* handler costs, one instruction per cycle) / cycles it took: stalls are L2 bank queues, checkpoint DMAs, a full cluster DMA queue (dma_queue_wait), NIC-memory queues; the packet's L2 → L1 staging before the handler is stage_wait",
		staticVerified(cfg, outs, "every receive buffer equals datatype.Unpack of the same stream (sentinel-filled)"))
	return res, nil
}

// instrPerByte is the handlers' charged cycles per message byte.
func instrPerByte(mc Config, o spinmodel.StaticResult) float64 {
	return o.Stats.HandlerWork.Seconds() * float64(mc.Spin.HPUFreq) / float64(o.Bytes)
}

// staticCheck fails a functional static run whose host memory does not
// hold what it must.
func staticCheck(cfg Config, o spinmodel.StaticResult, err error, label string) error {
	if err == nil && cfg.Run.Functional && !o.Verified {
		return fmt.Errorf("%s: %w: host memory differs from the reference", label, ErrVerification)
	}
	return err
}

func staticVerified(cfg Config, outs []spinmodel.StaticResult, what string) string {
	if !cfg.Run.Functional {
		return "run.functional = false: bytes were not checked"
	}
	for _, o := range outs {
		if !o.Verified {
			return "functional: SOME host buffers DIFFER from the reference"
		}
	}
	return fmt.Sprintf("functional: %s (%d runs)", what, len(outs))
}
