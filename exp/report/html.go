package report

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strings"
)

// Section is one experiment of an HTML report.
type Section struct {
	// Title heads the section (e.g. the experiment's name).
	Title string
	// Summary says what the experiment measures.
	Summary string
	// Result holds the tables, notes, parameters and seed.
	Result *Result
	// Facets, when non-empty, are drawn as one figure each instead of
	// Result's plot (a study's sweep combinations, each a result of its
	// own), and crossovers are looked for within each.
	Facets []Facet
}

// Facet is one figure of a faceted section: a result whose plot is drawn
// titled Label (e.g. "link.bandwidth=25Gbps"), its own title in the caption.
type Facet struct {
	Label  string
	Result *Result
}

// Crossover is a change of order between two plot series: Above is above
// Below at X0 and under it at X1 (consecutive x values both series have).
type Crossover struct {
	Above, Below string
	X0, X1       float64
	// X is where the straight lines between the two sweep points cross
	// (X0 < X < X1): an estimate of the crossover between sweep points.
	X float64
}

// Crossovers lists where two series of p swap order, in series order.
// Equal values at an x are skipped, so touching is not crossing.
func Crossovers(p *Plot) []Crossover {
	if p == nil {
		return nil
	}
	var out []Crossover
	caps := strategyNamed(p.Series)
	for i, a := range p.Series {
		for _, b := range p.Series[i+1:] {
			if comparable(a.Name, b.Name, caps) {
				out = append(out, crossings(a, b)...)
			}
		}
	}
	return out
}

// comparable reports whether series named a and b are two alternatives
// for the same thing, whose crossing means something: one-word names
// always; names of several words ("GNN_GIO kkt", "HDN 64²", "CPU
// link.bandwidth=25Gbps") only when they differ in exactly one word, and
// where the plot's names carry a strategy (caps), in that one. So "GNN_GIO
// kkt" meets "GHN_DGPU kkt" (two strategies on one input), not "GHN_DGPU
// circuit" (another input as well) nor "GNN_GIO circuit" (one strategy on
// two inputs: different work, not a crossover of alternatives).
func comparable(a, b string, caps bool) bool {
	wa, wb := strings.Fields(a), strings.Fields(b)
	if len(wa) <= 1 && len(wb) <= 1 {
		return true
	}
	if len(wa) != len(wb) {
		return false
	}
	diff := -1
	for i := range wa {
		if wa[i] != wb[i] {
			if diff >= 0 {
				return false
			}
			diff = i
		}
	}
	return diff >= 0 && (!caps || strategyWord(wa[diff]) && strategyWord(wb[diff]))
}

// strategyNamed reports whether some series' name has several words, one
// of them a strategy's name (see strategyWord).
func strategyNamed(series []Series) bool {
	for _, s := range series {
		if w := strings.Fields(s.Name); len(w) > 1 && slices.ContainsFunc(w, strategyWord) {
			return true
		}
	}
	return false
}

