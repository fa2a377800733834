package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// maxTextWidth is the widest line the text report prints: longer
// descriptions and notes wrap, wider tables split into column blocks.
const maxTextWidth = 120

// WriteText prints r for people with every parameter (see WriteTextFor).
func WriteText(w io.Writer, r *Result) error { return WriteTextFor(w, r, nil, nil) }

// WriteTextFor prints r for people, no line wider than 120 columns: each
// table aligned in columns with durations in their largest unit to four
// significant digits ("12.5us", "1.201ms"; the CSV and JSON forms keep
// every picosecond), floats to about four significant digits, then the
// notes, then the parameters, then the seed and the provenance.
//
// Parameters: with own and hardware nil, every parameter with its value,
// source and description. Otherwise those of the sections in own (the
// experiment's knobs) with their descriptions, the sections in hardware
// compactly as name=value, and every parameter the user set wherever it
// is; the rest (other experiments' knobs) only in the JSON and CSV forms.
func WriteTextFor(w io.Writer, r *Result, own, hardware []string) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "experiment %s\n", r.Experiment)
	for _, t := range r.Tables {
		b.WriteByte('\n')
		if t.Name != "" {
			fmt.Fprintf(&b, "%s\n", t.Name)
		}
		writeTable(&b, t)
		if len(t.Rows) == 0 {
			// A header alone reads as a truncated table.
			b.WriteString("  (none)\n")
		}
	}
	if len(r.Notes) > 0 {
		b.WriteByte('\n')
		for _, n := range r.Notes {
			writeWrapped(&b, "note: ", "      ", n)
		}
	}
	writeParams(&b, r.Params, own, hardware)
	fmt.Fprintf(&b, "\nseed %d\n", r.Seed)
	if pairs := r.Provenance.Pairs(); pairs != nil {
		var parts []string
		for _, p := range pairs {
			if p[0] != "command" && p[0] != "program" {
				parts = append(parts, p[0]+" "+p[1])
			}
		}
		writeWrapped(&b, "provenance: ", "  ", strings.Join(parts, ", "))
	}
	_, err := w.Write(b.Bytes())
	return err
}

// section is a parameter name's part before the first dot.
func section(name string) string {
	s, _, _ := strings.Cut(name, ".")
	return s
}

// writeParams prints the parameter part of the text report (see
// WriteTextFor).
func writeParams(b *bytes.Buffer, ps []Param, own, hardware []string) {
	if len(ps) == 0 {
		return
	}
	all := own == nil && hardware == nil
	var full []Param
	var setElsewhere []Param
	for _, p := range ps {
		switch sec := section(p.Name); {
		case all || slices.Contains(own, sec):
			full = append(full, p)
		case p.Set && !slices.Contains(hardware, sec):
			setElsewhere = append(setElsewhere, p)
		}
	}
	if len(full) > 0 || anySet(ps) {
		b.WriteString("\nparameters")
		if !all {
			b.WriteString(" of the experiment")
		}
		if anySet(ps) {
			b.WriteString(" (* = set by the user, differs from the preset)")
		}
		b.WriteByte('\n')
		writeParamLines(b, full)
	}
	if len(setElsewhere) > 0 {
		b.WriteString("\nset by the user but not read by this experiment\n")
		writeParamLines(b, setElsewhere)
	}
	if all || len(hardware) == 0 {
		return
	}
	if anySet(ps) {
		b.WriteString("\nhardware and software parameters read (* = set by the user; meanings and sources: --json,\n" +
			"the CSV's .meta.json sidecar, or gpunetsim params)\n")
	} else {
		b.WriteString("\nhardware and software parameters read (meanings and sources: --json, the CSV's .meta.json\n" +
			"sidecar, or gpunetsim params)\n")
	}
	for _, sec := range hardware {
		var items []string
		for _, p := range ps {
			if section(p.Name) == sec {
				mark := ""
				if p.Set {
					mark = "*"
				}
				items = append(items, mark+strings.TrimPrefix(p.Name, sec+".")+"="+p.Value)
			}
		}
		if len(items) > 0 && !switchedOff(items) {
			writeWrapped(b, fmt.Sprintf("  %-9s ", sec), strings.Repeat(" ", 12), strings.Join(items, "  "))
		}
	}
	writeNoSource(b, ps, own, hardware)
}

