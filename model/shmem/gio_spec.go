package shmem

import (
	"errors"
	"fmt"

	"github.com/gpunetsim/gpunetsim/sim"
)

// GIOSpec holds the knobs of the GIO backend (the GIO slides,
// the GIO slides).
type GIOSpec struct {
	FieldStore sim.Time `toml:"field_store" doc:"GPU store of one dynamic WQE field (the GPUrdma paper's 1.6 µs WQE write split evenly over its 8 fields: the split is a choice)" src:"DEFAULT"`
	DBRecord   sim.Time `toml:"db_record" doc:"GPU write of the doorbell record before the MMIO doorbell" src:"DEFAULT"`
	// TemplateAtInit: ROC_SHMEM's GPU-IB backend fills every QP's
	// templates before its init returns, so before any kernel runs
	// (GPUIBBackend::init starts the template thread and spins until its
	// first pass is done; that pass posts 4 × the SQ size templated WQEs
	// into every (work-group, PE) QP). The run then starts with every
	// slot templated; the templater only refills slots that completed.
	TemplateAtInit bool `toml:"template_at_init" doc:"the host templates every slot of every QP at init, before the kernel starts, so the run starts with full templates and the templater only refills completed slots; false = the templater starts filling when the kernel opens its contexts, so its first fills fall in the measured time" src:"DEFAULT" ref:"ROC_SHMEM GPU-IB backend (gpu_ib.cpp): GPUIBBackend::init starts the template thread and blocks until its first pass has posted 4 × SQ size templated WQEs into every (work-group, PE) QP; later passes refill every ROC_SHMEM_SLEEP seconds (5 by default)"`
	// TemplateInstr is the host's work per slot it templates: with
	// TemplateAtInit only the refills of completed slots during the run
	// (the init fill is before time zero). ROC_SHMEM's refill
	// (rtn_post_wqe_dv) copies the 64 B template (eight 8 B stores) and
	// advances two ring indices modulo the SQ size; no instruction count
	// of it is published, so the value stays unsourced.
	TemplateInstr       int      `toml:"template_instr" doc:"host instructions to template one WQE during the run (static fields: rkey, QP number, wr_id; with template_at_init the refills of completed slots only): ROC_SHMEM's refill copies the 64 B template (eight 8 B stores) and advances two ring indices modulo the SQ size; no published instruction count" src:"DEFAULT" ref:"no source"`
	PPBLines            int      `toml:"ppb_lines" doc:"PCIe-path (PPB) read cache on the NIC→GPU path, in 64 B lines (0: none)" src:"DEFAULT"`
	PPBFlush            sim.Time `toml:"ppb_flush" doc:"PPB flush latency after its MMIO control write arrives" src:"DEFAULT"`
	ShaderL2Maintenance bool     `toml:"shader_l2_maintenance" doc:"shaders have L2 maintenance operations, so NIC-visible pages stay L2-cacheable (the documents' recommendation)" src:"DOC"`
	SkipPPBFlush        bool     `toml:"skip_ppb_flush" doc:"hazard: the device runtime does not flush the PPB before the doorbell (the NIC may read stale bytes)" src:"RUN"`
	// QPsPerPeer is how many RC QPs (each with its CQ) a PE has to each
	// other PE: 0 gives every context its own (ROC_SHMEM's GPU-IB backend
	// as the GIO slides describe it), n > 0 makes the contexts share n, as
	// NVSHMEM IBGDA's QPs per peer PE are shared by the CTAs mapped to
	// them round-robin.
	QPsPerPeer int `toml:"qps_per_peer" doc:"RC QPs (each with its CQ) per PE and peer PE: 0 = one per context (work-group queue), as the GIO slides' ROC_SHMEM GPU-IB backend; n > 0 = n shared by the contexts, context q on QP q mod n, as NVSHMEM IBGDA's RC QPs per peer PE (NVSHMEM_IBGDA_NUM_RC_PER_PE, assigned round-robin by CTA); contexts sharing a QP take turns: a ticket lock in GPU memory around the PPB flush, slot claim, WQE write and doorbell, and another around CQ polling, each waiting for the completions of its own posts" src:"DOC"`
}

// DefaultGIOSpec returns the GIO defaults: the §6 per-field cost, a
// 64-line PPB with a 200 ns flush, L2-uncacheable NIC-visible pages.
func DefaultGIOSpec() GIOSpec {
	return GIOSpec{FieldStore: 200 * sim.Nanosecond, DBRecord: 200 * sim.Nanosecond, TemplateInstr: 60, TemplateAtInit: true,
		PPBLines: 64, PPBFlush: 200 * sim.Nanosecond}
}

// Validate reports every invalid field.
func (s GIOSpec) Validate() error {
	var errs []error
	errs = append(errs, sim.Negatives(sim.Named{Name: "shmem.gio.field_store", T: s.FieldStore}, sim.Named{Name: "shmem.gio.db_record", T: s.DBRecord},
		sim.Named{Name: "shmem.gio.ppb_flush", T: s.PPBFlush})...)
	if s.TemplateInstr < 0 || s.TemplateInstr > 1<<20 {
		errs = append(errs, fmt.Errorf("shmem.gio.template_instr = %d: must be in [0, 1048576]", s.TemplateInstr))
	}
	if s.QPsPerPeer < 0 || s.QPsPerPeer > 1024 {
		errs = append(errs, fmt.Errorf("shmem.gio.qps_per_peer = %d: must be in [0, 1024] (0 = one per context)", s.QPsPerPeer))
	}
	if s.PPBLines < 0 || s.PPBLines > 1<<20 {
		errs = append(errs, fmt.Errorf("shmem.gio.ppb_lines = %d: must be in [0, 1048576]", s.PPBLines))
	}
	return errors.Join(errs...)
}
