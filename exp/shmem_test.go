package exp

import (
	"math"
	"testing"

	"github.com/gpunetsim/gpunetsim/exp/report"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// quickShmem is the compnet preset with the device-shmem sweeps cut down
// to a second of work.
func quickShmem(t *testing.T) Config {
	t.Helper()
	cfg, err := DefaultConfig("compnet")
	if err != nil {
		t.Fatal(err)
	}
	b := &cfg.ShmemBench
	b.QueueWGs = []int{1, 4}
	b.GetMax = 4 * unit.KiB
	b.LoadWGs, b.LoadThreads = 48, []int{1, 2}
	b.L2Ratios, b.L2Puts, b.L2Stream = []int{0, 4}, 16, 64*unit.KiB
	return cfg
}

func runExp(t *testing.T, name string, cfg Config) *report.Result {
	t.Helper()
	ex, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	res, err := ex.Run(cfg, Env{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tables) == 0 || len(res.Tables[0].Rows) == 0 || res.Plot == nil {
		t.Fatalf("%s: empty result", name)
	}
	return res
}

// cell returns row r's value of column col.
func cell(t *testing.T, tb report.Table, r int, col string) any {
	t.Helper()
	for i, c := range tb.Columns {
		if c == col {
			return tb.Rows[r][i]
		}
	}
	t.Fatalf("table %s has no column %s", tb.Name, col)
	return nil
}

func num(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case uint64:
		return float64(x)
	case sim.Time:
		return float64(x)
	}
	return -1
}

// Host-memory queues serve faster than GPU-memory queues polled over
// PCIe, and one helper thread slows down as it owns more queues.
func TestGHNQueueShape(t *testing.T) {
	tb := runExp(t, "ghnqueue", quickShmem(t)).Tables[0]
	// rows: (DGPU, 1), (HOSTQ, 1), (DGPU, 4), (HOSTQ, 4)
	d1, h1, d4, h4 := num(cell(t, tb, 0, "service_us")), num(cell(t, tb, 1, "service_us")), num(cell(t, tb, 2, "service_us")), num(cell(t, tb, 3, "service_us"))
	if !(h1 < d1 && h4 < d4 && d4 > d1 && h4 > h1) {
		t.Fatalf("service times DGPU %v→%v, HOSTQ %v→%v: want HOSTQ faster and both slower with 4 queues", d1, d4, h1, h4)
	}
}

// Get latency grows with the payload; the coherent APU queue beats the
// PCIe-polled dGPU queue for small gets.
func TestShmemGetShape(t *testing.T) {
	tb := runExp(t, "shmemget", quickShmem(t)).Tables[0]
	lat := map[string][]float64{}
	for r := range tb.Rows {
		s := cell(t, tb, r, "strategy").(string)
		lat[s] = append(lat[s], num(cell(t, tb, r, "latency_us")))
	}
	for s, l := range lat {
		if l[len(l)-1] < l[0] {
			t.Errorf("%s: 4 KiB get (%v us) faster than 1 B (%v us)", s, l[len(l)-1], l[0])
		}
	}
	if lat["GHN_APU"][0] >= lat["GHN_DGPU"][0] {
		t.Errorf("1 B get: GHN_APU %v us not below GHN_DGPU %v us", lat["GHN_APU"][0], lat["GHN_DGPU"][0])
	}
}

// The decomposition of a blocking get covers its whole latency: the parts
// (post, pickup, ..., completion seen) add up to it for every strategy
// and payload, each part is non-negative, and a GHN_DGPU entry read
// (a PCIe read) costs more than a ComP-Net one (an L2 access).
func TestShmemGetDecomposition(t *testing.T) {
	res := runExp(t, "shmemget", quickShmem(t))
	if len(res.Tables) < 2 || res.Tables[1].Name != "shmemget_decomposition" {
		t.Fatalf("tables %d, want the decomposition second", len(res.Tables))
	}
	tb := res.Tables[1]
	deq := map[string]float64{}
	for r := range tb.Rows {
		s := cell(t, tb, r, "strategy").(string)
		var sum float64
		for _, c := range tb.Columns[2 : len(tb.Columns)-2] {
			v := num(cell(t, tb, r, c))
			if v < 0 {
				t.Errorf("%s row %d: %s = %v < 0", s, r, c, v)
			}
			sum += v
		}
		if l := num(cell(t, tb, r, "latency_us")); math.Abs(sum-l) > 0.01 {
			t.Errorf("%s row %d: parts add to %v us, latency %v us", s, r, sum, l)
		}
		deq[s] = num(cell(t, tb, r, "dequeue_us"))
	}
	if len(deq) != 3 || deq["GHN_DGPU"] <= deq["COMPNET"] {
		t.Errorf("dequeue parts %v: want all three strategies, GHN_DGPU's above COMPNET's", deq)
	}
}

// ComP-Net's service thread costs far less energy than a host helper, and
// a second helper thread speeds GHN_DGPU up.
func TestShmemLoadShape(t *testing.T) {
	tb := runExp(t, "shmemload", quickShmem(t)).Tables[0]
	// rows: threads 1: DGPU, APU, COMPNET; threads 2: DGPU, APU, COMPNET
	if e := num(cell(t, tb, 2, "energy_vs_GHN_DGPU")); !(e > 0 && e < 0.5) {
		t.Errorf("COMPNET energy vs GHN_DGPU = %v, want well below 1", e)
	}
	if t1, t2 := num(cell(t, tb, 0, "time_us")), num(cell(t, tb, 3, "time_us")); t2 >= t1 {
		t.Errorf("GHN_DGPU with 2 threads %v us, not faster than 1 thread %v us", t2, t1)
	}
}

// Streaming work-groups lower the CP's L2 hit rate; LLC locking keeps
// more of its accesses hitting.
func TestCPL2Shape(t *testing.T) {
	tb := runExp(t, "cpl2", quickShmem(t)).Tables[0]
	// rows: locking off: ratio 0, 4; locking on: ratio 0, 4
	off0, off4, on4 := num(cell(t, tb, 0, "cp_hit_rate")), num(cell(t, tb, 1, "cp_hit_rate")), num(cell(t, tb, 3, "cp_hit_rate"))
	if !(off4 < off0 && on4 > off4) {
		t.Fatalf("hit rates: no streaming %v, streaming %v, streaming+locking %v", off0, off4, on4)
	}
	if n := num(cell(t, tb, 3, "max_locked_lines")); n <= 0 {
		t.Fatalf("locking on but no locked line: %v", n)
	}
}

// cpl2's breakdown of the CP's accesses covers them all (the classes add
// up to cp_l2_accesses at every point), has accesses to the streaming
// work-groups' queues only when there are streaming work-groups, and
// finds locked lines only with locking on, only in the networking
// work-groups' queues, and at most once per locking store (each
// found-locked access unlocks its line; a put's entry is eight word
// stores, each a store_locked that locks the line again).
func TestCPL2AccessBreakdown(t *testing.T) {
	cfg := quickShmem(t)
	res := runExp(t, "cpl2", cfg)
	tb, by := res.Tables[0], res.Tables[1]
	if by.Name != "cpl2_cp_accesses" || len(by.Rows) != 4*len(tb.Rows) {
		t.Fatalf("second table %q has %d rows for %d points", by.Name, len(by.Rows), len(tb.Rows))
	}
	puts := float64(cfg.ShmemBench.L2NetWGs * cfg.ShmemBench.L2Puts)
	for i := range tb.Rows {
		ratio, lock := num(cell(t, tb, i, "streaming_per_net")), cell(t, tb, i, "llc_locking") == true
		var sum, locked float64
		for j := 4 * i; j < 4*i+4; j++ {
			n, l, class := num(cell(t, by, j, "accesses")), num(cell(t, by, j, "found_locked")), cell(t, by, j, "class")
			sum += n
			locked += l
			if l > 0 && class != "net_queues" {
				t.Errorf("ratio %v locking %v: %v accesses to %v found a locked line", ratio, lock, l, class)
			}
			if class == "idle_queues" && (n > 0) != (ratio > 0) {
				t.Errorf("ratio %v: %v accesses to the streaming work-groups' queues", ratio, n)
			}
		}
		if want := num(cell(t, tb, i, "cp_l2_accesses")); sum != want {
			t.Errorf("ratio %v locking %v: classes add up to %v accesses, the CP made %v", ratio, lock, sum, want)
		}
		if lock && (locked < 1 || locked > 8*puts) || !lock && locked != 0 {
			t.Errorf("ratio %v locking %v: %v accesses found a locked line for %v posted puts", ratio, lock, locked, puts)
		}
	}
}

// shmembench.l2_inflight = N keeps N puts of each networking work-group
// posted at once: up to N locked entries per work-group wait for the CP
// (one with the documented single request), so more lines are locked at
// once and they are held longer.
func TestCPL2InFlight(t *testing.T) {
	lockedHold := func(n int) (float64, float64) {
		cfg := quickShmem(t)
		cfg.ShmemBench.L2Ratios, cfg.ShmemBench.L2InFlight = []int{4}, n
		tb := runExp(t, "cpl2", cfg).Tables[0] // rows: locking off, on
		return num(cell(t, tb, 1, "max_locked_lines")), num(cell(t, tb, 1, "mean_lock_hold"))
	}
	l1, h1 := lockedHold(1)
	l8, h8 := lockedHold(8)
	if !(l1 <= 2 && l8 > 2*l1 && h8 > h1) {
		t.Fatalf("1 in flight: %v lines locked at most, hold %v; 8 in flight: %v, %v", l1, h1, l8, h8)
	}
}

// Bad sweep values are one error naming the field.
func TestShmemBenchValidate(t *testing.T) {
	cfg := quickShmem(t)
	cfg.ShmemBench.LoadBytes = 9
	if err := cfg.Validate(); err == nil || !contains(err.Error(), "shmembench.load_bytes = 9") {
		t.Fatalf("err = %v", err)
	}
	cfg = quickShmem(t)
	cfg.ShmemBench.GetStrategies = []string{"GPUTN"}
	if err := cfg.Validate(); err == nil || !contains(err.Error(), "shmembench.get_strategies") {
		t.Fatalf("err = %v", err)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
