package shmem

import (
	"errors"
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/power"
	"github.com/gpunetsim/gpunetsim/sim"
)

// CoreEnergy is the power profile of one core type (the dissertation):
// E = P_static × T_alive + Σ events × E_event. Energies in nanojoules.
type CoreEnergy struct {
	Static float64 `toml:"static_w" doc:"static power (logic and SRAM leakage, clock) of a core while a service thread holds it, watts; default derived by the per-structure 22 nm power model (hw/power; the documents publish no watts)" src:"DEFAULT"`
	Instr  float64 `toml:"instr_nj" doc:"energy per committed instruction (core logic + instruction fetch), nJ; default from the per-structure 22 nm power model" src:"DEFAULT"`
	L1     float64 `toml:"l1_nj" doc:"energy per L1 D-cache access, nJ; default from the per-structure 22 nm power model" src:"DEFAULT"`
	L2     float64 `toml:"l2_nj" doc:"energy per L2/LLC access (CP: GPU L2), nJ; default from the per-structure 22 nm power model" src:"DEFAULT"`
	DRAM   float64 `toml:"dram_nj" doc:"energy per 64 B memory access past the caches, nJ (1.3 nJ per 64 bits, Horowitz ISSCC 2014)" src:"DEFAULT"`
	PCIe   float64 `toml:"pcie_nj" doc:"energy per PCIe transaction the thread issues, nJ (≈ 5 pJ/bit over a 64 B TLP)" src:"DEFAULT"`
}

// EnergySpec holds the profiles of the two core types that run service
// threads.
type EnergySpec struct {
	Host CoreEnergy `toml:"host"`
	CP   CoreEnergy `toml:"cp"`
}

// DefaultEnergy returns the profiles of the per-structure power model
// (package power) for the dissertation's host core and CP core at 22 nm.
// The documents publish no watt values: these are [DEFAULT]s, derived,
// not fitted.
func DefaultEnergy() EnergySpec {
	of := func(p power.Profile) CoreEnergy {
		return CoreEnergy{Static: p.Static, Instr: p.Instr, L1: p.L1, L2: p.L2, DRAM: p.DRAM, PCIe: p.PCIe}
	}
	return EnergySpec{Host: of(power.Host().Profile()), CP: of(power.CP().Profile())}
}

// EnergyModel names the power model of the defaults, for every energy
// report.
const EnergyModel = power.Name

// Validate reports every negative coefficient.
func (s EnergySpec) Validate() error {
	var errs []error
	for _, c := range []struct {
		name string
		e    CoreEnergy
	}{{"host", s.Host}, {"cp", s.CP}} {
		for _, f := range []struct {
			n string
			v float64
		}{{"static_w", c.e.Static}, {"instr_nj", c.e.Instr}, {"l1_nj", c.e.L1}, {"l2_nj", c.e.L2}, {"dram_nj", c.e.DRAM}, {"pcie_nj", c.e.PCIe}} {
			if !(f.v >= 0 && f.v <= 1e6) {
				errs = append(errs, fmt.Errorf("shmem.energy.%s.%s = %v: must be in [0, 1e6]", c.name, f.n, f.v))
			}
		}
	}
	return errors.Join(errs...)
}

// Counts are the events of one service thread the energy model charges.
type Counts struct {
	Instr, L1, L2, DRAM, PCIe uint64
}

// Energy is a split energy in joules.
type Energy struct {
	Static, Dynamic float64
}

// Total returns static + dynamic joules.
func (e Energy) Total() float64 { return e.Static + e.Dynamic }

// of returns the energy of a thread alive for alive with counts n.
func (c CoreEnergy) of(alive sim.Duration, n Counts) Energy {
	dyn := float64(n.Instr)*c.Instr + float64(n.L1)*c.L1 + float64(n.L2)*c.L2 + float64(n.DRAM)*c.DRAM + float64(n.PCIe)*c.PCIe
	return Energy{Static: c.Static * alive.Seconds(), Dynamic: dyn * 1e-9}
}

// ThreadReport is one service thread's activity.
type ThreadReport struct {
	Name        string
	Core        string // "host" or "cp"
	CoreID      int    // which core of that type it ran on
	Alive       sim.Duration
	OnCore      sim.Duration // part of Alive the thread held its core: what static power is charged for
	Counts      Counts
	Polls       uint64 // queue polls
	Served      uint64 // entries handed to the network
	Preemptions uint64
	Energy      Energy
}

// Report is what a device's service agents did over a run.
type Report struct {
	Kind    Kind
	Calls   Stats
	Threads []ThreadReport
	Energy  Energy   // summed over the threads
	GIO     GIOStats // the GIO backend's posts, templates and stalls (gio.go)
	// Locks counts the library's mutex acquisitions, LockSpins the
	// failed test-and-sets among them (the lock was held by another
	// thread).
	Locks, LockSpins uint64
	// Deviations are the preset changes the service threads' placement
	// made (cores added, or threads time-sliced), one line each.
	Deviations []string
}

// Polls returns the polls of all threads.
func (r Report) Polls() uint64 {
	var n uint64
	for _, t := range r.Threads {
		n += t.Polls
	}
	return n
}
