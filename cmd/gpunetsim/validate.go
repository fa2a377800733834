package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gpunetsim/gpunetsim/exp"
	"github.com/gpunetsim/gpunetsim/exp/report"
	"github.com/gpunetsim/gpunetsim/exp/validate"
)

// validateOptions are gpunetsim validate's flags.
type validateOptions struct {
	file            string
	only            []string
	json, csv       string // output files ("": none)
	quick, progress bool
	quiet           bool      // print nothing on success
	stdin           io.Reader // for --file -
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
  gpunetsim validate --json validation.json
  gpunetsim validate --file my-calibration.toml --csv validation.csv`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("only") && len(o.only) == 0 {
				// An empty selection means every entry: not what --only '' asks.
				return badInput(fmt.Errorf("--only: empty list: name at least one entry-id prefix, or leave --only out for every entry"))
			}
			o.stdin = cmd.InOrStdin()
			return runValidate(sessionOf(cmd), o, stdout, stderr)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.file, "file", "", "calibration `file` to use instead of the shipped one (- for standard input)")
	f.StringSliceVar(&o.only, "only", nil, "run only the entries whose id starts with one of these `prefixes` (comma-separated, e.g. d0-fig5,d1)")
	f.StringVar(&o.json, "json", "", "also write the result as JSON to `file`: provenance, summary and one object per entry (id, published, simulated, error, holds, …)")
	f.StringVar(&o.csv, "csv", "", "also write one CSV row per entry to `file`, and its provenance and columns to the sidecar file.meta.json (stem of file)")
	f.BoolVar(&o.quick, "quick", false, "smaller sweeps where an entry's set-up allows (faster, for tests)")
	f.BoolVar(&o.progress, "progress", false, "print each entry's id on stderr as it finishes")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "print nothing on success (no table; the files of --json and --csv are still written)")
	return cmd
}

// loadCalibration reads and checks the calibration file and selects the
// entries, before any run; file "-" is read from stdin.
func loadCalibration(file string, only []string, stdin io.Reader) ([]validate.Entry, error) {
	name, data := "calibration.toml (shipped)", validate.Embedded()
	if file != "" {
		b, err := exp.ReadInputOrStdin(file, stdin, exp.MaxInputBytes)
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

func runValidate(s *session, o validateOptions, stdout, stderr io.Writer) error {
	entries, err := loadCalibration(o.file, o.only, o.stdin)
	if err != nil {
		return err
	}
	reserve := func(flag, path string) (*outFile, error) {
		if path == "" {
			return nil, nil
		}
		return s.reserve(flag, path)
	}
	jsonOut, err := reserve("--json", o.json)
	if err != nil {
		return err
	}
	csvOut, err := reserve("--csv", o.csv)
	if err != nil {
		return err
	}
	var metaOut *outFile
	if csvOut != nil {
		// The sidecar, and the table files an earlier run's sidecar
		// lists under the name, removed once the new files are in place.
		if metaOut, err = s.reserveCSVFiles(csvOut); err != nil {
			return err
		}
	}
	opts := validate.Options{Quick: o.quick}
	if o.progress {
		opts.Progress = func(done, total int, id string) { fmt.Fprintf(stderr, "validate: %d/%d %s\n", done, total, id) }
	}
	rs := validate.Run(entries, opts)
	n := validate.Failed(rs)
	if !o.quiet || n > 0 { // a failed run prints its table: the notes say why
		if err := validate.WriteText(stdout, rs); err != nil {
			return err
		}
	}
	if n > 0 { // no output file from a failed run
		return fmt.Errorf("validate: %d entries failed to run (see their notes)", n)
	}
	prov := s.provenance()
	var list []pending
	if jsonOut != nil {
		list = append(list, pending{jsonOut, func(w io.Writer) error { return validate.WriteJSON(w, rs, prov) }})
	}
	if csvOut != nil {
		list = append(list, pending{csvOut, func(w io.Writer) error { return validate.WriteCSV(w, rs) }},
			pending{metaOut, func(w io.Writer) error { return validate.WriteCSVMeta(w, filepath.Base(o.csv), rs, prov) }})
	}
	if err := s.commitAll(list); err != nil {
		return err
	}
	if len(list) > 0 && !o.quiet {
		var names []string
		for _, p := range list {
			names = append(names, p.out.path)
		}
		fmt.Fprint(stdout, "\n"+report.Wrap("wrote ", "  ", strings.Join(names, ", ")))
	}
	return nil
}
