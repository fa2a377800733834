package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/gpunetsim/gpunetsim/exp"
	"github.com/gpunetsim/gpunetsim/exp/params"
	"github.com/gpunetsim/gpunetsim/exp/report"
	"github.com/gpunetsim/gpunetsim/exp/study"
)

// defaultCache is the result cache of study commands and gpunetsim
// report: results are keyed by content, so every study can share it.
const defaultCache = "gpunetsim-cache"

// studyFlags are the flags every study command shares.
type studyFlags struct {
	load   params.Options
	sweeps []string
	cache  string
	fresh  bool
	out    string
	quiet  bool
	// build, when set, makes the study instead of the command line's
	// argument (gpunetsim today's built-in study).
	build func(studyFlags) (study.Study, error)
}

func addStudyFlags(cmd *cobra.Command, f *studyFlags, withFresh bool) {
	addLoadFlags(cmd, &f.load)
	fl := cmd.Flags()
	fl.StringArrayVar(&f.sweeps, "sweep", nil, "sweep a parameter: `name=v1,v2,...` or a range with units, lo..hi*k or lo..hi+step (repeatable; crossed)")
	fl.StringVar(&f.cache, "cache", defaultCache, "result cache `directory` (created if needed; shared by studies)")
	if withFresh {
		fl.BoolVar(&f.fresh, "fresh", false, "simulate every point again, ignoring cached results (and refresh them)")
	}
	fl.StringVar(&f.out, "out", "", "output `directory` for the report files (default: study-<name>)")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "print nothing on success (no report, no progress)")
}

func newStudyCmd(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "study",
		Short: "Run, submit to Slurm, and collect studies: experiments over parameter sweeps, cached point by point",
		Long: `A study is one experiment (named on the command line, with --set and --sweep)
or a TOML file listing experiments and sweeps (docs/studies.md). Every
simulation point is cached in --cache under a hash of its full configuration
and the program version, as soon as it finishes: re-running a study reuses
finished points, so an interrupted study resumes and a changed one re-runs
only what changed.

  gpunetsim study run STUDY             run it here, write the report files
  gpunetsim study submit STUDY --tasks N  a Slurm job array; each task runs a slice
  gpunetsim study collect STUDY         assemble the report from the cache`,
	}
	cmd.AddCommand(newStudyRunCmd(stdout, stderr), newStudySubmitCmd(stdout, stderr), newStudyCollectCmd(stdout, stderr))
	return groupCmd(cmd)
}

func newStudyRunCmd(stdout, stderr io.Writer) *cobra.Command {
	var f studyFlags
	var slice string
	cmd := &cobra.Command{
		Use:   "run <study.toml | experiment>",
		Short: "Run a study (or one slice of it) into the cache and write its report",
		Example: `  gpunetsim study run allreduce --set allreduce.nodes=2-16/2 --sweep link.bandwidth=25Gbps..400Gbps*2
  gpunetsim study run bandwidth.toml --out results
  gpunetsim study run bandwidth.toml --slice 3/8     # what Slurm task 3 of 8 runs`,
		Args: exactArgs(1, "a study file or an experiment name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var sl *study.Slice
			if slice != "" {
				s, err := study.ParseSlice(slice)
				if err != nil {
					return badInput(fmt.Errorf("--slice: %w", err))
				}
				sl = &s
				if cmd.Flags().Changed("out") {
					// A slice writes no report: the directory was
					// ignored without a word.
					return badInput(fmt.Errorf("--out %s with --slice %s: a slice only fills the cache and writes no report; drop --out here and give it to study collect once every slice has run", f.out, slice))
				}
			}
			return studyRun(cmd.Context(), args[0], f, sl, false, stdout, stderr)
		},
	}
	addStudyFlags(cmd, &f, true)
	cmd.Flags().StringVar(&slice, "slice", "", "run only slice `i/n` of the points into the cache (a Slurm array task's share) and write no report")
	return cmd
}

func newStudyCollectCmd(stdout, stderr io.Writer) *cobra.Command {
	var f studyFlags
	cmd := &cobra.Command{
		Use:   "collect <study.toml | experiment>",
		Short: "Assemble a study's report from the cache, simulating nothing",
		Long: `Assemble the report of a study whose points are in the cache (after the
tasks of "gpunetsim study submit" finished). Give the same study, --set and
--sweep as to submit. Missing points are an error that counts them and names
the first; nothing is written then.`,
		Args: exactArgs(1, "a study file or an experiment name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return studyRun(cmd.Context(), args[0], f, nil, true, stdout, stderr)
		},
	}
	addStudyFlags(cmd, &f, false)
	return cmd
}