// switchedOff reports whether a section's items say its component is
// off ("on=false": c2c on a node without a chip-to-chip link), so its
// unused values are left out of the hardware lines.
func switchedOff(items []string) bool { return slices.Contains(items, "on=false") }

// writeNoSource lists the values read that nobody has published (a
// present-day preset's "no source" knobs), so no result is quoted
// without them.
func writeNoSource(b *bytes.Buffer, ps []Param, own, hardware []string) {
	var items []string
	for _, p := range ps {
		if sec := section(p.Name); p.NoSource && (slices.Contains(own, sec) || slices.Contains(hardware, sec)) {
			items = append(items, p.Name+"="+p.Value)
		}
	}
	if len(items) == 0 {
		return
	}
	b.WriteString("\nvalues read that no source publishes (knobs: sweep them, e.g. --sweep gpu.launch=1us..8us*2,\n" +
		"before trusting a winner; docs/today.md)\n")
	writeWrapped(b, "  ", "  ", strings.Join(items, "  "))
}

// writeParamLines prints one parameter a line, name, value and source
// aligned, the description wrapped under its column.
func writeParamLines(b *bytes.Buffer, ps []Param) {
	nw, vw := 0, 0
	for _, p := range ps {
		nw = max(nw, utf8.RuneCountInString(p.Name))
		vw = max(vw, min(utf8.RuneCountInString(p.Value), 30))
	}
	for _, p := range ps {
		mark := " "
		if p.Set {
			mark = "*"
		}
		head := fmt.Sprintf(" %s%s  %s  ", mark, padRight(p.Name, nw), padRight(p.Value, vw))
		if utf8.RuneCountInString(head)+len(p.Src)+3 > maxTextWidth-30 {
			// A long value (a node list) gets a line of its own.
			writeWrapped(b, fmt.Sprintf(" %s%s  ", mark, padRight(p.Name, nw)), strings.Repeat(" ", nw+4), p.Value)
			head = strings.Repeat(" ", nw+4) + padRight("", vw) + "  "
		}
		head += "[" + p.Src + "] "
		writeWrapped(b, head, strings.Repeat(" ", utf8.RuneCountInString(head)), p.Doc)
	}
}

// padRight pads s with spaces to n runes.
func padRight(s string, n int) string {
	if k := utf8.RuneCountInString(s); k < n {
		return s + strings.Repeat(" ", n-k)
	}
	return s
}

// Wrap returns text after first, wrapped at word boundaries to the text
// report's width (120 columns), continuation lines starting with indent,
// ending in a newline: for commands that print a note or a provenance
// footer the way the text report does.
func Wrap(first, indent, text string) string {
	var b bytes.Buffer
	writeWrapped(&b, first, indent, text)
	return b.String()
}

// WrapWidth is Wrap to width columns.
func WrapWidth(first, indent, text string, width int) string {
	var b bytes.Buffer
	writeWrappedWidth(&b, first, indent, text, width)
	return b.String()
}

// writeWrapped prints text after first, wrapped at word boundaries to
// maxTextWidth columns, continuation lines starting with indent. A word
// longer than a line is cut.
func writeWrapped(b *bytes.Buffer, first, indent, text string) {
	writeWrappedWidth(b, first, indent, text, maxTextWidth)
}

