package report

import (
	"strings"
	"testing"
)

func TestCrossoverSentences(t *testing.T) {
	x := []float64{1, 2, 3, 4, 5}
	// A starts above B, goes below at 1→2, back above at 2→3, below for
	// good at 3→4: one lasting crossover and two temporary changes.
	a := Series{Name: "A", X: x, Y: []float64{5, 1, 5, 1, 1}}
	b := Series{Name: "B", X: x, Y: []float64{3, 3, 3, 3, 3}}
	for _, tc := range []struct {
		name, ylabel, want string
	}{
		{"time", "time (us)", "A becomes better (lower) than B between nodes = 3 and 4 and stays better"},
		{"speedup", "speedup vs CPU", "B overtakes A (higher is better) between nodes = 3 and 4"},
		{"neutral", "requests", "A falls below B between nodes = 3 and 4"},
	} {
		got := CrossoverSentences("", &Plot{XLabel: "nodes", YLabel: tc.ylabel, Series: []Series{a, b}})
		if len(got) != 2 || !strings.Contains(got[0], tc.want) || !strings.Contains(got[1], "2 temporary order changes") {
			t.Errorf("%s: %q, want %q and 2 temporary changes", tc.name, got, tc.want)
		}
	}
	if got := CrossoverSentences("", &Plot{Categorical: true, Series: []Series{a, b}}); got != nil {
		t.Errorf("categorical x: %q, want none", got)
	}
}

func TestCrossoverSentencesAtMostAHandful(t *testing.T) {
	// Twelve series crossing one fixed series: twelve lasting crossovers.
	var series []Series
	series = append(series, Series{Name: "base", X: []float64{1, 2}, Y: []float64{5, 5}})
	for i := range 12 {
		series = append(series, Series{Name: string(rune('a' + i)), X: []float64{1, 2}, Y: []float64{1, 9}})
	}
	got := CrossoverSentences("f", &Plot{XLabel: "x", YLabel: "time (us)", Series: series})
	if len(got) != MaxCrossoversListed+1 || !strings.Contains(got[len(got)-1], "7 more lasting crossovers") {
		t.Errorf("%d sentences %q, want %d and a count of 7 more", len(got), got, MaxCrossoversListed+1)
	}
	for _, s := range got {
		if !strings.HasPrefix(s, "f: ") {
			t.Errorf("%q lacks the facet label", s)
		}
	}
}

func TestNoCrossoversOnTraces(t *testing.T) {
	var a, b Series
	a.Name, b.Name = "a", "b"
	for i := range 100 {
		a.X, a.Y = append(a.X, float64(i)), append(a.Y, float64(i%2))
		b.X, b.Y = append(b.X, float64(i)), append(b.Y, float64((i+1)%2))
	}
	if got := CrossoverSentences("", &Plot{XLabel: "time", Series: []Series{a, b}}); got != nil {
		t.Errorf("a trace's crossings listed: %q", got)
	}
}

// TestCrossoversOnlyBetweenAlternatives checks that series named by a
// strategy and an input cross only as two strategies on one input: not
// across inputs, nor across strategies and inputs at once, as spts's
// series (strategy × matrix) did.
func TestCrossoversOnlyBetweenAlternatives(t *testing.T) {
	x := []float64{2, 4}
	up, down := []float64{1, 9}, []float64{5, 5}
	series := []Series{
		{Name: "GNN_GIO kkt", X: x, Y: up},
		{Name: "GHN_DGPU kkt", X: x, Y: down},
		{Name: "GNN_GIO circuit", X: x, Y: down},
		{Name: "GHN_DGPU circuit", X: x, Y: []float64{6, 6}},
		{Name: "GHN_DGPU road", X: x, Y: up},
	}
	got := Crossovers(&Plot{Series: series})
	if len(got) != 1 || got[0].Above != "GHN_DGPU kkt" || got[0].Below != "GNN_GIO kkt" {
		t.Errorf("crossovers %+v, want only GHN_DGPU kkt becoming higher than GNN_GIO kkt", got)
	}
	lasting, _ := LastingCrossovers(&Plot{Series: series})
	if len(lasting) != 1 {
		t.Errorf("lasting crossovers %+v, want the one of kkt", lasting)
	}
	// One-word names (methods, strategies) all meet each other.
	if got := Crossovers(&Plot{Series: []Series{{Name: "ro-cp", X: x, Y: up}, {Name: "host", X: x, Y: down}}}); len(got) != 1 {
		t.Errorf("one-word names: %+v, want one crossover", got)
	}
	// A swept parameter beside a strategy: strategies meet at one value.
	sw := []Series{
		{Name: "CPU link.bandwidth=25Gbps", X: x, Y: down},
		{Name: "GPUTN link.bandwidth=25Gbps", X: x, Y: up},
		{Name: "CPU link.bandwidth=50Gbps", X: x, Y: up},
	}
	if got := Crossovers(&Plot{Series: sw}); len(got) != 1 || got[0].Below != "GPUTN link.bandwidth=25Gbps" {
		t.Errorf("swept series: %+v, want GPUTN vs CPU at 25Gbps only", got)
	}
}
