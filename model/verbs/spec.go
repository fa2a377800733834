package verbs

import (
	"errors"
	"fmt"

	"github.com/gpunetsim/gpunetsim/sim"
)

// Spec holds the GPUrdma knobs (the GPUrdma paper,
// §6). The per-step GPU costs are the calibration inputs of the GPUrdma paper;
// the CQ poll time and every bandwidth come out of the NIC, PCIe and
// network models.
type Spec struct {
	FieldStore    sim.Time `toml:"field_store" doc:"GPU single-thread store of one 8-byte WQE field (the GPUrdma paper's 1.6 µs WQE write split evenly over its 8 fields: the split is a choice)" src:"DEFAULT"`
	DBRecord      sim.Time `toml:"db_record" doc:"GPU write of the doorbell record (the 1.5us doorbell step split 0.2us record + 1.3us fence and MMIO)" src:"DEFAULT"`
	Fence         sim.Time `toml:"fence" doc:"GPU system fence before the MMIO doorbell (1.3us with the MMIO issue; the posted write's own o + 8B·G comes on top)" src:"DEFAULT"`
	QPLoc         string   `toml:"qp_loc" doc:"where send rings and doorbell records live: gpu or host" src:"DOC"`
	CQLoc         string   `toml:"cq_loc" doc:"where completion queues live: gpu or host" src:"DOC"`
	QPDepth       int      `toml:"qp_depth" doc:"WQEs per send queue (one QP holds 1024 outstanding WQEs)" src:"DOC"`
	WQEReuse      bool     `toml:"wqe_reuse" doc:"optimisation: WQEs are pre-initialised and only the fields that change are written" src:"DOC"`
	Pipeline      bool     `toml:"pipeline" doc:"optimisation: post until the QP is full, then wait for the completions (no CQ poll per message)" src:"DOC"`
	BatchDoorbell bool     `toml:"batch_doorbell" doc:"optimisation: one doorbell (and fence) per full QP instead of per WQE" src:"DOC"`
	QPPer         string   `toml:"qp_per" doc:"parallel posting: warp (one TB of warps, a QP each, one polling thread) or block (TBs of one warp, collaborative post and poll)" src:"DOC"`
	Warps         int      `toml:"warps" doc:"warps (qp_per=warp) or thread blocks (qp_per=block) posting in parallel" src:"DOC"`
	// QPs is the present-day workloads' QPs per GPU and peer (NVSHMEM
	// IBGDA's RC QPs per PE): their communication work-groups share them,
	// one post at a time per QP.
	QPs int `toml:"qps" doc:"present-day workloads (pingpong, halo3d, moe): RC QPs per GPU and peer that the communication work-groups post on; work-group w uses QP w mod qps and work-groups sharing a QP take turns (a lock in GPU memory: one WQE build and doorbell at a time), as NVSHMEM IBGDA's QPs per PE (NVSHMEM_IBGDA_NUM_RC_PER_PE) are shared by warps" src:"DEFAULT" ref:"no source"`

	P2PWriteReorder  bool     `toml:"p2p_write_reorder" doc:"hazard: NIC writes into GPU memory land after a random delay under load, so a flag can overtake its payload (the GPUrdma paper)" src:"DOC"`
	ReorderMean      sim.Time `toml:"reorder_mean" doc:"mean extra landing delay of a NIC→GPU write above the utilisation threshold" src:"DEFAULT"`
	ReorderThreshold float64  `toml:"reorder_threshold" doc:"inbound link utilisation from which NIC→GPU writes are delayed" src:"DEFAULT"`
	ReorderWindow    sim.Time `toml:"reorder_window" doc:"window over which the inbound link utilisation is measured" src:"DEFAULT"`

	// PollInvalidate is set by runtimes whose CQ poll loop invalidates the
	// GPU L1 before each load (GIO's quiet, ROC_SHMEM's __roc_inv); not a
	// user knob.
	PollInvalidate bool `toml:"-"`

	CheckVisibility bool `toml:"check_visibility" doc:"checker: report every visibility hazard (stale GPU L2 line, stale PPB read, overtaken peer-to-peer write) with agent, address and missing fix" src:"RUN"`
}

// DefaultSpec returns the calibration of the GPUrdma paper with the naive
// path (every optimisation off), QPs and CQs in GPU memory.
func DefaultSpec() Spec {
	return Spec{FieldStore: 200 * sim.Nanosecond, DBRecord: 200 * sim.Nanosecond, Fence: 1300 * sim.Nanosecond,
		QPLoc: "gpu", CQLoc: "gpu", QPDepth: 1024, QPPer: "warp", Warps: 30, QPs: 2,
		ReorderMean: 2 * sim.Microsecond, ReorderThreshold: 0.5, ReorderWindow: 10 * sim.Microsecond}
}

// Validate reports every invalid field, naming it and its allowed range.
func (s Spec) Validate() error {
	var errs []error
	errs = append(errs, sim.Negatives(sim.Named{Name: "gnn.field_store", T: s.FieldStore}, sim.Named{Name: "gnn.db_record", T: s.DBRecord},
		sim.Named{Name: "gnn.fence", T: s.Fence})...)
	for _, f := range []struct{ name, v string }{{"gnn.qp_loc", s.QPLoc}, {"gnn.cq_loc", s.CQLoc}} {
		if f.v != "gpu" && f.v != "host" {
			errs = append(errs, fmt.Errorf("%s = %q: must be gpu or host", f.name, f.v))
		}
	}
	if s.QPDepth < 1 || s.QPDepth > 1<<16 {
		errs = append(errs, fmt.Errorf("gnn.qp_depth = %d: must be in [1, 65536]", s.QPDepth))
	}
	if s.QPPer != "warp" && s.QPPer != "block" {
		errs = append(errs, fmt.Errorf("gnn.qp_per = %q: must be warp or block", s.QPPer))
	}
	if s.Warps < 1 || s.Warps > 1024 {
		errs = append(errs, fmt.Errorf("gnn.warps = %d: must be in [1, 1024]", s.Warps))
	}
	if s.QPs < 1 || s.QPs > 1024 {
		errs = append(errs, fmt.Errorf("gnn.qps = %d: must be in [1, 1024]", s.QPs))
	}
	errs = append(errs, sim.Negatives(sim.Named{Name: "gnn.reorder_mean", T: s.ReorderMean})...)
	if s.ReorderWindow <= 0 {
		errs = append(errs, fmt.Errorf("gnn.reorder_window = %v: must be > 0", s.ReorderWindow))
	}
	if !(s.ReorderThreshold >= 0 && s.ReorderThreshold <= 1) {
		errs = append(errs, fmt.Errorf("gnn.reorder_threshold = %v: must be in [0, 1]", s.ReorderThreshold))
	}
	return errors.Join(errs...)
}
