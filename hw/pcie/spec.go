package pcie

import (
	"errors"
	"fmt"

	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// Spec holds the LogGP parameters of one PCIe attachment (the dissertation),
// the same in both directions.
type Spec struct {
	Latency        sim.Time   `toml:"latency" doc:"L: one-way latency through link and root complex" src:"DEFAULT"`
	Overhead       sim.Time   `toml:"overhead" doc:"o: issue overhead per transaction at the requester" src:"DEFAULT"`
	Gap            sim.Time   `toml:"gap" doc:"g: minimum gap between transactions (1/message rate)" src:"DEFAULT"`
	Bandwidth      unit.Rate  `toml:"bandwidth" doc:"effective data rate per direction (Gen4 x16 = 31.5GB/s raw × MPS/(MPS+24))" src:"DEFAULT"`
	MPS            unit.Bytes `toml:"mps" doc:"max payload per transaction" src:"DEFAULT"`
	MaxReadReq     unit.Bytes `toml:"max_read_request" doc:"reads are split into requests of at most this" src:"DEFAULT"`
	P2PReadPenalty float64    `toml:"p2p_read_penalty" doc:"multiplies the bandwidth of NIC reads from GPU memory (1 = PLX, 0.5 = Intel-like)" src:"DOC"`
	P2PReadLatency sim.Time   `toml:"p2p_read_latency" doc:"extra completion latency of a NIC read of GPU memory: the request crosses the switch into the GPU, which serves it through its BAR (0: as a host-memory read)" src:"DEFAULT"`
	// SwitchLatency is the PCIe switch between the devices and the root
	// complex: a device's host-memory access (and the host's access to a
	// device) crosses it and its upstream port on top of L, while a
	// peer-to-peer transaction turns around in it (its two link crossings
	// already carry it).
	SwitchLatency sim.Time `toml:"switch_latency" doc:"one-way latency of a PCIe switch between the devices (GPU, NIC) and the root complex, paid on top of L by every transaction between a device and host memory or the CPU; peer-to-peer transactions turn around in the switch and do not pay it (0: the devices sit on the root complex)" src:"DEFAULT"`
}

// minP2PReadPenalty is the least peer-to-peer read penalty Validate takes.
const minP2PReadPenalty = 0.001

// Validate reports every invalid field.
func (s Spec) Validate() error {
	var errs []error
	errs = append(errs, sim.Negatives(sim.Named{Name: "pcie.latency", T: s.Latency}, sim.Named{Name: "pcie.overhead", T: s.Overhead},
		sim.Named{Name: "pcie.gap", T: s.Gap})...)
	if s.SwitchLatency < 0 || s.SwitchLatency > sim.Millisecond {
		errs = append(errs, fmt.Errorf("pcie.switch_latency = %v: must be in [0, 1ms]", s.SwitchLatency))
	}
	if s.P2PReadLatency < 0 || s.P2PReadLatency > sim.Millisecond {
		errs = append(errs, fmt.Errorf("pcie.p2p_read_latency = %v: must be in [0, 1ms]", s.P2PReadLatency))
	}
	if s.Bandwidth <= 0 {
		errs = append(errs, fmt.Errorf("pcie.bandwidth = %v: must be > 0", s.Bandwidth))
	}
	if s.MPS < 64 || s.MPS > 4*unit.KiB {
		errs = append(errs, fmt.Errorf("pcie.mps = %v: must be in [64B, 4KiB]", s.MPS))
	}
	if s.MaxReadReq < 64 || s.MaxReadReq > 4*unit.KiB {
		errs = append(errs, fmt.Errorf("pcie.max_read_request = %v: must be in [64B, 4KiB]", s.MaxReadReq))
	}
	// The penalty divides a request's serialization time: near 0 (a
	// denormal such as 1e-320) that time is infinite and saturates the
	// simulated clock into its overflow. No switch reads a thousand times
	// slower than it writes (Intel-like is 0.5), so 0.001 is the floor.
	if !(s.P2PReadPenalty >= minP2PReadPenalty && s.P2PReadPenalty <= 1) {
		errs = append(errs, fmt.Errorf("pcie.p2p_read_penalty = %v: must be in [%v, 1]", s.P2PReadPenalty, minP2PReadPenalty))
	}
	return errors.Join(errs...)
}
