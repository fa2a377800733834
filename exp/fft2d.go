package exp

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/gpunetsim/gpunetsim/datatype/apps"
	"github.com/gpunetsim/gpunetsim/exp/report"
	"github.com/gpunetsim/gpunetsim/goal"
	"github.com/gpunetsim/gpunetsim/loggops"
	spinmodel "github.com/gpunetsim/gpunetsim/model/spin"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
	"github.com/gpunetsim/gpunetsim/workload"
)

// FFT2DSpec holds the knobs of the FFT2D strong-scaling projection
// (the SC'19 paper).
type FFT2DSpec struct {
	N         int        `toml:"n" doc:"matrix side n (complex double elements)" src:"DOC"`
	Procs     []int      `toml:"procs" doc:"process counts P (each must divide n)" src:"DEFAULT"`
	FlopRate  float64    `toml:"flop_rate" doc:"host rate of the 1-D FFTs (5·n·log2 n flops per row), flop/s; a fallback: the paper measured the FFT time on its host, not recorded here" src:"DEFAULT"`
	L         sim.Time   `toml:"L" doc:"PLACEHOLDER, not the sPIN SC'17 paper's value: LogGOPS L, the wire latency of a message between two NICs" src:"DEFAULT"`
	O         sim.Time   `toml:"o" doc:"PLACEHOLDER, not the sPIN SC'17 paper's value: LogGOPS o, the CPU overhead of posting a send or a receive" src:"DEFAULT"`
	Gap       sim.Time   `toml:"g" doc:"PLACEHOLDER, not the sPIN SC'17 paper's value: LogGOPS g, the NIC's gap between two messages" src:"DEFAULT"`
	Bandwidth unit.Rate  `toml:"bandwidth" doc:"PLACEHOLDER, not the sPIN SC'17 paper's value: LogGOPS 1/G, the NIC's per-byte rate (O, the CPU per-byte cost, is 0)" src:"DEFAULT"`
	Eager     unit.Bytes `toml:"S" doc:"PLACEHOLDER, not the sPIN SC'17 paper's value: LogGOPS S, the largest message sent eagerly (larger ones rendezvous)" src:"DEFAULT"`
	SplitAt   int        `toml:"split_at" doc:"P of the compute/communication split" src:"DOC"`
}

func defaultFFT2D() FFT2DSpec {
	return FFT2DSpec{N: 20480, Procs: []int{16, 32, 64, 128, 256, 512, 1024}, FlopRate: 10e9,
		L: sim.Microsecond, O: 500 * sim.Nanosecond, Gap: 100 * sim.Nanosecond, Bandwidth: 25e9, Eager: 64 * unit.KiB, SplitAt: 64}
}

func (f FFT2DSpec) validate() error {
	var errs []error
	nOK := f.N >= 2 && f.N <= 1<<20
	if !nOK {
		errs = append(errs, fmt.Errorf("fft2d.n = %d: must be in [2, 1048576]", f.N))
	}
	if len(f.Procs) == 0 {
		errs = append(errs, errors.New("fft2d.procs is empty: give at least one process count"))
	}
	for _, p := range f.Procs {
		switch {
		case nOK && (p < 2 || p > 65536 || f.N%p != 0):
			errs = append(errs, fmt.Errorf("fft2d.procs contains %d: process counts must be in [2, 65536] and divide fft2d.n = %d", p, f.N))
		case !nOK && (p < 2 || p > 65536):
			// Its own range, without the bad fft2d.n: a line naming
			// fft2d.n is dropped as following from fft2d.n's (cmd
			// dropDerived).
			errs = append(errs, fmt.Errorf("fft2d.procs contains %d: process counts must be in [2, 65536]", p))
		}
	}
	if f.SplitAt < 2 || f.SplitAt > 65536 {
		errs = append(errs, fmt.Errorf("fft2d.split_at = %d: must be in [2, 65536], a process count (the split table's P)", f.SplitAt))
	}
	if !(f.FlopRate > 0) {
		errs = append(errs, fmt.Errorf("fft2d.flop_rate = %v: must be > 0", f.FlopRate))
	} else if min := f.minFlopRate(); f.N >= 2 && f.N <= 1<<20 && f.FlopRate < min {
		errs = append(errs, fmt.Errorf("fft2d.flop_rate = %g: must be ≥ %.3g flop/s for fft2d.n = %d and the smallest of fft2d.procs: slower, a rank's two rounds of 1-D FFTs pass the LogGOPS clock's end (2^60 ps, 13.3 days)",
			f.FlopRate, min, f.N))
	}
	errs = append(errs, sim.Negatives(sim.Named{Name: "fft2d.L", T: f.L}, sim.Named{Name: "fft2d.o", T: f.O}, sim.Named{Name: "fft2d.g", T: f.Gap})...)
	if f.Bandwidth <= 0 {
		errs = append(errs, fmt.Errorf("fft2d.bandwidth = %v: must be > 0", f.Bandwidth))
	}
	if f.Eager < 0 {
		errs = append(errs, fmt.Errorf("fft2d.S = %v: must be ≥ 0", f.Eager))
	}
	return errors.Join(errs...)
}

