package trace

import (
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/gpunetsim/gpunetsim/sim"
)

// Filter passes on to Next only the spans of the simulations and the time
// window it names, so a trace of a whole sweep can be cut down to what one
// wants to look at. A simulation is named by its process label (the part
// of the track before the first "/", e.g. "GPUTN n=8"): Strategy matches
// a word of the label, Nodes the word "n=<Nodes>".
type Filter struct {
	Next sim.Tracer
	// Strategy keeps simulations whose label has this word (case
	// insensitive); "" keeps every strategy.
	Strategy string
	// Nodes keeps simulations whose label has the word "n=<Nodes>"; 0
	// keeps every node count.
	Nodes int
	// From and To keep spans that overlap [From, To], clipped to it; To
	// = 0 means no window.
	From, To sim.Time

	kept, dropped atomic.Int64
}

// Span implements sim.Tracer.
func (f *Filter) Span(track, name string, start, end sim.Time) {
	if !f.keeps(track, start, end) {
		f.dropped.Add(1)
		return
	}
	if f.To > 0 {
		start, end = max(start, f.From), min(end, f.To)
	}
	f.kept.Add(1)
	f.Next.Span(track, name, start, end)
}

// keeps reports whether the span passes the filter.
func (f *Filter) keeps(track string, start, end sim.Time) bool {
	if f.To > 0 && (end < f.From || start > f.To) {
		return false
	}
	if f.Strategy == "" && f.Nodes == 0 {
		return true
	}
	proc, _ := split(track)
	words := strings.Fields(proc)
	if f.Strategy != "" && !hasWord(words, f.Strategy, true) {
		return false
	}
	return f.Nodes == 0 || hasWord(words, "n="+strconv.Itoa(f.Nodes), false)
}

// hasWord reports whether words holds w.
func hasWord(words []string, w string, fold bool) bool {
	for _, x := range words {
		if x == w || (fold && strings.EqualFold(x, w)) {
			return true
		}
	}
	return false
}

// Counts returns how many spans the filter kept and dropped.
func (f *Filter) Counts() (kept, dropped int64) { return f.kept.Load(), f.dropped.Load() }
