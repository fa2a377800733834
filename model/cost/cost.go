package cost

import (
	"errors"
	"fmt"
)

// Spec lists the instruction counts of the runtime software paths.
type Spec struct {
	PortalsPost   int `toml:"portals_post" doc:"Portals command build + post (put/get/atomic), excluding the doorbell" src:"DEFAULT"`
	EventDispatch int `toml:"event_dispatch" doc:"Portals event dequeue + dispatch" src:"DEFAULT"`
	ShmemOp       int `toml:"shmem_op" doc:"OpenSHMEM put/get_nbi to Portals" src:"DEFAULT"`
	ShmemQuiet    int `toml:"shmem_quiet" doc:"OpenSHMEM quiet, per pending op check" src:"DEFAULT"`
	MPIMatch      int `toml:"mpi_match" doc:"MPI two-sided send/recv matching path (eager)" src:"DEFAULT"`
	MPIPoll       int `toml:"mpi_poll" doc:"MPI progress poll that finds no event" src:"DEFAULT"`
	AQLBuild      int `toml:"aql_build" doc:"HSA AQL packet build + queue reserve + doorbell for a packet that is not a kernel dispatch (GDS trigger/wait, barrier marker), excluding the memory ops" src:"DEFAULT"`
	NBCStep       int `toml:"nbc_step" doc:"libNBC schedule step dispatch" src:"DEFAULT"`
	Mutex         int `toml:"mutex" doc:"mutex acquire/release, excluding the locked RMW access" src:"DEFAULT"`
	ConsumerPoll  int `toml:"consumer_poll" doc:"GHN/ComP-Net consumer poll iteration, excluding the load" src:"DEFAULT"`
	KernelLaunch  int `toml:"kernel_launch" doc:"host runtime work to launch one kernel: argument setup, AQL dispatch packet build, queue reserve, doorbell, excluding the memory ops" src:"DEFAULT"`

	// How host runtime threads wait (the dissertation: "the host observes
	// it when its poll next sees the signal").
	KernelWait string `toml:"kernel_wait" doc:"waiting for a kernel's completion signal: poll (spin on the signal, the core stays busy) or block (sleep in the driver until the signal's interrupt: frees the core, pays cpu.wake_latency)" src:"DEFAULT"`
	MPIWait    string `toml:"mpi_wait" doc:"MPI progress when no event is pending: poll (spin on the event queue) or block (sleep until the NIC's event interrupt, paying cpu.wake_latency)" src:"DEFAULT"`
	// TaskBuild is not in the dissertation: filling 64 B of packet
	// fields and a few arguments is about a third of an AQL build (which
	// also reserves a slot and rings a doorbell).
	TaskBuild int `toml:"task_build" doc:"XTQ/HSA initiator: build the 64 B command packet and kernel arguments of a remote task" src:"DEFAULT"`
}

// Wait modes of KernelWait and MPIWait.
const (
	WaitPoll  = "poll"
	WaitBlock = "block"
)

// Default returns the instruction counts of the dissertation.
func Default() Spec {
	return Spec{PortalsPost: 400, EventDispatch: 150, ShmemOp: 600, ShmemQuiet: 100, MPIMatch: 1500,
		MPIPoll: 100, AQLBuild: 300, NBCStep: 300, Mutex: 30, ConsumerPoll: 40, KernelLaunch: 300,
		KernelWait: WaitPoll, MPIWait: WaitPoll, TaskBuild: 100}
}

// Validate reports every negative or absurd count.
func (s Spec) Validate() error {
	var errs []error
	for _, f := range []struct {
		name string
		v    int
	}{{"sw.portals_post", s.PortalsPost}, {"sw.event_dispatch", s.EventDispatch}, {"sw.shmem_op", s.ShmemOp},
		{"sw.shmem_quiet", s.ShmemQuiet}, {"sw.mpi_match", s.MPIMatch}, {"sw.mpi_poll", s.MPIPoll},
		{"sw.aql_build", s.AQLBuild}, {"sw.nbc_step", s.NBCStep}, {"sw.mutex", s.Mutex},
		{"sw.consumer_poll", s.ConsumerPoll}, {"sw.kernel_launch", s.KernelLaunch},
		{"sw.task_build", s.TaskBuild}} {
		if f.v < 0 || f.v > 1e9 {
			errs = append(errs, fmt.Errorf("%s = %d: must be in [0, 1000000000] instructions", f.name, f.v))
		}
	}
	for _, f := range []struct{ name, v string }{{"sw.kernel_wait", s.KernelWait}, {"sw.mpi_wait", s.MPIWait}} {
		if f.v != WaitPoll && f.v != WaitBlock {
			errs = append(errs, fmt.Errorf("%s = %q: must be %s or %s", f.name, f.v, WaitPoll, WaitBlock))
		}
	}
	return errors.Join(errs...)
}
