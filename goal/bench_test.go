package goal

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// writeTemp writes g as GOAL text to a file in dir and returns its path.
func writeTemp(tb testing.TB, dir string, g *Generated) string {
	tb.Helper()
	path := filepath.Join(dir, "sched.goal")
	fh, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	if err := WriteText(fh, g); err != nil {
		tb.Fatal(err)
	}
	if err := fh.Close(); err != nil {
		tb.Fatal(err)
	}
	return path
}

// BenchmarkParse measures the reader alone on a Schedgen-style file (a
// 256-rank 8 MiB ring allreduce, about 14 MB of text): Open (the indexing
// pass) and then every rank read to its end, as the simulator does. MB/s
// counts the file once; both passes are included.
func BenchmarkParse(b *testing.B) {
	path := writeTemp(b, b.TempDir(), Ring(256, 8<<20))
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	b.ReportAllocs()
	var stmts uint64
	for b.Loop() {
		stmts += openAndRead(b, path, true)
	}
	b.ReportMetric(float64(stmts)/b.Elapsed().Seconds(), "stmts/s")
}

// BenchmarkOpenRing1024 measures reading and checking the large
// file, the 1024-rank 8 MiB ring allreduce as WriteText prints it (229 MB,
// written once before the timer): "open" is Open and Close (the text read,
// checked, indexed and spooled, in parallel stretches over all CPUs),
// "open+read" adds reading every rank's statements back from the spool,
// as the simulator does. MB/s counts the text once; cpu-s/op is the
// process's user+system CPU time per iteration (both cores), which unlike
// the wall time does not depend on what else the machine runs.
func BenchmarkOpenRing1024(b *testing.B) {
	path := writeTemp(b, b.TempDir(), Ring(1024, 8<<20))
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	for _, readBack := range []bool{false, true} {
		name := "open"
		if readBack {
			name = "open+read"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(st.Size())
			b.ReportAllocs()
			cpu0 := cpuTime()
			for b.Loop() {
				openAndRead(b, path, readBack)
			}
			b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}

// openAndRead opens the GOAL file at path and, if readBack, reads every
// rank to its end; it returns the statements read.
func openAndRead(b *testing.B, path string, readBack bool) (stmts uint64) {
	fh, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer fh.Close()
	f, err := Open(fh)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if !readBack {
		return 0
	}
	var s Stmt
	for r := range f.NumRanks() {
		rr, err := f.Rank(r)
		if err != nil {
			b.Fatal(err)
		}
		for {
			ok, err := rr.Next(&s)
			if err != nil {
				b.Fatal(err)
			}
			if !ok {
				break
			}
			stmts++
		}
	}
	return stmts
}

// BenchmarkIndexLines measures the index pass's fused loop alone on one
// rank block of the 1024-rank ring (8,188 statement lines in memory), the
// per-line cost of reading and checking a Schedgen-style file on one core.
func BenchmarkIndexLines(b *testing.B) {
	body := rankText(b, Ring(1024, 8<<20), 0)
	lines := bytes.Count(body, []byte("\n"))
	ix := newIndexer(openOpts{spoolMem: 1 << 30})
	ix.numRanks, ix.inRank = 1024, 0
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		ix.nops, ix.canon, ix.sp.buf, ix.prevLine = 0, ix.canon[:0], ix.sp.buf[:0], 0
		ix.wc.reset()
		if n, _, err := ix.indexLines(body, 0); err != nil || n != len(body) {
			b.Fatalf("took %d of %d bytes: %v", n, len(body), err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*lines), "ns/line")
}

// rankText returns rank r's statement lines as WriteText prints them.
func rankText(tb testing.TB, p Program, r int) []byte {
	rr, err := p.Rank(r)
	if err != nil {
		tb.Fatal(err)
	}
	var buf []byte
	var s Stmt
	var nops uint64
	for {
		ok, err := rr.Next(&s)
		if err != nil {
			tb.Fatal(err)
		}
		if !ok {
			return buf
		}
		buf = append(s.AppendText(buf, nops), '\n')
		if s.Kind.IsOp() {
			nops++
		}
	}
}