// fftFlops is the flops of one rank's 1-D FFTs over its n/P rows
// (5·n·log2 n per row).
func (f FFT2DSpec) fftFlops(p int) float64 {
	return float64(f.N/p) * 5 * float64(f.N) * math.Log2(float64(f.N))
}

// minFlopRate is the slowest flop rate at which every P's two rounds of
// FFTs, in series on a rank, fit in the LogGOPS clock: a bound derived
// from the work, so that no slower rate reaches the replay.
func (f FFT2DSpec) minFlopRate() float64 {
	most := 0.0
	for _, p := range f.Procs {
		if p >= 2 {
			most = max(most, f.fftFlops(p))
		}
	}
	return 2 * most / (float64(loggops.Horizon) / 1e12)
}

// fftTime is the time of flops at the configured rate, checked against
// the LogGOPS clock (a rate that passed validate cannot fail it).
func (f FFT2DSpec) fftTime(p int) (sim.Duration, error) {
	flops := f.fftFlops(p)
	d, ok := sim.CheckedPicoseconds(flops / f.FlopRate * 1e12)
	if !ok || d >= loggops.Horizon {
		return 0, sim.OverflowOf(fmt.Sprintf("fft2d P=%d: the 1-D FFTs of a rank (%.3g flops at fft2d.flop_rate = %g flop/s) take %.3g s, past the LogGOPS clock's end (2^60 ps)",
			p, flops, f.FlopRate, flops/f.FlopRate))
	}
	return d, nil
}

// fftCosts are one P's per-rank costs, in picoseconds.
type fftCosts struct {
	P        int
	Block    uint64       // bytes each rank sends each other rank per transpose
	FFT      sim.Duration // 1-D FFTs of a rank's n/P rows
	Unpack   sim.Duration // host unpack of one received block (CPU)
	Extra    sim.Duration // RW-CP: receive completion delay over plain RDMA (NIC)
	HostRecv sim.Duration // host variant: one block, RTR to unpacked
	RWCPRecv sim.Duration // RW-CP variant: one block, RTR to placed
	// Lanes is how many blocks the NIC processes at once: spin.hpus over
	// the packets of one block (a block's packets already spread over the
	// HPUs in the single-block simulation), at least 1. Each lane is a GOAL
	// cpu (1..Lanes) that runs its blocks' RW-CP delays one after another.
	Lanes int
}

