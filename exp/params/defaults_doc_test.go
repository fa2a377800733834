package params

import (
	"regexp"
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/exp"
)

// defaultList is the strategy list a knob's doc line states as its
// default: "(default…: A, B, C)" at the end of the line.
var defaultList = regexp.MustCompile(`default[^:()]*: ([A-Z0-9_]+(?:, [A-Z0-9_]+)*)\)$`)

// Every experiment's strategy list (a DOC knob ending in "strategies")
// says its default in its doc line, and that is the default the code
// uses: the help text (gpunetsim params, the report) cannot drift from
// what runs.
func TestDefaultStrategiesMatchDocLine(t *testing.T) {
	cfg, err := exp.DefaultConfig(DefaultPreset)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range List(cfg) {
		if p.Type != "[]string" || !strings.HasSuffix(p.Name, "strategies") || p.Src != "DOC" {
			continue
		}
		n++
		m := defaultList.FindStringSubmatch(strings.TrimSuffix(p.Doc, " ("+p.Ref+")"))
		if m == nil {
			t.Errorf("%s: doc line %q does not state its default strategy list (\"(default…: A, B)\")", p.Name, p.Doc)
			continue
		}
		if want := strings.ReplaceAll(m[1], ", ", ","); p.Value != want {
			t.Errorf("%s = %s by default, but its doc line says %s", p.Name, p.Value, want)
		}
	}
	if n < 10 {
		t.Errorf("only %d strategy lists checked", n)
	}
}

// The experiments whose one-line summary (gpunetsim experiments, run
// --help) names strategies name each default one.
func TestExperimentSummaryNamesDefaultStrategies(t *testing.T) {
	cfg, err := exp.DefaultConfig(DefaultPreset)
	if err != nil {
		t.Fatal(err)
	}
	for name, knob := range map[string]string{"allreduce": "allreduce.strategies", "latency": "latency.strategies",
		"accumulate": "accumulate.strategies", "reduce": "reduce.strategies", "taskspawn": "taskspawn.strategies",
		"jacobi1d": "jacobi1d.strategies", "jacobi": "jacobi.strategies", "jacobistrong": "jacobiscale.strategies",
		"shmemget": "shmembench.get_strategies"} {
		e, err := exp.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		v, err := Get(cfg, knob)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range strings.Split(v, ",") {
			if !strings.Contains(e.Summary, s) {
				t.Errorf("%s: summary %q does not name default strategy %s (%s = %s)", name, e.Summary, s, knob, v)
			}
		}
	}
}