// loadStudy reads a study file, or makes the study of one experiment,
// and adds the command line's --set and --sweep to every entry.
func loadStudy(arg string, f studyFlags) (study.Study, error) {
	if f.build != nil {
		return f.build(f)
	}
	if arg == "-" {
		// Not standard input: a study file is read again by collect and
		// by a submitted study's tasks, and its config paths are
		// relative to its own directory.
		return study.Study{}, errors.New("study -: a study file is named by its path (collect and the tasks read it again; its config paths are relative to it): give a file name (./- for a file named -)")
	}
	var sweeps []params.Sweep
	for _, spec := range f.sweeps {
		sw, err := params.ParseSweep(spec)
		if err != nil {
			return study.Study{}, fmt.Errorf("--sweep: %w", err)
		}
		sweeps = append(sweeps, sw)
	}
	if e, err := exp.Lookup(arg); err == nil {
		if _, statErr := os.Stat(arg); statErr != nil {
			return study.Single(e, f.load, sweeps)
		}
	}
	if _, err := os.Stat(arg); err != nil {
		_, lookupErr := exp.Lookup(arg)
		return study.Study{}, fmt.Errorf("study %s: neither a study file (%w) nor an experiment (%w)", arg, err, lookupErr)
	}
	if f.load.File != "" {
		return study.Study{}, errors.New("--config: a study file names its parameter file itself (config = ...)")
	}
	s, err := study.Load(arg)
	if err != nil {
		return study.Study{}, err
	}
	for i := range s.Entries {
		e := &s.Entries[i]
		if f.load.Preset != "" {
			e.Load.Preset = f.load.Preset
		}
		e.Load.Sets = append(e.Load.Sets, f.load.Sets...)
		e.Sweeps = append(e.Sweeps, sweeps...)
	}
	return s, s.Check()
}

// studyOutDir is --out, or study-<name>.
func studyOutDir(f studyFlags, s study.Study) string {
	if f.out != "" {
		return f.out
	}
	return "study-" + s.Name
}

// prepared is a study ready to execute.
type prepared struct {
	study study.Study
	plan  *study.Plan
	cache *study.Cache
}

// checkCacheFlags refuses, before any work, an empty --cache (no
// directory to open) and a --fresh without a cache to refresh, in the
// words run uses for its optional cache.
func checkCacheFlags(cache string, fresh bool) error {
	if cache == "-" {
		return badInput(errors.New("--cache -: the result cache is a directory, which standard input or output cannot be: give a directory name (./- for one named -)"))
	}
	if cache != "" {
		return nil
	}
	if fresh {
		return badInput(errors.New("--fresh: needs --cache"))
	}
	return badInput(fmt.Errorf("--cache: empty directory name: name the result cache directory (default %s)", defaultCache))
}

