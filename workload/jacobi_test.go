package workload

import (
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/model/mpi"
	"github.com/gpunetsim/gpunetsim/model/verbs"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/strategy"
)

func runJacobi(t *testing.T, j Jacobi, s strategy.Strategy) JacobiResult {
	t.Helper()
	d, err := strategy.Lookup(string(s))
	if err != nil {
		t.Fatal(err)
	}
	hw, _ := cluster.Preset(d.Preset)
	c, err := cluster.New(sim.New(1), d.Adjust(hw), j.PRows*j.PCols, true)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Engine.Close()
	r, err := j.Run(c, s, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()})
	if err != nil {
		t.Fatalf("%s %dx%d: %v", s, j.PRows, j.PCols, err)
	}
	return r
}

// Every implementation equals the serial run of the same iteration count,
// values and every iteration's residual, on square, non-square, 1-D and
// non-power-of-two process grids.
func TestJacobiMatchesSerial(t *testing.T) {
	grids := []struct{ rows, cols, pr, pc int }{
		{24, 24, 2, 2}, {30, 36, 3, 2}, {40, 12, 5, 1}, {21, 35, 1, 7}, {18, 27, 3, 3},
	}
	for _, s := range []strategy.Strategy{strategy.CPU, strategy.HDN, strategy.HDNOverlap, strategy.GDS, strategy.GPUTN} {
		for _, g := range grids {
			j := Jacobi{Rows: g.rows, Cols: g.cols, PRows: g.pr, PCols: g.pc, Iters: 3, WGSize: 64, MaxWGs: 6, CPUThreads: 4}
			r := runJacobi(t, j, s)
			if !r.Verified || len(r.Residuals) != 3 || r.Residuals[2] <= 0 || r.Time <= 0 {
				t.Errorf("%s %dx%d: %+v", s, g.pr, g.pc, r)
			}
		}
	}
}

type spanLog struct{ spans []traceSpan }

type traceSpan struct {
	track, name string
	start, end  sim.Time
}

func (l *spanLog) Span(track, name string, start, end sim.Time) {
	l.spans = append(l.spans, traceSpan{track, name, start, end})
}

// HDN_OVERLAP's timeline shows the overlap: while node 0's interior kernel
// runs, its host is inside MPI calls and its NIC moves the halo messages;
// HDN's kernels never run during a host MPI call.
func TestJacobiOverlapTimeline(t *testing.T) {
	j := Jacobi{Rows: 64, Cols: 16384, PRows: 4, PCols: 1, Iters: 2, WGSize: 256, CPUThreads: 8} // long halos: their exchange outlasts the launch
	concurrent := func(s strategy.Strategy) (host, nic int) {
		log := &spanLog{}
		e := sim.New(1)
		e.SetTracer(log)
		c, err := cluster.New(e, cluster.GPUTN(), 4, true)
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		if r, err := j.Run(c, s, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()}); err != nil || !r.Verified {
			t.Fatalf("%s: %v %+v", s, err, r)
		}
		var kernels []traceSpan
		for _, sp := range log.spans {
			if strings.HasPrefix(sp.track, "node[0].gpu.wg") {
				kernels = append(kernels, sp)
			}
		}
		for _, sp := range log.spans {
			for _, k := range kernels {
				if sp.start < k.end && sp.end > k.start { // the spans overlap in time
					switch {
					case strings.HasPrefix(sp.track, "node[0].cpu") && strings.HasPrefix(sp.name, "MPI_"):
						host++
					case strings.HasPrefix(sp.track, "node[0].nic"):
						nic++
					}
					break
				}
			}
		}
		return host, nic
	}
	if m, n := concurrent(strategy.HDNOverlap); m == 0 || n == 0 {
		t.Errorf("HDN_OVERLAP: %d host MPI spans and %d NIC spans inside a kernel; want both > 0", m, n)
	}
	if m, n := concurrent(strategy.HDN); m != 0 || n != 0 {
		t.Errorf("HDN: %d host MPI spans and %d NIC spans inside a kernel; want none", m, n)
	}
}