// writeWrappedWidth is writeWrapped to maxWidth columns.
func writeWrappedWidth(b *bytes.Buffer, first, indent, text string, maxTextWidth int) {
	line := first
	width := utf8.RuneCountInString(line)
	start := width
	for _, word := range strings.Fields(text) {
		for utf8.RuneCountInString(word) > maxTextWidth-utf8.RuneCountInString(indent) {
			// cut an over-long word into pieces that fit a line
			n := maxTextWidth - utf8.RuneCountInString(indent) - 1
			r := []rune(word)
			if width > start {
				b.WriteString(strings.TrimRight(line, " ") + "\n")
				line, width = indent, utf8.RuneCountInString(indent)
				start = width
			}
			b.WriteString(line + string(r[:n]) + "\n")
			line, width = indent, utf8.RuneCountInString(indent)
			start = width
			word = string(r[n:])
		}
		wl := utf8.RuneCountInString(word)
		if width > start && width+1+wl > maxTextWidth {
			b.WriteString(strings.TrimRight(line, " ") + "\n")
			line, width = indent, utf8.RuneCountInString(indent)
			start = width
		}
		if width > start {
			line += " "
			width++
		}
		line += word
		width += wl
	}
	b.WriteString(strings.TrimRight(line, " ") + "\n")
}

// WriteTable prints t as the text report prints a table: aligned columns,
// indented by two, no line wider than 120 columns (a wider table continues
// in column blocks that repeat its key columns).
func WriteTable(w io.Writer, t Table) error {
	var b bytes.Buffer
	writeTable(&b, t)
	_, err := w.Write(b.Bytes())
	return err
}

// writeTable prints t in aligned columns two spaces apart, indented by
// two: columns whose cells are all numbers or durations are right-aligned,
// the others left-aligned.
func writeTable(b *bytes.Buffer, t Table) {
	n := len(t.Columns)
	for _, row := range t.Rows {
		n = max(n, len(row))
	}
	cells := make([][]string, 0, len(t.Rows)+1)
	header := make([]string, n)
	for j, c := range t.Columns {
		header[j] = textHeader(t, j, c)
	}
	cells = append(cells, header)
	right := make([]bool, n)
	for j := range right {
		right[j] = true
	}
	for _, row := range t.Rows {
		line := make([]string, n)
		for j := range n {
			var c any
			if j < len(row) {
				c = row[j]
			}
			line[j] = textCell(c)
			if c != nil && !numeric(c) {
				right[j] = false
			}
		}
		cells = append(cells, line)
	}
	width := make([]int, n)
	for _, line := range cells {
		for j, c := range line {
			if utf8.RuneCountInString(c) > maxCell {
				// The CSV and JSON forms keep the whole cell.
				line[j] = string([]rune(c)[:maxCell-1]) + "…"
			}
			width[j] = max(width[j], utf8.RuneCountInString(line[j]))
		}
	}
	gap := "  "
	total := 0
	for _, w := range width {
		total += 1 + w
	}
	if total+2 <= maxTextWidth && total+len(width)+2 > maxTextWidth {
		// One space between columns keeps the rows whole.
		gap = " "
		width[0]++ // keep the two-space indent
	} else if wrapLastColumn(b, cells, width, right, allColumns(len(width))) {
		return
	}
	// Columns that do not fit in maxTextWidth go to further blocks, each
	// repeating the leading text columns (the row's key), so that rows
	// stay recognisable.
	keys := keyColumns(width, right)
	blocks := columnBlocks(width, keys)
	if gap == " " {
		blocks = [][]int{allColumns(len(width))}
	}
	for _, block := range blocks {
		if block[0] != 0 {
			block = append(slices.Clone(keys), block...)
			b.WriteString("  (continued)\n")
		}
		if gap == "  " && wrapLastColumn(b, cells, width, right, block) {
			continue
		}
		for _, line := range cells {
			var l strings.Builder
			for k, j := range block {
				c := line[j]
				pad := strings.Repeat(" ", width[j]-utf8.RuneCountInString(c))
				if k == 0 && gap == " " && !right[j] {
					l.WriteString(" ") // the indent's second space; the pad is at the end
				}
				l.WriteString(gap)
				if right[j] {
					l.WriteString(pad + c)
				} else {
					l.WriteString(c + pad)
				}
			}
			b.WriteString(strings.TrimRight(l.String(), " ") + "\n")
		}
	}
}

