package power

import (
	"fmt"
	"math"
	"strings"

	"github.com/gpunetsim/gpunetsim/unit"
)

// Core is the input description of one core type: what a McPAT core
// section would hold for the structures this model charges.
type Core struct {
	Name  string
	Tech  int       // technology node, nm (the model's coefficients are for 22)
	Freq  unit.Freq // clock
	Width int       // issue width (out-of-order)
	L1I   float64   // KiB
	L1D   float64   // KiB
	// L2 is the L2 capacity in KiB the core's L2 accesses go to, and
	// L2Share how many cores share it: its leakage is charged per core
	// as L2 / L2Share, nothing when the L2 is not the core's own
	// (L2Share = 0: the CP's accesses reach the GPU L2, whose power the
	// documents leave out).
	L2      float64
	L2Share int
}

// Host is the dissertation's host core (Table 5.1): 8-wide out-of-order
// x86 at 4 GHz, 64 KB L1I and L1D, 2 MB L2 shared by a core pair.
func Host() Core {
	return Core{Name: "host", Tech: 22, Freq: 4e9, Width: 8, L1I: 64, L1D: 64, L2: 2048, L2Share: 2}
}

// CP is the dissertation's command-processor core (Table 5.1): 2-wide
// out-of-order x86 at 2 GHz, 16 KB L1I, 32 KB L1D, the GPU L2 (1 MB)
// behind it and no L2 of its own.
func CP() Core {
	return Core{Name: "cp", Tech: 22, Freq: 2e9, Width: 2, L1I: 16, L1D: 32, L2: 1024}
}

// Coefficients of the model (package doc: sources).
const (
	sram45pJ     = 3.54                                      // 64-bit read from a √KiB-sized array at 45 nm, pJ per √KiB
	instr45pJ    = 70                                        // instruction overhead of a 2-wide core at 45 nm, pJ
	scale22      = (22.0 / 45.0) * (0.8 / 0.9) * (0.8 / 0.9) // capacitance × supply² from 45 nm to 22 nm
	dramLineNJ   = 8 * 1.3                                   // a 64 B line at 1.3 nJ per 64 bits
	pcieNJ       = 2.5                                       // one 64 B transaction at ≈ 5 pJ/bit
	leakSRAMW    = 0.3e-3                                    // per KiB at 22 nm
	leakLogic2W  = 0.080                                     // out-of-order logic of a 2-wide core at 22 nm
	clockPerGHzW = 0.050                                     // clock network of a 2-wide core, per GHz
)

// Profile is what the energy model charges a core type: static power
// while a service thread holds the core, and energies per event.
type Profile struct {
	Static                    float64 // W
	Instr, L1, L2, DRAM, PCIe float64 // nJ per event
	// The static power's parts (W) and the instruction-fetch part of
	// Instr (nJ).
	Logic, Clock, SRAMLeak, L1I float64
}

// sramNJ is the 64-bit access energy of an array of kib KiB at 22 nm.
func sramNJ(kib float64) float64 { return sram45pJ * math.Sqrt(kib) * scale22 / 1000 }

// Validate reports a description the model cannot evaluate.
func (c Core) Validate() error {
	if c.Tech != 22 {
		return fmt.Errorf("power model %s: technology %d nm: the coefficients are for 22 nm", c.Name, c.Tech)
	}
	if c.Width < 1 || c.Freq <= 0 || c.L1I <= 0 || c.L1D <= 0 || c.L2 < 0 || c.L2Share < 0 {
		return fmt.Errorf("power model %s: width, clock and L1 sizes must be positive, L2 and sharing ≥ 0", c.Name)
	}
	return nil
}

// Profile evaluates the model for c.
func (c Core) Profile() Profile {
	w := float64(c.Width) / 2
	ghz := float64(c.Freq) / 1e9
	var p Profile
	p.Logic = leakLogic2W * math.Pow(w, 1.5)
	p.Clock = clockPerGHzW * ghz * math.Pow(w, 1.5)
	sram := c.L1I + c.L1D
	if c.L2Share > 0 {
		sram += c.L2 / float64(c.L2Share)
	}
	p.SRAMLeak = leakSRAMW * sram
	p.Static = p.Logic + p.Clock + p.SRAMLeak
	p.L1I = sramNJ(c.L1I) / float64(c.Width) // one fetch brings a fetch group of width instructions
	p.Instr = instr45pJ*math.Sqrt(w)*scale22/1000 + p.L1I
	p.L1 = sramNJ(c.L1D)
	p.L2 = sramNJ(c.L2)
	p.DRAM = dramLineNJ
	p.PCIe = pcieNJ
	return p
}

// Describe returns the model's input and output for c, one line each, for
// the documentation and reports.
func (c Core) Describe() string {
	p := c.Profile()
	var b strings.Builder
	fmt.Fprintf(&b, "%s core: %d-wide OOO at %v, L1I %g KiB, L1D %g KiB, L2 %g KiB", c.Name, c.Width, c.Freq, c.L1I, c.L1D, c.L2)
	if c.L2Share > 0 {
		fmt.Fprintf(&b, " shared by %d", c.L2Share)
	} else {
		b.WriteString(" (not the core's: no leakage charged)")
	}
	fmt.Fprintf(&b, "; static %.3f W (logic %.3f, clock %.3f, SRAM %.3f); instr %.4f nJ, L1 %.4f nJ, L2 %.4f nJ, DRAM %.1f nJ, PCIe %.1f nJ",
		p.Static, p.Logic, p.Clock, p.SRAMLeak, p.Instr, p.L1, p.L2, p.DRAM, p.PCIe)
	return b.String()
}

// Name names the model in reports.
const Name = "gpunetsim per-structure core power model at 22 nm (McPAT-style; access energies after Horowitz ISSCC 2014, scaled from 45 nm) — the documents publish no watt values, so these are [DEFAULT]s"