// fftUnpackCosts simulates one transposed block per P on the sPIN NIC
// (payload-free: timing only), under host unpack and RW-CP.
func fftUnpackCosts(cfg Config, env Env) ([]fftCosts, error) {
	f := cfg.DDTFFT
	out := make([]fftCosts, len(f.Procs))
	type job struct{ i, m int }
	var jobs []job
	for i := range f.Procs {
		jobs = append(jobs, job{i, 0}, job{i, 1})
	}
	res := make([]workload.DDTResult, len(jobs))
	err := forEach(cfg, env, len(jobs), func(k int) error {
		j := jobs[k]
		p := f.Procs[j.i]
		c, err := apps.FFT2D(f.N, p, true)
		if err != nil {
			return err
		}
		pc := cfg
		pc.Run.Functional = false
		cl, err := newRun(pc, env, fmt.Sprintf("fft2d P=%d", p), 2, "")
		if err != nil {
			return err
		}
		defer cl.Engine.Close()
		m := []spinmodel.Method{spinmodel.HostUnpack, spinmodel.RWCP}[j.m]
		// One peer's block: count 1 of the receive type (n/P columns of n/P elements).
		res[k], err = workload.DDTUnpack{Type: c.Type.Commit(), Count: 1}.RunMethod(cl, m, cfg.DDT)
		if err != nil {
			return fmt.Errorf("fft2d P=%d %v: %w", p, m, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i, p := range f.Procs {
		h, w := res[2*i], res[2*i+1]
		r := f.N / p
		fft, err := f.fftTime(p)
		if err != nil {
			return nil, err
		}
		out[i] = fftCosts{P: p, Block: uint64(16 * r * r), FFT: fft,
			Unpack: h.Unpack, Extra: max(0, w.Time()-(h.Arrived-h.Start)), HostRecv: h.Time(), RWCPRecv: w.Time()}
		pkts := (16*r*r + int(cfg.Link.Payload) - 1) / int(cfg.Link.Payload)
		out[i].Lanes = min(max(1, cfg.Spin.HPUs/pkts), 254, p-1)
	}
	return out, nil
}

// fftProgram is the GOAL schedule of the 2-D FFT on P ranks: FFT, linear
// all-to-all transpose with the receive datatype's unpack after each
// receive, FFT, transpose back. Host unpack runs on cpu 0 (the host);
// RW-CP's extra completion delay on the NIC's lanes (cpus 1..Lanes), so it
// overlaps the host. The local block is unpacked by the host in both
// variants.
type fftProgram struct {
	c    fftCosts
	rwcp bool
}

func (f fftProgram) NumRanks() int { return f.c.P }
func (f fftProgram) NumCPU() int   { return 1 + f.c.Lanes }
func (f fftProgram) NumNIC() int   { return 1 }
func (f fftProgram) Rank(r int) (goal.RankReader, error) {
	return &fftRank{f: f, r: r}, nil
}
func (f fftProgram) Window(r int) goal.Window {
	w, _ := goal.ScanWindow(&fftRank{f: f, r: r})
	return w
}

// fftRank produces one rank's statements one step at a time.
type fftRank struct {
	f    fftProgram
	r    int
	buf  []goal.Stmt
	i    int
	step int    // 0: first FFT; then per phase: P−1 exchanges, the local block, the join
	next uint64 // next operation number
	comp uint64 // the compute operation the current phase waits on
	base uint64 // first operation of the current phase
}

func (x *fftRank) op(s goal.Stmt) uint64 {
	x.buf = append(x.buf, s)
	x.next++
	return x.next - 1
}

func (x *fftRank) dep(k goal.Kind, a, b uint64) {
	x.buf = append(x.buf, goal.Stmt{Kind: k, A: a, B: b})
}

// Next implements goal.RankReader.
func (x *fftRank) Next(s *goal.Stmt) (bool, error) {
	for x.i >= len(x.buf) {
		x.buf, x.i = x.buf[:0], 0
		if !x.fill() {
			return false, nil
		}
	}
	*s = x.buf[x.i]
	x.i++
	return true, nil
}

// fill appends the next step's statements; false when the rank is done.
func (x *fftRank) fill() bool {
	c, p := x.f.c, x.f.c.P
	per := 2 + (p - 1) // steps per phase: P−1 exchanges, local, join
	switch {
	case x.step == 0:
		x.comp = x.op(goal.Stmt{Kind: goal.Calc, Size: uint64(c.FFT)})
		x.base = x.next
	case x.step > 2*per:
		return false
	default:
		k := (x.step - 1) / per
		j := (x.step-1)%per + 1
		switch {
		case j < p:
			// Consecutive receives, sends and unpacks follow one another
			// (irequires on the previous one for posting, so nothing waits
			// for completion); it keeps one operation of each kind ready per
			// rank, as a linear all-to-all issues them.
			from, to := (x.r-j+p)%p, (x.r+j)%p
			rv := x.op(goal.Stmt{Kind: goal.Recv, Size: c.Block, Peer: uint32(from), Tag: uint32(k)})
			x.dep(goal.IRequires, rv, x.comp)
			if j > 1 {
				x.dep(goal.IRequires, rv, rv-3)
			}
			sd := x.op(goal.Stmt{Kind: goal.Send, Size: c.Block, Peer: uint32(to), Tag: uint32(k)})
			x.dep(goal.Requires, sd, x.comp)
			if j > 1 {
				x.dep(goal.IRequires, sd, sd-3)
			}
			u := goal.Stmt{Kind: goal.Calc, Size: uint64(c.Unpack)}
			if x.f.rwcp {
				u = goal.Stmt{Kind: goal.Calc, Size: uint64(c.Extra), CPU: uint8(1 + (j-1)%c.Lanes)}
			}
			un := x.op(u)
			x.dep(goal.Requires, un, rv)
			if j > c.Lanes || !x.f.rwcp && j > 1 {
				prev := un - 3
				if x.f.rwcp {
					prev = un - 3*uint64(c.Lanes)
				}
				x.dep(goal.Requires, un, prev) // the same unit's previous block
			}
		case j == p:
			x.dep(goal.Requires, x.op(goal.Stmt{Kind: goal.Calc, Size: uint64(c.Unpack)}), x.comp)
		default:
			size := uint64(c.FFT)
			if k == 1 {
				size = 0 // the end: nothing after the transpose back
			}
			join := x.op(goal.Stmt{Kind: goal.Calc, Size: size})
			for q := max(0, p-1-c.Lanes); q < p-1; q++ { // the last block of every unit
				x.dep(goal.Requires, join, x.base+uint64(3*q+2))
			}
			x.dep(goal.Requires, join, x.base+uint64(3*(p-1)))
			x.comp, x.base = join, x.next
		}
	}
	x.step++
	return true
}

// runFFT2D is the SC'19 paper: per P, the unpack costs simulated on
// the sPIN NIC, a GOAL schedule of the 2-D FFT with those costs, replayed
// in the LogGOPS model, for host unpack and RW-CP.
func runFFT2D(cfg Config, env Env) (*report.Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	f := cfg.DDTFFT
	costs, err := fftUnpackCosts(cfg, env)
	if err != nil {
		return nil, err
	}
	lp := loggops.DefaultParams()
	lp.L, lp.O, lp.Gap, lp.Eager, lp.CalcUnit = f.L, f.O, f.Gap, f.Eager, sim.Picosecond
	lp.GapPerByte = loggops.PerByte(math.Round(1e15 / f.Bandwidth.BytesPerSecond()))
	t := report.Table{Name: "fft2d", Columns: []string{"P", "block", "fft", "unpack_host", "extra_rwcp", "T_host", "T_rwcp", "speedup_pct", "events"}}
	split := report.Table{Name: "split", Columns: []string{"variant", "P", "total", "compute", "unpack_on_host", "communication"}}
	plot := &report.Plot{Title: fmt.Sprintf("FFT2D strong scaling, n = %d (LogGOPS replay)", f.N), XLabel: "processes", YLabel: "runtime (ms)", LogX: true}
	sh, sr := report.Series{Name: "host unpack"}, report.Series{Name: "rw-cp"}
	for _, c := range costs {
		var tot [2]sim.Time
		var events uint64
		for v, rw := range []bool{false, true} {
			r, err := loggops.Run(fftProgram{c: c, rwcp: rw}, lp)
			if err != nil {
				return nil, fmt.Errorf("fft2d P=%d: %w", c.P, err)
			}
			tot[v] = r.Max
			events += r.Events
			// The host runs both rounds of FFTs and its unpacks one after
			// the other: a total shorter than these parts is a wrong
			// result, not a number to report.
			comp := 2 * c.FFT
			unp, ok := sim.CheckedMul(c.Unpack, int64(c.P)) // P−1 received blocks + the local one
			if rw {
				unp = c.Unpack
			}
			if parts, okSum := comp.CheckedAdd(unp); !ok || !okSum || r.Max < parts {
				return nil, fmt.Errorf("fft2d P=%d %s: the replay's total %v is shorter than its parts (FFTs %v + host unpack %v): the model broke its own invariant",
					c.P, []string{"host", "rw-cp"}[v], r.Max, comp, unp)
			}
			if c.P == f.SplitAt {
				split.Rows = append(split.Rows, []any{[]string{"host", "rw-cp"}[v], c.P, r.Max, comp, unp, r.Max - comp - unp})
			}
		}
		pct := round3(100 * (float64(tot[0])/float64(tot[1]) - 1))
		t.Rows = append(t.Rows, []any{c.P, unit.Bytes(c.Block), c.FFT, c.Unpack, c.Extra, tot[0], tot[1], pct, events})
		sh.X, sh.Y = append(sh.X, float64(c.P)), append(sh.Y, round3(float64(tot[0])/1e9))
		sr.X, sr.Y = append(sr.X, float64(c.P)), append(sr.Y, round3(float64(tot[1])/1e9))
	}
	plot.Series = []report.Series{sh, sr}
	res := &report.Result{Experiment: "fft2d", Seed: cfg.Run.Seed, Tables: []report.Table{t, split}, Plot: plot}
	res.Notes = append(res.Notes, presetNote(cfg),
		fmt.Sprintf("unpack_host / extra_rwcp: one peer's block simulated on the sPIN NIC (payload-free): the host unpack executed on the simulated host core (ddt.host_model = %s, cold caches) and RW-CP's completion delay over plain RDMA", cfg.DDT.HostModel),
		fmt.Sprintf("LogGOPS L = %v, o = %v, g = %v, 1/G = %v, S = %v are PLACEHOLDERS, not the sPIN SC'17 paper's parameters (not transcribed); the 1-D FFT time is the flop model's fallback (fft2d.flop_rate), not a measurement", f.L, f.O, f.Gap, f.Bandwidth, f.Eager),
		"speedup [%] = 100·(T_host/T_rwcp − 1); split: communication = total − compute − unpack on the host (waiting included)")
	if !slices.Contains(f.Procs, f.SplitAt) {
		// An empty split table with no word of why would read as a result.
		res.Notes = append(res.Notes, fmt.Sprintf("split: no rows: fft2d.split_at = %d is none of fft2d.procs (%s)", f.SplitAt, joinInts(f.Procs)))
	}
	return res, nil
}

// joinInts prints a list of ints as "a, b, c".
func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}
