package report

import (
	"fmt"
	"math"
)

// CrossoverTable lists the crossovers of series (see Crossovers) as a
// table named name, for any sweep report: x names the swept quantity (e.g.
// "nodes") and lower what a lower value means (e.g. "faster" for times),
// so a reader needs no code to read it. Each row says which series becomes
// lower than which, between which sweep points, and where the straight
// lines between them cross. Only lasting crossovers are listed: a pair
// that crosses back later keeps its last crossing alone (the one after
// which its order holds to the end of the sweep), as the HTML report
// lists them (LastingCrossovers).
func CrossoverTable(name, x, lower string, series []Series) Table {
	t := Table{Name: name, Columns: []string{"becomes " + lower, "than", x + " before", x + " after", x + " at crossing (interpolated)"}}
	caps := strategyNamed(series)
	for i, a := range series {
		for _, b := range series[i+1:] {
			if !comparable(a.Name, b.Name, caps) {
				continue
			}
			if cs := crossings(a, b); len(cs) > 0 {
				c := cs[len(cs)-1]
				t.Rows = append(t.Rows, []any{c.Above, c.Below, c.X0, c.X1, math.Round(c.X*1000) / 1000})
			}
		}
	}
	return t
}

// CrossoverOutputs returns the crossovers of series as outputs named in
// words ("HDN becomes faster than CPU (nodes)"), numbered when one pair
// crosses the same way more than once, valued at the interpolated x.
func CrossoverOutputs(x, lower string, series []Series) []Output {
	var out []Output
	seen := map[string]int{}
	for _, c := range Crossovers(&Plot{Series: series}) {
		name := fmt.Sprintf("%s becomes %s than %s (%s)", c.Above, lower, c.Below, x)
		seen[name]++
		if n := seen[name]; n > 1 {
			name = fmt.Sprintf("%s #%d", name, n)
		}
		out = append(out, Output{Name: name, Value: c.X, Unit: x, Crossover: true})
	}
	return out
}
