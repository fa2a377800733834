package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gpunetsim/gpunetsim/exp"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/trace"
	"github.com/gpunetsim/gpunetsim/unit"
)

// defaultTraceWarn is the trace size from which a run warns and names the
// filters (--trace-warn): Perfetto loads files of this size slowly, and
// whole sweeps reach it easily.
const defaultTraceWarn = "64MiB"

// traceFlags are the --trace filters of "run".
type traceFlags struct {
	strategy string
	nodes    int
	window   string
	warn     string
	warnAt   unit.Bytes // parsed warn
}

// addTraceFilterFlags adds --trace-strategy, --trace-nodes and
// --trace-window to cmd.
func addTraceFilterFlags(cmd *cobra.Command, t *traceFlags) {
	f := cmd.Flags()
	f.StringVar(&t.strategy, "trace-strategy", "", "trace only the simulations of this strategy (e.g. GPUTN)")
	f.IntVar(&t.nodes, "trace-nodes", 0, "trace only the simulations of this node count")
	f.StringVar(&t.window, "trace-window", "", "trace only spans overlapping this simulated-time window, `FROM..TO` (e.g. 0..50us), clipped to it")
	// No default in the flag (64MiB applies): so that one given without
	// --trace is seen, and refused as the filters are.
	f.StringVar(&t.warn, "trace-warn", "", "warn when the trace file is larger than this `size` (default "+defaultTraceWarn+")")
}

// filter checks the filter flags (bad input, before any work) and
// returns the filter they ask for, or nil when none is set.
func (t *traceFlags) filter(tracePath string) (*trace.Filter, error) {
	if t.warn != "" && tracePath == "" {
		// It was ignored without a word (the filters were refused).
		return nil, badInput(fmt.Errorf("--trace-warn %s warns about a trace's size: give --trace FILE too", t.warn))
	}
	if t.warn == "" {
		t.warn = defaultTraceWarn // not given, or commands without the flag (the default run, sensitivity)
	}
	w, err := unit.ParseBytes(t.warn)
	if err != nil || w <= 0 {
		return nil, badInput(fmt.Errorf("--trace-warn %q: want a positive size, e.g. 64MiB", t.warn))
	}
	t.warnAt = w
	if t.strategy == "" && t.nodes == 0 && t.window == "" {
		return nil, nil
	}
	if tracePath == "" {
		return nil, badInput(errors.New("--trace-strategy, --trace-nodes and --trace-window filter a trace: give --trace FILE too"))
	}
	f := &trace.Filter{Nodes: t.nodes}
	if t.strategy != "" {
		d, err := strategy.Lookup(t.strategy)
		if err != nil {
			return nil, badInput(fmt.Errorf("--trace-strategy: %w", err))
		}
		f.Strategy = string(d.Strategy)
	}
	if t.nodes < 0 {
		return nil, badInput(fmt.Errorf("--trace-nodes %d: must be positive", t.nodes))
	}
	if t.window != "" {
		from, to, ok := strings.Cut(t.window, "..")
		a, errA := sim.ParseDuration(strings.TrimSpace(from))
		b, errB := sim.ParseDuration(strings.TrimSpace(to))
		if errors.Is(errA, sim.ErrDurationTooLarge) || errors.Is(errB, sim.ErrDurationTooLarge) || a < 0 {
			// Well formed, out of range: name the range, not the shape.
			return nil, badInput(fmt.Errorf("--trace-window %q: FROM and TO must be in [0, %v]", t.window, sim.MaxTime))
		}
		if !ok || errA != nil || errB != nil || b <= a {
			return nil, badInput(fmt.Errorf("--trace-window %q: want FROM..TO with durations, 0 ≤ FROM < TO, e.g. 0..50us", t.window))
		}
		f.From, f.To = a, b
	}
	return f, nil
}

// warnTraceSize warns on stderr when the trace is large, naming the
// filters, and when a filter kept nothing.
func warnTraceSize(stderr io.Writer, files []rendered, out *outFile, f *trace.Filter, warnAt unit.Bytes) {
	if out == nil {
		return
	}
	if f != nil {
		if kept, dropped := f.Counts(); kept == 0 {
			fmt.Fprintf(stderr, "gpunetsim: warning: --trace %s: the filter kept none of %d spans (simulation labels: %s)\n", out.path, dropped, labelHint())
		}
	}
	for _, r := range files {
		if r.out == out && unit.Bytes(len(r.data)) > warnAt {
			fmt.Fprintf(stderr, "gpunetsim: warning: --trace %s is %s; --trace-strategy, --trace-nodes or --trace-window make it smaller\n",
				out.path, exp.FormatBytes(float64(len(r.data))))
		}
	}
}

// labelHint says how simulations are labelled, for a filter that kept
// nothing.
func labelHint() string {
	return `"<STRATEGY> n=<nodes>" in sweeps over strategies and node counts; other experiments label theirs differently`
}
