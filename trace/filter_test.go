package trace

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/sim"
)

func TestFilter(t *testing.T) {
	us := sim.Microsecond
	spans := []struct {
		track      string
		start, end sim.Time
	}{
		{"GPUTN n=8/node[0].nic", 0, 2 * us},
		{"GPUTN n=16/node[0].nic", 0, 2 * us},
		{"CPU n=8/node[1].cpu", 5 * us, 9 * us},
		{"gputn n=8/node[1].gpu", 20 * us, 30 * us},
	}
	for _, c := range []struct {
		name string
		f    *Filter
		want []int // indices of kept spans
	}{
		{"all", &Filter{}, []int{0, 1, 2, 3}},
		{"strategy", &Filter{Strategy: "GPUTN"}, []int{0, 1, 3}},
		{"nodes", &Filter{Nodes: 8}, []int{0, 2, 3}},
		{"both", &Filter{Strategy: "gputn", Nodes: 16}, []int{1}},
		{"window", &Filter{From: 1 * us, To: 6 * us}, []int{0, 1, 2}},
	} {
		w := New()
		c.f.Next = w
		for _, s := range spans {
			c.f.Span(s.track, "x", s.start, s.end)
		}
		kept, dropped := c.f.Counts()
		if int(kept) != len(c.want) || w.Len() != len(c.want) || int(kept+dropped) != len(spans) {
			t.Errorf("%s: kept %d (writer %d), dropped %d; want %d kept", c.name, kept, w.Len(), dropped, len(c.want))
			continue
		}
		for i, k := range c.want {
			got := w.spans[i]
			if w.names[got.track] != spans[k].track {
				t.Errorf("%s: span %d on %s, want %s", c.name, i, w.names[got.track], spans[k].track)
			}
			if c.f.To > 0 && (got.start < c.f.From || got.end > c.f.To) {
				t.Errorf("%s: span %d [%v, %v] not clipped to the window", c.name, i, got.start, got.end)
			}
		}
	}
}