// maxCell is the widest table cell the text report prints whole.
const maxCell = 80

// keyColumns returns the leading columns that later blocks repeat: column
// 0 and up to two text columns after it, while they stay narrow (56
// characters: the matrix's workload, hardware and strategy columns).
func keyColumns(width []int, right []bool) []int {
	keys := []int{0}
	used := width[0]
	for j := 1; j < min(3, len(width)-1) && !right[j-1] && !right[j] && used+2+width[j] <= 56; j++ {
		keys = append(keys, j)
		used += 2 + width[j]
	}
	return keys
}

// columnBlocks splits the columns of the given widths into runs that fit
// maxTextWidth together with the key columns (which every later block
// repeats).
func columnBlocks(width []int, keys []int) [][]int {
	keyW := 0
	for _, k := range keys {
		keyW += 2 + width[k]
	}
	var blocks [][]int
	var cur []int
	used := 0
	for j, w := range width {
		if len(cur) > 0 && used+2+w > maxTextWidth && !slices.Contains(keys, j) {
			blocks = append(blocks, cur)
			cur, used = nil, keyW
		}
		cur = append(cur, j)
		used += 2 + w
	}
	return append(blocks, cur)
}

// allColumns returns 0, 1, …, n-1.
func allColumns(n int) []int {
	cols := make([]int, n)
	for j := range cols {
		cols[j] = j
	}
	return cols
}

// wrapLastColumn prints the columns block of a table that is too wide only
// because of its last column, a text column (a reason, a source), with
// that column's cells wrapped under it; it reports whether it did.
func wrapLastColumn(b *bytes.Buffer, cells [][]string, width []int, right []bool, block []int) bool {
	last := block[len(block)-1]
	if len(block) < 2 || right[last] {
		return false
	}
	used := 0
	for _, j := range block[:len(block)-1] {
		used += 2 + width[j]
	}
	room := maxTextWidth - used - 2
	if used+2+width[last] <= maxTextWidth || room < 24 {
		return false
	}
	for _, line := range cells {
		var l strings.Builder
		for _, j := range block[:len(block)-1] {
			c := line[j]
			pad := strings.Repeat(" ", width[j]-utf8.RuneCountInString(c))
			l.WriteString("  ")
			if right[j] {
				l.WriteString(pad + c)
			} else {
				l.WriteString(c + pad)
			}
		}
		var wrapped bytes.Buffer
		writeWrappedWidth(&wrapped, "", "", line[last], room)
		for i, part := range strings.Split(strings.TrimSuffix(wrapped.String(), "\n"), "\n") {
			prefix := l.String()
			if i > 0 {
				prefix = strings.Repeat(" ", used)
			}
			b.WriteString(strings.TrimRight(prefix+"  "+part, " ") + "\n")
		}
	}
	return true
}

// textHeader is the text and HTML tables' header of column j, named c:
// the CSV's header (csvHeader), except for a column whose cells print
// their own unit ("1.201ms", "4MiB", "+12.3%": durations, sizes,
// Quantities), which keeps its bare name. So a column of plain numbers is
// called alike in every form a reader sees: "time [us]", "margin [%]",
// "block [B]", never "time_us" in the terminal beside "time [us]" in the
// CSV. (A Quantity column's Units only names the CSV's unit for when
// every cell is missing.)
func textHeader(t Table, j int, c string) string {
	if timeColumn(t, j) || bytesColumn(t, j) || typedColumn[Quantity](t, j) {
		return c
	}
	return unitHeader(t, j, c)
}