// strategyWord reports whether w is spelled like a strategy's name: capital
// letters, digits and underscores (CPU, GHN_DGPU, HDN_OVERLAP).
func strategyWord(w string) bool {
	if len(w) < 2 {
		return false
	}
	for _, r := range w {
		if !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return w[0] >= 'A' && w[0] <= 'Z'
}

// crossings compares a and b at the x values both have, in increasing x.
func crossings(a, b Series) []Crossover {
	bv := map[float64]float64{}
	for i := range min(len(b.X), len(b.Y)) {
		if isFinite(b.X[i]) && isFinite(b.Y[i]) {
			bv[b.X[i]] = b.Y[i]
		}
	}
	type pt struct{ x, d float64 }
	var pts []pt
	for i := range min(len(a.X), len(a.Y)) {
		if y, ok := bv[a.X[i]]; ok && isFinite(a.Y[i]) && a.Y[i] != y {
			pts = append(pts, pt{a.X[i], a.Y[i] - y})
		}
	}
	slices.SortFunc(pts, func(p, q pt) int { return cmpFloat(p.x, q.x) })
	var out []Crossover
	for i := 1; i < len(pts); i++ {
		p, q := pts[i-1], pts[i]
		x := p.x + (q.x-p.x)*p.d/(p.d-q.d)
		switch {
		case p.d > 0 && q.d < 0:
			out = append(out, Crossover{Above: a.Name, Below: b.Name, X0: p.x, X1: q.x, X: x})
		case p.d < 0 && q.d > 0:
			out = append(out, Crossover{Above: b.Name, Below: a.Name, X0: p.x, X1: q.x, X: x})
		}
	}
	return out
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Verification summarises the "verified" column of r's largest table
// that has one: how many rows are verified (true), out of how many rows
// hold a check (a bool; other cells, such as nil for a not-applicable
// cell, are skipped). ok is false when no table has the column.
func Verification(r *Result) (verified, total int, ok bool) {
	best := -1
	for ti, t := range r.Tables {
		if slices.Contains(t.Columns, "verified") && (best < 0 || len(t.Rows) > len(r.Tables[best].Rows)) {
			best = ti
		}
	}
	if best < 0 {
		return 0, 0, false
	}
	t := r.Tables[best]
	col := slices.Index(t.Columns, "verified")
	for _, row := range t.Rows {
		// A cell that is neither a bool nor yes/no (nil, "-",
		// "payload-free": nothing was checked) is no check.
		v, isCheck := cell(row, col).(bool)
		if str, isString := cell(row, col).(string); isString && (str == "yes" || str == "no") {
			v, isCheck = str == "yes", true
		}
		if isCheck {
			total++
			if v {
				verified++
			}
		}
	}
	return verified, total, true
}

// htmlFigure is one inline SVG plot.
type htmlFigure struct {
	Caption string
	SVG     template.HTML
	// Panels marks a figure of small multiples side by side: it may fill
	// the page's width, so its panels' text is as large as a one-panel
	// figure's.
	Panels bool
}

type htmlTable struct {
	Name    string
	Columns []string
	Rows    [][]string
	Right   []bool
}

type htmlSection struct {
	ID, Title, Summary  string
	Status, StatusClass string
	Crossovers          []string
	HasSeries           bool // some figure has line series, so crossovers were looked for
	Figures             []htmlFigure
	Tables              []htmlTable
	Notes               []string
	Params              []Param
	Seed                uint64
}

// WriteHTML writes one self-contained HTML page holding every section:
// plots as inline SVG, tables, verification status, crossovers, notes,
// parameters and seed. It loads nothing from elsewhere, so it opens
// offline. A short script marks each figure whose drawing has a non-empty
// bounding box (data-rendered) and counts them on <body>
// (data-figures, data-figures-rendered), with the figures' text elements
// that reach past their figure's edge (data-text-outside), for browser
// checks.
func WriteHTML(w io.Writer, title string, sections []Section) error {
	return WritePage(w, Page{Title: title, Sections: sections})
}

// Page is an HTML report: its title, the provenance of the run that
// made it (printed at the top), and its sections.
type Page struct {
	Title      string
	Provenance *Provenance
	Sections   []Section
}

// WritePage writes p as WriteHTML does, with p's provenance under the
// title.
func WritePage(w io.Writer, p Page) error {
	title, sections := p.Title, p.Sections
	page := struct {
		Title      string
		Provenance [][2]string
		Sections   []htmlSection
	}{Title: title, Provenance: p.Provenance.Pairs()}
	for i, s := range sections {
		hs, err := htmlSectionOf(i, s)
		if err != nil {
			return err
		}
		page.Sections = append(page.Sections, hs)
	}
	var b bytes.Buffer
	if err := htmlPage().Execute(&b, page); err != nil {
		return fmt.Errorf("report: HTML: %w", err)
	}
	_, err := w.Write(b.Bytes())
	return err
}

func htmlSectionOf(i int, s Section) (htmlSection, error) {
	r := s.Result
	hs := htmlSection{ID: fmt.Sprintf("s%d", i+1), Title: s.Title, Summary: s.Summary, Notes: r.Notes, Params: r.Params, Seed: r.Seed}
	switch v, n, ok := Verification(r); {
	case !ok:
		hs.Status, hs.StatusClass = "no functional check in this experiment", "none"
	case n == 0:
		hs.Status, hs.StatusClass = "not verified: every simulation ran payload-free (same timing, no bytes to check)", "none"
	case v == n:
		hs.Status, hs.StatusClass = fmt.Sprintf("verified: %d of %d simulations matched their serial reference", v, n), "ok"
	default:
		hs.Status, hs.StatusClass = fmt.Sprintf("NOT verified: %d of %d checked simulations did not match their serial reference", n-v, n), "bad"
	}
	facets := s.Facets
	if len(facets) == 0 && r.Plot != nil {
		facets = []Facet{{Label: r.Plot.Title, Result: r}}
	}
	for _, f := range facets {
		if f.Result.Plot == nil {
			continue
		}
		titled := *f.Result
		plot := *f.Result.Plot
		plot.Title = f.Label
		titled.Plot = &plot
		var svg bytes.Buffer
		if err := WritePlot(&svg, &titled, "svg"); err != nil {
			return hs, fmt.Errorf("report: HTML figure %q: %w", f.Label, err)
		}
		caption := f.Result.Plot.Title
		if f.Label != caption {
			caption += " — " + f.Label
		}
		lay := PlotLayout(&plot)
		hs.Figures = append(hs.Figures, htmlFigure{Caption: caption, SVG: template.HTML(inlineSVG(svg.String())), Panels: lay != nil && lay.Cols > 1})
		hs.HasSeries = hs.HasSeries || (len(plot.Series) > 0 && !plot.Categorical)
		label := ""
		if len(facets) > 1 {
			label = f.Label
		}
		hs.Crossovers = append(hs.Crossovers, CrossoverSentences(label, &plot)...)
	}
	for _, t := range r.Tables {
		// The page shows what the CSV holds: a duration's rounded copy
		// ("end_to_end_us" beside "end_to_end") would be a second column
		// of one quantity (the text report keeps it for scripts).
		t = DropRoundedCopies(t)
		ht := htmlTable{Name: t.Name, Right: make([]bool, len(t.Columns))}
		for j, c := range t.Columns {
			ht.Columns = append(ht.Columns, textHeader(t, j, c))
		}
		for j := range ht.Right {
			ht.Right[j] = true
		}
		for _, row := range t.Rows {
			cells := make([]string, len(row))
			for j, c := range row {
				cells[j] = textCell(c)
				if j < len(ht.Right) && c != nil && !numeric(c) {
					ht.Right[j] = false
				}
			}
			ht.Rows = append(ht.Rows, cells)
		}
		hs.Tables = append(hs.Tables, ht)
	}
	return hs, nil
}

func cell(row []any, j int) any {
	if j < len(row) {
		return row[j]
	}
	return nil
}

func fmtX(x float64) string {
	if x == math.Trunc(x) && math.Abs(x) < 1e15 {
		return fmt.Sprintf("%d", int64(x))
	}
	return fmt.Sprintf("%g", x)
}

// inlineSVG drops what precedes the <svg> element (XML declaration,
// comments), which has no place inside HTML.
func inlineSVG(s string) string {
	if i := strings.Index(s, "<svg"); i >= 0 {
		return s[i:]
	}
	return s
}

// htmlPage parses the page template.
func htmlPage() *template.Template {
	return template.Must(template.New("page").Funcs(template.FuncMap{"setCount": setCount}).Parse(htmlSource))
}

const htmlSource = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 70em; padding: 0 1em; color: #222; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ccc; margin-top: 2em; }
nav ul { columns: 2; }
figure { margin: 1em 0; display: block; }
figure svg { width: 100%; max-width: 52em; height: auto; } /* native size × ~1.4: legible, not page-filling */
figure.panels svg { max-width: 100%; } /* two panels a row: the page's width keeps their text as large as one panel's */
figcaption { font-size: 0.9em; color: #555; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0 1.5em; }
.wide { overflow-x: auto; max-width: 100%; } /* a table wider than the page scrolls instead of being cut */
.long { max-height: 36em; overflow-y: auto; } /* a long table scrolls in place, so the page stays short enough to read and to screenshot whole */
.long thead th { position: sticky; top: 0; }
th, td { border: 1px solid #ddd; padding: 0.15em 0.5em; }
th { background: #f3f3f3; } td.r { text-align: right; font-variant-numeric: tabular-nums; }
.status { padding: 0.3em 0.6em; border-radius: 0.3em; display: inline-block; }
.ok { background: #e3f5e1; } .bad { background: #fbe0e0; } .none { background: #eee; }
details { margin: 0.5em 0 1em; } .src { color: #777; font-size: 0.85em; } tr.set td { font-weight: bold; }
.prov { color: #555; font-size: 0.85em; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{if .Provenance}}<p class="prov">{{range $i, $p := .Provenance}}{{if $i}} · {{end}}{{index $p 0}}: <code>{{index $p 1}}</code>{{end}}</p>{{end}}
<nav><ul>{{range .Sections}}<li><a href="#{{.ID}}">{{.Title}}</a></li>{{end}}</ul></nav>
{{range .Sections}}
<section id="{{.ID}}">
<h2>{{.Title}}</h2>
{{if .Summary}}<p>{{.Summary}}</p>{{end}}
<p class="status {{.StatusClass}}">{{.Status}}</p>
{{if .Crossovers}}<h3>Crossovers</h3><ul>{{range .Crossovers}}<li>{{.}}</li>{{end}}</ul>
{{else if .HasSeries}}<p>Crossovers: none between the plotted series.</p>{{end}}
{{range .Figures}}<figure{{if .Panels}} class="panels"{{end}}>{{.SVG}}<figcaption>{{.Caption}}</figcaption></figure>
{{end}}
{{range $t := .Tables}}<h3>{{.Name}}</h3>
{{if .Rows}}{{if gt (len .Rows) 30}}<p class="src">{{len .Rows}} rows: the table scrolls; the CSV holds them all.</p>{{end}}<div class="wide{{if gt (len .Rows) 30}} long{{end}}"><table><thead><tr>{{range .Columns}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>{{range .Rows}}<tr>{{range $j, $c := .}}<td{{if index $t.Right $j}} class="r"{{end}}>{{$c}}</td>{{end}}</tr>
{{end}}</tbody></table></div>
{{else}}<p class="empty">none (no rows)</p>
{{end}}{{end}}
{{if .Notes}}<h3>Notes</h3><ul>{{range .Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}
<details><summary>Parameters ({{len .Params}}{{with setCount .Params}}, {{.}} set by the user{{end}}) and seed {{.Seed}}</summary>
<table><thead><tr><th>name</th><th>value</th><th>set</th><th>source</th><th>meaning</th></tr></thead>
<tbody>{{range .Params}}<tr{{if .Set}} class="set"{{end}}><td>{{.Name}}</td><td>{{.Value}}</td><td>{{if .Set}}set{{end}}</td><td class="src">{{.Src}}{{if .NoSource}} (no source){{end}}</td><td>{{.Doc}}</td></tr>
{{end}}</tbody></table></details>
</section>
{{end}}
<script>
(function () {
  var figs = document.querySelectorAll("figure");
  var rendered = 0, outside = 0;
  figs.forEach(function (f) {
    var svg = f.querySelector("svg");
    if (!svg) { return; }
    var box = svg.getBBox();
    if (box.width > 0 && box.height > 0) { rendered++; f.setAttribute("data-rendered", "yes"); }
    // Text drawn past the figure's edge (a legend or title set in a wider
    // font than the one the layout measured) is cut off: count it.
    var edge = svg.getBoundingClientRect();
    svg.querySelectorAll("text").forEach(function (t) {
      var r = t.getBoundingClientRect();
      if (r.width > 0 && (r.left < edge.left - 1 || r.right > edge.right + 1 || r.top < edge.top - 1 || r.bottom > edge.bottom + 1)) { outside++; }
    });
  });
  document.body.setAttribute("data-figures", String(figs.length));
  document.body.setAttribute("data-figures-rendered", String(rendered));
  document.body.setAttribute("data-text-outside", String(outside));
  // The laid-out height: a whole-page screenshot fails in Chromium beyond
  // about 100,000 px, so the browser test keeps an eye on it.
  document.body.setAttribute("data-height", String(document.documentElement.scrollHeight));
})();
</script>
</body>
</html>
`

// setCount is how many of ps the user set (0 prints nothing).
func setCount(ps []Param) int {
	n := 0
	for _, p := range ps {
		if p.Set {
			n++
		}
	}
	return n
}
