package sim

// Windows counts events per window of simulated time: the measurement
// behind the question whether a conservative parallel engine would pay.
// With lookahead W (the least time any cross-node interaction takes, the
// link plus switch latency), the events of one window can run in parallel
// across node partitions, and the partitions synchronise once per window;
// the per-window event counts bound the work available between barriers.
type Windows struct {
	Width  Duration
	Counts []uint32 // events in window k = [k·Width, (k+1)·Width); empty windows included
}

// CountWindows makes the engine record its events per window of width w.
func (e *Engine) CountWindows(w Duration) *Windows {
	e.windows = &Windows{Width: w}
	return e.windows
}

func (w *Windows) note(t Time) {
	k := int(t / w.Width)
	for len(w.Counts) <= k {
		w.Counts = append(w.Counts, 0)
	}
	w.Counts[k]++
}
