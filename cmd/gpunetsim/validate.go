package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/gpunetsim/gpunetsim/exp"
	"github.com/gpunetsim/gpunetsim/exp/validate"
)

// validateOptions are gpunetsim validate's flags.
type validateOptions struct {
	file            string
	only            []string
	json, csv       bool
	quick, progress bool
}

func newValidateCmd(stdout, stderr io.Writer) *cobra.Command {
	var o validateOptions
	cmd := &cobra.Command{
		Use:   "validate",
		Short: "Run the published microbenchmarks of the source documents and compare the model with them",
		Long: `Run every entry of the calibration set (the source documents' published
microbenchmark outcomes, shipped with gpunetsim) on its preset with that
preset's single parameter set, and print published vs simulated, the error
and the verdict, grouped by document, with a summary line. A ratio or an
absolute value holds within ±15%, an ordering or crossover when it is on the
published side, a shape when every clause holds, a bound when it lies in
[low, high]. Entries the model cannot run yet say why.`,
		Example: `  gpunetsim validate
  gpunetsim validate --only d0-fig6.5,d0-fig4.6
  gpunetsim validate --json > validation.json
  gpunetsim validate --file my-calibration.toml --csv`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runValidate(o, stdout, stderr)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.file, "file", "", "calibration `file` to use instead of the shipped one")
	f.StringSliceVar(&o.only, "only", nil, "run only the entries whose id starts with one of these `prefixes` (comma-separated, e.g. d0-fig5,d1)")
	f.BoolVar(&o.json, "json", false, "print one JSON object per entry (id, published, simulated, error, holds, …)")
	f.BoolVar(&o.csv, "csv", false, "print one CSV row per entry")
	f.BoolVar(&o.quick, "quick", false, "smaller sweeps where an entry's set-up allows (faster, for tests)")
	f.BoolVar(&o.progress, "progress", false, "print each entry's id on stderr as it finishes")
	return cmd
}

// loadCalibration reads and checks the calibration file and selects the
// entries, before any run.
func loadCalibration(file string, only []string) ([]validate.Entry, error) {
	name, data := "calibration.toml (shipped)", validate.Embedded()
	if file != "" {
		b, err := exp.ReadInputFile(file, exp.MaxInputBytes)
		if err != nil {
			return nil, badInput(fmt.Errorf("--file: %w", err))
		}
		name, data = file, b
	}
	entries, err := validate.Parse(name, data)
	if err != nil {
		return nil, badInput(err)
	}
	entries, err = validate.Select(entries, only)
	if err != nil {
		return nil, badInput(err)
	}
	return entries, nil
}

func runValidate(o validateOptions, stdout, stderr io.Writer) error {
	if o.json && o.csv {
		return badInput(fmt.Errorf("--json and --csv: choose one output format"))
	}
	entries, err := loadCalibration(o.file, o.only)
	if err != nil {
		return err
	}
	opts := validate.Options{Quick: o.quick}
	if o.progress {
		opts.Progress = func(done, total int, id string) { fmt.Fprintf(stderr, "validate: %d/%d %s\n", done, total, id) }
	}
	rs := validate.Run(entries, opts)
	switch {
	case o.json:
		err = validate.WriteJSON(stdout, rs)
	case o.csv:
		err = validate.WriteCSV(stdout, rs)
	default:
		err = validate.WriteText(stdout, rs)
	}
	if err != nil {
		return err
	}
	if n := validate.Failed(rs); n > 0 {
		return fmt.Errorf("validate: %d entries failed to run (see their notes)", n)
	}
	return nil
}
