package exp

import (
	"runtime"
	"strconv"
	"testing"

	"github.com/gpunetsim/gpunetsim/exp/report"
)

// BenchmarkJacobiGIO is issue 30's Jacobi item for GNN_GIO: the weak-scaled
// Jacobi on the gio preset (2048² points per node, the default 20
// iterations), payload-free, at 16, 32 and 128 nodes (128 skipped under
// -short), one point per run. It reports events/cpu-s, events/run and
// heap-B/node (the peak of live and unswept heap objects over the nodes),
// like BenchmarkStrategies; run one point at a time with -benchtime 1x.
func BenchmarkJacobiGIO(b *testing.B) {
	for _, n := range []int{16, 32, 128} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			if n > 32 && testing.Short() {
				b.Skip("128 nodes: not under -short")
			}
			cfg, err := DefaultConfig("gio")
			if err != nil {
				b.Fatal(err)
			}
			cfg.Run.Functional = false
			cfg.JacobiScale.WeakNodes = []int{n}
			cfg.JacobiScale.Strategies = []string{"GNN_GIO"}
			ex, err := Lookup("jacobiweak")
			if err != nil {
				b.Fatal(err)
			}
			runtime.GC()
			base := heapObjects()
			stop := sampleHeap()
			var events float64
			cpu0 := cpuSeconds(b)
			for range b.N {
				res, err := ex.Run(cfg, Env{Cores: 1})
				if err != nil {
					b.Fatal(err)
				}
				events += tableColumn(b, res.Tables[0], "events")
			}
			cpu := cpuSeconds(b) - cpu0
			heap := stop()
			b.ReportMetric(events/cpu, "events/cpu-s")
			b.ReportMetric(events/float64(b.N), "events/run")
			b.ReportMetric(cpu/float64(b.N), "cpu-s/run")
			b.ReportMetric(float64(heap-min(heap, base))/float64(n), "heap-B/node")
		})
	}
}

// tableColumn sums column name of every row of t (a number per row).
func tableColumn(b *testing.B, t report.Table, name string) float64 {
	b.Helper()
	for c, col := range t.Columns {
		if col != name {
			continue
		}
		var sum float64
		for _, r := range t.Rows {
			switch v := r[c].(type) {
			case float64:
				sum += v
			case int:
				sum += float64(v)
			case uint64:
				sum += float64(v)
			case int64:
				sum += float64(v)
			default:
				b.Fatalf("column %q holds %T", name, r[c])
			}
		}
		return sum
	}
	b.Fatalf("table %q has no column %q", t.Name, name)
	return 0
}
