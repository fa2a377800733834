package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/gpunetsim/gpunetsim/exp"
	"github.com/gpunetsim/gpunetsim/exp/params"
	"github.com/gpunetsim/gpunetsim/exp/report"
	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/trace"
)

// defaultExperiment is what gpunetsim runs without arguments.
const defaultExperiment = "allreduce"

// presetDocs describes the built-in hardware presets (hw/cluster).
var presetDocs = map[string]string{
	"gputn":         "GPU-TN dissertation Table 6.1: APU-style node, 24-CU GCN3 at 1.5GHz, 1.5us launch and teardown, 100ns/100Gbps star, 16 trigger entries",
	"xtq":           "XTQ dissertation Table 4.1: 8 cores at 3GHz, DDR3-1600, 24 CUs at 1GHz, no fixed launch overheads",
	"compnet":       "ComP-Net dissertation Table 5.1: 16 cores at 4GHz, DDR4-2400, 12 CUs at 1.5GHz, dGPU memory mode",
	"compnet_paper": "ComP-Net PACT'18 Table 1: as compnet with a 16kB V-cache and 150-cycle L2",
	"gpurdma":       "GPUrdma facts (the GPUrdma paper): K40c (15 SMs, 32-thread warps) in dGPU mode, Connect-IB on FDR 56Gbps, PCIe Gen3 x16 via PLX",
	"gio":           "GIO cluster (the GIO slides): MI-25 (64 CUs at 1.5GHz, 484GB/s HBM) in dGPU mode, 56Gbps InfiniBand, PCIe Gen3 x16",
	"pulp":          "sPIN on the PULP accelerator (the SC'19 paper): the spin node with 4 clusters × 8 RISC-V cores at 1GHz, L1/L2 scratchpads, cluster DMAs",
	"spin":          "sPIN SST+gem5 setup (the SC'19 paper): 200Gbps, 2KiB packets, PCIe Gen4 x32, 32 HPUs at 800MHz, 50GiB/s NIC memory, i7-4770 host",
	"h100-cx7":      "today: HGX H100 node, 8 GPUs on NVLink 4/NVSwitch, one ConnectX-7 400Gbps NIC per GPU, rail-optimised fat tree (docs/today.md)",
	"mi300a-ss11":   "today: El Capitan-class node, 4 MI300A APUs on Infinity Fabric, one Slingshot-11 200Gbps NIC each, dragonfly (docs/today.md)",
	"gh200":         "today: Alps-style node, 4 GH200 superchips, one Slingshot-11 200Gbps NIC each, dragonfly (docs/today.md)",
	"gh200-cx7":     "today: one GH200 superchip and one ConnectX-7 200Gbps NIC per node, fat tree (docs/today.md)",
}

// addSimCommands registers run, presets, params and experiments, and the
// root command's own flags.
func addSimCommands(root *cobra.Command, stdout, stderr io.Writer) {
	root.Flags().String("out-dir", ".", "directory for "+defaultExperiment+".csv and "+defaultExperiment+".svg")
	root.Long = `gpunetsim simulates GPU clusters under different networking strategies
(CPU, HDN, GDS, GPU-TN, ...) and compares them.

Without arguments it runs the strong-scaled allreduce on the gputn preset over
2, 4, 8, 16, 32 and 64 nodes, prints the comparison and writes allreduce.csv
and allreduce.svg. "gpunetsim run" runs any experiment with any parameters.`
	root.AddCommand(newSensitivityCmd(stdout, stderr))
	root.AddCommand(newRunCmd(stdout, stderr), newPresetsCmd(stdout), newParamsCmd(stdout), newConfigCmd(stdout), newExperimentsCmd(stdout),
		newStudyCmd(stdout, stderr), newReportCmd(stdout, stderr), newValidateCmd(stdout, stderr), newTodayCmd(stdout, stderr))
}

// runDefault runs the default experiment at a quick sweep and writes its
// CSV and plot into --out-dir.
func runDefault(cmd *cobra.Command, stdout, stderr io.Writer) error {
	dir, err := cmd.Flags().GetString("out-dir")
	if err != nil {
		return err
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return badInput(fmt.Errorf("--out-dir %s: not an existing directory", dir))
	}
	return runExperiment(cmd, defaultOptions(dir), stdout, stderr)
}

