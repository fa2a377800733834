package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/gpunetsim/gpunetsim/exp"
	"github.com/gpunetsim/gpunetsim/exp/report"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gpunetsim/gpunetsim/goal"
	"github.com/gpunetsim/gpunetsim/loggops"
	"github.com/gpunetsim/gpunetsim/sim"
)

const goalLong = `LogGOPS scale mode: simulate GOAL schedules (the LogGOPSim/Schedgen text
format) in the LogGOPS model, or generate them.

  gpunetsim goal run FILE [-L 700ns -o 200ns -g 100ns -G 0.04ns -O 0 -S 64KiB]
  gpunetsim goal run --gen ring:ranks=1024,size=8MiB     (no file: generated on the fly)
  gpunetsim goal gen ring --ranks 1024 --size 8MiB [--out FILE]

FILE may be "-" for standard input. Parameters can also be given as
--set L=700ns --set G=25GB/s (G and O are per-byte costs: a time per byte such
as 0.04ns or 2.5ps, or a bandwidth such as 25GB/s). calc durations in GOAL are
in units of --calc-unit (default 1ns, as in LogGOPSim).

Patterns (for gen and --gen, as name:key=value,...):
` + "%s" + `
Standard output is deterministic (identical for identical input and
parameters); wall time, events/s and memory go to standard error.`

// newGoalCmd builds the "goal" command group (LogGOPS scale mode).
func newGoalCmd(stdout, stderr io.Writer) *cobra.Command {
	var pats strings.Builder
	for _, p := range goal.Patterns {
		fmt.Fprintf(&pats, "  %-9s %s\n            %s\n", p.Name, p.Params, p.Doc)
	}
	cmd := &cobra.Command{
		Use:   "goal",
		Short: "Run and generate GOAL schedules in the LogGOPS model",
		Long:  fmt.Sprintf(goalLong, pats.String()),
	}
	cmd.AddCommand(newGoalRunCmd(stdout, stderr), newGoalGenCmd(stdout))
	return groupCmd(cmd)
}

// goalRunFlags are the flags of "goal run".
type goalRunFlags struct {
	L, o, g, G, O, S, calc string
	compat                 string
	set                    []string
	gen                    string
	csv, json              string
	hosts                  bool
	format                 string
	progress               time.Duration
	memLimit               string
}

