package sensitivity

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/gpunetsim/gpunetsim/exp"
	"github.com/gpunetsim/gpunetsim/exp/params"
)

// minGroup is the smallest section screened as a group: a group run costs
// one simulation where its knobs one by one cost two each, so a section of
// two or more saves runs whenever it turns out unused.
const minGroup = 2

// screen runs the base configuration and, per section of two or more of
// the knobs, one run with every knob of the section moved at once
// (groupConfig; group screening). A section whose group run reproduces the
// base run exactly — every table cell, including the event counts, and
// every output — is not read by this experiment, so its knobs are dropped
// from the one-by-one study with a note; the other sections' knobs are
// kept. Exact equality, not a threshold, decides, so a knob that moves a
// result by any amount is never screened out (two knobs whose effects
// cancel to the last bit are the one case this misses, and the note says
// so). It returns the kept knobs, the finished runs (the base first) and
// the notes.
func screen(e exp.Experiment, cfg exp.Config, ks []params.Info, factor float64, workers int, env exp.Env) ([]params.Info, []*run, []string) {
	var sections []string
	bySection := map[string][]params.Info{}
	for _, p := range ks {
		sec, _, _ := strings.Cut(p.Name, ".")
		if bySection[sec] == nil {
			sections = append(sections, sec)
		}
		bySection[sec] = append(bySection[sec], p)
	}
	runs := []*run{{cfg: cfg}}
	group := map[*run]string{}
	for _, sec := range sections {
		if len(bySection[sec]) < minGroup {
			continue
		}
		if c, ok := groupConfig(cfg, bySection[sec], factor); ok {
			r := &run{knob: sec + ".*", up: true, cfg: c}
			runs = append(runs, r)
			group[r] = sec
		}
	}
	runAll(e, runs, workers, env)
	if runs[0].err != nil {
		return ks, runs[:1], nil
	}
	unused := map[string]bool{}
	var notes []string
	base := fingerprint(runs[0])
	for _, r := range runs[1:] {
		if r.err == nil && bytes.Equal(fingerprint(r), base) {
			sec := group[r]
			unused[sec] = true
			notes = append(notes, fmt.Sprintf("section %s (%d knobs): moving all of them at once (×%g, or ÷%g where the product is rejected) reproduced the base run exactly (every table cell and output), so this experiment does not read them; they were not perturbed one by one (--no-screen does)", sec, len(bySection[sec]), factor, factor))
		}
	}
	var kept []params.Info
	for _, p := range ks {
		if sec, _, _ := strings.Cut(p.Name, "."); !unused[sec] {
			kept = append(kept, p)
		}
	}
	return kept, runs[:1], notes
}

// groupConfig returns cfg with every knob of ps moved at once: multiplied
// by factor, or divided where the configuration rejects the product, or
// left at its value where it rejects both (or no factor moves it); and
// whether the result is valid.
func groupConfig(cfg exp.Config, ps []params.Info, factor float64) (exp.Config, bool) {
	c := cfg
	for _, p := range ps {
		for _, f := range []float64{factor, 1 / factor} {
			v, err := scaled(p, f)
			if err != nil {
				continue
			}
			try := c
			if params.Set(&try, p.Name, v) == nil && try.Validate() == nil {
				c = try
				break
			}
		}
	}
	return c, c.Validate() == nil
}

// fingerprint is what a run produced, parameters left out: its tables
// (times and event counts) and outputs.
// %v prints every float exactly (shortest round-trip form, NaN as NaN),
// which JSON cannot.
func fingerprint(r *run) []byte {
	return fmt.Appendf(nil, "%v\n%v", r.res.Tables, r.res.Outputs)
}