// defaultOptions is what the no-argument run does: the default experiment
// on the gputn preset at the quick sweep, saving CSV and SVG into dir.
func defaultOptions(dir string) runOptions {
	return runOptions{
		experiment: defaultExperiment, // on its default sweep, the same as "run allreduce"
		csv:        filepath.Join(dir, defaultExperiment+".csv"),
		plot:       filepath.Join(dir, defaultExperiment+".svg"),
	}
}

// runOptions is everything one experiment run needs from the command line.
type runOptions struct {
	experiment             string
	load                   params.Options
	csv, json, plot, trace string
	quiet                  bool
	study                  runStudyFlags
	// memName is the experiment whose memory need is checked before the
	// run (default: the experiment run).
	memName     string
	traceFilter traceFlags
	// lines shows progress as plain lines when stderr is no terminal
	// (no bar): for commands made of many runs (sensitivity), which
	// would otherwise say nothing for minutes.
	lines bool
}

func newRunCmd(stdout, stderr io.Writer) *cobra.Command {
	var o runOptions
	var seed uint64
	cmd := &cobra.Command{
		Use:   "run <experiment>",
		Short: "Run an experiment and print (and optionally save) its report",
		Long: `Run an experiment. Parameters start from the preset (--preset, else the
config file's run.preset, else gputn), then the TOML config file (--config),
then each --set name=value in order, then --seed. "gpunetsim params" lists
every name with its unit; values take units: --set link.bandwidth=200Gbps,
--set gpu.launch=2us, --set allreduce.size=64KiB, --set allreduce.nodes=2-64/2.

The report (tables, notes, the parameters the experiment reads and those you
set, the seed and provenance; lines within 120 columns) goes to stdout;
--csv, --json, --plot (.svg, .png or .pdf) and --trace (Chrome trace JSON
for ui.perfetto.dev) save files. Files are written only when the run
succeeds, and each appears whole or not at all.`,
		Example: `  gpunetsim run allreduce --set allreduce.nodes=2,4,8 --csv out.csv
  gpunetsim run latency --preset gputn --set link.bandwidth=200Gbps --json lat.json
  gpunetsim run allreduce --config my.toml --seed 7 --plot speedup.svg --trace run.json`,
		Args: exactArgs(1, "an experiment name (gpunetsim experiments lists them)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.experiment = args[0]
			if cmd.Flags().Changed("seed") {
				o.load.Edit = func(cfg *exp.Config) error { cfg.Run.Seed = seed; return nil }
			}
			return runExperiment(cmd, o, stdout, stderr)
		},
	}
	f := cmd.Flags()
	addLoadFlags(cmd, &o.load)
	f.Uint64Var(&seed, "seed", 0, "seed of every random stream (same as --set run.seed=N)")
	f.StringVar(&o.csv, "csv", "", "write the tables as CSV to `file`")
	f.StringVar(&o.json, "json", "", "write the whole result as JSON to `file` (- for standard output)")
	f.StringVar(&o.plot, "plot", "", "draw the result's plot to `file` (.svg, .png or .pdf)")
	f.StringVar(&o.trace, "trace", "", "write Chrome trace events of every simulated agent to `file`")
	addTraceFilterFlags(cmd, &o.traceFilter)
	f.BoolVarP(&o.quiet, "quiet", "q", false, "print nothing on success (no report, no progress bar)")
	addRunStudyFlags(cmd, &o.study)
	return cmd
}

// addLoadFlags adds --preset, --config and --set to cmd.
func addLoadFlags(cmd *cobra.Command, o *params.Options) {
	f := cmd.Flags()
	f.StringVar(&o.Preset, "preset", "", "hardware preset: "+strings.Join(cluster.PresetNames(), ", ")+" (default: the config file's run.preset, else "+params.DefaultPreset+")")
	f.Var(&configFlag{o: o}, "config", "TOML configuration `file` (tables [run], [link], [gpu], ... as gpunetsim params names them; - for standard input)")
	f.StringArrayVar(&o.Sets, "set", nil, "override a parameter: `name=value`, with units (repeatable)")
}

// configFlag is --config: the file's name in o.File, its content read
// once (o.Doc) when the command starts (readConfigFlag), "-" from
// standard input.
type configFlag struct{ o *params.Options }

func (c *configFlag) String() string {
	if c.o == nil {
		return ""
	}
	return c.o.File
}

