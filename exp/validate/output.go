package validate

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/gpunetsim/gpunetsim/exp/report"
)

// published prints an entry's published outcome.
func published(e Entry) string {
	u := ""
	if e.Unit != "" {
		u = " " + e.Unit
	}
	switch e.Kind {
	case Ratio, Absolute:
		return num(*e.Value) + u
	case Bound:
		return "[" + num(*e.Low) + ", " + num(*e.High) + "]" + u
	}
	return string(e.Kind)
}

// simulated prints a result's simulated outcome.
func simulated(r Result) string {
	switch {
	case r.Status == Unrunnable || r.Status == Unevaluated:
		return "-"
	case r.Simulated != nil && (r.Entry.Kind == Ratio || r.Entry.Kind == Absolute || r.Entry.Kind == Bound):
		u := ""
		if r.Entry.Unit != "" {
			u = " " + r.Entry.Unit
		}
		return num(*r.Simulated) + u
	case len(r.Clauses) > 0:
		n := 0
		for _, c := range r.Clauses {
			if c.Holds {
				n++
			}
		}
		return fmt.Sprintf("%d/%d clauses", n, len(r.Clauses))
	}
	return "-"
}

// errorText prints a result's error.
func errorText(r Result) string {
	if r.Error == nil {
		return "-"
	}
	if r.Entry.Kind == Bound && *r.Error == 0 {
		return "in range"
	}
	return fmt.Sprintf("%+.1f%%", 100**r.Error)
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

// docsOf lists the documents of rs in first-appearance order.
func docsOf(rs []Result) []string {
	var docs []string
	for _, r := range rs {
		if !slices.Contains(docs, r.Entry.Doc) {
			docs = append(docs, r.Entry.Doc)
		}
	}
	return docs
}

// Summary is one line: how many entries hold, per document and in all.
func Summary(rs []Result) string {
	var parts []string
	held, unrun, failed := 0, 0, 0
	for _, d := range docsOf(rs) {
		n, h := 0, 0
		for _, r := range rs {
			if r.Entry.Doc == d {
				n++
				if r.Holds {
					h++
				}
			}
		}
		parts = append(parts, fmt.Sprintf("%s %d/%d", d, h, n))
	}
	for _, r := range rs {
		switch {
		case r.Holds:
			held++
		case r.Status == Unrunnable || r.Status == Unevaluated:
			unrun++
		case r.Status == RunFailed:
			failed++
		}
	}
	s := fmt.Sprintf("%d of %d entries hold (%s); %d miss, %d not runnable", held, len(rs), strings.Join(parts, ", "), len(rs)-held-unrun-failed, unrun)
	if failed > 0 {
		s += fmt.Sprintf(", %d failed to run", failed)
	}
	return s
}

// WriteText prints, per document, the validation table, then each entry's
// published claim, checked clauses and notes below it, and at the end the
// summary line.
func WriteText(w io.Writer, rs []Result) error {
	for i, d := range docsOf(rs) {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s %s\n", d, DocTitle(d))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  ID\tFIGURE\tPRESET\tKIND\tPUBLISHED\tSIMULATED\tERROR\tVERDICT")
		for _, r := range rs {
			if r.Entry.Doc == d {
				e := r.Entry
				fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.ID, e.Figure, e.Preset, e.Kind, published(e), simulated(r), errorText(r), r.Status)
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		for _, r := range rs {
			if r.Entry.Doc != d {
				continue
			}
			// Claims, clauses and notes wrap within the text report's 120
			// columns, continuation lines indented under their text.
			io.WriteString(w, report.Wrap(fmt.Sprintf("  %s (%s): ", r.Entry.ID, r.Status), "      ", r.Entry.Claim))
			for _, c := range r.Clauses {
				mark := "holds: "
				if !c.Holds {
					mark = "misses:"
				}
				io.WriteString(w, report.Wrap("      "+mark+" ", "              ", c.Text))
			}
			if r.Note != "" {
				prefix := "      "
				switch r.Status {
				case Unrunnable, Unevaluated:
					prefix += "not runnable: "
				case RunFailed:
					prefix += "failed: "
				}
				io.WriteString(w, report.Wrap(prefix, "        ", strings.TrimPrefix(r.Note, "not runnable: ")))
			}
		}
	}
	_, err := io.WriteString(w, "\n"+report.Wrap("validate: ", "  ", Summary(rs)))
	return err
}

// jsonResult is one entry in --json output.
type jsonResult struct {
	ID        string   `json:"id"`
	Doc       string   `json:"doc"`
	Figure    string   `json:"figure"`
	Preset    string   `json:"preset"`
	Kind      Kind     `json:"kind"`
	Claim     string   `json:"claim"`
	Published *float64 `json:"published"`
	Low       *float64 `json:"low,omitempty"`
	High      *float64 `json:"high,omitempty"`
	Unit      string   `json:"unit,omitempty"`
	Simulated *float64 `json:"simulated"`
	Error     *float64 `json:"error"`
	Holds     bool     `json:"holds"`
	Verdict   Status   `json:"verdict"`
	Clauses   []Clause `json:"clauses,omitempty"`
	Note      string   `json:"note,omitempty"`
}

// WriteJSON prints one JSON object: the provenance (program, version,
// commit, command line, host, wall time; omitted when prov is nil), the
// summary line, and "entries", an array with one object per entry: its
// id, the published and simulated values (null where the kind has none),
// the relative error (null where none), holds, and the clauses and notes.
func WriteJSON(w io.Writer, rs []Result, prov *report.Provenance) error {
	out := make([]jsonResult, len(rs))
	for i, r := range rs {
		e := r.Entry
		out[i] = jsonResult{ID: e.ID, Doc: e.Doc, Figure: e.Figure, Preset: e.Preset, Kind: e.Kind, Claim: e.Claim,
			Published: e.Value, Low: e.Low, High: e.High, Unit: e.Unit,
			Simulated: r.Simulated, Error: r.Error, Holds: r.Holds, Verdict: r.Status, Clauses: r.Clauses, Note: r.Note}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Provenance *report.Provenance `json:"provenance,omitempty"`
		Summary    string             `json:"summary"`
		Entries    []jsonResult       `json:"entries"`
	}{prov, Summary(rs), out})
}