// prepare loads and expands a study, registers its input files with the
// session and opens its cache (read-only when the command only reads it):
// every bad input is reported here, before any work. The cache reports the
// entries it refuses on stderr.
func prepare(s *session, arg string, f studyFlags, readOnly, withOut bool, stderr io.Writer, reserve func(study.Study) error) (prepared, error) {
	if err := checkCacheFlags(f.cache, f.fresh); err != nil {
		return prepared{}, err
	}
	st, err := loadStudy(arg, f)
	if err != nil {
		return prepared{}, badInput(err)
	}
	// The directories first, cheaply: a --out or --cache that is a file
	// or lies in a read-only directory was found only after the plan
	// (today: a minute and a half at load).
	if withOut {
		if _, err := checkOutDir("--out", studyOutDir(f, st)); err != nil {
			return prepared{}, err
		}
	}
	if !readOnly {
		if err := study.CheckCacheDir(f.cache); err != nil {
			return prepared{}, badInput(fmt.Errorf("--cache: %w", err))
		}
	}
	if err := studyInputs(s, arg, f, st); err != nil {
		return prepared{}, err
	}
	if reserve != nil {
		// The outputs before the plan too: one on an input (today
		// --config t/today.csv --out t) was refused after it.
		if err := reserve(st); err != nil {
			return prepared{}, err
		}
	}
	version, err := programVersion()
	if err != nil {
		return prepared{}, err
	}
	plan, err := expandPlan(st, version, noteTo(f.quiet, stderr))
	if err != nil {
		return prepared{}, err
	}
	for _, r := range plan.Runs {
		if err := s.input("ml.table", r.Config.ML.Table); err != nil {
			return prepared{}, err
		}
		if err := s.input("moe.routing", r.Config.MoE.Routing); err != nil {
			return prepared{}, err
		}
	}
	var cache *study.Cache
	if readOnly {
		cache, err = study.OpenCacheReadOnly(f.cache, version)
	} else {
		missing := missingDirs(f.cache)
		fi, statErr := os.Stat(f.cache)
		if statErr == nil && fi.IsDir() && fi.Mode().Perm()&0o222 == 0 {
			// A read-only cache (by its mode, as for any user, root
			// included) serves a run whose points it all holds.
			cache, err = study.OpenCacheReadOnly(f.cache, version)
		} else {
			cache, err = study.OpenCache(f.cache, version)
			if err != nil && statErr == nil && fi.IsDir() && (errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS)) {
				cache, err = study.OpenCacheReadOnly(f.cache, version)
			}
		}
		if err == nil {
			s.createdDirs(missing)
		}
	}
	if err != nil {
		return prepared{}, badInput(fmt.Errorf("--cache: %w", err))
	}
	cache.Warn = func(msg string) { fmt.Fprintln(stderr, "gpunetsim: "+msg) }
	return prepared{study: st, plan: plan, cache: cache}, nil
}

// readOnlyHolds checks, before any work, that a read-only cache (opened
// so by prepare) holds every point the command would simulate and store
// (those of slice, when non-nil; all with fresh): such a run only reads it.
func readOnlyHolds(p prepared, slice *study.Slice, fresh bool) error {
	if !p.cache.ReadOnly() {
		return nil
	}
	if missing := p.cache.Missing(p.plan, slice, fresh); len(missing) > 0 {
		return badInput(fmt.Errorf("--cache %s: the cache directory is read-only and lacks %d point(s) this run must store (first: %s); make it writable or choose another --cache",
			p.cache.Dir(), len(missing), missing[0]))
	}
	return nil
}

// studyInputs registers the files a study reads: the study file and the
// parameter files of its entries.
func studyInputs(s *session, arg string, f studyFlags, st study.Study) error {
	if fi, err := os.Stat(arg); err == nil && !fi.IsDir() {
		if err := s.input("the study file", arg); err != nil {
			return err
		}
	}
	for _, e := range st.Entries {
		flag := "the study's config"
		if e.Load.File == f.load.File {
			flag = "--config"
		}
		if err := s.input(flag, e.Load.File); err != nil {
			return err
		}
	}
	return nil
}

// studyRun runs (or, with collectOnly, collects) a study and writes its
// report files; with a slice it only fills the cache.
func studyRun(ctx context.Context, arg string, f studyFlags, slice *study.Slice, collectOnly bool, stdout, stderr io.Writer) error {
	s := sessionFrom(ctx)
	if collectOnly {
		// Collecting reads a cache that the tasks filled: a missing one is
		// a mistyped --cache, not an empty cache to create.
		if fi, err := os.Stat(f.cache); err != nil || !fi.IsDir() {
			return badInput(fmt.Errorf("--cache %s: no such cache directory to collect from", f.cache))
		}
	}
	var outs studyOuts
	var reserve func(study.Study) error
	if slice == nil {
		reserve = func(st study.Study) (err error) {
			outs, err = reserveStudy(s, st, studyOutDir(f, st))
			return err
		}
	}
	p, err := prepare(s, arg, f, collectOnly, slice == nil, stderr, reserve)
	if err != nil {
		return err
	}
	if !collectOnly {
		if err := readOnlyHolds(p, slice, f.fresh); err != nil {
			return err
		}
	}
	bar := newStudyProgress(stderr, f.quiet)
	s.onInterrupt(func() string { p.cache.Close(); return bar.interruptNote(p.cache.Dir()) })
	o, err := study.Execute(ctx, p.plan, study.Options{Cache: p.cache, Fresh: f.fresh, Slice: slice, CacheOnly: collectOnly,
		Parallel: p.plan.Runs[0].Config.Run.Parallel, Progress: bar.report})
	bar.close()
	if err != nil {
		return err
	}
	if slice != nil {
		if !f.quiet {
			fmt.Fprintf(stdout, "slice %d/%d: %d points, %d simulated, %d cached, in %s\n", slice.Index, slice.Count,
				o.Progress.Done, o.Progress.Done-o.Progress.Cached, o.Progress.Cached, p.cache.Dir())
		}
		return nil
	}
	return writeStudy(s, p, o, outs, f.quiet, stdout)
}

