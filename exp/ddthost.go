package exp

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/exp/report"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	spinmodel "github.com/gpunetsim/gpunetsim/model/spin"
)

// runDDTHost runs the host baseline alone on the simulated host core: the
// vector sweep of ddt_vector (ddtbench.size packed, blocks of
// ddtbench.blocks at stride 2·block) packed and unpacked by the datatype
// engine's regions on cpu.Walk, on cold caches (the baseline's setting)
// and warm (a second pass, the setting of `gpunetsim ddt bench`, which
// measures the same engine on the machine it runs on). GB/s is of packed
// bytes; the cache columns are the cold unpack's.
func runDDTHost(cfg Config, env Env) (*report.Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	size := int(cfg.DDTBench.Size)
	type row struct {
		unpackCold, unpackWarm, packCold float64
		served                           [4]uint64
		dramRead, dramWrite, prefetches  uint64
		instrPerRegion, stallPct         float64
	}
	rows := make([]row, len(cfg.DDTBench.Blocks))
	err := forEach(cfg, env, len(rows), func(i int) error {
		bl := cfg.DDTBench.Blocks[i]
		ty, err := vectorType(size, bl)
		if err != nil {
			return err
		}
		plan, err := spinmodel.NewPlan(spinmodel.HostUnpack, ty, 1, planEnv(cfg, cfg.Spin.HPUs))
		if err != nil {
			return err
		}
		// Line-aligned buffers far apart, as an allocator gives them.
		const user, packed = mem.Addr(1 << 32), mem.Addr(1 << 36)
		cold, st := spinmodel.HostUnpackTime(cfg.Spec.CPU, cfg.DDT, plan, user, packed, false)
		warm, _ := spinmodel.HostUnpackTime(cfg.Spec.CPU, cfg.DDT, plan, user, packed, true)
		pack, _ := spinmodel.HostPackTime(cfg.Spec.CPU, cfg.DDT, plan, user, packed)
		r := row{unpackCold: gbps(size, cold), unpackWarm: gbps(size, warm), packCold: gbps(size, pack),
			served: st.Served, dramRead: st.DRAMRead, dramWrite: st.DRAMWrite, prefetches: st.Prefetches}
		if st.Regions > 0 {
			r.instrPerRegion = round3(float64(st.Instr) / float64(st.Regions))
		}
		if cold > 0 {
			r.stallPct = round3(100 * float64(st.Stall) / float64(cold))
		}
		rows[i] = r
		return nil
	})
	if err != nil {
		return nil, err
	}
	t := report.Table{Name: "host", Columns: []string{"block", "unpack_cold_GBps", "unpack_warm_GBps", "pack_cold_GBps",
		"l1_touches", "l2_touches", "l3_touches", "dram_touches", "prefetches", "dram_read", "dram_write", "instr_per_region", "stall_pct"},
		Units: map[string]string{"block": "B", "dram_read": "B", "dram_write": "B"}}
	plot := &report.Plot{Title: fmt.Sprintf("Host datatype engine on the simulated host core, %v vector, stride 2×block", cfg.DDTBench.Size),
		XLabel: "block size (B)", YLabel: "throughput (GB/s)", LogX: true}
	ser := []report.Series{{Name: "unpack cold"}, {Name: "unpack warm"}, {Name: "pack cold"}}
	for i, r := range rows {
		bl := cfg.DDTBench.Blocks[i]
		t.Rows = append(t.Rows, []any{bl, r.unpackCold, r.unpackWarm, r.packCold, r.served[0], r.served[1], r.served[2], r.served[3],
			r.prefetches, r.dramRead, r.dramWrite, r.instrPerRegion, r.stallPct})
		for k, v := range []float64{r.unpackCold, r.unpackWarm, r.packCold} {
			ser[k].X, ser[k].Y = append(ser[k].X, float64(bl)), append(ser[k].Y, v)
		}
	}
	plot.Series = ser
	c := cfg.Spec.CPU
	res := &report.Result{Experiment: "ddt_host", Seed: cfg.Run.Seed, Tables: []report.Table{t}, Plot: plot}
	res.Notes = append(res.Notes,
		fmt.Sprintf("host core: %v, L1D %v/%d-way, L2 %v/%d-way, L3 %v/%d-way, %d fill buffers, %d L2 miss slots, prefetch %v (%d ahead), DRAM %v at %v; %d engine instructions per region besides loads and stores",
			c.Freq, c.Cache.L1DSize, c.Cache.L1DWays, c.Cache.L2Size, c.Cache.L2Ways, c.Cache.L3Size, c.Cache.L3Ways, c.L1DMisses, c.L2Misses, c.Prefetch, c.PrefetchDepth,
			c.DRAMBandwidth, c.DRAMLatency, cfg.DDT.HostRegionInstr),
		"GB/s of packed bytes; cold = empty caches (the sPIN baseline: the NIC just wrote the packed message to DRAM); warm = a second pass over the same buffers; touches = line touches each level served (the cold unpack)",
		"compare the shape with `gpunetsim ddt bench` (the same engine and types on the machine it runs on, warm caches)")
	return res, nil
}
