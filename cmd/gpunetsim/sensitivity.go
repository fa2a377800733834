package main

import (
	"io"
	"strings"

	"github.com/gpunetsim/gpunetsim/exp"
	"github.com/gpunetsim/gpunetsim/exp/params"
	"github.com/gpunetsim/gpunetsim/exp/report"
	"github.com/gpunetsim/gpunetsim/exp/sensitivity"
	"github.com/spf13/cobra"
)

func newSensitivityCmd(stdout, stderr io.Writer) *cobra.Command {
	var o runOptions
	var so sensitivity.Options
	var knobs string
	cmd := &cobra.Command{
		Use:   "sensitivity <experiment>",
		Short: "Show which knobs move each of an experiment's results, and by how much",
		Long: `Perturb every [DEFAULT] knob (or those of --knobs) down and up by --factor,
one at a time, re-run the experiment for each with parallel simulations
(run.parallel, default one per core), and report per output (each time, each
speedup, each crossover point where one strategy overtakes another) which knobs
move it and by how much: table "knobs" ranks the knobs, table "outputs" lists
the knobs that move each output, and --plot draws a tornado chart of one output
(--output, default the experiment's headline).

Parameters load as for "gpunetsim run" (allreduce: the node counts of the
no-argument run, 2, 4, 8, 16, 32, 64, unless set).`,
		Example: `  gpunetsim sensitivity allreduce --plot tornado.svg
  gpunetsim sensitivity allreduce --knobs cpu.l1d_misses,gpu.launch --factor 4
  gpunetsim sensitivity allreduce --knobs 'cpu.*,sw.*'
  gpunetsim sensitivity latency --csv sens.csv`,
		Args: exactArgs(1, "an experiment name (gpunetsim experiments lists them)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if knobs != "" {
				ks, err := cleanList("--knobs", "name knobs, or leave --knobs out for every numeric DEFAULT knob", strings.Split(knobs, ","))
				if err != nil {
					return badInput(err)
				}
				so.Knobs = ks
			}
			cfg, err := params.Load(o.load)
			if err != nil {
				return badInput(err)
			}
			if err := sensitivity.Check(cfg, name, so); err != nil {
				return badInput(err)
			}
			e := exp.Experiment{Name: "sensitivity " + name, Run: func(cfg exp.Config, env exp.Env) (*report.Result, error) {
				return sensitivity.Run(cfg, name, so, env)
			}}
			o.memName, o.lines = name, true // one run per knob and direction: progress even without a terminal
			return runWith(sessionOf(cmd), e, o, stdout, stderr)
		},
	}
	f := cmd.Flags()
	addLoadFlags(cmd, &o.load)
	f.StringVar(&knobs, "knobs", "", "comma-separated knobs to perturb, or section.* for a section's (default: every numeric DEFAULT knob)")
	f.Float64Var(&so.Factor, "factor", 2, "divide and multiply each knob by this factor (> 1)")
	f.BoolVar(&so.NoScreen, "no-screen", false, "perturb every knob one by one, even in sections that a group run shows this experiment does not read")
	f.StringVar(&so.Output, "output", "", "output the tornado plot shows (default: the experiment's headline)")
	f.StringVar(&o.csv, "csv", "", "write the tables as CSV to `file`")
	f.StringVar(&o.json, "json", "", "write the whole result as JSON to `file` (- for standard output)")
	f.StringVar(&o.plot, "plot", "", "draw the tornado chart to `file` (.svg, .png or .pdf)")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "print nothing on success (no report, no progress bar)")
	return cmd
}
