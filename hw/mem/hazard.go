package mem

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/sim"
)

// Hazard is one memory-visibility hazard a checker saw (the dissertation
// §5.3–5.4): which agent observed or produced stale bytes, at which
// address, and the fix that was missing.
type Hazard struct {
	At    sim.Time
	Agent string // e.g. "node[1].gpu.wg[0]", "node[0].nic (PPB)"
	Addr  Addr
	What  string
	Fix   string
}

// String returns the printed name of a Hazard.
func (h Hazard) String() string {
	return fmt.Sprintf("%v %s: %s at %#x; missing fix: %s", h.At, h.Agent, h.What, uint64(h.Addr), h.Fix)
}

// Checker collects the hazards the agents of one node report. Attach it
// with Memory.SetChecker; agents report only while one is attached.
type Checker struct {
	list []Hazard
}

// Report records h.
func (c *Checker) Report(h Hazard) { c.list = append(c.list, h) }

// Hazards returns every hazard reported, in order.
func (c *Checker) Hazards() []Hazard { return c.list }

// SetChecker attaches c (nil detaches) to the memory, for every agent
// that reaches it.
func (m *Memory) SetChecker(c *Checker) { m.checker = c }

// Checker returns the attached checker, or nil.
func (m *Memory) Checker() *Checker { return m.checker }