// unitHeader is the one naming rule for a column of plain numbers, named
// c, shared by the text, HTML and CSV forms: the unit Units names, in
// brackets ("block [B]"); else, when the name ends in a unit ("dispatch_us",
// "size_B", "bus_GB/s"; see nameUnit), the name with that unit in
// brackets ("dispatch [us]"), for a column with no value in any row too,
// so that the header does not depend on the data; else the name.
func unitHeader(t Table, j int, c string) string {
	if u := t.Units[c]; u != "" {
		return c + " [" + u + "]"
	}
	if base, u := nameUnit(c); u != "" && (numberColumn(t, j) || emptyColumn(t, j)) {
		return base + " [" + u + "]"
	}
	return c
}

// numeric reports whether a cell is a number or a duration.
func numeric(c any) bool {
	switch c.(type) {
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64, sim.Time:
		return true
	}
	return false
}

// textCell formats a table cell for people.
func textCell(c any) string {
	switch v := c.(type) {
	case nil:
		return "-"
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return strconv.FormatFloat(v, 'g', -1, 64)
		}
		return strconv.FormatFloat(v, 'f', significantDecimals(v), 64)
	case float32:
		return textCell(float64(v))
	case sim.Time:
		return humanTime(v)
	}
	return fmt.Sprint(c)
}

// humanTime prints t in its largest unit with four significant digits,
// trailing zeros dropped: "792.6us", "1.201ms", "2.5us", "160ns".
func humanTime(t sim.Time) string {
	if t == 0 {
		return "0s"
	}
	units := []struct {
		name string
		ps   sim.Time
	}{{"s", sim.Second}, {"ms", sim.Millisecond}, {"us", sim.Microsecond}, {"ns", sim.Nanosecond}, {"ps", sim.Picosecond}}
	a := t
	if a < 0 {
		a = -a
	}
	for _, u := range units {
		if a >= u.ps || u.ps == sim.Picosecond {
			v := float64(t) / float64(u.ps)
			s := strconv.FormatFloat(v, 'f', max(0, 3-int(math.Floor(math.Log10(math.Abs(v))))), 64)
			if strings.Contains(s, ".") {
				s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
			}
			return s + u.name
		}
	}
	return t.String()
}

// significantDecimals returns how many decimals to print v with: about four
// significant digits above 1, three decimals down to 0.01, and up to six
// for smaller magnitudes.
func significantDecimals(v float64) int {
	a := math.Abs(v)
	switch {
	case a >= 1000:
		return 0
	case a >= 100:
		return 1
	case a >= 10:
		return 2
	case a >= 0.01 || a == 0:
		return 3
	}
	return min(6, 2+int(-math.Floor(math.Log10(a))))
}