// studyOuts are a study's report files, reserved before it runs: per
// entry its CSV, JSON and SVG plot, and the HTML report of them all.
type studyOuts struct {
	entries []entryOuts
	html    *outFile
}

// entryOuts are one entry's files.
type entryOuts struct{ csv, csvMeta, json, svg *outFile }

// reserveStudy makes the output directory ready (creating it if needed,
// removed again if the command fails or is interrupted and it stays empty)
// and reserves every report file in it. Entry labels are safe, unique file
// names (study.Check), so every file lies in dir and none is another's.
func reserveStudy(s *session, st study.Study, dir string) (studyOuts, error) {
	var outs studyOuts
	if err := s.outDir("--out", dir); err != nil {
		return outs, err
	}
	for _, e := range st.Entries {
		base := filepath.Join(dir, e.Label)
		var eo entryOuts
		for _, f := range []struct {
			ext string
			out **outFile
		}{{".csv", &eo.csv}, {".json", &eo.json}, {".svg", &eo.svg}} {
			o, err := s.reserve("--out", base+f.ext)
			if err != nil {
				return outs, err
			}
			*f.out = o
		}
		outs.entries = append(outs.entries, eo)
	}
	html, err := s.reserve("--out", filepath.Join(dir, "report.html"))
	if err != nil {
		return outs, err
	}
	outs.html = html
	for i := range outs.entries {
		eo := &outs.entries[i]
		if eo.csvMeta, err = s.reserveCSVFiles(eo.csv); err != nil {
			return outs, err
		}
	}
	return outs, nil
}

// writeStudy prints the study's reports and writes, in the reserved
// files, each entry's CSV, JSON and SVG plot (an entry without a plot
// writes none) and one HTML report of them all: all files appear together
// or none does.
func writeStudy(s *session, p prepared, o study.Outcome, outs studyOuts, quiet bool, stdout io.Writer) error {
	var list []pending
	var sections []report.Section
	add := func(out *outFile, write func(io.Writer) error) error {
		var b bytes.Buffer
		if err := write(&b); err != nil {
			return fmt.Errorf("%s: %w", out.path, err)
		}
		list = append(list, pending{out, func(w io.Writer) error { _, err := w.Write(b.Bytes()); return err }})
		return nil
	}
	prov := s.provenance()
	for i, res := range o.Results {
		e, eo := p.study.Entries[i], outs.entries[i]
		res.Provenance = prov
		// One CSV a table and the sidecar (report.CSVFiles): the main
		// table in the reserved file, the others, named after tables only
		// the run made, reserved beside it now.
		csvs, err := report.CSVFiles(eo.csv.path, res)
		if err != nil {
			return fmt.Errorf("%s: %w", eo.csv.path, err)
		}
		for j, f := range csvs {
			out := eo.csv
			switch j {
			case 0:
			case len(csvs) - 1:
				out = eo.csvMeta
			default:
				if out, err = s.reserveFile("--out", f.Path); err != nil {
					return err
				}
			}
			if err := add(out, func(w io.Writer) error { _, err := w.Write(f.Data); return err }); err != nil {
				return err
			}
		}
		if err := add(eo.json, func(w io.Writer) error { return report.WriteJSON(w, res) }); err != nil {
			return err
		}
		if res.Plot != nil {
			if err := add(eo.svg, func(w io.Writer) error { return report.WritePlot(w, res, "svg") }); err != nil {
				return err
			}
		}
		sections = append(sections, report.Section{Title: e.Label, Summary: e.Experiment.Summary, Result: res, Facets: facetsOf(o, i)})
	}
	if err := add(outs.html, func(w io.Writer) error {
		return report.WritePage(w, report.Page{Title: "gpunetsim study " + p.study.Name, Provenance: prov, Sections: sections})
	}); err != nil {
		return err
	}
	if !quiet {
		for i, res := range o.Results {
			own, hardware := exp.ParamSections(p.study.Entries[i].Experiment.Name)
			if err := report.WriteTextFor(stdout, res, own, hardware); err != nil {
				return err
			}
			fmt.Fprintln(stdout)
		}
	}
	if err := s.commitAll(list); err != nil {
		return err
	}
	if !quiet {
		names := make([]string, len(list))
		for i, l := range list {
			names[i] = l.out.path
		}
		fmt.Fprint(stdout, report.Wrap(fmt.Sprintf("%d points (%d cached); wrote ", o.Progress.Done, o.Progress.Cached), "  ", strings.Join(names, ", ")))
	}
	return nil
}

