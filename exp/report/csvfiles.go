package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// File is one rendered output file: its path and content.
type File struct {
	Path string
	// Table names the table a CSV file holds ("" for the sidecar).
	Table string
	Data  []byte
}

// CSVFiles renders r as plain CSV files, one table each, for
// --csv path: path holds the first (main) table, and each other table
// goes to the same name with the table's name before the extension
// (out.csv, out.allreduce.csv, out.crossovers_time.csv). Every file is
// one header row and rows of the same width, nothing else, so a plain
// pandas.read_csv(f) or R read.csv(f) loads it. What the numbers are and
// where they came from goes to a sidecar JSON, path's stem + ".meta.json"
// (see Meta): experiment, seed, provenance, notes, every parameter, and
// which file holds which table. Cells keep full precision as WriteCSV
// writes them (durations as microseconds, header suffixed " [us]").
func CSVFiles(path string, r *Result) ([]File, error) {
	stem := csvStem(path)
	tables := r.Tables
	if len(tables) == 0 {
		tables = []Table{{Name: r.Experiment, Columns: []string{"experiment"}, Rows: [][]any{{r.Experiment}}}}
	}
	// The main table is the one named after the experiment (the tidy,
	// one-row-per-simulation table), else the first.
	if k := slices.IndexFunc(tables, func(t Table) bool { return t.Name == r.Experiment }); k > 0 {
		tables = append([]Table{tables[k]}, slices.Delete(slices.Clone(tables), k, k+1)...)
	}
	meta := Meta{Experiment: r.Experiment, Seed: r.Seed, Provenance: r.Provenance, Notes: r.Notes}
	for _, o := range r.Outputs {
		if isFinite(o.Value) { // JSON has no NaN; the JSON form keeps them all
			meta.Outputs = append(meta.Outputs, o)
		}
	}
	used := map[string]bool{}
	var files []File
	for i, t := range tables {
		p := path
		if i > 0 {
			slug := tableSlug(t.Name, i)
			for n := 2; used[slug]; n++ {
				slug = tableSlug(t.Name, i) + "_" + strconv.Itoa(n)
			}
			used[slug] = true
			p = stem + "." + slug + ".csv"
		}
		var b bytes.Buffer
		t = DropRoundedCopies(t)
		header, err := writeTableCSV(&b, t)
		if err != nil {
			return nil, fmt.Errorf("report: CSV of table %q: %w", t.Name, err)
		}
		files = append(files, File{Path: p, Table: t.Name, Data: b.Bytes()})
		meta.Tables = append(meta.Tables, MetaTable{Name: t.Name, File: filepath.Base(p), Columns: header, Rows: len(t.Rows)})
	}
	data, err := metaJSON(meta, r.Params)
	if err != nil {
		return nil, fmt.Errorf("report: CSV metadata of %s: %w", r.Experiment, err)
	}
	files = append(files, File{Path: stem + ".meta.json", Data: data})
	return files, nil
}

// metaJSON encodes m with params, indented, each parameter on one line
// (so that a line-oriented search finds a name with its value).
func metaJSON(m Meta, params []Param) ([]byte, error) {
	head, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Write(bytes.TrimSuffix(bytes.TrimRight(head, "\n"), []byte("}")))
	b.Truncate(len(bytes.TrimRight(b.Bytes(), "\n ")))
	b.WriteString(",\n  \"params\": [")
	for i, p := range params {
		line, err := json.Marshal(p)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n    ")
		b.Write(line)
	}
	b.WriteString("\n  ]\n}\n")
	return b.Bytes(), nil
}

// Meta is the sidecar JSON of a result's CSV files (see CSVFiles).
type Meta struct {
	Experiment string      `json:"experiment"`
	Seed       uint64      `json:"seed"`
	Provenance *Provenance `json:"provenance,omitempty"`
	Tables     []MetaTable `json:"tables"`
	Notes      []string    `json:"notes,omitempty"`
	Outputs    []Output    `json:"outputs,omitempty"`
	// Params are every parameter (written last, one a line).
	Params []Param `json:"params,omitempty"`
}

