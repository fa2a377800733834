package main

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpunetsim/gpunetsim/exp/study"
)

// syncBuffer is a bytes.Buffer safe for the progress goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Off a terminal, progress lines come periodically even while no point
// finishes, then one last line; -q gives a nil progress that prints nothing.
func TestPlainProgressLines(t *testing.T) {
	var out syncBuffer
	p := newPlainProgress(&out, 5*time.Millisecond)
	p.report(study.Progress{Total: 10, Done: 4, Cached: 3, Work: 100, WorkDone: 40, WorkCached: 30})
	deadline := time.Now().Add(5 * time.Second)
	for strings.Count(out.String(), "\n") < 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	p.report(study.Progress{Total: 10, Done: 10, Cached: 3, Work: 100, WorkDone: 100, WorkCached: 30})
	p.close()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) < 3 {
		t.Fatalf("got %q, want periodic lines and a last one", out.String())
	}
	periodic := regexp.MustCompile(`^gpunetsim: 4/10 points \(3 cached, 1 simulated\) in \d+s, [0-9.e+]+ points/s, ETA \S+$`)
	for _, l := range lines[:len(lines)-1] {
		if !periodic.MatchString(l) {
			t.Errorf("line %q", l)
		}
	}
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "gpunetsim: 10/10 points (3 cached, 7 simulated) in ") || strings.Contains(last, "ETA") {
		t.Errorf("last line %q", last)
	}
	n := strings.Count(out.String(), "\n")
	time.Sleep(20 * time.Millisecond)
	if strings.Count(out.String(), "\n") != n {
		t.Error("lines after close")
	}

	quiet := newStudyProgress(&out, true)
	quiet.report(study.Progress{Total: 1, Done: 1})
	quiet.close()
	if strings.Count(out.String(), "\n") != n {
		t.Error("-q printed progress")
	}
}

// TestETAWeighsWork: half the points done but a tenth of the expected
// work (the large points left) gives an ETA of nine times the time so
// far, not the one a count of points would give.
func TestETAWeighsWork(t *testing.T) {
	now := time.Now()
	p := &studyProgress{start: now.Add(-10 * time.Second)}
	line := p.line(study.Progress{Total: 10, Done: 5, Work: 100, WorkDone: 10}, now)
	if !strings.HasSuffix(line, ", ETA 1m30s") {
		t.Errorf("%q, want an ETA of 1m30s (90 units left at 1 unit/s)", line)
	}
}

// TestQuietInterruptNoteCounts: a quiet study interrupted says how many
// points are in the cache, as a shown one does, not that "the finished
// points" are there when none finished.
func TestQuietInterruptNoteCounts(t *testing.T) {
	for _, tc := range []struct {
		reports []study.Progress
		want    string
	}{
		{nil, "no point finished in this run; run the same command again to resume from the cache c"},
		{[]study.Progress{{Total: 4}}, "0 of 4 points are in the cache c; run the same command again to resume"},
		{[]study.Progress{{Total: 4}, {Total: 4, Done: 1}, {Total: 4, Done: 2}}, "2 of 4 points are in the cache c; run the same command again to resume"},
	} {
		var out bytes.Buffer
		p := newStudyProgress(&out, true)
		for _, r := range tc.reports {
			p.report(r)
		}
		if got := p.interruptNote("c"); got != tc.want {
			t.Errorf("after %v: %q, want %q", tc.reports, got, tc.want)
		}
		if out.Len() != 0 {
			t.Errorf("-q printed %q", out.String())
		}
	}
}