// facetsOf returns entry i's per-combination results when it has sweeps.
func facetsOf(o study.Outcome, i int) []report.Facet {
	if i < len(o.Parts) && len(o.Parts[i]) > 1 {
		return o.Parts[i]
	}
	return nil
}

func newStudySubmitCmd(stdout, stderr io.Writer) *cobra.Command {
	var f studyFlags
	var s submitOptions
	cmd := &cobra.Command{
		Use:   "submit <study.toml | experiment>",
		Short: "Write a Slurm job array that runs a study's points in slices into the shared cache, and submit it",
		Long: `Write <out>/<name>.sbatch, a Slurm batch script whose array task i runs
"gpunetsim study run STUDY --slice i/N" into the cache, and submit it with
sbatch --array=0-(N-1). The executable, the study file and the cache must be
on a file system every node sees. When the tasks are done,
"gpunetsim study collect STUDY" (same study, --set and --sweep) assembles
the report. --local runs the same script's tasks one after the other here,
without Slurm.`,
		Example: `  gpunetsim study submit bandwidth.toml --tasks 16 --sbatch-arg=--time=2:00:00 --sbatch-arg=--partition=cpu
  gpunetsim study submit bandwidth.toml --tasks 4 --local && gpunetsim study collect bandwidth.toml`,
		Args: exactArgs(1, "a study file or an experiment name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return studySubmit(cmd.Context(), args[0], f, s, stdout, stderr)
		},
	}
	addStudyFlags(cmd, &f, false)
	fl := cmd.Flags()
	fl.IntVar(&s.tasks, "tasks", 0, "number of array tasks (slices), at least 1")
	fl.StringArrayVar(&s.sbatchArgs, "sbatch-arg", nil, "pass `arg` to sbatch, e.g. --sbatch-arg=--partition=cpu (repeatable)")
	fl.BoolVar(&s.wait, "wait", false, "wait until every task has finished (sbatch --wait)")
	fl.BoolVar(&s.local, "local", false, "run the tasks here, one after the other, instead of submitting")
	fl.StringVar(&s.exe, "gpunetsim", "", "the gpunetsim `executable` the tasks run (default: this one)")
	return cmd
}

// submitOptions are study submit's own flags.
type submitOptions struct {
	tasks      int
	sbatchArgs []string
	wait       bool
	local      bool
	exe        string
}

