package nic

import (
	"errors"
	"fmt"

	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// Spec describes the Portals-4 NIC and its extensions (the dissertation (Portals 4)).
type Spec struct {
	CmdLatency     sim.Time   `toml:"cmd_latency" doc:"command processing, doorbell (or trigger) to first packet" src:"DEFAULT"`
	CmdSize        unit.Bytes `toml:"cmd_size" doc:"command descriptor size fetched from the host ring" src:"DOC"`
	InlineCmd      bool       `toml:"inline_cmd" doc:"the host writes the whole descriptor by MMIO (no fetch)" src:"DEFAULT"`
	MatchCost      sim.Time   `toml:"match_cost" doc:"per list entry traversed while matching" src:"DEFAULT"`
	TrigEvalCost   sim.Time   `toml:"trig_eval_cost" doc:"per armed triggered op checked on a counter update" src:"DEFAULT"`
	EventSize      unit.Bytes `toml:"event_size" doc:"full event written to an event queue (one posted DMA write)" src:"DEFAULT"`
	EQSize         int        `toml:"eq_size" doc:"event queue capacity" src:"DEFAULT"`
	TrigFIFODepth  int        `toml:"trig_fifo_depth" doc:"GPU-TN trigger FIFO depth" src:"DEFAULT"`
	TrigPop        sim.Time   `toml:"trig_pop" doc:"GPU-TN time per FIFO pop + lookup" src:"DEFAULT"`
	TrigMaxEntries int        `toml:"trig_max_entries" doc:"GPU-TN simultaneously active trigger entries" src:"DOC"`
	TrigLookup     string     `toml:"trig_lookup" doc:"GPU-TN tag lookup: assoc, hash or memlist" src:"DOC"`
	VerbsEngines   int        `toml:"verbs_engines" doc:"verbs: HCA engines processing different QPs in parallel (one QP's WQEs are serial)" src:"DEFAULT"`
	VerbsWQECost   sim.Time   `toml:"verbs_wqe_cost" doc:"verbs: engine time per WQE (parse, validate, build the first packet)" src:"DEFAULT"`
	VerbsMaxSGE    int        `toml:"verbs_max_sge" doc:"verbs: scatter/gather entries per work request (a longer list completes with a local length error)" src:"DEFAULT"`
	VerbsRNRRetry  int        `toml:"verbs_rnr_retry" doc:"verbs: retries of a send or write-with-immediate after an RNR NAK (no receive WQE posted); 7 retries forever, as in InfiniBand" src:"DEFAULT"`
	VerbsRNRTimer  sim.Time   `toml:"verbs_rnr_timer" doc:"verbs: minimum RNR NAK timer, the requester's wait before a retry (InfiniBand encoding 1: 0.01 ms)" src:"DEFAULT"`
	// The HCA pipeline's bounds (the GPUrdma paper): how many WQEs
	// of one QP may be in flight, and how many DMA read requests the NIC
	// may have outstanding on PCIe at once. 0 leaves a stage unbounded
	// (the presets without an HCA of their own); preset gpurdma and gio
	// set them.
	VerbsQPInflight int  `toml:"verbs_qp_inflight" doc:"verbs: WQEs of one QP in flight, started and not yet acknowledged (0 = unbounded; gpurdma/gio 16: the per-QP outstanding-request depth, max_qp_rd_atom = 16 as ibv_devinfo reports for Connect-IB/ConnectX)" src:"DEFAULT"`
	ReadTags        int  `toml:"read_tags" doc:"DMA read requests (WQE fetches, payload reads) outstanding on PCIe at once; a request waits for a free tag (0 = unbounded; gpurdma/gio: see docs/gnn.md)" src:"DEFAULT"`
	VerbsBlueFlame  bool `toml:"verbs_blueflame" doc:"verbs: a doorbell for exactly one new WQE carries the 64 B WQE in its MMIO write (BlueFlame), so the HCA skips the fetch; off: the HCA always fetches by DMA (the GPUrdma paper does not use it)" src:"DEFAULT"`
	// XTQ (the dissertation's XTQ chapter). The spec's default full-queue policy is drop; the
	// default here is retry, because a dropped task is lost work the
	// collectives cannot recover, and the issue asks that a full queue
	// back-pressure without loss.
	XtqLookup       sim.Time `toml:"xtq_lookup" doc:"XTQ: one lookup-table access (on-NIC SRAM)" src:"DEFAULT"`
	XtqRewrite      sim.Time `toml:"xtq_rewrite" doc:"XTQ: command-packet rewrite" src:"DEFAULT"`
	XtqTableSize    int      `toml:"xtq_table_size" doc:"XTQ: entries per lookup table (kernels, queues)" src:"DOC"`
	XtqFullPolicy   string   `toml:"xtq_full_policy" doc:"XTQ: GPU queue full: drop (the NIC reads the queue indices, and on a full queue fails the task with Portals events to both sides: the dissertation's §4.1.2) or retry (an extension: hold the task on the NIC, read index and reservation overlapped, re-poll)" src:"DOC"`
	XtqRetry        sim.Time `toml:"xtq_retry" doc:"XTQ: re-poll interval of a held task's queue read index" src:"DEFAULT"`
	XtqTables       string   `toml:"xtq_tables" doc:"XTQ: where the lookup tables live: nic (on-NIC SRAM, the prototype) or host (host memory behind an on-NIC cache; a miss is a DMA read: over PCIe, or a coherent read on an APU's directory)" src:"DOC"`
	XtqCacheEntries int      `toml:"xtq_cache_entries" doc:"XTQ, xtq_tables = host: entries of the on-NIC table cache (kernel, function and queue entries share it)" src:"DEFAULT"`
	XtqCacheWays    int      `toml:"xtq_cache_ways" doc:"XTQ, xtq_tables = host: associativity of the table cache (LRU within a set)" src:"DEFAULT"`
	XtqHoldDepth    int      `toml:"xtq_hold_depth" doc:"XTQ: tasks the NIC holds at once (command copies from header parse to enqueue); when full, new task headers wait at the ingress (8: a choice, the XTQ chapter gives no depth)" src:"DEFAULT"`
}

// Validate reports every invalid field.
func (s Spec) Validate() error {
	var errs []error
	errs = append(errs, sim.Negatives(sim.Named{Name: "nic.cmd_latency", T: s.CmdLatency}, sim.Named{Name: "nic.match_cost", T: s.MatchCost},
		sim.Named{Name: "nic.trig_eval_cost", T: s.TrigEvalCost}, sim.Named{Name: "nic.trig_pop", T: s.TrigPop})...)
	if s.CmdSize < 8 || s.CmdSize > 4*unit.KiB {
		errs = append(errs, fmt.Errorf("nic.cmd_size = %v: must be in [8B, 4KiB]", s.CmdSize))
	}
	if s.EventSize < 8 || s.EventSize > 4*unit.KiB {
		errs = append(errs, fmt.Errorf("nic.event_size = %v: must be in [8B, 4KiB]", s.EventSize))
	}
	if s.EQSize < 1 || s.EQSize > 1<<24 {
		errs = append(errs, fmt.Errorf("nic.eq_size = %d: must be in [1, 16777216]", s.EQSize))
	}
	if s.TrigFIFODepth < 1 || s.TrigFIFODepth > 1<<20 {
		errs = append(errs, fmt.Errorf("nic.trig_fifo_depth = %d: must be in [1, 1048576]", s.TrigFIFODepth))
	}
	if s.TrigMaxEntries < 1 || s.TrigMaxEntries > 1<<20 {
		errs = append(errs, fmt.Errorf("nic.trig_max_entries = %d: must be in [1, 1048576]", s.TrigMaxEntries))
	}
	switch s.TrigLookup {
	case "assoc", "hash", "memlist":
	default:
		errs = append(errs, fmt.Errorf("nic.trig_lookup = %q: must be assoc, hash or memlist", s.TrigLookup))
	}
	if s.VerbsEngines < 1 || s.VerbsEngines > 1024 {
		errs = append(errs, fmt.Errorf("nic.verbs_engines = %d: must be in [1, 1024]", s.VerbsEngines))
	}
	if s.VerbsWQECost < 0 {
		errs = append(errs, fmt.Errorf("nic.verbs_wqe_cost = %v: must be ≥ 0", s.VerbsWQECost))
	}
	if s.VerbsMaxSGE < 1 || s.VerbsMaxSGE > 256 {
		errs = append(errs, fmt.Errorf("nic.verbs_max_sge = %d: must be in [1, 256]", s.VerbsMaxSGE))
	}
	if s.VerbsRNRRetry < 0 || s.VerbsRNRRetry > 7 {
		errs = append(errs, fmt.Errorf("nic.verbs_rnr_retry = %d: must be in [0, 7] (7: forever)", s.VerbsRNRRetry))
	}
	if s.VerbsRNRTimer < 0 {
		errs = append(errs, fmt.Errorf("nic.verbs_rnr_timer = %v: must be ≥ 0", s.VerbsRNRTimer))
	}
	if s.VerbsQPInflight < 0 || s.VerbsQPInflight > 1<<16 {
		errs = append(errs, fmt.Errorf("nic.verbs_qp_inflight = %d: must be in [0, 65536] (0 = unbounded)", s.VerbsQPInflight))
	}
	if s.ReadTags < 0 || s.ReadTags > 4096 {
		errs = append(errs, fmt.Errorf("nic.read_tags = %d: must be in [0, 4096] (0 = unbounded)", s.ReadTags))
	}
	errs = append(errs, sim.Negatives(sim.Named{Name: "nic.xtq_lookup", T: s.XtqLookup}, sim.Named{Name: "nic.xtq_rewrite", T: s.XtqRewrite})...)
	if s.XtqTableSize < 1 || s.XtqTableSize > 1<<16 {
		errs = append(errs, fmt.Errorf("nic.xtq_table_size = %d: must be in [1, 65536]", s.XtqTableSize))
	}
	if s.XtqFullPolicy != "retry" && s.XtqFullPolicy != "drop" {
		errs = append(errs, fmt.Errorf("nic.xtq_full_policy = %q: must be retry or drop", s.XtqFullPolicy))
	}
	if s.XtqTables != "nic" && s.XtqTables != "host" {
		errs = append(errs, fmt.Errorf("nic.xtq_tables = %q: must be nic or host", s.XtqTables))
	}
	if s.XtqCacheEntries < 1 || s.XtqCacheEntries > 1<<16 {
		errs = append(errs, fmt.Errorf("nic.xtq_cache_entries = %d: must be in [1, 65536]", s.XtqCacheEntries))
		if s.XtqCacheWays < 1 || s.XtqCacheWays > 1<<16 {
			// Its own range, without the bad entry count: a line naming
			// it is dropped as following from the count's (cmd dropDerived).
			errs = append(errs, fmt.Errorf("nic.xtq_cache_ways = %d: must be in [1, 65536]", s.XtqCacheWays))
		}
	} else if s.XtqCacheWays < 1 || s.XtqCacheWays > s.XtqCacheEntries || s.XtqCacheEntries%s.XtqCacheWays != 0 {
		errs = append(errs, fmt.Errorf("nic.xtq_cache_ways = %d: must divide nic.xtq_cache_entries = %d", s.XtqCacheWays, s.XtqCacheEntries))
	}
	if s.XtqHoldDepth < 1 || s.XtqHoldDepth > 1<<16 {
		errs = append(errs, fmt.Errorf("nic.xtq_hold_depth = %d: must be in [1, 65536]", s.XtqHoldDepth))
	}
	if s.XtqRetry <= 0 {
		errs = append(errs, fmt.Errorf("nic.xtq_retry = %v: must be > 0", s.XtqRetry))
	}
	return errors.Join(errs...)
}
