package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gpunetsim/gpunetsim/exp"
	"github.com/gpunetsim/gpunetsim/exp/params"
	"github.com/gpunetsim/gpunetsim/exp/report"
	"github.com/gpunetsim/gpunetsim/exp/study"
	"github.com/gpunetsim/gpunetsim/exp/validate"
	"github.com/gpunetsim/gpunetsim/hw/cluster"
)

// reportOptions are gpunetsim report's flags.
type reportOptions struct {
	out, size, preset, cache string
	only                     []string
	fresh, quiet             bool
}

func newReportCmd(stdout, stderr io.Writer) *cobra.Command {
	var o reportOptions
	cmd := &cobra.Command{
		Use:     "report",
		Aliases: []string{"reproduce"},
		Short:   "Run every experiment at its study size (or take it from the cache) into one self-contained HTML file",
		Long: `Run every registered experiment at its default study size, reusing the
result cache, and write one HTML file that opens offline: for each
experiment its plots (inline SVG), tables, verification status, the
crossovers between plotted series, notes, and every parameter with the seed.
--size quick runs a few seconds' worth (for tests and CI).`,
		Example: `  gpunetsim report                       # gpunetsim-report.html
  gpunetsim report --size quick --out quick.html
  chromium --headless --screenshot=report.png --window-size=1280,6000 "file://$PWD/gpunetsim-report.html"`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("only") && len(o.only) == 0 {
				// An empty selection means every experiment: not what --only '' asks.
				return badInput(fmt.Errorf("--only: empty list: name at least one experiment, or leave --only out for every one"))
			}
			only, err := cleanOnly(o.only)
			if err != nil {
				return badInput(err)
			}
			o.only = only
			if err := checkCacheFlags(o.cache, o.fresh); err != nil {
				return err
			}
			return writeReport(cmd.Context(), o, stdout, stderr)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.out, "out", "gpunetsim-report.html", "the HTML `file` to write")
	f.StringVar(&o.size, "size", "default", "study size: default or quick")
	f.StringVar(&o.preset, "preset", "", "hardware preset (default "+params.DefaultPreset+")")
	f.StringVar(&o.cache, "cache", defaultCache, "result cache `directory`")
	f.BoolVar(&o.fresh, "fresh", false, "simulate every point again, ignoring cached results")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "print nothing on success")
	f.StringSliceVar(&o.only, "only", nil, "report only these `experiments` (comma-separated; default every one and the validation; \"validate\" names the validation against the published microbenchmarks)")
	return cmd
}

// cleanOnly returns the --only names without surrounding spaces and
// repeats, as a --set list reads them; an empty name (a stray comma) is
// bad input, not "every experiment".
func cleanOnly(only []string) ([]string, error) {
	return cleanList("--only", "name experiments, or leave --only out for every one", only)
}

