package main

import (
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpunetsim/gpunetsim/datatype"
	"github.com/gpunetsim/gpunetsim/datatype/apps"
	"github.com/gpunetsim/gpunetsim/exp/report"
	"github.com/gpunetsim/gpunetsim/unit"
)

// newDDTCmd builds the "ddt" command group (MPI derived datatypes).
func newDDTCmd(stdout io.Writer) *cobra.Command {
	cmd := &cobra.Command{Use: "ddt", Short: "MPI derived-datatype engine tools"}
	cmd.AddCommand(newDDTInspectCmd(stdout), newDDTBenchCmd(stdout))
	return groupCmd(cmd)
}

func newDDTInspectCmd(stdout io.Writer) *cobra.Command {
	var count, head int
	cmd := &cobra.Command{
		Use:   "inspect '<type text>'",
		Short: "Print a datatype's size, bounds, extents, block count and type map head",
		Long: `Inspect parses a datatype in its text form (docs/ddt.md), e.g.
  vector(4,2,3)<float64>
  struct(2;1,1;0,8;float64,int8)
  subarray(2,C;6,8;2,3;1,4)<float64>
and prints its attributes and the first blocks of its flattened type map
(byte offset from the origin, length), merged as an MPI iovec list.`,
		Args: exactArgs(1, "one datatype in text form, e.g. 'vector(4,2,3)<float64>'"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if count < 0 {
				return badInput(fmt.Errorf("--count %d: must not be negative", count))
			}
			if head < 0 {
				return badInput(fmt.Errorf("--head %d: must not be negative", head))
			}
			t, err := datatype.Parse(args[0])
			if err != nil {
				return badInput(err)
			}
			return ddtInspect(stdout, t, count, head)
		},
	}
	cmd.Flags().IntVar(&count, "count", 1, "number of elements")
	cmd.Flags().IntVar(&head, "head", 16, "type-map blocks to print")
	return cmd
}

// maxInspectBlocks bounds the blocks ddt inspect counts, and
// maxInspectSteps the elements its type-map walk visits (about 3 s): a
// count of 10^12, or blocks merged from 10^12 elements, answer in bounded
// time with "more than".
const (
	maxInspectBlocks = 1 << 24
	maxInspectSteps  = 1 << 25
)