// csvColumns is the header of WriteCSV.
var csvColumns = []string{"id", "doc", "figure", "preset", "kind", "published", "low", "high", "unit", "simulated", "error", "holds", "verdict", "clauses", "note"}

// WriteCSVMeta writes the sidecar JSON of a CSV that WriteCSV wrote to
// the file named csvFile (report.Meta, as gpunetsim run writes beside its
// CSVs): the provenance, the summary line as a note, and the table's file,
// columns and row count. The CSV itself stays one header row and its rows,
// so a plain pandas.read_csv or R read.csv loads it.
func WriteCSVMeta(w io.Writer, csvFile string, rs []Result, prov *report.Provenance) error {
	m := report.Meta{Experiment: "validate", Provenance: prov, Notes: []string{Summary(rs)},
		Tables: []report.MetaTable{{Name: "validation", File: csvFile, Columns: csvColumns, Rows: len(rs)}}}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(m)
}

// WriteCSV prints one row per entry.
func WriteCSV(w io.Writer, rs []Result) error {
	cw := csv.NewWriter(w)
	cw.Write(csvColumns)
	f := func(p *float64) string {
		if p == nil {
			return ""
		}
		return strconv.FormatFloat(*p, 'g', -1, 64)
	}
	for _, r := range rs {
		e := r.Entry
		var cl []string
		for _, c := range r.Clauses {
			cl = append(cl, fmt.Sprintf("%t: %s", c.Holds, c.Text))
		}
		cw.Write([]string{e.ID, e.Doc, e.Figure, e.Preset, string(e.Kind), f(e.Value), f(e.Low), f(e.High), e.Unit,
			f(r.Simulated), f(r.Error), strconv.FormatBool(r.Holds), string(r.Status), strings.Join(cl, "; "), r.Note})
	}
	cw.Flush()
	return cw.Error()
}

// ReportResult is the validation as a report section's result: the table,
// and a note per entry with its clauses or the cause of a miss.
func ReportResult(rs []Result) *report.Result {
	t := report.Table{Name: "validation", Columns: []string{"id", "doc", "figure", "preset", "kind", "published", "simulated", "error", "verdict"}}
	var notes []string
	for _, r := range rs {
		e := r.Entry
		t.Rows = append(t.Rows, []any{e.ID, e.Doc, e.Figure, e.Preset, string(e.Kind), published(e), simulated(r), errorText(r), string(r.Status)})
		var parts []string
		for _, c := range r.Clauses {
			parts = append(parts, fmt.Sprintf("%s (%t)", c.Text, c.Holds))
		}
		if r.Note != "" {
			parts = append(parts, r.Note)
		}
		if len(parts) > 0 {
			notes = append(notes, e.ID+": "+strings.Join(parts, "; "))
		}
	}
	notes = append(notes, "validate: "+Summary(rs))
	return &report.Result{Experiment: "validate", Tables: []report.Table{t}, Notes: notes}
}