func (c *configFlag) Set(v string) error { c.o.File, c.o.Doc = v, nil; return nil }

// Type is "string", as a string flag's: the session's checks of given
// input and empty flags take it as one.
func (c *configFlag) Type() string { return "string" }

// readConfigFlag reads cmd's --config, when given, once: every
// configuration the command loads from it (a study's points) then has
// the same text, and "-" reads standard input. A submitted study's tasks
// read the file again, so there "-" is refused.
func readConfigFlag(cmd *cobra.Command) error {
	fl := cmd.Flags().Lookup("config")
	if fl == nil || !fl.Changed {
		return nil
	}
	c, ok := fl.Value.(*configFlag)
	if !ok {
		return nil
	}
	if c.o.File == "-" && cmd.Name() == "submit" {
		return badInput(errors.New("--config -: the submitted tasks read the configuration again, without this standard input: give a file"))
	}
	if fi, err := os.Stat(c.o.File); err == nil && cmd.Name() == "submit" && !fi.Mode().IsRegular() && !fi.IsDir() {
		// A FIFO or <(...): a task waited for a writer that never came,
		// or read nothing and ran the defaults.
		return badInput(fmt.Errorf("--config %s: not a regular file (%v): the submitted tasks read the configuration again, elsewhere: give a file", c.o.File, fi.Mode().Type()))
	}
	if err := c.o.ReadFile(cmd.InOrStdin()); err != nil {
		return badInput(err)
	}
	return nil
}

// maxArgs is cobra.MaximumNArgs with a bad-input error that says what is
// wanted.
func maxArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > n {
			return badInput(fmt.Errorf("%s: want at most %s, got %d arguments", cmd.CommandPath(), what, len(args)))
		}
		return nil
	}
}

// groupCmd makes cmd a group of subcommands: without one, or with an
// unknown one, it is bad input naming the subcommands.
func groupCmd(cmd *cobra.Command) *cobra.Command {
	cmd.Args = func(c *cobra.Command, args []string) error {
		var names []string
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() {
				names = append(names, sub.Name())
			}
		}
		if len(args) == 0 {
			return badInput(fmt.Errorf("%s: want a subcommand: %s (see %s --help)", c.CommandPath(), strings.Join(names, ", "), c.CommandPath()))
		}
		return badInput(fmt.Errorf("%s: unknown subcommand %q: want one of %s", c.CommandPath(), args[0], strings.Join(names, ", ")))
	}
	cmd.RunE = func(*cobra.Command, []string) error { return nil } // Args has already refused
	return cmd
}

// exactArgs is cobra.ExactArgs with a bad-input error that says what is wanted.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return badInput(fmt.Errorf("%s: want %s, got %d arguments", cmd.CommandPath(), what, len(args)))
		}
		return nil
	}
}

// runExperiment validates everything, runs the experiment, prints the
// report and writes the requested files. Bad input is reported before
// anything runs.
func runExperiment(cmd *cobra.Command, o runOptions, stdout, stderr io.Writer) error {
	e, err := exp.Lookup(o.experiment)
	if err != nil {
		return badInput(err)
	}
	if o.study.fresh && o.study.cache == "" {
		// Without a cache every point is simulated anyway: a --fresh the
		// user meant for a cache they forgot to name would be ignored.
		return badInput(errors.New("--fresh: needs --cache"))
	}
	return runWith(sessionOf(cmd), e, o, stdout, stderr)
}

// configInputs registers the files a configuration reads: the --config
// file, the ML workload table (ml.table) and the MoE routing table
// (moe.routing), so that no output replaces
// them.
func configInputs(s *session, file string, cfg exp.Config) error {
	if err := s.input("--config", file); err != nil {
		return err
	}
	if err := s.input("ml.table", cfg.ML.Table); err != nil {
		return err
	}
	return s.input("moe.routing", cfg.MoE.Routing)
}

// runOutputs are the files a run writes, reserved before it starts.
type runOutputs struct {
	csv, json, plot, trace *outFile
	csvMeta                *outFile // the CSV's sidecar (report.CSVSidecar)
}

