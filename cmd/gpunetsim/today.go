package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gpunetsim/gpunetsim/exp"
	"github.com/gpunetsim/gpunetsim/exp/params"
	"github.com/gpunetsim/gpunetsim/exp/study"
	"github.com/gpunetsim/gpunetsim/hw/cluster"
)

// todayDefaults are the values of "gpunetsim today" that differ from the
// defaults: the tornado on, the MoE layer at 8 and 16 GPUs, halo faces up
// to 256 KiB, and payload-free simulation (the same times; the workloads'
// own runs and tests verify the bytes), so the whole study with its
// tornado takes minutes and a few hundred MB, not gigabytes
// (BenchmarkTodayStudy); --set overrides each.
var todayDefaults = []string{"today.tornado=true", "moe.ep=8,16", "halo3d.max_face=256KiB", "run.functional=false"}

func newTodayCmd(stdout, stderr io.Writer) *cobra.Command {
	var f studyFlags
	cmd := &cobra.Command{
		Use:   "today",
		Short: "Who should drive the network today: each present-day preset and workload, winners and their sensitivity",
		Long: `Run the present-day study: pingpong, allreduce_hier, halo3d and moe on the
presets h100-cx7, mi300a-ss11, gh200 and gh200-cx7, each under every strategy
its NIC runs, and answer per preset and workload which strategy is fastest where
(tables "where" and "winners"), then re-run a thinned grid with every value
nobody has published (gpunetsim params: DEFAULT, no source) divided and
multiplied by today.factor, one at a time, to say whether each winner survives
(tables "trust" and "tornado", and the tornado plot).

It is a study: the entry "today" (the answer and the tornado) and one entry
per preset and workload (its table and plot over size and scale). Every
simulation point is cached in --cache as soon as it finishes, so an interrupted
run resumes where it stopped and a re-run with other values simulates only what
changed. The report files go to --out (default: today/): today.csv (one CSV per
table), today.svg (the tornado), PRESET-WORKLOAD.csv and .svg, and report.html.
The run.*, today.* and workload values apply to every preset. A hardware or
software value, or a workload's strategy list, that differs from the preset's
(with --set or --config) is refused, since each preset keeps its own; so is a
moe.ep that is not whole nodes of every preset, and --preset (use
today.presets).`,
		Example: `  gpunetsim today
  gpunetsim today --set today.presets=mi300a-ss11 --set today.workloads=moe,halo3d
  gpunetsim today --set today.tornado=false --out winners
  gpunetsim today --set moe.ep=8,16,32,64 --set today.factor=4`,
		Args: exactArgs(0, "no arguments (the study's knobs are today.*, with --set)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.load.Preset != "" {
				// The study's presets are today.presets, each on its own
				// hardware: a --preset reached none of them.
				return badInput(fmt.Errorf("--preset %s: gpunetsim today runs the presets of today.presets (each on its own hardware); use --set today.presets=%s", f.load.Preset, f.load.Preset))
			}
			for _, set := range f.load.Sets {
				// run.preset's own refusal points at --preset, which
				// today refuses too: name today.presets instead.
				if name, value, ok := strings.Cut(set, "="); ok && strings.TrimSpace(name) == "run.preset" {
					return badInput(fmt.Errorf("--set run.preset=%s: gpunetsim today runs the presets of today.presets (each on its own hardware); use --set today.presets=%s", value, value))
				}
			}
			f.load.Sets = append(append([]string(nil), todayDefaults...), f.load.Sets...)
			if f.out == "" {
				f.out = "today"
			}
			f.build = todayStudy
			return studyRun(cmd.Context(), "today", f, nil, false, stdout, stderr)
		},
	}
	addStudyFlags(cmd, &f, true)
	// today writes into today/ and sweeps only its own knobs: its help
	// says so instead of the study commands' default and a --sweep it
	// refuses.
	cmd.Flags().Lookup("out").Usage = "output `directory` for the report files (default: today)"
	cmd.Flags().MarkHidden("sweep")
	cmd.Flags().MarkHidden("preset")
	return cmd
}

// todayStudy is the built-in study: the today experiment, then each
// (preset, workload) with the run's workload sizes on the preset's own
// hardware and strategies.
func todayStudy(f studyFlags) (study.Study, error) {
	if len(f.sweeps) > 0 {
		return study.Study{}, fmt.Errorf("--sweep: gpunetsim today sweeps its own knobs (today.*); run gpunetsim study run today to sweep")
	}
	cfg, err := params.Load(f.load)
	if err != nil {
		return study.Study{}, err
	}
	e, err := exp.Lookup("today")
	if err != nil {
		return study.Study{}, err
	}
	st := study.Study{Name: "today", Entries: []study.Entry{{Label: "today", Experiment: e, Load: f.load}}}
	for _, preset := range cfg.Today.Presets {
		if _, err := cluster.Preset(preset); err != nil {
			return study.Study{}, err
		}
		for _, w := range cfg.Today.Workloads {
			we, err := exp.Lookup(w)
			if err != nil {
				return study.Study{}, err
			}
			// The preset's own values with the run's run and workload
			// values, as the answer's tables take them: not the --config
			// file's hardware.
			top := cfg
			load := params.Options{Preset: preset, Edit: func(c *exp.Config) error { exp.TodayEntryConfig(c, top); return nil }}
			st.Entries = append(st.Entries, study.Entry{Label: preset + "-" + w, Experiment: we, Load: load})
		}
	}
	return st, st.Check()
}