// Bad parameters name the field that is wrong.
func TestJacobiValidate(t *testing.T) {
	ok := Jacobi{Rows: 30, Cols: 36, PRows: 3, PCols: 2, Iters: 1, WGSize: 64, CPUThreads: 1}
	if err := ok.Validate(6); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		mut  func(*Jacobi)
		n    int
		want string
	}{
		"grid mismatch":     {func(j *Jacobi) {}, 8, "prows × pcols = 8"},
		"rows not divided":  {func(j *Jacobi) { j.Rows = 31 }, 6, "prows = 3 does not divide rows = 31"},
		"cols not divided":  {func(j *Jacobi) { j.Cols = 35 }, 6, "pcols = 2 does not divide cols = 35"},
		"too small":         {func(j *Jacobi) { j.Rows, j.PRows, j.PCols = 6, 3, 2 }, 6, "at least 3×3"},
		"no iterations":     {func(j *Jacobi) { j.Iters = 0 }, 6, "iters"},
		"zero process rows": {func(j *Jacobi) { j.PRows = 0 }, 6, "process grid"},
	} {
		j := ok
		tc.mut(&j)
		if err := j.Validate(tc.n); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
}

// Timing does not depend on the payload: a payload-free run takes the same
// simulated time as the functional one.
func TestJacobiPayloadFreeSameTime(t *testing.T) {
	j := Jacobi{Rows: 24, Cols: 36, PRows: 2, PCols: 3, Iters: 2, WGSize: 64, MaxWGs: 4, CPUThreads: 4}
	for _, s := range []strategy.Strategy{strategy.CPU, strategy.HDNOverlap, strategy.GDS, strategy.GPUTN} {
		var times [2]sim.Time
		for i, functional := range []bool{true, false} {
			c, err := cluster.New(sim.New(1), cluster.GPUTN(), 6, functional)
			if err != nil {
				t.Fatal(err)
			}
			r, err := j.Run(c, s, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()})
			c.Engine.Close()
			if err != nil || r.Verified != functional {
				t.Fatalf("%s functional=%v: %v %+v", s, functional, err, r)
			}
			times[i] = r.Time
		}
		if times[0] != times[1] {
			t.Errorf("%s: functional %v, payload-free %v", s, times[0], times[1])
		}
	}
}

// The dGPU memory mode (write-back L2, system-scope releases and acquires
// that matter) gives the same answer.
func TestJacobiDGPU(t *testing.T) {
	j := Jacobi{Rows: 24, Cols: 24, PRows: 3, PCols: 1, Iters: 3, WGSize: 64, MaxWGs: 4, CPUThreads: 4}
	for _, s := range []strategy.Strategy{strategy.HDN, strategy.HDNOverlap, strategy.GDS, strategy.GPUTN} {
		c, err := cluster.New(sim.New(1), cluster.CompNet(), 3, true)
		if err != nil {
			t.Fatal(err)
		}
		r, err := j.Run(c, s, strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()})
		c.Engine.Close()
		if err != nil || !r.Verified {
			t.Errorf("%s: %v %+v", s, err, r)
		}
	}
}

// The device-verbs implementation (GPUrdma: GPU threads post the halo and
// residual writes and poll the arrival words) matches the serial run on
// several process grids, with the visibility checker on, and keeps its
// timing payload-free (control words carry values there too).
func TestJacobiDeviceVerbs(t *testing.T) {
	spec := verbs.DefaultSpec()
	spec.CheckVisibility = true
	cfg := strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec(), GNN: spec}
	for _, g := range []struct{ rows, cols, pr, pc int }{{24, 24, 2, 2}, {30, 36, 3, 2}, {21, 35, 1, 7}} {
		j := Jacobi{Rows: g.rows, Cols: g.cols, PRows: g.pr, PCols: g.pc, Iters: 3, WGSize: 64, MaxWGs: 6, CPUThreads: 4}
		var times [2]sim.Time
		for i, functional := range []bool{true, false} {
			c, err := cluster.New(sim.New(1), cluster.GPURDMA(), g.pr*g.pc, functional)
			if err != nil {
				t.Fatal(err)
			}
			r, err := j.Run(c, strategy.GNNGPURDMA, cfg)
			c.Engine.Close()
			if err != nil || r.Verified != functional || r.Impl != "device-verbs" {
				t.Fatalf("%dx%d functional=%v: %v %+v", g.pr, g.pc, functional, err, r)
			}
			times[i] = r.Time
		}
		if times[0] != times[1] {
			t.Errorf("%dx%d: functional %v, payload-free %v", g.pr, g.pc, times[0], times[1])
		}
	}
}