// WriteCSV writes r as one multi-table CSV archive (RFC 4180): the form
// the golden tests pin, not what the CLI writes (CSVFiles: one table per
// file and a sidecar). The file opens with comment lines
// that record where the numbers came from, each starting with "# ":
//
//	# experiment = allreduce
//	# seed = 1
//	# note = …                    (one per note)
//	# link.bandwidth = 100Gbps [DOC] bandwidth per direction   (one per parameter)
//
// Each table follows as "# table = <name>", a header row and its rows;
// several tables are separated by an empty line. Readers that skip "#"
// lines (pandas comment='#', R comment.char) see a plain CSV when the result
// has one table. Cells keep full precision: floats in shortest round-trip
// form, durations (sim.Time) as microseconds with the column header
// suffixed " [us]", sizes (unit.Bytes) as bytes with " [B]", booleans as
// true/false, a missing cell (nil, "-") as empty.
func WriteCSV(w io.Writer, r *Result) error {
	var b bytes.Buffer
	r = withoutRoundedCopies(r)
	fmt.Fprintf(&b, "# experiment = %s\n", oneLine(r.Experiment))
	fmt.Fprintf(&b, "# seed = %d\n", r.Seed)
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "# note = %s\n", oneLine(n))
	}
	for _, p := range r.Params {
		fmt.Fprintf(&b, "# %s = %s [%s] %s\n", p.Name, oneLine(p.Value), p.Src, oneLine(p.Doc))
	}
	for i, t := range r.Tables {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "# table = %s\n", oneLine(t.Name))
		cw := csv.NewWriter(&b)
		header := make([]string, len(t.Columns))
		units := make([]string, max(len(t.Columns), maxRow(t)))
		for j := range units {
			units[j] = columnUnit(t, j)
		}
		for j, c := range t.Columns {
			header[j] = csvHeader(t, j, c, units[j])
		}
		if err := cw.Write(header); err != nil {
			return err
		}
		for _, row := range t.Rows {
			cells := make([]string, len(row))
			for j, c := range row {
				cells[j] = csvColumnCell(c, units[j])
			}
			if err := cw.Write(cells); err != nil {
				return err
			}
		}
		cw.Flush()
		if err := cw.Error(); err != nil {
			return err
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// withoutRoundedCopies returns r with each table's rounded copy of a
// duration dropped: a column "X_us" (or "X_ns") beside a duration column
// "X" holds the same time rounded for the text report, and the CSV forms
// already write "X [us]" at full precision — two columns of one quantity
// would leave a reader guessing which to load. r itself is not modified.
func withoutRoundedCopies(r *Result) *Result {
	out := *r
	out.Tables = make([]Table, len(r.Tables))
	for i, t := range r.Tables {
		out.Tables[i] = DropRoundedCopies(t)
	}
	return &out
}

// DropRoundedCopies is withoutRoundedCopies for one table (t itself is
// not modified); sensitivity takes its outputs from the same columns.
func DropRoundedCopies(t Table) Table {
	var drop []int
	for j, c := range t.Columns {
		base, ok := strings.CutSuffix(c, "_us")
		if !ok {
			base, ok = strings.CutSuffix(c, "_ns")
		}
		if !ok {
			continue
		}
		if k := slices.Index(t.Columns, base); k >= 0 && timeColumn(t, k) {
			drop = append(drop, j)
		}
	}
	if len(drop) == 0 {
		return t
	}
	keep := func(j int) bool { return !slices.Contains(drop, j) }
	out := Table{Name: t.Name, Units: t.Units}
	for j, c := range t.Columns {
		if keep(j) {
			out.Columns = append(out.Columns, c)
		}
	}
	for _, row := range t.Rows {
		var r []any
		for j, c := range row {
			if keep(j) {
				r = append(r, c)
			}
		}
		out.Rows = append(out.Rows, r)
	}
	return out
}

// timeColumn reports whether every present cell of column j is a
// sim.Time (and there is at least one); missing cells (nil, "-") do not
// count.
func timeColumn(t Table, j int) bool {
	return typedColumn[sim.Time](t, j)
}

// bytesColumn is timeColumn for sizes (unit.Bytes): the CSV writes them as
// whole bytes under a header suffixed " [B]".
func bytesColumn(t Table, j int) bool {
	return typedColumn[unit.Bytes](t, j)
}

// typedColumn reports whether every present cell of column j is a T and
// there is at least one.
func typedColumn[T any](t Table, j int) bool {
	found := false
	for _, row := range t.Rows {
		if j >= len(row) || missingCell(row[j]) {
			continue
		}
		if _, ok := row[j].(T); !ok {
			return false
		}
		found = true
	}
	return found
}

// missingCell reports whether c is a table's "no value": nil, or the "-"
// the text tables show for it.
func missingCell(c any) bool { return c == nil || c == "-" }

// columnUnit is the header suffix of column j in the CSV forms: " [us]"
// for durations, " [B]" for sizes, else none.
func columnUnit(t Table, j int) string {
	switch {
	case timeColumn(t, j):
		return " [us]"
	case bytesColumn(t, j):
		return " [B]"
	}
	if u := quantityUnit(t, j); u != "" {
		return " [" + u + "]"
	}
	if j < len(t.Columns) && t.Units[t.Columns[j]] != "" {
		return " [" + t.Units[t.Columns[j]] + "]"
	}
	return ""
}

// csvHeader is the CSV forms' header of column j, named name, whose
// unit suffix columnUnit gave (durations " [us]", sizes " [B]",
// Quantities their unit): name + unit when there is one, else the
// naming rule every form shares (unitHeader), so that every CSV column
// with a unit says it the same way.
func csvHeader(t Table, j int, name, unit string) string {
	if unit != "" {
		return name + unit
	}
	return unitHeader(t, j, name)
}

// emptyColumn reports whether column j has no present cell (every cell
// nil or "-"): a quantity none of whose rows has a value (moe's inter-node
// GB/s on one node) keeps the header it has when some row has one.
func emptyColumn(t Table, j int) bool {
	for _, row := range t.Rows {
		if j < len(row) && !missingCell(row[j]) {
			return false
		}
	}
	return true
}

// nameUnit splits a column name ending in a unit suffix into the name
// before it and the unit: "_us", "_ns" (durations), "_uj" (energy),
// "_pct" (percent), "_B" (bytes), "_GBps", "_MBps", "_GB/s" (rates). A
// ratio's name ("instr_per_B") carries no unit of its own: "", "".
func nameUnit(name string) (base, unit string) {
	i := strings.LastIndexByte(name, '_')
	if i <= 0 || strings.HasSuffix(name[:i], "_per") || name[:i] == "per" {
		return "", ""
	}
	switch name[i+1:] {
	case "us", "ns", "B", "ppm":
		unit = name[i+1:]
	case "uj":
		unit = "uJ"
	case "pct":
		unit = "%"
	case "GBps", "GB/s":
		unit = "GB/s"
	case "MBps":
		unit = "MB/s"
	default:
		return "", ""
	}
	return name[:i], unit
}

// numberColumn reports whether every present cell of column j is a plain
// number (an integer or a float) and there is at least one.
func numberColumn(t Table, j int) bool {
	found := false
	for _, row := range t.Rows {
		if j >= len(row) || missingCell(row[j]) {
			continue
		}
		switch row[j].(type) {
		case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64:
			found = true
		default:
			return false
		}
	}
	return found
}

// Quantity is a table cell holding a value with a unit, such as a swept
// parameter's "25Gbps": the text and HTML tables and the JSON print Text,
// the CSV writes Value, a plain number, under a header suffixed " [Unit]",
// so a loader reads a numeric column (Unit is the same in every cell of a
// column; a column that mixes units keeps Text).
type Quantity struct {
	Text  string
	Value float64
	Unit  string
}

// String returns q's text form.
func (q Quantity) String() string { return q.Text }

// MarshalText implements encoding.TextMarshaler: JSON holds the text form.
func (q Quantity) MarshalText() ([]byte, error) { return []byte(q.Text), nil }

// ParseQuantity is a parameter value as the CLI prints it ("1.25us",
// "256Gbps", "64KiB", "2GHz", "32") as a table cell: a Quantity printed as
// given, whose CSV form is a number in a fixed unit (us, Gbps, B, GHz;
// none for a plain number), so that a column of one kind of value loads
// as numbers and a column mixing kinds (one knob a row) as numbers beside
// their units. Anything else stays the string s.
func ParseQuantity(s string) any {
	if x, err := strconv.ParseFloat(s, 64); err == nil {
		return Quantity{Text: s, Value: x}
	}
	if d, err := sim.ParseDuration(s); err == nil {
		return Quantity{Text: s, Value: d.Micros(), Unit: "us"}
	}
	if r, err := unit.ParseRate(s); err == nil {
		return Quantity{Text: s, Value: float64(r) * 8 / 1e9, Unit: "Gbps"}
	}
	if b, err := unit.ParseBytes(s); err == nil {
		return Quantity{Text: s, Value: float64(b), Unit: "B"}
	}
	if f, err := unit.ParseFreq(s); err == nil {
		return Quantity{Text: s, Value: float64(f) / 1e9, Unit: "GHz"}
	}
	return s
}

// quantityUnit is the unit shared by every present cell of column j when
// all are Quantities, else "".
func quantityUnit(t Table, j int) string {
	if !typedColumn[Quantity](t, j) {
		return ""
	}
	u := ""
	for _, row := range t.Rows {
		if j >= len(row) || missingCell(row[j]) {
			continue
		}
		q := row[j].(Quantity)
		if q.Unit == "" || (u != "" && q.Unit != u) {
			return ""
		}
		u = q.Unit
	}
	return u
}

// maxRow is the number of cells in t's longest row.
func maxRow(t Table) int {
	n := 0
	for _, row := range t.Rows {
		n = max(n, len(row))
	}
	return n
}

// csvColumnCell is csvCell for a cell of a column whose header carries
// unit (columnUnit): a Quantity there is its plain number.
func csvColumnCell(c any, unit string) string {
	if q, ok := c.(Quantity); ok && unit != "" {
		return strconv.FormatFloat(q.Value, 'g', -1, 64)
	}
	return csvCell(c)
}

// csvCell formats a table cell for machines: a missing value (nil, "-")
// as an empty cell, so a numeric column stays numeric for a loader.
func csvCell(c any) string {
	switch v := c.(type) {
	case nil:
		return ""
	case string:
		if v == "-" {
			return ""
		}
		return v
	case unit.Bytes:
		return strconv.FormatInt(int64(v), 10)
	case sim.Time:
		return strconv.FormatFloat(v.Micros(), 'f', -1, 64)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case float32:
		return strconv.FormatFloat(float64(v), 'g', -1, 32)
	}
	return fmt.Sprint(c)
}

// oneLine keeps a comment value on one line.
func oneLine(s string) string {
	return strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
}

// WriteJSON writes r as one indented JSON object (the Result's JSON form).
// Durations are strings with units ("12.5us"); non-finite floats, which
// JSON cannot hold, become the strings "NaN", "+Inf" and "-Inf".
func WriteJSON(w io.Writer, r *Result) error {
	c := *r
	c.Tables = make([]Table, len(r.Tables))
	for i, t := range r.Tables {
		t.Rows = make([][]any, len(r.Tables[i].Rows))
		for j, row := range r.Tables[i].Rows {
			t.Rows[j] = make([]any, len(row))
			for k, cell := range row {
				t.Rows[j][k] = jsonCell(cell)
			}
		}
		c.Tables[i] = t
	}
	if r.Plot != nil {
		p := *r.Plot
		p.Series = make([]Series, len(r.Plot.Series))
		for i, s := range r.Plot.Series {
			// Non-finite points would break the encoding; drop them.
			s.X, s.Y = finitePoints(s.X, s.Y)
			p.Series[i] = s
		}
		c.Plot = &p
	}
	b, err := json.MarshalIndent(&c, "", "  ")
	if err != nil {
		return fmt.Errorf("report: encoding %s as JSON: %w", r.Experiment, err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

func jsonCell(c any) any {
	switch v := c.(type) {
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return strconv.FormatFloat(v, 'g', -1, 64)
		}
	case float32:
		return jsonCell(float64(v))
	}
	return c
}

// finitePoints returns the points of (x, y) where both coordinates are finite.
func finitePoints(x, y []float64) (fx, fy []float64) {
	n := min(len(x), len(y))
	fx, fy = make([]float64, 0, n), make([]float64, 0, n)
	for i := range n {
		if isFinite(x[i]) && isFinite(y[i]) {
			fx, fy = append(fx, x[i]), append(fy, y[i])
		}
	}
	return fx, fy
}

func isFinite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// WriteFile writes a file atomically: write fills a temporary file in
// path's directory, which replaces path only when write and the close both
// succeed. On failure path is untouched and the temporary file removed, so
// a failed run never leaves a half-written file behind.
func WriteFile(path string, write func(io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := CreateOutputTemp(dir, base)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := write(f); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Chmod(OutputPerm(path)); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// anySet reports whether a parameter of ps is marked Set.
func anySet(ps []Param) bool {
	for _, p := range ps {
		if p.Set {
			return true
		}
	}
	return false
}