// cleanList returns the names of a comma-separated list flag without
// surrounding spaces and repeats; an empty name (a stray comma) is bad
// input, one line naming the flag and saying what to do (fix).
func cleanList(flag, fix string, names []string) ([]string, error) {
	var out []string
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" {
			return nil, fmt.Errorf("%s %s: an empty name (a stray comma): %s", flag, strings.Join(names, ","), fix)
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// reportStudy is the study of every registered experiment at a size,
// less those the preset's NIC cannot run (exp.Experiment.Hardware: GPUrdma
// on a Cassini NIC), which skipped lists with the reason.
func reportStudy(size, preset string, only ...string) (s study.Study, skipped [][2]string, err error) {
	if size != "default" && size != "quick" {
		return study.Study{}, nil, fmt.Errorf("--size %q: must be default or quick", size)
	}
	name := preset
	if name == "" {
		name = params.DefaultPreset
	}
	hw, err := cluster.Preset(name)
	if err != nil {
		return study.Study{}, nil, err
	}
	list := exp.List()
	if len(only) > 0 {
		list = nil
		var errs []error
		for _, name := range only {
			e, err := exp.Lookup(name)
			if err != nil {
				errs = append(errs, fmt.Errorf("--only: %w", err)) // each unknown name its own line
				continue
			}
			list = append(list, e)
		}
		if err := errors.Join(errs...); err != nil {
			return study.Study{}, nil, err
		}
	}
	s = study.Study{Name: "report-" + size}
	for _, e := range list {
		if err := e.Hardware(hw, name); err != nil {
			skipped = append(skipped, [2]string{e.Name, err.Error()})
			continue
		}
		edit := e.Sizes.Default
		if size == "quick" && e.Sizes.Quick != nil {
			edit = e.Sizes.Quick
		}
		load := params.Options{Preset: preset}
		if edit != nil {
			// A size's strategy lists name the documents' strategies; on a
			// preset whose NIC lacks one (GNN on Cassini, GPU-TN on
			// ConnectX-7) the report runs the others.
			load.Edit = func(cfg *exp.Config) error { edit(cfg); *cfg = exp.DropUnavailable(*cfg); return nil }
		}
		s.Entries = append(s.Entries, study.Entry{Experiment: e, Load: load})
	}
	if len(s.Entries) == 0 {
		return s, skipped, fmt.Errorf("--only: preset %s runs none of the experiments: %s", name, skipped[0][1])
	}
	return s, skipped, s.Check()
}

func writeReport(ctx context.Context, o reportOptions, stdout, stderr io.Writer) error {
	// "validate" in --only (or no --only) adds the validation section; the
	// other names are experiments.
	withValidation := len(o.only) == 0 || slices.Contains(o.only, "validate")
	only := slices.DeleteFunc(slices.Clone(o.only), func(n string) bool { return n == "validate" })
	experiments := len(o.only) == 0 || len(only) > 0
	var s study.Study
	var skipped [][2]string
	var err error
	if experiments {
		if s, skipped, err = reportStudy(o.size, o.preset, only...); err != nil {
			return badInput(err)
		}
	} else if o.size != "default" && o.size != "quick" {
		return badInput(fmt.Errorf("--size %q: must be default or quick", o.size))
	}
	var entries []validate.Entry
	if withValidation {
		if entries, err = loadCalibration("", nil, nil); err != nil {
			return err
		}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	sess := sessionFrom(ctx)
	out, err := sess.reserve("--out", o.out)
	if err != nil {
		return err
	}
	if out.open == nil && !strings.HasSuffix(strings.ToLower(o.out), ".html") {
		// A file must say what it holds; a stream ("-", standard
		// output, a pipe) takes the page as it is.
		out.drop()
		return badInput(fmt.Errorf("--out %s: want a .html file (or - for standard output)", o.out))
	}
	summary := stdout
	if fd, ok := descriptorPath(o.out); out.open != nil && (o.out == "-" || ok && fd == 1) {
		// The page is the whole of standard output (report --out - >
		// r.html, | gzip): the summary line goes beside it, on stderr.
		summary = stderr
	}
	var sections []report.Section
	points, cached := 0, 0
	if experiments {
		secs, done, hit, err := reportExperiments(ctx, s, o, stderr)
		if err != nil {
			return err
		}
		sections, points, cached = secs, done, hit
	}
	if len(skipped) > 0 {
		t := report.Table{Name: "not run", Columns: []string{"experiment", "reason"}}
		for _, sk := range skipped {
			t.Rows = append(t.Rows, []any{sk[0], sk[1]})
		}
		sections = append(sections, report.Section{Title: "not run on this preset",
			Summary: "experiments that always run a strategy this preset's NIC does not have (the present-day strategy table): `gpunetsim run` refuses them with the same reason",
			Result:  &report.Result{Experiment: "not run", Tables: []report.Table{t}}})
	}
	if withValidation {
		rs := validate.Run(entries, validate.Options{Quick: o.size == "quick"})
		sections = append(sections, report.Section{Title: "validate",
			Summary: "the source documents' published microbenchmark outcomes (the calibration set) beside the model's, each on its preset with that preset's single parameter set: verdict holds within ±15% (ratios, absolute values), on the published side (orderings), every clause (shapes), within [low, high] (bounds)",
			Result:  validate.ReportResult(rs)})
	}
	preset := o.preset
	if preset == "" {
		preset = params.DefaultPreset
	}
	var b bytes.Buffer
	title := fmt.Sprintf("gpunetsim report: every experiment, preset %s, %s study size", preset, o.size)
	if err := report.WritePage(&b, report.Page{Title: title, Provenance: ctxProvenance(ctx), Sections: sections}); err != nil {
		return err
	}
	if err := out.commit(func(w io.Writer) error { _, err := w.Write(b.Bytes()); return err }); err != nil {
		return err
	}
	if !o.quiet {
		fmt.Fprintf(summary, "%d sections, %d points (%d cached); wrote %s\n", len(sections), points, cached, filepath.Clean(o.out))
	}
	return nil
}

// reportExperiments runs (or takes from the cache) the study of the
// report's experiments and returns their sections, the points done and the
// points found in the cache.
func reportExperiments(ctx context.Context, s study.Study, o reportOptions, stderr io.Writer) ([]report.Section, int, int, error) {
	version, err := programVersion()
	if err != nil {
		return nil, 0, 0, err
	}
	plan, err := expandPlan(s, version, nil)
	if err != nil {
		return nil, 0, 0, err
	}
	missing := missingDirs(o.cache)
	cache, err := study.OpenCache(o.cache, version)
	if err != nil {
		return nil, 0, 0, badInput(fmt.Errorf("--cache: %w", err))
	}
	sess := sessionFrom(ctx)
	sess.createdDirs(missing)
	cache.Warn = func(msg string) { fmt.Fprintln(stderr, "gpunetsim: "+msg) }
	bar := newStudyProgress(stderr, o.quiet)
	sess.onInterrupt(func() string { cache.Close(); return bar.interruptNote(cache.Dir()) })
	res, err := study.Execute(ctx, plan, study.Options{Cache: cache, Fresh: o.fresh, Parallel: plan.Runs[0].Config.Run.Parallel, Progress: bar.report})
	bar.close()
	if err != nil {
		return nil, 0, 0, err
	}
	var sections []report.Section
	for i, r := range res.Results {
		e := s.Entries[i].Experiment
		sections = append(sections, report.Section{Title: e.Name, Summary: e.Summary, Result: r})
	}
	return sections, res.Progress.Done, res.Progress.Cached, nil
}