// reserveOutputs checks every output path and creates its temporary file,
// before the run.
func reserveOutputs(s *session, o runOptions) (runOutputs, error) {
	var r runOutputs
	if o.plot != "" {
		if o.plot == "-" {
			return r, badInput(errors.New("--plot -: a plot's format comes from its file name (.svg, .png or .pdf), which standard output has not: give a file name (--json - writes the result to standard output)"))
		}
		if _, err := report.PlotFormat(o.plot); err != nil {
			return r, badInput(fmt.Errorf("--plot: %w", err))
		}
	}
	for _, f := range []struct {
		flag, path string
		out        **outFile
	}{{"--csv", o.csv, &r.csv}, {"--json", o.json, &r.json}, {"--plot", o.plot, &r.plot}, {"--trace", o.trace, &r.trace}} {
		if f.path == "" {
			continue
		}
		out, err := s.reserve(f.flag, f.path)
		if err != nil {
			return r, err
		}
		*f.out = out
	}
	if r.csv != nil {
		meta, err := s.reserveCSVFiles(r.csv)
		if err != nil {
			return r, err
		}
		r.csvMeta = meta
	}
	return r, nil
}

// runWith is runExperiment after the experiment is found.
func runWith(s *session, e exp.Experiment, o runOptions, stdout, stderr io.Writer) error {
	cfg, err := params.Load(o.load)
	if err != nil {
		return badInput(err)
	}
	if err := e.CheckRun(cfg); err != nil {
		return badInput(err)
	}
	memName := o.memName
	if memName == "" {
		memName = e.Name
	}
	if err := checkRunMemory(memName, cfg); err != nil {
		return err
	}
	filter, err := o.traceFilter.filter(o.trace)
	if err != nil {
		return err
	}
	if err := configInputs(s, o.load.File, cfg); err != nil {
		return err
	}
	outs, err := reserveOutputs(s, o)
	if err != nil {
		return err
	}

	env := exp.Env{}
	var tw *trace.Writer
	if o.trace != "" {
		tw = trace.New()
		env.Tracer = tw
		if filter != nil {
			filter.Next = tw
			env.Tracer = filter
		}
	}
	var bar *progress
	if !o.quiet {
		bar = newProgress(stderr)
	}
	if bar != nil {
		env.Progress = bar.report
		// The bar and its ETA weigh each point by its expected work.
		env.Work = func(c exp.Config) float64 { return exp.ExpectedWork(e.Name, c) }
	}
	if announced := announceRun(stderr, memName, cfg); (announced || o.lines) && bar == nil && !o.quiet {
		env.Progress = progressLines(stderr)
	}
	var res *report.Result
	if o.study.active() {
		bar.close()
		res, err = runAsStudy(s, e, o, stderr)
	} else {
		res, err = e.Run(cfg, env)
		bar.close()
	}
	if err != nil {
		if o.study.active() {
			return err // the study names its task, the experiment first
		}
		return fmt.Errorf("%s: %w", e.Name, err)
	}
	if res == nil {
		return fmt.Errorf("%s: the experiment returned no result", e.Name)
	}
	if err := res.CheckTimes(); err != nil {
		return fmt.Errorf("%s: %w", e.Name, err)
	}
	if res.Experiment == "" {
		res.Experiment = e.Name
	}
	if len(res.Params) == 0 {
		res.Params = params.Record(cfg)
	}
	if res.Seed == 0 {
		res.Seed = cfg.Run.Seed
	}

	if o.plot != "" && res.Plot == nil {
		return badInput(fmt.Errorf("--plot %s: experiment %s draws no plot; use --csv or --json", o.plot, e.Name))
	}
	res.Provenance = s.provenance()
	files, err := render(s, o, outs, res, tw)
	if err != nil {
		return err
	}
	warnTraceSize(stderr, files, outs.trace, filter, o.traceFilter.warnAt)
	if !o.quiet {
		// The parameters the experiment reads: those of the experiment a
		// wrapper runs (sensitivity), not of the wrapper's name.
		own, hardware := exp.ParamSections(memName)
		if err := report.WriteTextFor(stdout, res, own, hardware); err != nil {
			return err
		}
	}
	var names []string
	var list []pending
	for _, r := range files {
		list = append(list, pending{r.out, func(w io.Writer) error { _, err := w.Write(r.data); return err }})
		names = append(names, r.out.path)
	}
	if err := s.commitAll(list); err != nil {
		return err
	}
	if !o.quiet && len(names) > 0 {
		fmt.Fprint(stdout, "\n"+report.Wrap("wrote ", "  ", strings.Join(names, ", ")))
	}
	return nil
}

