package gpu

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/sim"
)

// Invariants checks the GPU's user-mode queues once a run has nothing
// left to do: every AQL queue's read index is at most its write index, and
// the packets between them fit in the ring (a producer that overran the
// ring would overwrite packets not yet read).
func (g *GPU) Invariants(now sim.Time) []sim.Violation {
	var out []sim.Violation
	for _, q := range g.aql.list {
		w, r := g.mem.Load64(q.WriteIndex()), g.mem.Load64(q.ReadIndex())
		if r > w || w-r > q.size {
			out = append(out, sim.Violation{Agent: q.name, At: now,
				What: fmt.Sprintf("read index %d, write index %d: more than the %d slots of the ring between them, or read ahead of write", r, w, q.size)})
		}
	}
	return out
}
