package report

import (
	"fmt"
	"strings"
)

// MaxCrossoversListed is the most crossovers a report lists per plot.
const MaxCrossoversListed = 5

// BetterDirection returns which way p's y values improve: p.Better when
// set, else "higher" for speedups, rates and bandwidths, "lower" for
// times and latencies (read from the y label), "" when the label says
// neither.
func BetterDirection(p *Plot) string {
	if p.Better != "" {
		return p.Better
	}
	y := strings.ToLower(p.YLabel)
	for _, w := range []string{"speedup", "gb/s", "throughput", "bandwidth", "hit rate", "/s", "efficiency"} {
		if strings.Contains(y, w) {
			return "higher"
		}
	}
	for _, w := range []string{"time", "latency", "runtime", "(us)", "(ms)", "(ns)", "(s)"} {
		if strings.Contains(y, w) {
			return "lower"
		}
	}
	return ""
}

// LastingCrossovers returns the crossovers of p (see Crossovers) after
// which the two series keep their new order to the end of the sweep, and
// how many other order changes (reversed again later) there are. Only
// series that are alternatives for the same thing are compared (see
// comparable). A
// categorical x axis has none, and neither has a trace (a series of more
// than 60 points: a quantity over time, not a sweep).
func LastingCrossovers(p *Plot) (lasting []Crossover, transient int) {
	if p == nil || p.Categorical {
		return nil, 0
	}
	for _, s := range p.Series {
		if len(s.X) > denseSeries {
			// A trace over time (a queue's occupancy), not a sweep: its
			// lines cross all the time and no crossing means anything.
			return nil, 0
		}
	}
	caps := strategyNamed(p.Series)
	for i, a := range p.Series {
		for _, b := range p.Series[i+1:] {
			if !comparable(a.Name, b.Name, caps) {
				continue
			}
			cs := crossings(a, b)
			if len(cs) == 0 {
				continue
			}
			// Only the last change of a pair can last: each earlier one is
			// undone by the next.
			lasting = append(lasting, cs[len(cs)-1])
			transient += len(cs) - 1
		}
	}
	return lasting, transient
}

// CrossoverSentences describes p's lasting crossovers in words that fit
// its metric ("becomes faster than" for times, "overtakes" for
// speedups), at most MaxCrossoversListed of them (the first in x), with a
// last sentence counting those left out and the temporary order changes.
// label prefixes each sentence (a facet's name) when non-empty.
func CrossoverSentences(label string, p *Plot) []string {
	lasting, transient := LastingCrossovers(p)
	better := BetterDirection(p)
	// Earliest first: where the order of the sweep's end is settled.
	sortCrossovers(lasting)
	var out []string
	prefix := ""
	if label != "" {
		prefix = label + ": "
	}
	for i, c := range lasting {
		if i == MaxCrossoversListed {
			break
		}
		where := fmt.Sprintf("between %s = %s and %s", p.XLabel, fmtX(c.X0), fmtX(c.X1))
		var s string
		switch better {
		case "lower":
			s = fmt.Sprintf("%s becomes better (lower) than %s %s and stays better to the end of the sweep", c.Above, c.Below, where)
		case "higher":
			s = fmt.Sprintf("%s overtakes %s (higher is better) %s and stays ahead to the end of the sweep", c.Below, c.Above, where)
		default:
			s = fmt.Sprintf("%s falls below %s %s and stays below to the end of the sweep", c.Above, c.Below, where)
		}
		out = append(out, prefix+s)
	}
	var more []string
	if n := len(lasting) - MaxCrossoversListed; n > 0 {
		more = append(more, fmt.Sprintf("%d more lasting crossovers not listed (the CSV and JSON hold every series)", n))
	}
	if transient > 0 {
		more = append(more, fmt.Sprintf("%d temporary order changes, reversed again later in the sweep, not listed", transient))
	}
	if len(more) > 0 {
		out = append(out, prefix+strings.Join(more, "; "))
	}
	return out
}

// sortCrossovers orders cs by where they happen, then by name.
func sortCrossovers(cs []Crossover) {
	for i := 1; i < len(cs); i++ {
		for j := i; j > 0 && (cs[j].X < cs[j-1].X || cs[j].X == cs[j-1].X && cs[j].Above+cs[j].Below < cs[j-1].Above+cs[j-1].Below); j-- {
			cs[j], cs[j-1] = cs[j-1], cs[j]
		}
	}
}