func ddtInspect(w io.Writer, t *datatype.Type, count, head int) error {
	c := t.Commit()
	packed, err := c.PackedSize(count)
	if err != nil {
		return badInput(err)
	}
	lo, hi, err := c.Span(count)
	if err != nil {
		return badInput(err)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "type\t%v\n", t)
	fmt.Fprintf(tw, "combiner\t%v\n", t.Combiner())
	fmt.Fprintf(tw, "count\t%d\n", count)
	fmt.Fprintf(tw, "size\t%d\n", t.Size())
	fmt.Fprintf(tw, "lb\t%d\n", t.LB())
	fmt.Fprintf(tw, "ub\t%d\n", t.UB())
	fmt.Fprintf(tw, "extent\t%d\n", t.Extent())
	fmt.Fprintf(tw, "true_lb\t%d\n", t.TrueLB())
	fmt.Fprintf(tw, "true_ub\t%d\n", t.TrueUB())
	fmt.Fprintf(tw, "true_extent\t%d\n", t.TrueExtent())
	fmt.Fprintf(tw, "alignment\t%d\n", t.Alignment())
	fmt.Fprintf(tw, "packed_size\t%d\n", packed)
	fmt.Fprintf(tw, "span\t[%d, %d)\n", lo, hi)
	fmt.Fprintf(tw, "loop_depth\t%d\n", c.Depth())
	blocks, more := 0, false
	var first [][2]int
	seq, truncated := t.BlocksWithin(count, maxInspectSteps)
	for off, n := range seq {
		if blocks == maxInspectBlocks {
			more = true
			break
		}
		if blocks < head {
			first = append(first, [2]int{off, n})
		}
		blocks++
	}
	switch {
	case more:
		fmt.Fprintf(tw, "blocks\tmore than %d (stopped counting)\n", blocks)
	case truncated():
		more = true
		fmt.Fprintf(tw, "blocks\tmore than %d (stopped counting after %d elements of the type map)\n", blocks, maxInspectSteps)
	default:
		fmt.Fprintf(tw, "blocks\t%d\n", blocks)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(first) > 0 {
		total := fmt.Sprint(blocks)
		if more {
			total = "more than " + total
		}
		fmt.Fprintf(w, "type map (offset length), first %d of %s:\n", len(first), total)
		for _, b := range first {
			fmt.Fprintf(w, "  %d %d\n", b[0], b[1])
		}
	}
	return nil
}

// maxBenchTime bounds ddt bench's measuring time per row and direction
// (about 20 rows run, twice each).
const maxBenchTime = time.Minute

func newDDTBenchCmd(stdout io.Writer) *cobra.Command {
	var size, memLimit, csvFile string
	var dur time.Duration
	var withApps bool
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Print pack/unpack throughput (GB/s) for the vector sweep and the application types",
		Long: `Bench measures pack and unpack throughput of the committed datatype
engine, in GB/s of packed data with warm caches, for byte vectors
vector(n, B, 2B)<byte> with blocks B of 4, 8, 16, 64, 256 and 2048 bytes
(--size packed), and for the application types of the SC'19 paper (typed
vectors and structs, named as such) at their benchmark sizes. Every call is
timed: "GB/s" is the median call's throughput, "p10" the 10th-percentile
(fast) call's, the statistics docs/ddt.md quotes. Each row is compared with
a memcpy of its own packed size, from a written (non-zero) buffer into a
separate one, measured in the same run with the same statistic; the copy
is datatype.Memcpy, which copies the way glibc's memcpy does (ordinary
stores up to 3/4 of the last-level cache, where Go's own copy switches to
non-temporal stores from 1 MiB and runs at about half the speed). A footer
records the program (version, commit), the host and its CPUs, the command
line and the wall time; --csv writes the table as CSV with that provenance
in the sidecar FILE.meta.json (stem of the CSV's name).`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := unit.ParseBytes(size)
			if err != nil {
				return badInput(fmt.Errorf("--size: %w", err))
			}
			if n < 4096 {
				return badInput(fmt.Errorf("--size %s: want at least 4KiB", size))
			}
			if dur <= 0 || dur > maxBenchTime {
				return badInput(fmt.Errorf("--time %v: must be in (0s, %v]", dur, maxBenchTime))
			}
			if err := checkBenchMemory(n, memLimit); err != nil {
				return badInput(err)
			}
			s := sessionOf(cmd)
			var outs []*outFile // the CSV and its sidecar, checked before the run
			if csvFile != "" {
				o, err := s.reserve("--csv", csvFile)
				if err != nil {
					return err
				}
				// As run --csv: the sidecar, and the table files an earlier
				// run's sidecar lists, removed once the new files are in place.
				meta, err := s.reserveCSVFiles(o)
				if err != nil {
					return err
				}
				outs = []*outFile{o, meta}
			}
			res, err := ddtBench(stdout, int(n), dur, withApps)
			if err != nil {
				return err
			}
			res.Provenance = s.provenance()
			fmt.Fprint(stdout, "\n"+report.Wrap("provenance: ", "  ", provenanceLine(res.Provenance)))
			if outs == nil {
				return nil
			}
			files, err := report.CSVFiles(csvFile, res)
			if err != nil {
				return err
			}
			if len(files) != len(outs) {
				return fmt.Errorf("ddt bench: %d CSV files for one table", len(files))
			}
			var list []pending
			var names []string
			for i, f := range files {
				list = append(list, pending{outs[i], writeBytes(f.Data)})
				names = append(names, f.Path)
			}
			if err := s.commitAll(list); err != nil {
				return err
			}
			fmt.Fprint(stdout, report.Wrap("wrote ", "  ", strings.Join(names, ", ")))
			return nil
		},
	}
	cmd.Flags().StringVar(&csvFile, "csv", "", "also write the table as CSV to `file` (provenance in the sidecar file.meta.json)")
	cmd.Flags().StringVar(&size, "size", "4MiB", "packed bytes per operation for memcpy and the vector sweep")
	cmd.Flags().DurationVar(&dur, "time", 300*time.Millisecond, "measuring time per row and direction")
	cmd.Flags().BoolVar(&withApps, "apps", true, "include the application datatypes")
	addMemLimitFlag(cmd, &memLimit)
	return cmd
}

// speed is the throughput of one benchmark row: per-call GB/s at the
// median call and at the 10th-percentile (fast) call, the statistics
// docs/ddt.md quotes.
type speed struct{ median, p10 float64 }

// measure runs op repeatedly for about d (after one warm-up call), timing
// every call, and returns the median and p10 throughput in GB/s of n bytes
// per call.
func measure(n int, d time.Duration, op func() error) (speed, error) {
	if err := op(); err != nil {
		return speed{}, err
	}
	var calls []time.Duration
	start := time.Now()
	for {
		t0 := time.Now()
		if err := op(); err != nil {
			return speed{}, err
		}
		calls = append(calls, time.Since(t0))
		if time.Since(start) >= d && len(calls) >= 5 {
			break
		}
	}
	slices.Sort(calls)
	gbs := func(t time.Duration) float64 { return float64(n) / max(t.Seconds(), 1e-12) / 1e9 }
	return speed{median: gbs(calls[len(calls)/2]), p10: gbs(calls[len(calls)/10])}, nil
}

