package shmem

import (
	"errors"
	"fmt"
)

// Spec holds the knobs of the device runtime (the dissertation's ComP-Net chapter;
// the dissertation).
type Spec struct {
	Threads   int `toml:"threads" doc:"service threads per node: GHN host helper threads, or COMPNET CP threads, each on a core of its own; queues are split evenly. 2 (one per CP core, and the same for the GHN helpers) for the application experiments; the microbenchmarks set their own (shmemget 1, the thread sweeps theirs)" src:"DEFAULT"`
	HostCores int `toml:"host_cores" doc:"GHN: host cores the helper threads are pinned to, cores 1…host_cores (core 0 runs the application; threads beyond share cores, time-sliced by cpu.time_slice); 0 = one per thread, at most cpu.cores − 1" src:"DEFAULT"`
	// ProgressThread splits GHN_DGPU's host side as ROC_SHMEM's reverse
	// offload does (one service thread polling the queues, one MPI
	// progress thread issuing the operations).
	ProgressThread bool `toml:"progress_thread" doc:"GHN_DGPU (IKN): the service thread hands each operation to a separate MPI progress thread that issues it, as ROC_SHMEM's reverse-offload runtime runs (one service thread + one progress thread); on for preset gio" src:"DEFAULT"`
	// QueueInGPU places GHN_DGPU's queues: in GPU memory (the
	// dissertation's GHN_DGPU) or, when false, in host memory with the
	// completion status words in GPU memory (ROC_SHMEM's reverse offload).
	QueueInGPU    bool `toml:"queue_in_gpu" doc:"GHN_DGPU: queues (entries and read index) in GPU memory, polled by the host threads over PCIe (the dissertation's GHN_DGPU); false = ROC_SHMEM's reverse-offload placement (ro_net.cpp: queues and descriptors hipHostMalloc'd in host memory, written by the GPU with PCIe posted writes and polled by the host thread in its cache; status flags in GPU memory, written by the host with PCIe posted writes and polled by the GPU with uncached GPU-memory loads, 'to prevent polling for completion over PCIe'); GPU memory is its --enable-gpu-queue option. false for preset gio" src:"DEFAULT"`
	QueueEntries  int  `toml:"queue_entries" doc:"entries of 64 B per work-group queue" src:"DOC"`
	QuietRounds   int  `toml:"quiet_rounds" doc:"polling rounds per quiet block: a service thread polls its queues in blocks of this many rounds and, at the end of each block, quiets the contexts of its pending blocking entries (compnet.quietRounds; the count runs whether or not entries are pending)" src:"DEFAULT"`
	LLCLocking    bool `toml:"llc_locking" doc:"COMPNET: producers write queue slots and status with store_locked (compnet.llcLocking, the ComP-Net paper)" src:"DEFAULT"`
	ProducerInstr int  `toml:"producer_instr" doc:"scalar instructions of the work-group leader's queue management per call (reserve, fill, index update)" src:"DEFAULT"`
	// ConsumerAcquire is the service thread's acquire before each poll.
	// Turning it off reproduces the stale-read hazard of the dissertation.
	ConsumerAcquire bool `toml:"consumer_acquire" doc:"service threads issue the acquire marker before each poll (off only to show the stale-read hazard)" src:"DEFAULT"`
	// PeerAccess reaches the PEs on other GPUs of the caller's node by
	// the GPU's own loads, stores and atomics over the node's GPU fabric,
	// as NVSHMEM's and ROC_SHMEM's intra-node transports do through
	// CUDA/HIP IPC mappings of the peers' symmetric heaps.
	PeerAccess bool       `toml:"peer_access" doc:"PEs on other GPUs of the caller's node are reached by the GPU's own loads, stores and atomics over the node's GPU fabric (NVSHMEM's and ROC_SHMEM's intra-node IPC transports), not through the backend; no effect with one GPU per node" src:"DOC"`
	Energy     EnergySpec `toml:"energy"`
	GIO        GIOSpec    `toml:"gio"`
}

// DefaultSpec returns the knobs of the dissertation's ComP-Net chapter and the dissertation
// §8, §11: two service threads (one per CP core; GHN's helpers the same,
// for parity — the documents do not say how many their application
// experiments used), 64-entry queues, 4 quiet rounds, no LLC locking.
func DefaultSpec() Spec {
	return Spec{Threads: 2, QueueInGPU: true, QueueEntries: 64, QuietRounds: 4,
		ProducerInstr: 40, ConsumerAcquire: true, PeerAccess: true, Energy: DefaultEnergy(), GIO: DefaultGIOSpec()}
}

// Validate reports every invalid field.
func (s Spec) Validate() error {
	var errs []error
	if s.Threads < 1 || s.Threads > 1024 {
		errs = append(errs, fmt.Errorf("shmem.threads = %d: must be in [1, 1024]", s.Threads))
	}
	if s.HostCores < 0 || s.HostCores > 1024 {
		errs = append(errs, fmt.Errorf("shmem.host_cores = %d: must be in [0, 1024]", s.HostCores))
	}
	if s.QueueEntries < 2 || s.QueueEntries > 1<<16 {
		errs = append(errs, fmt.Errorf("shmem.queue_entries = %d: must be in [2, 65536]", s.QueueEntries))
	}
	if s.QuietRounds < 1 || s.QuietRounds > 1<<20 {
		errs = append(errs, fmt.Errorf("shmem.quiet_rounds = %d: must be in [1, 1048576]", s.QuietRounds))
	}
	if s.ProducerInstr < 0 || s.ProducerInstr > 1<<20 {
		errs = append(errs, fmt.Errorf("shmem.producer_instr = %d: must be in [0, 1048576]", s.ProducerInstr))
	}
	errs = append(errs, s.Energy.Validate(), s.GIO.Validate())
	return errors.Join(errs...)
}
