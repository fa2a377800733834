package net

import (
	"errors"
	"fmt"

	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// LinkSpec describes every full-duplex NIC↔switch and switch↔switch link.
type LinkSpec struct {
	Bandwidth unit.Rate  `toml:"bandwidth" doc:"bandwidth per direction" src:"DOC"`
	Latency   sim.Time   `toml:"latency" doc:"propagation delay per link" src:"DEFAULT"`
	Payload   unit.Bytes `toml:"payload" doc:"maximum packet payload (messages are split into packets of at most this)" src:"DEFAULT"`
	Header    unit.Bytes `toml:"header" doc:"per-packet header bytes on the wire" src:"DEFAULT"`
}

// SwitchSpec describes every switch.
type SwitchSpec struct {
	Latency sim.Time `toml:"latency" doc:"last bit in to first bit out, before output-port contention" src:"DOC"`
}

// TopologySpec selects how nodes are joined.
type TopologySpec struct {
	Kind     string `toml:"kind" doc:"star (one switch) or fattree (two-level: leaf and spine switches)" src:"DOC"`
	LeafSize int    `toml:"leaf_size" doc:"fattree: nodes per leaf switch (also the number of spine switches)" src:"DEFAULT"`
	InOrder  bool   `toml:"in_order" doc:"deliver packets of one (src,dst) pair in order; false spreads them over spines" src:"DEFAULT"`
}

// Validate reports every invalid field.
func (s LinkSpec) Validate() error {
	var errs []error
	if s.Bandwidth <= 0 {
		errs = append(errs, fmt.Errorf("link.bandwidth = %v: must be > 0", s.Bandwidth))
	}
	if s.Latency < 0 {
		errs = append(errs, fmt.Errorf("link.latency = %v: must be ≥ 0", s.Latency))
	}
	if s.Payload < 8 || s.Payload > unit.MiB { // a NIC needs room for one 64-bit word (atomics, flags)
		errs = append(errs, fmt.Errorf("link.payload = %v: must be in [8B, 1MiB]", s.Payload))
	}
	if s.Header < 0 || s.Header > 4*unit.KiB {
		errs = append(errs, fmt.Errorf("link.header = %v: must be in [0B, 4KiB]", s.Header))
	}
	return errors.Join(errs...)
}

// Validate reports every invalid field.
func (s SwitchSpec) Validate() error {
	if s.Latency < 0 {
		return fmt.Errorf("switch.latency = %v: must be ≥ 0", s.Latency)
	}
	return nil
}

// Validate reports every invalid field.
func (s TopologySpec) Validate() error {
	var errs []error
	switch s.Kind {
	case "star", "fattree":
	default:
		errs = append(errs, fmt.Errorf("topology.kind = %q: must be star or fattree", s.Kind))
	}
	if s.LeafSize < 1 || s.LeafSize > 4096 {
		errs = append(errs, fmt.Errorf("topology.leaf_size = %d: must be in [1, 4096]", s.LeafSize))
	}
	return errors.Join(errs...)
}
