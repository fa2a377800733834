package report

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/sim"
)

func TestCrossovers(t *testing.T) {
	p := &Plot{Series: []Series{
		{Name: "A", X: []float64{8, 2, 4, 16}, Y: []float64{1, 3, 2, 0.5}},
		{Name: "B", X: []float64{2, 4, 8, 16}, Y: []float64{1, 2, 2, 2}}, // A above, equal at 4, then below
		{Name: "C", X: []float64{2, 16}, Y: []float64{0, 1}},             // below A at 2, above at 16: no shared x between
	}}
	got := Crossovers(p)
	// X interpolates linearly between the bracketing points (the tie at 4
	// is skipped): A-B goes 2 → -1 over 2..8, A-C 3 → -0.5 over 2..16.
	want := []Crossover{{Above: "A", Below: "B", X0: 2, X1: 8, X: 6}, {Above: "A", Below: "C", X0: 2, X1: 16, X: 14}}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("crossover %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	if Crossovers(&Plot{Series: []Series{p.Series[1], p.Series[1]}}) != nil {
		t.Error("identical series cross")
	}
}

func TestVerification(t *testing.T) {
	r := &Result{Tables: []Table{
		{Columns: []string{"x", "verified"}, Rows: [][]any{{1, true}}},
		{Columns: []string{"verified", "y"}, Rows: [][]any{{true, 1}, {false, 2}, {true, 3}, {nil, 4}}},
	}}
	if v, n, ok := Verification(r); !ok || v != 2 || n != 3 {
		t.Fatalf("got %d of %d, %v", v, n, ok)
	}
	if _, _, ok := Verification(&Result{Tables: []Table{{Columns: []string{"x"}}}}); ok {
		t.Fatal("a result without a verified column has a status")
	}
	// yes/no cells are checks (moe); "-" and "payload-free" are none.
	r = &Result{Tables: []Table{{Columns: []string{"verified"}, Rows: [][]any{{"yes"}, {"no"}, {"payload-free"}, {"-"}, {"yes"}}}}}
	if v, n, ok := Verification(r); !ok || v != 2 || n != 3 {
		t.Fatalf("yes/no cells: got %d of %d, %v", v, n, ok)
	}
}