func newGoalRunCmd(stdout, stderr io.Writer) *cobra.Command {
	var f goalRunFlags
	def := loggops.DefaultParams()
	cmd := &cobra.Command{
		Use:   "run [FILE]",
		Short: "Simulate a GOAL schedule (a file, - for stdin, or --gen PATTERN)",
		Args:  maxArgs(1, "one GOAL FILE (or - for standard input)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runGoal(cmd, args, &f, stdout, stderr)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.L, "latency", "L", def.L.String(), "LogGOPS L: wire latency")
	fl.StringVarP(&f.o, "overhead", "o", def.O.String(), "LogGOPS o: CPU overhead per message")
	fl.StringVarP(&f.g, "gap", "g", def.Gap.String(), "LogGOPS g: NIC gap between messages")
	fl.StringVarP(&f.G, "gap-per-byte", "G", "0.04ns", "LogGOPS G: NIC time per byte (or a bandwidth, e.g. 25GB/s)")
	fl.StringVarP(&f.O, "overhead-per-byte", "O", "0", "LogGOPS O: CPU time per byte")
	fl.StringVarP(&f.S, "eager", "S", def.Eager.String(), "LogGOPS S: largest eager message")
	fl.StringVar(&f.calc, "calc-unit", def.CalcUnit.String(), "duration of one unit of \"calc D\"")
	fl.StringVar(&f.compat, "compat", "none", "none: LogGOPSim's pitfalls fixed (program order, dependencies respected, empty messages free); loggopsim: LogGOPSim's semantics, pitfalls included (docs/goal.md)")
	fl.StringArrayVar(&f.set, "set", nil, "set a parameter, e.g. L=700ns (L, o, g, G, O, S, calc, compat); applied after the flags")
	fl.StringVar(&f.gen, "gen", "", "simulate a generated schedule instead of a file, e.g. ring:ranks=1024,size=8MiB")
	fl.StringVar(&f.csv, "csv", "", "write per-host finish times as CSV to this file")
	fl.StringVar(&f.json, "json", "", "write the result as JSON to this file")
	fl.BoolVar(&f.hosts, "hosts", false, "print every host's finish time (default: only up to 16 hosts)")
	fl.StringVar(&f.format, "format", "text", "standard output: text, or loggopsim (LogGOPSim's \"Host i: T\" / \"Maximum finishing time at host H: T\" lines, T in calc units)")
	fl.DurationVar(&f.progress, "progress", 0, "print a progress line to stderr at most this often (wall time; --progress alone: 10s)")
	fl.Lookup("progress").NoOptDefVal = "10s"
	addMemLimitFlag(cmd, &f.memLimit)
	return cmd
}

// flagNames is how an error names a flag: "-L/--latency", or "--compat"
// for a flag without a shorthand.
func flagNames(cmd *cobra.Command, name string) string {
	if fl := cmd.Flags().Lookup(name); fl != nil && fl.Shorthand != "" {
		return "-" + fl.Shorthand + "/--" + name
	}
	return "--" + name
}

// genPatternFlags are goal gen's flags that give a pattern's values.
var genPatternFlags = []string{"ranks", "size", "x", "y", "iters", "compute"}

// specWithFlags refuses pattern flags beside a full spec: the spec takes
// every value itself, and a flag there was ignored without a word (a
// silent wrong result: halo:ranks=8 --compute 20us wrote "calc 0").
func specWithFlags(fl *pflag.FlagSet, pattern, name string) error {
	var set []string
	example := ""
	for _, k := range genPatternFlags {
		if fl.Changed(k) {
			set = append(set, "--"+k)
			if example == "" {
				example = k + "=" + fl.Lookup(k).Value.String()
			}
		}
	}
	if len(set) == 0 {
		return nil
	}
	return fmt.Errorf("goal gen %s: %s beside a full spec, which takes every value itself: write %s into the spec, or give the name with flags (goal gen %s --%s %s)",
		pattern, strings.Join(set, ", "), example, name, strings.Split(example, "=")[0], strings.SplitN(example, "=", 2)[1])
}

func goalParams(cmd *cobra.Command, f *goalRunFlags) (loggops.Params, error) {
	p := loggops.DefaultParams()
	for _, kv := range []struct{ flag, name, val string }{
		{"latency", "L", f.L}, {"overhead", "o", f.o}, {"gap", "g", f.g},
		{"gap-per-byte", "G", f.G}, {"overhead-per-byte", "O", f.O}, {"eager", "S", f.S}, {"calc-unit", "calc", f.calc}, {"compat", "compat", f.compat},
	} {
		if err := p.Set(kv.name, kv.val); err != nil {
			return p, fmt.Errorf("%s: %w", flagNames(cmd, kv.flag), err)
		}
	}
	for _, s := range f.set {
		k, v, ok := strings.Cut(s, "=")
		if !ok {
			return p, fmt.Errorf("--set %q: want NAME=VALUE with NAME one of L, o, g, G, O, S, calc, compat", s)
		}
		if err := p.Set(strings.TrimSpace(k), strings.TrimSpace(v)); err != nil {
			return p, fmt.Errorf("--set %s: %w", s, err)
		}
	}
	return p, p.Validate()
}

func runGoal(cmd *cobra.Command, args []string, f *goalRunFlags, stdout, stderr io.Writer) error {
	start := time.Now()
	p, err := goalParams(cmd, f)
	if err != nil {
		return badInput(err)
	}
	if f.format != "text" && f.format != "loggopsim" {
		return badInput(fmt.Errorf("--format %q: want text or loggopsim", f.format))
	}
	if f.progress < 0 {
		return badInput(fmt.Errorf("--progress %v: want a positive wall-clock interval, e.g. 10s", f.progress))
	}
	if len(args) == 1 {
		if err := sessionOf(cmd).input("the GOAL schedule", args[0]); err != nil {
			return err
		}
	}
	var csvOut, csvMeta, jsonOut *outFile
	if f.json != "" {
		if jsonOut, err = sessionOf(cmd).reserve("--json", f.json); err != nil {
			return err
		}
	}
	if f.csv != "" {
		if csvOut, err = sessionOf(cmd).reserve("--csv", f.csv); err != nil {
			return err
		}
		// The CSV holds the table alone; its provenance and parameters go
		// in the sidecar, as for every CSV the program writes. Reserved
		// after the other outputs (reserveCSVFiles checks their names), it
		// also removes an earlier run's table files under the name.
		if csvMeta, err = sessionOf(cmd).reserveCSVFiles(csvOut); err != nil {
			return err
		}
	}
	var prog goal.Program
	switch {
	case f.gen != "" && len(args) > 0:
		return badInput(errors.New("goal run: give a FILE or --gen, not both"))
	case f.gen != "":
		g, err := goal.ParsePattern(f.gen)
		if err != nil {
			return badInput(fmt.Errorf("--gen: %w", err))
		}
		prog = g
	case len(args) == 1:
		var in io.Reader = os.Stdin
		if args[0] != "-" {
			fh, err := openInput(args[0])
			if err != nil {
				return err
			}
			defer fh.Close()
			in = fh
		}
		gf, err := goal.Open(guardSpool(in, args[0]))
		if err != nil {
			if errors.Is(err, goal.ErrSyntax) {
				return badInput(fmt.Errorf("%s: %w", args[0], err))
			}
			return err
		}
		defer gf.Close()
		prog = gf
	default:
		return badInput(errors.New("goal run: want a GOAL FILE (or - for stdin) or --gen PATTERN"))
	}
	est := loggops.EstimateRun(prog)
	if err := checkMemory(est, f.memLimit); err != nil {
		return badInput(err)
	}
	if announceWork(stderr, est) && f.progress == 0 {
		f.progress = 10 * time.Second
	}
	res, err := loggops.RunOptions(prog, p, progressOptions(f.progress, stderr))
	if err != nil {
		if errors.Is(err, goal.ErrSyntax) {
			return badInput(err) // found while streaming: nothing was printed or written
		}
		if he, ok := errors.AsType[*loggops.HorizonError](err); ok && he.Input {
			// One statement's own value is out of range whenever it runs:
			// bad input, found while streaming, naming where it came from.
			src := "--gen " + f.gen
			if len(args) == 1 {
				src = args[0]
			}
			return badInput(fmt.Errorf("%s: %w", src, err))
		}
		return err // a deadlocking schedule, a clock summed past the horizon: a failure of the run (exit 1)
	}
	n := prog.NumRanks()
	var outs []pending
	if csvOut != nil {
		prov := sessionOf(cmd).provenance()
		outs = append(outs, pending{csvOut, func(w io.Writer) error { return goalCSV(w, res) }},
			pending{csvMeta, func(w io.Writer) error { return goalCSVMeta(w, f.csv, prog, p, res, prov) }})
	}
	if jsonOut != nil {
		prov := sessionOf(cmd).provenance()
		outs = append(outs, pending{jsonOut, func(w io.Writer) error { return goalJSON(w, prog, p, res, prov) }})
	}
	if err := sessionOf(cmd).commitAll(outs); err != nil {
		return err
	}
	bw := bufio.NewWriter(stdout)
	if f.format == "loggopsim" {
		writeLogGOPSim(bw, res, p.CalcUnit, f.hosts)
	} else {
		fmt.Fprintf(bw, "ranks %d, %d CPU(s) and %d NIC(s) per host; %v\n", n, prog.NumCPU(), prog.NumNIC(), p)
		fmt.Fprintf(bw, "max finish %v (%d ps) at host %d\n", res.Max, int64(res.Max), res.MaxHost)
		fmt.Fprintf(bw, "events %d, operations %d, peak operations in memory %d\n", res.Events, res.Ops, res.PeakOps)
		if f.hosts || n <= 16 {
			for h, t := range res.Finish {
				fmt.Fprintf(bw, "host %d: %v\n", h, t)
			}
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	peak := peakRSS()
	total := time.Since(start)
	fmt.Fprintf(stderr, "wall %v (reading and checking %v, simulating %v), %.2f M events/s overall (%.2f M/s simulating), peak memory %.1f MB (%.0f B/rank)\n",
		total.Round(time.Millisecond), (total - res.Wall).Round(time.Millisecond), res.Wall.Round(time.Millisecond),
		float64(res.Events)/total.Seconds()/1e6, res.EventsPerSecond()/1e6, float64(peak)/1e6, float64(peak)/float64(max(n, 1)))
	return nil
}

func goalCSV(w io.Writer, res *loggops.Result) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("host,finish_ps\n")
	buf := make([]byte, 0, 32)
	for h, t := range res.Finish {
		buf = strconv.AppendInt(buf[:0], int64(h), 10)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, int64(t), 10)
		buf = append(buf, '\n')
		bw.Write(buf)
	}
	return bw.Flush()
}

// goalCSVMeta writes the sidecar of the --csv file: the provenance, which
// file holds the table and its columns, and the run's LogGOPS parameters.
func goalCSVMeta(w io.Writer, csvPath string, prog goal.Program, p loggops.Params, res *loggops.Result, prov *report.Provenance) error {
	meta := report.Meta{Experiment: "goal run", Provenance: prov,
		Tables: []report.MetaTable{{Name: "finish", File: filepath.Base(csvPath), Columns: []string{"host", "finish_ps"}, Rows: len(res.Finish)}},
		Notes: []string{
			fmt.Sprintf("ranks %d, %d CPU(s) and %d NIC(s) per host; LogGOPS parameters: %v", prog.NumRanks(), prog.NumCPU(), prog.NumNIC(), p),
			"finish_ps: the simulated time each host finishes, in picoseconds",
		}}
	b, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// goalResult is the JSON form of a run; every field but the provenance
// (program, command line, host, wall time) is deterministic.
type goalResult struct {
	Provenance *report.Provenance `json:"provenance,omitempty"`
	Ranks      int                `json:"ranks"`
	CPUs       int                `json:"cpus"`
	NICs       int                `json:"nics"`
	Params     string             `json:"params"`
	MaxPs      int64              `json:"max_ps"`
	Max        string             `json:"max"`
	MaxHost    int                `json:"max_host"`
	Events     uint64             `json:"events"`
	Ops        uint64             `json:"operations"`
	FinishPs   []int64            `json:"finish_ps"`
}

func goalJSON(w io.Writer, prog goal.Program, p loggops.Params, res *loggops.Result, prov *report.Provenance) error {
	fin := make([]int64, len(res.Finish))
	for i, t := range res.Finish {
		fin[i] = int64(t)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(goalResult{Provenance: prov, Ranks: prog.NumRanks(), CPUs: prog.NumCPU(), NICs: prog.NumNIC(), Params: p.String(),
		MaxPs: int64(res.Max), Max: res.Max.String(), MaxHost: res.MaxHost, Events: res.Events, Ops: res.Ops, FinishPs: fin})
}

// peakRSS returns the process's peak resident memory in bytes (VmHWM on
// Linux), or the Go runtime's total obtained memory elsewhere.
func peakRSS() uint64 {
	if kb := procKB("/proc/self/status", "VmHWM:"); kb > 0 {
		return kb * 1024
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.Sys
}

// procKB reads the "key: N kB" line of a /proc file; 0 if absent.
func procKB(path, key string) uint64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, key); ok {
			if fields := strings.Fields(rest); len(fields) > 0 {
				if kb, err := strconv.ParseUint(fields[0], 10, 64); err == nil {
					return kb
				}
			}
		}
	}
	return 0
}

// checkMemory refuses a run that cannot fit in the memory available now
// (Linux; elsewhere it lets the run try) rather than letting the operating
// system kill it part way: its ranks and the operations its windows hold
// at once (a linear all-to-all holds all of its N·2(N−1)).
func checkMemory(est loggops.Estimate, memLimit string) error {
	avail, what, err := flagMemoryLimit(memLimit)
	if err != nil {
		return err
	}
	need := est.Bytes()
	if avail == 0 || need <= float64(avail) {
		return nil
	}
	return fmt.Errorf("goal run: %d ranks holding about %.3g operations at once need about %s (≈%d B per rank, %d B per operation), more than the %s %s",
		est.Ranks, est.HeldOps, exp.FormatBytes(need), loggops.BytesPerRank, loggops.BytesPerHeldOp, exp.FormatBytes(float64(avail)), what)
}

// Work announced before a run: a run estimated at more than
// announceEvents events (about a minute at eventsPerSecond, the rate of
// an all-to-all's retries on one core) says so on stderr, with the
// estimate, and reports progress.
const (
	announceEvents  = 2e8
	eventsPerSecond = 3e6
)

// announceWork prints the estimate of a long run and reports whether it
// did; the run then shows progress.
func announceWork(w io.Writer, est loggops.Estimate) bool {
	if est.Events < announceEvents {
		return false
	}
	wall := time.Duration(est.Events / eventsPerSecond * float64(time.Second))
	fmt.Fprintf(w, "gpunetsim: note: goal run: %d ranks, %.3g statements, about %.2g events (more than %.2g): roughly %v at %.0f M events/s; progress every 10s (--progress)\n",
		est.Ranks, est.Stmts, est.Events, float64(announceEvents), wall.Round(time.Second), eventsPerSecond/1e6)
	return true
}

func newGoalGenCmd(stdout io.Writer) *cobra.Command {
	var (
		out              string
		ranks, x, y, its int
		size, compute    string
	)
	cmd := &cobra.Command{
		Use:   "gen PATTERN",
		Short: "Write a generated GOAL schedule (ring, recdoub, bcast, halo, alltoall)",
		Long: "Write a generated GOAL schedule to standard output or --out. PATTERN is a name\n" +
			"with flags (gen ring --ranks 8 --size 1MiB) or a full spec (gen ring:ranks=8,size=1MiB).\n" +
			"See 'gpunetsim goal --help' for the patterns.",
		Args: exactArgs(1, "a PATTERN, e.g. ring (with --ranks, --size) or ring:ranks=8,size=1MiB"),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, spec, hasSpec := strings.Cut(args[0], ":")
			kv := map[string]string{}
			fl := cmd.Flags()
			if hasSpec {
				if err := specWithFlags(fl, args[0], name); err != nil {
					return badInput(err)
				}
				g, err := goal.ParsePattern(args[0])
				if err != nil {
					return badInput(err)
				}
				_ = spec
				return genOut(sessionOf(cmd), g, out, stdout)
			}
			for _, k := range []string{"ranks", "x", "y", "iters"} {
				if fl.Changed(k) {
					v, _ := fl.GetInt(k)
					kv[k] = strconv.Itoa(v)
				}
			}
			if fl.Changed("size") {
				kv["size"] = size
			}
			if fl.Changed("compute") {
				kv["compute"] = compute
			}
			g, err := goal.NewPattern(name, kv)
			if err != nil {
				return badInput(err)
			}
			return genOut(sessionOf(cmd), g, out, stdout)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&out, "out", "", "write to this file instead of standard output")
	fl.IntVar(&ranks, "ranks", 0, "number of ranks")
	fl.StringVar(&size, "size", "8B", "message size (ring: total vector size)")
	fl.IntVar(&x, "x", 0, "halo: grid width")
	fl.IntVar(&y, "y", 0, "halo: grid height")
	fl.IntVar(&its, "iters", 1, "halo: iterations")
	fl.StringVar(&compute, "compute", "0", "halo: compute time per iteration, e.g. 20us")
	return cmd
}

// genOut writes g to stdout, or to the file out, reserved before the
// text is generated.
func genOut(s *session, g *goal.Generated, out string, stdout io.Writer) error {
	if out == "" || out == "-" { // standard output: no file, no disk to fill
		return goal.WriteText(stdout, g)
	}
	if err := checkGenDisk(g, out); err != nil {
		return badInput(err)
	}
	f, err := s.reserve("--out", out)
	if err != nil {
		return err
	}
	return f.commit(func(w io.Writer) error { return goal.WriteText(w, g) })
}

// minStmtBytes is the fewest bytes a statement of generated GOAL text
// takes ("l1: recv 8b from 1\n" is 19; labels and sizes grow with the
// schedule).
const minStmtBytes = 16

// checkGenDisk refuses a schedule whose text cannot fit in the free space
// of --out's file system, estimated from rank 0's statements times the
// ranks, rather than filling the disk part way.
func checkGenDisk(g *goal.Generated, out string) error {
	free := freeDisk(filepath.Dir(out))
	if free == 0 {
		return nil
	}
	stmts := float64(g.Window(0).Stmts) * float64(g.NumRanks())
	need := stmts * minStmtBytes
	if need <= float64(free) {
		return nil
	}
	return fmt.Errorf("--out %s: %s needs about %s of text (%.3g statements), more than the %s free there",
		out, g, exp.FormatBytes(need), stmts, exp.FormatBytes(float64(free)))
}

// Compile-time check that the result times are picoseconds.
var _ = sim.Picosecond

// progressOptions prints the simulated time, events and completed
// operations to w at most once per interval of wall time; none if 0.
func progressOptions(interval time.Duration, w io.Writer) loggops.Options {
	if interval <= 0 {
		return loggops.Options{}
	}
	start := time.Now()
	last := start
	var lastEvents uint64
	return loggops.Options{ProgressEvery: 1 << 20, Progress: func(st loggops.Status) {
		now := time.Now()
		if now.Sub(last) < interval {
			return
		}
		rate := float64(st.Events-lastEvents) / now.Sub(last).Seconds()
		fmt.Fprintf(w, "progress: wall %v, simulated %v, %d events (%.2f M/s), %d operations done\n",
			now.Sub(start).Round(100*time.Millisecond), st.Now, st.Events, rate/1e6, st.Ops)
		last, lastEvents = now, st.Events
	}}
}

// writeLogGOPSim prints the result as LogGOPSim does, so that scripts
// written for its output read ours: per-host "Host i: T" lines after
// "Times:" for 16 hosts or fewer (or with --hosts), else the maximum with
// its value in seconds assuming ns, as LogGOPSim prints it. T is in calc
// units, LogGOPSim's single time unit; a time that is not a whole number
// of units (a per-byte cost below one unit) keeps its exact decimals.
func writeLogGOPSim(w io.Writer, res *loggops.Result, unit sim.Time, hosts bool) {
	if hosts || len(res.Finish) <= 16 {
		fmt.Fprintln(w, "Times:")
		for h, t := range res.Finish {
			fmt.Fprintf(w, "Host %d: %s\n", h, inUnits(t, unit))
		}
		if len(res.Finish) <= 16 {
			return
		}
	}
	v := float64(res.Max) / float64(unit)
	fmt.Fprintf(w, "Maximum finishing time at host %d: %s (%s s)\n", res.MaxHost, inUnits(res.Max, unit), strconv.FormatFloat(v/1e9, 'g', 6, 64))
}

// inUnits prints t as a multiple of unit, exactly.
func inUnits(t, unit sim.Time) string {
	if t%unit == 0 {
		return strconv.FormatInt(int64(t/unit), 10)
	}
	return strings.TrimRight(new(big.Rat).SetFrac64(int64(t), int64(unit)).FloatString(decimals(unit)), "0")
}

// decimals is the number of decimal places that print any multiple of
// 1/unit exactly when unit is a power of ten (ps per unit), else 12.
func decimals(unit sim.Time) int {
	d := 0
	for u := unit; u > 1; u /= 10 {
		if u%10 != 0 {
			return 12
		}
		d++
	}
	return d
}