// rendered is a file's content waiting to be committed.
type rendered struct {
	out  *outFile
	data []byte
}

// render encodes every requested file in memory, so that an encoding error
// leaves no file behind.
func render(s *session, o runOptions, outs runOutputs, res *report.Result, tw *trace.Writer) ([]rendered, error) {
	list, err := renderCSV(s, outs.csv, outs.csvMeta, res)
	if err != nil {
		return nil, err
	}
	add := func(out *outFile, write func(io.Writer) error) error {
		if out == nil {
			return nil
		}
		var b bytes.Buffer
		if err := write(&b); err != nil {
			return fmt.Errorf("%s: %w", out.path, err)
		}
		list = append(list, rendered{out, b.Bytes()})
		return nil
	}
	err = errors.Join(
		add(outs.json, func(w io.Writer) error { return report.WriteJSON(w, res) }),
		add(outs.plot, func(w io.Writer) error {
			format, err := report.PlotFormat(o.plot)
			if err != nil {
				return err
			}
			return report.WritePlot(w, res, format)
		}),
		add(outs.trace, func(w io.Writer) error { return tw.EncodeWith(w, res.Provenance.Pairs()) }),
	)
	return list, err
}

// renderCSV renders res as one CSV file per table and the sidecar JSON
// (report.CSVFiles): the main table goes to the reserved --csv file, the
// sidecar to its reserved file, and the others, named after their tables
// only now that the run has made them, are reserved beside it (their
// names were checked before the run: reserveCSVFiles).
func renderCSV(s *session, main, meta *outFile, res *report.Result) ([]rendered, error) {
	if main == nil {
		return nil, nil
	}
	files, err := report.CSVFiles(main.path, res)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", main.path, err)
	}
	last := len(files) - 1
	list := []rendered{{main, files[0].Data}, {meta, files[last].Data}}
	for _, f := range files[1:last] {
		out, err := s.reserveFile("--csv", f.Path)
		if err != nil {
			return nil, err
		}
		list = append(list, rendered{out, f.Data})
	}
	return list, nil
}

// progress draws a progress bar on stderr when stderr is a terminal.
type progress struct {
	out io.Writer
	mu  sync.Mutex
	bar *progressbar.ProgressBar
}

// newProgress returns a progress whose report is nil unless w is a terminal.
func newProgress(w io.Writer) *progress {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return &progress{out: w}
}

// report is exp.Env.Progress.
func (p *progress) report(done, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar == nil {
		// Units of expected work, not points: the percentage and the ETA
		// weigh large points more; a count of units would mean nothing.
		p.bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(p.out), progressbar.OptionSetDescription("simulating"),
			progressbar.OptionClearOnFinish(), progressbar.OptionSetPredictTime(true))
	}
	p.bar.Set(done)
}

// close removes the bar from the terminal.
func (p *progress) close() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.Finish()
		p.bar.Clear()
	}
}

func newPresetsCmd(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "presets",
		Short: "List the hardware presets",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var rows [][2]string
			for _, name := range cluster.PresetNames() {
				rows = append(rows, [2]string{name, presetDocs[name]})
			}
			return writeNamed(stdout, rows)
		},
	}
}

func newParamsCmd(stdout io.Writer) *cobra.Command {
	var o params.Options
	cmd := &cobra.Command{
		Use:   "params",
		Short: "List every parameter with its type, value, source and meaning",
		Long: `List every parameter of the configuration that --preset, --config and --set
produce (by default the gputn preset): name, value syntax, value with units,
source and description. The source says where a default comes from: DOC (the
literature), DEFAULT (a modelling choice of this simulator) or RUN (run setup).`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := params.Load(o)
			if err != nil {
				return badInput(err)
			}
			return writeParamTable(stdout, params.List(cfg))
		},
	}
	addLoadFlags(cmd, &o)
	return cmd
}