// fillBytes writes a non-zero pattern, so no benchmark reads the shared
// zero page (which reads faster than real memory).
func fillBytes(b []byte) []byte {
	for i := range b {
		b[i] = byte(i*131 + 7)
	}
	return b
}

type benchRow struct {
	name   string
	c      *datatype.Committed
	count  int
	buflen int
}

// writeBytes is a pending output's writer of data.
func writeBytes(data []byte) func(io.Writer) error {
	return func(w io.Writer) error { _, err := w.Write(data); return err }
}

// provenanceLine is the text report's provenance footer: every pair but
// the program's name, "name value" joined by commas.
func provenanceLine(p *report.Provenance) string {
	var parts []string
	for _, kv := range p.Pairs() {
		if kv[0] != "program" {
			parts = append(parts, kv[0]+" "+kv[1])
		}
	}
	return strings.Join(parts, ", ")
}

// ddtBench measures the rows, prints the table to w and returns it as a
// result (one row per datatype, GB/s as numbers) with a note naming the
// CPUs it ran on; the caller adds the provenance.
func ddtBench(w io.Writer, size int, d time.Duration, withApps bool) (*report.Result, error) {
	res := &report.Result{Experiment: "ddt_bench",
		Notes: []string{fmt.Sprintf("wall-clock benchmark on the real CPU: %s/%s, GOMAXPROCS %d, %d logical CPUs; GB/s = median call, p10 = 10th-percentile (fast) call, each row beside a memcpy (glibc-style: datatype.Memcpy) of its own packed size",
			runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0), runtime.NumCPU())}}
	tab := report.Table{Name: "ddt_bench", Columns: []string{"datatype", "packed_bytes", "pack_GBps", "pack_p10_GBps",
		"unpack_GBps", "unpack_p10_GBps", "memcpy_GBps", "pack_over_memcpy", "unpack_over_memcpy"},
		Units: map[string]string{"packed_bytes": "B"}}
	var rows []benchRow
	for _, bl := range []int{4, 8, 16, 64, 256, 2048} {
		t, err := datatype.Vector(size/bl, bl, 2*bl, datatype.Byte())
		if err != nil {
			return nil, badInput(err)
		}
		rows = append(rows, benchRow{fmt.Sprintf("vector<byte> block=%dB stride=%dB", bl, 2*bl), t.Commit(), 1, t.TrueUB()})
	}
	if withApps {
		cases, err := apps.BenchCases()
		if err != nil {
			return nil, err
		}
		for _, c := range cases {
			rows = append(rows, benchRow{c.Name, c.Type.Commit(), c.Count, c.BufLen})
		}
	}
	memcpy := map[int]speed{} // by bytes: every row is compared with a copy of its own size
	copySpeed := func(n int) speed {
		if sp, ok := memcpy[n]; ok {
			return sp
		}
		src, dst := fillBytes(make([]byte, n)), make([]byte, n)
		sp, _ := measure(n, d, func() error { datatype.Memcpy(dst, src); return nil })
		memcpy[n] = sp
		return sp
	}
	row := func(name string, n int, p, u, m speed) {
		r3 := func(v float64) float64 {
			if x := v*1000 + 0.5; math.Abs(x) < 1<<53 {
				return float64(int64(x)) / 1000
			}
			return v // a ratio past int64 (a memcpy measured at 0) wrapped to -9.2e15
		}
		tab.Rows = append(tab.Rows, []any{name, n, r3(p.median), r3(p.p10), r3(u.median), r3(u.p10), r3(m.median),
			r3(p.median / m.median), r3(u.median / m.median)})
	}
	mc := copySpeed(size)
	row("memcpy", size, mc, mc, mc)
	for _, r := range rows {
		n, err := r.c.PackedSize(r.count)
		if err != nil {
			return nil, err
		}
		user, packed := fillBytes(make([]byte, r.buflen)), make([]byte, n)
		p, err := measure(n, d, func() error { _, err := r.c.Pack(packed, user, 0, r.count); return err })
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.name, err)
		}
		u, err := measure(n, d, func() error { _, err := r.c.Unpack(user, 0, packed, r.count); return err })
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.name, err)
		}
		row(r.name, n, p, u, copySpeed(n))
	}
	// The table as the text report prints one: within 120 columns.
	if err := report.WriteTable(w, tab); err != nil {
		return nil, err
	}
	fmt.Fprint(w, "\n"+report.Wrap("note: ", "      ", res.Notes[0]))
	res.Tables = []report.Table{tab}
	return res, nil
}