// A result whose every simulation ran payload-free says so, not
// "verified: 0 of 0" in green nor "NOT verified" in red.
func TestPayloadFreeStatus(t *testing.T) {
	r := &Result{Experiment: "x", Tables: []Table{{Name: "x", Columns: []string{"n", "verified"}, Rows: [][]any{{1, "-"}, {2, "payload-free"}}}}}
	var b bytes.Buffer
	if err := WriteHTML(&b, "t", []Section{{Title: "x", Result: r}}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if !strings.Contains(page, `class="status none">not verified: every simulation ran payload-free`) {
		t.Errorf("status of an all payload-free result: %s", page[strings.Index(page, "status"):][:200])
	}
}

// The page holds one inline SVG per facet, the status, crossovers,
// escaped table cells and the parameters, and refers to nothing outside.
func TestWriteHTML(t *testing.T) {
	r := sample()
	facet := *r
	facet.Plot = &Plot{Title: "facet <2>", XLabel: "nodes", Series: []Series{
		{Name: "A", X: []float64{2, 4}, Y: []float64{1, 3}}, {Name: "B", X: []float64{2, 4}, Y: []float64{2, 2}}}}
	var b bytes.Buffer
	if err := WriteHTML(&b, "title & more", []Section{{Title: "one", Summary: "first", Result: r}, {Title: "two", Result: r, Facets: []Facet{{"x=1", &facet}, {"x=<2>", &facet}}}}); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	for _, want := range []string{
		"<title>title &amp; more</title>", `<section id="s1">`, `<section id="s2">`,
		"x=&lt;2&gt;: B falls below A between nodes = 2 and 4 and stays below to the end of the sweep", "facet &lt;2&gt; — x=1",
		"<td>run.seed</td><td>42</td>", "GPUTN, &#34;quoted&#34;", "NOT verified: 1 of 3 checked",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if n := strings.Count(s, "<figure><svg"); n != 3 {
		t.Errorf("%d inline SVG figures, want 3 (one plot, two facets)", n)
	}
	if strings.Contains(s, "<?xml") {
		t.Error("an XML declaration inside the HTML")
	}
	// A table without rows says so instead of a bare header.
	empty := *r
	empty.Tables = []Table{{Name: "crossovers (time)", Columns: []string{"becomes faster", "than"}}}
	b.Reset()
	if err := WriteHTML(&b, "t", []Section{{Title: "e", Result: &empty}}); err != nil {
		t.Fatal(err)
	}
	if s := b.String(); !strings.Contains(s, "<h3>crossovers (time)</h3>\n<p class=\"empty\">none (no rows)</p>") || strings.Contains(s, "<th>becomes faster</th>") {
		t.Errorf("empty table: %s", s[strings.Index(s, "crossovers (time)"):][:200])
	}
}

// A long table scrolls in its own box (so the page stays short enough for
// a whole-page screenshot) and says so; a short one does not.
func TestLongTableScrolls(t *testing.T) {
	for _, tc := range []struct {
		rows int
		long bool
	}{{30, false}, {31, true}, {400, true}} {
		r := *sample()
		tab := Table{Name: "rows", Columns: []string{"i"}}
		for i := 0; i < tc.rows; i++ {
			tab.Rows = append(tab.Rows, []any{i})
		}
		r.Tables = []Table{tab}
		var b bytes.Buffer
		if err := WriteHTML(&b, "t", []Section{{Title: "e", Result: &r}}); err != nil {
			t.Fatal(err)
		}
		s := b.String()
		if got := strings.Contains(s, `<div class="wide long">`); got != tc.long {
			t.Errorf("%d rows: scrolling box %v, want %v", tc.rows, got, tc.long)
		}
		if got := strings.Contains(s, strconv.Itoa(tc.rows)+" rows: the table scrolls"); got != tc.long {
			t.Errorf("%d rows: row-count line %v, want %v", tc.rows, got, tc.long)
		}
		if n := strings.Count(s, "<tr><td"); n < tc.rows {
			t.Errorf("%d rows: page holds %d", tc.rows, n)
		}
	}
}

// A figure of panels side by side may fill the page's width (its text
// stays as large as a one-panel figure's); a one-panel figure keeps the
// narrower cap.
func TestWriteHTMLPanelsFillTheWidth(t *testing.T) {
	r := sample()
	var series []Series
	for _, g := range []string{"x=1", "x=2"} {
		for _, s := range []string{"CPU", "HDN", "GDS", "GPUTN", "XTQ", "HSA"} {
			series = append(series, Series{Name: s + " " + g, X: []float64{2, 4}, Y: []float64{1, 3}})
		}
	}
	r.Plot = &Plot{Title: "many", XLabel: "nodes", YLabel: "time (us)", Series: series}
	one := sample()
	var b bytes.Buffer
	if err := WriteHTML(&b, "t", []Section{{Title: "many", Result: r}, {Title: "one", Result: one}}); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	if n := strings.Count(s, `<figure class="panels"><svg`); n != 1 {
		t.Errorf("%d figures of panels, want 1", n)
	}
	if n := strings.Count(s, "<figure><svg"); n != 1 {
		t.Errorf("%d one-panel figures, want 1", n)
	}
}

// An SVG's text keeps the width the layout measured in Liberation Serif
// (a viewer without that font drew the labels wider, past the figure's
// edge): every text element states its textLength, its font falls back
// to metric-compatible faces, and no font travels with the figure (an
// embedded one made each SVG about 0.5 MB); nor with a page of figures.
func TestSVGTextFitted(t *testing.T) {
	r := &Result{Experiment: "x", Plot: &Plot{Title: "a title", XLabel: "nodes", YLabel: "time (us)",
		Series: []Series{{Name: "a long legend label", X: []float64{1, 2}, Y: []float64{1, 2}}}}}
	var svg bytes.Buffer
	if err := WritePlot(&svg, r, "svg"); err != nil {
		t.Fatal(err)
	}
	s := svg.String()
	texts := strings.Count(s, "<text ")
	if texts < 5 || strings.Count(s, `<text textLength="`) != texts || strings.Count(s, `lengthAdjust="spacingAndGlyphs"`) != texts {
		t.Errorf("%d text elements, %d with a textLength", texts, strings.Count(s, "textLength="))
	}
	if strings.Contains(s, "@font-face") || strings.Contains(s, "font-family:Liberation Serif;") ||
		!strings.Contains(s, "font-family:'Liberation Serif','Times New Roman',Times,'DejaVu Serif Condensed',serif;") {
		t.Errorf("the SVG embeds a font or names no fallback:\n%s", s[:min(600, len(s))])
	}
	if len(s) > 64<<10 {
		t.Errorf("the SVG is %d bytes, want under 64 KiB", len(s))
	}
	var page bytes.Buffer
	two := []Section{{Title: "a", Result: r}, {Title: "b", Result: r}}
	if err := WriteHTML(&page, "t", two); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(page.String(), "@font-face"); n != 0 {
		t.Errorf("%d @font-face rules in a page of two figures, want none", n)
	}
	if strings.Count(page.String(), "<svg") != 2 {
		t.Errorf("want two inline figures")
	}
}

// A number column whose name ends in a unit is headed as the CSV heads it
// ("time [us]", "margin [%]"); before, the HTML showed "time_us" beside
// the CSV's "time [us]". Durations keep their name: their cells carry
// the unit.
func TestHTMLHeadersNameUnitsAsTheCSV(t *testing.T) {
	r := &Result{Experiment: "x", Tables: []Table{{Name: "x",
		Columns: []string{"time", "lat_us", "margin_pct", "label_us", "instr_per_B"},
		Rows:    [][]any{{sim.Time(1500000), 1.5, 12.5, "a", 0.25}}}}}
	var b bytes.Buffer
	if err := WriteHTML(&b, "t", []Section{{Title: "x", Result: r}}); err != nil {
		t.Fatal(err)
	}
	want := "<th>time</th><th>lat [us]</th><th>margin [%]</th><th>label_us</th><th>instr_per_B</th>"
	if !strings.Contains(b.String(), want) {
		s := b.String()
		t.Errorf("page lacks %q:\n%s", want, s[strings.Index(s, "<thead>"):][:300])
	}
}

// The HTML table leaves out a duration's rounded copy ("end_to_end_us"
// beside "end_to_end"), as the CSV does: before, the page showed
// "end_to_end" and "end_to_end [us]", one quantity twice, beside a CSV
// with one column of it. A "_us" column with no duration beside it stays.
func TestHTMLDropsRoundedCopies(t *testing.T) {
	r := &Result{Experiment: "x", Tables: []Table{{Name: "x",
		Columns: []string{"strategy", "end_to_end", "end_to_end_us", "runner_up_us", "end_to_end_ns"},
		Rows:    [][]any{{"CPU", sim.Time(1234567), 1.235, 2.5, 1234.6}}}}}
	var b bytes.Buffer
	if err := WriteHTML(&b, "t", []Section{{Title: "x", Result: r}}); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	want := "<th>strategy</th><th>end_to_end</th><th>runner_up [us]</th></tr>"
	if !strings.Contains(s, want) {
		t.Errorf("page lacks %q:\n%s", want, s[strings.Index(s, "<thead>"):][:300])
	}
	if strings.Contains(s, ">1.235<") || strings.Contains(s, ">1235<") {
		t.Errorf("page shows a rounded copy's cell:\n%s", s[strings.Index(s, "<thead>"):][:300])
	}
	if len(r.Tables[0].Columns) != 5 {
		t.Errorf("the result's table was modified: %v", r.Tables[0].Columns)
	}
}