func newConfigCmd(stdout io.Writer) *cobra.Command {
	var o params.Options
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Print the effective configuration (preset, --config file, --set) as TOML for --config",
		Long: `Print the configuration that --preset, --config and --set produce, every
parameter at its effective value, as a TOML file that --config reads back to
the same configuration. Each value comes with its source and meaning as a comment
(beside it, or above it where the line would pass 120 columns).

  gpunetsim config --preset xtq --set link.bandwidth=200Gbps > my.toml
  gpunetsim run allreduce --config my.toml`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := params.Load(o)
			if err != nil {
				return badInput(err)
			}
			_, err = stdout.Write(params.TOML(cfg))
			return err
		},
	}
	addLoadFlags(cmd, &o)
	return cmd
}

func newExperimentsCmd(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "experiments",
		Short: "List the experiments that gpunetsim run accepts",
		Args:  exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var rows [][2]string
			for _, e := range exp.List() {
				rows = append(rows, [2]string{e.Name, e.Summary})
			}
			return writeNamed(stdout, rows)
		},
	}
}

// paramValueWidth caps the VALUE column: a few list values (the matrix's
// strategy list) run past 100 characters and would otherwise push every
// row's source and meaning that far right.
const paramValueWidth = 26

// paramLineWidth is the widest line params prints, the text report's
// width.
const paramLineWidth = 120

// writeParamTable prints one aligned row per parameter, no line wider
// than paramLineWidth columns. A row's first line holds its name, type,
// value and source (what one greps for) and the description's start; the
// description wraps onto continuation lines under its column. A value
// wider than the VALUE column breaks after its commas onto lines of its
// own under that column, and its source and description follow on the
// next line, so it does not push the other rows' columns right.
func writeParamTable(w io.Writer, ps []params.Info) error {
	nameW, typeW := len("NAME"), len("TYPE")
	for _, p := range ps {
		nameW, typeW = max(nameW, len(p.Name)), max(typeW, len(p.Type))
	}
	valueW := len("VALUE")
	for _, p := range ps {
		if len(p.Value) <= paramValueWidth {
			valueW = max(valueW, len(p.Value))
		}
	}
	const srcW = len("DEFAULT")
	valueCol := nameW + 2 + typeW + 2
	docCol := valueCol + valueW + 2 + srcW + 2
	docIndent := strings.Repeat(" ", docCol)
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%-*s  %-*s  %-*s  %-*s  DOC\n", nameW, "NAME", typeW, "TYPE", valueW, "VALUE", srcW, "SRC")
	for _, p := range ps {
		if p.Value == "" {
			p.Value = `""` // an empty string, not a missing column
		}
		head := fmt.Sprintf("%-*s  %-*s  ", nameW, p.Name, typeW, p.Type)
		if len(p.Value) > valueW {
			for i, part := range breakList(p.Value, paramLineWidth-valueCol) {
				if i > 0 {
					head = strings.Repeat(" ", valueCol)
				}
				bw.WriteString(head + part + "\n")
			}
			head = strings.Repeat(" ", valueCol+valueW+2)
		} else {
			head += fmt.Sprintf("%-*s  ", valueW, p.Value)
		}
		head += fmt.Sprintf("%-*s  ", srcW, p.Src)
		// "(no source)" stays on one line, for grep.
		doc := strings.ReplaceAll(p.Doc, "(no source)", "(no\x00source)")
		bw.WriteString(strings.ReplaceAll(report.WrapWidth(head, docIndent, doc, paramLineWidth), "\x00", " "))
	}
	return bw.Flush()
}

// breakList splits a comma-separated value into pieces of at most width
// characters, each ending after a comma (a piece without a comma that is
// still too wide is cut).
func breakList(v string, width int) []string {
	var out []string
	for len(v) > width {
		cut := strings.LastIndexByte(v[:width], ',') + 1
		if cut == 0 {
			cut = width
		}
		out = append(out, v[:cut])
		v = v[cut:]
	}
	return append(out, v)
}

// writeNamed prints name and description pairs, the names in a column
// and each description wrapped under its own column, no line wider than
// paramLineWidth.
func writeNamed(w io.Writer, rows [][2]string) error {
	nameW := 0
	for _, r := range rows {
		nameW = max(nameW, len(r[0]))
	}
	indent := strings.Repeat(" ", nameW+2)
	bw := bufio.NewWriter(w)
	for _, r := range rows {
		bw.WriteString(report.WrapWidth(fmt.Sprintf("%-*s  ", nameW, r[0]), indent, r[1], paramLineWidth))
	}
	return bw.Flush()
}