// studySubmit writes the batch script and submits it (or runs its tasks
// here with --local).
func studySubmit(ctx context.Context, arg string, f studyFlags, s submitOptions, stdout, stderr io.Writer) (err error) {
	if s.tasks < 1 || s.tasks > 100000 {
		return badInput(fmt.Errorf("--tasks = %d: must be in [1, 100000]", s.tasks))
	}
	if err := checkExecutable(s.exe); err != nil {
		return badInput(err)
	}
	for _, a := range s.sbatchArgs {
		// sbatch takes each as one argument (no shell): an empty one or
		// one with a line break was refused by sbatch after the plan,
		// its message over several lines.
		if strings.TrimSpace(a) == "" || strings.ContainsAny(a, "\n\r\x00") {
			return badInput(fmt.Errorf("--sbatch-arg %q: want one sbatch option, e.g. --partition=cpu, without line breaks", a))
		}
	}
	sess := sessionFrom(ctx)
	p, err := prepare(sess, arg, f, false, true, stderr, nil)
	if err != nil {
		return err
	}
	if err := readOnlyHolds(p, nil, f.fresh); err != nil {
		return err
	}
	sbatch := ""
	if !s.local {
		if sbatch, err = exec.LookPath("sbatch"); err != nil {
			return badInput(fmt.Errorf("sbatch not found (%w): install Slurm's client, or run the tasks here with --local", err))
		}
	}
	if s.exe == "" {
		if s.exe, err = os.Executable(); err != nil {
			return fmt.Errorf("finding this executable: %w", err)
		}
	}
	if err := sess.input("--gpunetsim", s.exe); err != nil {
		return err
	}
	out := studyOutDir(f, p.study)
	if err := sess.outDir("--out", out); err != nil {
		return err
	}
	script, err := batchScript(arg, f, s, p, out)
	if err != nil {
		return badInput(err)
	}
	path := filepath.Join(out, p.study.Name+".sbatch")
	sf, err := sess.reserve("--out", path)
	if err != nil {
		return err
	}
	if err := sf.commit(func(w io.Writer) error { _, err := io.WriteString(w, script); return err }); err != nil {
		return err
	}
	if s.local {
		if err := runLocally(ctx, path, s.tasks, f.quiet, stdout, stderr); err != nil {
			return err
		}
		return tasksStored(p, s)
	}
	args := append([]string{"--parsable", fmt.Sprintf("--array=0-%d", s.tasks-1)}, s.sbatchArgs...)
	if s.wait {
		args = append(args, "--wait")
	}
	var so, se bytes.Buffer
	c := exec.Command(sbatch, append(args, path)...)
	c.Stdout, c.Stderr = &so, &se
	if err := c.Run(); err != nil {
		if !s.wait {
			os.Remove(path) // nothing was submitted: leave nothing behind
		}
		return fmt.Errorf("sbatch %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(se.String()))
	}
	if s.wait {
		if err := tasksStored(p, s); err != nil {
			return err
		}
	}
	job, _, _ := strings.Cut(strings.TrimSpace(so.String()), ";")
	if !f.quiet {
		fmt.Fprintf(stdout, "submitted Slurm job %s: %d tasks over %d points into %s (script %s)\n", job, s.tasks, len(p.plan.Tasks), p.cache.Dir(), path)
		if !s.wait {
			fmt.Fprintf(stdout, "when it is done: %s\n", collectCommand(arg, f, p))
		}
	}
	return nil
}

// tasksStored checks, once the tasks are done (--local, --wait), that the
// cache holds every point of the plan: tasks that exited 0 but stored
// nothing this executable reads (a --gpunetsim of another build keys its
// results under its own version) passed, and study collect failed only
// later.
func tasksStored(p prepared, s submitOptions) error {
	missing := p.cache.Missing(p.plan, nil, false)
	if len(missing) == 0 {
		return nil
	}
	why := ": a task failed to store its results"
	if self, err := os.Executable(); err == nil && !sameFile(self, s.exe) {
		why = fmt.Sprintf(": the tasks ran %s, whose results this gpunetsim does not read (each build keys its own); collect with that executable", s.exe)
	}
	n := 0
	for _, t := range p.plan.Tasks {
		if t.Point != nil {
			n++
		}
	}
	return fmt.Errorf("the %d tasks finished, yet %d of %d points are not in the cache %s (first: %s)%s",
		s.tasks, len(missing), n, p.cache.Dir(), missing[0], why)
}

// sameFile reports whether the paths a and b name one file.
func sameFile(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// checkExecutable refuses a --gpunetsim path that cannot be the program
// the array tasks run (missing, a directory, without an execute bit):
// submitted, every task failed on the cluster. "" is this executable.
func checkExecutable(path string) error {
	if path == "" {
		return nil
	}
	const want = "must be the gpunetsim executable the tasks run"
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("--gpunetsim %s: no such file: %s", path, want)
	case err != nil:
		return fmt.Errorf("--gpunetsim %s: %w: %s", path, unwrapPath(err), want)
	case fi.IsDir():
		return fmt.Errorf("--gpunetsim %s: a directory: %s", path, want)
	case !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0:
		return fmt.Errorf("--gpunetsim %s: not executable (%v): %s", path, fi.Mode(), want)
	}
	return nil
}

// batchScript writes the Slurm batch script: array task i runs slice i/N
// of the study with absolute paths, so it runs from any directory.
func batchScript(arg string, f studyFlags, s submitOptions, p prepared, out string) (string, error) {
	abs := func(path string) (string, error) {
		a, err := filepath.Abs(path)
		if err != nil {
			return "", fmt.Errorf("%s: %w", path, err)
		}
		return a, nil
	}
	studyArg := arg
	if _, err := os.Stat(arg); err == nil {
		a, err := abs(arg)
		if err != nil {
			return "", err
		}
		studyArg = a
	}
	cache, err := abs(p.cache.Dir())
	if err != nil {
		return "", err
	}
	outAbs, err := abs(out)
	if err != nil {
		return "", err
	}
	wd, err := abs(".")
	if err != nil {
		return "", err
	}
	// The executable too (--gpunetsim ./g ran "./g", which a task
	// started elsewhere, sbatch --chdir, does not find).
	exe, err := abs(s.exe)
	if err != nil {
		return "", err
	}
	cmd := []string{exe, "study", "run", studyArg, "--cache", cache}
	if f.load.Preset != "" {
		cmd = append(cmd, "--preset", f.load.Preset)
	}
	if f.load.File != "" {
		a, err := abs(f.load.File)
		if err != nil {
			return "", err
		}
		cmd = append(cmd, "--config", a)
	}
	for _, set := range f.load.Sets {
		cmd = append(cmd, "--set", set)
	}
	for _, sw := range f.sweeps {
		cmd = append(cmd, "--sweep", sw)
	}
	quoted := make([]string, len(cmd))
	for i, c := range cmd {
		quoted[i] = shellQuote(c)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/bash\n")
	fmt.Fprintf(&b, "# gpunetsim study %s: %d points in %d slices; written by gpunetsim study submit.\n", p.study.Name, len(p.plan.Tasks), s.tasks)
	fmt.Fprintf(&b, "#SBATCH --job-name=%s\n", shellQuote("gpunetsim-"+p.study.Name))
	fmt.Fprintf(&b, "#SBATCH --array=0-%d\n", s.tasks-1)
	fmt.Fprintf(&b, "#SBATCH --ntasks=1\n")
	fmt.Fprintf(&b, "#SBATCH --output=%s\n", filepath.Join(outAbs, "slurm-%A_%a.out"))
	fmt.Fprintf(&b, "set -eu\n")
	fmt.Fprintf(&b, ": \"${SLURM_ARRAY_TASK_ID:?run this script with sbatch, or set SLURM_ARRAY_TASK_ID}\"\n")
	fmt.Fprintf(&b, "if [ \"${SLURM_ARRAY_TASK_COUNT:-%d}\" != %d ]; then\n", s.tasks, s.tasks)
	fmt.Fprintf(&b, "  echo \"gpunetsim: this script shares the points out to %d tasks, but the array has $SLURM_ARRAY_TASK_COUNT: submit it with --array=0-%d\" >&2; exit 2\nfi\n", s.tasks, s.tasks-1)
	// A relative path in a --set value or in the configuration
	// (moe.routing, ml.table) names a file of the submitting directory:
	// a task started elsewhere (sbatch --chdir) did not find it.
	fmt.Fprintf(&b, "cd %s\n", shellQuote(wd))
	// "$@": the script's own arguments go to the task (runLocally
	// passes -q under a quiet submit; sbatch passes none).
	fmt.Fprintf(&b, "exec %s --slice \"${SLURM_ARRAY_TASK_ID}/%d\" \"$@\"\n", strings.Join(quoted, " "), s.tasks)
	return b.String(), nil
}

// collectCommand is the command line that collects the study.
func collectCommand(arg string, f studyFlags, p prepared) string {
	cmd := []string{"gpunetsim", "study", "collect", arg, "--cache", p.cache.Dir()}
	if f.out != "" {
		cmd = append(cmd, "--out", f.out)
	}
	if f.load.Preset != "" {
		cmd = append(cmd, "--preset", f.load.Preset)
	}
	if f.load.File != "" {
		cmd = append(cmd, "--config", f.load.File)
	}
	for _, set := range f.load.Sets {
		cmd = append(cmd, "--set", set)
	}
	for _, sw := range f.sweeps {
		cmd = append(cmd, "--sweep", sw)
	}
	for i, c := range cmd {
		cmd[i] = shellQuote(c)
	}
	return strings.Join(cmd, " ")
}

// shellQuote quotes s for bash when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// runLocally runs the batch script's tasks here, one after the other, as
// Slurm would (SLURM_ARRAY_TASK_ID set), without Slurm. An interrupt
// (ctx cancelled) passes the signal on to the running task, which removes
// its temporaries and stops: a SIGTERM sent to gpunetsim alone (kill,
// timeout), not to its process group as a terminal's Ctrl-C is, left the
// task running with no parent.
func runLocally(ctx context.Context, script string, tasks int, quiet bool, stdout, stderr io.Writer) error {
	for i := range tasks {
		args := []string{script}
		if quiet {
			// The task's progress summary went to standard error under
			// submit -q, which promises nothing on success.
			args = append(args, "-q")
		}
		c := exec.CommandContext(ctx, "bash", args...)
		c.Cancel = func() error { return c.Process.Signal(syscall.SIGTERM) }
		c.WaitDelay = interruptGrace
		c.Env = append(os.Environ(), "SLURM_ARRAY_TASK_ID="+strconv.Itoa(i), "SLURM_ARRAY_TASK_COUNT="+strconv.Itoa(tasks), "SLURM_ARRAY_JOB_ID=local")
		c.Stdout, c.Stderr = stdout, stderr
		if quiet {
			c.Stdout = io.Discard
		}
		if err := c.Run(); err != nil {
			return fmt.Errorf("local task %d of %s: %w", i, script, err)
		}
	}
	return nil
}

// runStudyFlags are the study flags of gpunetsim run.
type runStudyFlags struct {
	sweeps []string
	cache  string
	fresh  bool
}

// active reports whether the run goes through the study machinery.
func (r runStudyFlags) active() bool { return len(r.sweeps) > 0 || r.cache != "" }

func addRunStudyFlags(cmd *cobra.Command, r *runStudyFlags) {
	f := cmd.Flags()
	f.StringArrayVar(&r.sweeps, "sweep", nil, "sweep a parameter: `name=v1,v2,...` or a range with units, lo..hi*k or lo..hi+step (repeatable; crossed with the experiment's own sweep; rows gain one column per swept parameter)")
	f.StringVar(&r.cache, "cache", "", "reuse and fill the result cache in `directory` (see gpunetsim study)")
	f.BoolVar(&r.fresh, "fresh", false, "with --cache: simulate every point again")
}

// noteTo is stderr for notes, or nil under -q.
func noteTo(quiet bool, stderr io.Writer) io.Writer {
	if quiet {
		return nil
	}
	return stderr
}

// runAsStudy runs gpunetsim run's experiment through the study machinery:
// sweeps, and the cache when --cache is given.
func runAsStudy(s *session, e exp.Experiment, o runOptions, stderr io.Writer) (*report.Result, error) {
	if o.trace != "" {
		return nil, badInput(errors.New("--trace: a trace records one configuration's simulations; drop --sweep and --cache to trace"))
	}
	if o.study.fresh && o.study.cache == "" {
		return nil, badInput(errors.New("--fresh: needs --cache"))
	}
	f := studyFlags{load: o.load, sweeps: o.study.sweeps, cache: o.study.cache, fresh: o.study.fresh, quiet: o.quiet}
	var sweeps []params.Sweep
	for _, spec := range f.sweeps {
		sw, err := params.ParseSweep(spec)
		if err != nil {
			return nil, badInput(fmt.Errorf("--sweep: %w", err))
		}
		sweeps = append(sweeps, sw)
	}
	st, err := study.Single(e, f.load, sweeps)
	if err != nil {
		return nil, badInput(err)
	}
	version, err := programVersion()
	if err != nil {
		return nil, err
	}
	plan, err := expandPlan(st, version, noteTo(f.quiet, stderr))
	if err != nil {
		return nil, err
	}
	opts := study.Options{Fresh: f.fresh, Parallel: plan.Runs[0].Config.Run.Parallel}
	if f.cache != "" {
		if err := checkCacheFlags(f.cache, f.fresh); err != nil {
			return nil, err
		}
		missing := missingDirs(f.cache)
		if opts.Cache, err = study.OpenCache(f.cache, version); err != nil {
			return nil, badInput(fmt.Errorf("--cache: %w", err))
		}
		s.createdDirs(missing)
		opts.Cache.Warn = func(msg string) { fmt.Fprintln(stderr, "gpunetsim: "+msg) }
		s.onInterrupt(func() string { opts.Cache.Close(); return "" })
	}
	bar := newStudyProgress(stderr, f.quiet)
	opts.Progress = bar.report
	out, err := study.Execute(context.Background(), plan, opts)
	bar.close()
	if err != nil {
		return nil, err
	}
	if f.cache != "" && e.Points == nil && !f.quiet {
		// It ran again each time, "0 cached", without a word why (said
		// after a run that succeeded: a failure stays one line).
		fmt.Fprintf(stderr, "gpunetsim: note: --cache %s: %s runs as one whole simulation, which the cache does not hold (only experiments run point by point are cached; docs/studies.md): it is simulated again each time\n", f.cache, e.Name)
	}
	return out.Results[0], nil
}