// MetaTable says which CSV file holds which table, with its header.
type MetaTable struct {
	Name    string   `json:"name"`
	File    string   `json:"file"`
	Columns []string `json:"columns"`
	Rows    int      `json:"rows"`
}

// writeTableCSV writes t as a header row and rows all as wide as the
// widest (short rows padded with empty cells, unnamed columns named
// "column N"), and returns the header. A column of Quantities in several
// units (a knob's values, one knob a row) becomes two: its numbers, and
// "NAME unit" holding each row's unit, so neither mixes text and numbers.
func writeTableCSV(b *bytes.Buffer, t Table) ([]string, error) {
	n := len(t.Columns)
	for _, row := range t.Rows {
		n = max(n, len(row))
	}
	var header []string
	units := make([]string, n)
	split := make([]bool, n)
	for j := range n {
		name := "column " + strconv.Itoa(j+1)
		if j < len(t.Columns) && t.Columns[j] != "" {
			name = t.Columns[j]
		}
		units[j] = columnUnit(t, j)
		header = append(header, csvHeader(t, j, name, units[j]))
		if split[j] = units[j] == "" && typedColumn[Quantity](t, j); split[j] {
			header = append(header, name+" unit")
		}
	}
	cw := csv.NewWriter(b)
	if err := cw.Write(header); err != nil {
		return nil, err
	}
	cells := make([]string, 0, len(header))
	for _, row := range t.Rows {
		cells = cells[:0]
		for j := range n {
			var c any
			if j < len(row) {
				c = row[j]
			}
			switch q, ok := c.(Quantity); {
			case split[j] && ok:
				cells = append(cells, strconv.FormatFloat(q.Value, 'g', -1, 64), q.Unit)
			case split[j]:
				cells = append(cells, csvCell(c), "")
			default:
				cells = append(cells, csvColumnCell(c, units[j]))
			}
		}
		if err := cw.Write(cells); err != nil {
			return nil, err
		}
	}
	cw.Flush()
	return header, cw.Error()
}

// tableSlug turns a table name into a file-name part: lower-case letters,
// digits and single underscores ("crossovers (time)" → "crossovers_time");
// "table<i+1>" when nothing is left.
func tableSlug(name string, i int) string {
	var s strings.Builder
	under := false
	for _, r := range strings.ToLower(name) {
		if r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			if under && s.Len() > 0 {
				s.WriteByte('_')
			}
			under = false
			s.WriteRune(r)
			continue
		}
		under = true
	}
	out := s.String()
	if len(out) > 60 {
		out = strings.TrimRight(out[:60], "_")
	}
	if out == "" {
		return "table" + strconv.Itoa(i+1)
	}
	return out
}

// csvStem is path without a .csv extension (any case).
func csvStem(path string) string {
	if ext := filepath.Ext(path); strings.EqualFold(ext, ".csv") {
		return strings.TrimSuffix(path, ext)
	}
	return path
}

// CSVSidecar returns the path of the sidecar JSON CSVFiles writes for
// path, known before any result is.
func CSVSidecar(path string) string { return csvStem(path) + ".meta.json" }

// IsCSVTableFile reports whether file may be one of the further tables'
// files CSVFiles writes for path (the same directory and stem, a table
// slug, .csv), whatever tables the result turns out to hold: what a
// caller checks before the run, when only the path is known.
func IsCSVTableFile(path, file string) bool {
	stem := csvStem(path)
	if filepath.Dir(filepath.Clean(file)) != filepath.Dir(filepath.Clean(stem)) {
		return false
	}
	slug, ok := strings.CutPrefix(filepath.Base(file), filepath.Base(stem)+".")
	if !ok {
		return false
	}
	slug, ok = strings.CutSuffix(slug, ".csv")
	return ok && slug != "" && strings.Trim(slug, "abcdefghijklmnopqrstuvwxyz0123456789_") == ""
}
