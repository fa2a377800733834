package validate

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/exp/report"
)

func fp(v float64) *float64 { return &v }

func TestJudge(t *testing.T) {
	ratio := Entry{ID: "r", Kind: Ratio, Value: fp(0.8)}
	bound := Entry{ID: "b", Kind: Bound, Low: fp(2), High: fp(3)}
	shape := Entry{ID: "s", Kind: Shape}
	tests := []struct {
		name  string
		e     Entry
		o     Outcome
		holds bool
		err   float64
		stat  Status
	}{
		{"ratio inside", ratio, Num(0.9, ""), true, 0.125, Holds},
		{"ratio at the edge", ratio, Num(0.8*1.15, ""), true, 0.15, Holds},
		{"ratio outside", ratio, Num(0.6, ""), false, -0.25, Misses},
		{"bound inside", bound, Num(2.5, ""), true, 0, Holds},
		{"bound below", bound, Num(1.5, ""), false, -0.5 / 3, Misses},
		{"bound above", bound, Num(3.3, ""), false, 0.1, Misses},
		{"bound with a failing clause", bound, Outcome{Value: fp(2.5), Clauses: []Clause{{"x", false}}}, false, 0, Misses},
		{"shape all", shape, Clauses(Check(true, "a"), Check(true, "b")), true, 0, Holds},
		{"shape one fails", shape, Clauses(Check(true, "a"), Check(false, "b")), false, 0, Misses},
		{"shape no clause", shape, Outcome{}, false, 0, RunFailed},
		{"not runnable", ratio, NotRunnable("no model of %s", "x"), false, 0, Unrunnable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := judge(tc.e, tc.o)
			if r.Holds != tc.holds || r.Status != tc.stat {
				t.Fatalf("holds %v status %s, want %v %s", r.Holds, r.Status, tc.holds, tc.stat)
			}
			if r.Error != nil && abs(*r.Error-tc.err) > 1e-9 {
				t.Fatalf("error %v, want %v", *r.Error, tc.err)
			}
		})
	}
}

func TestOutputs(t *testing.T) {
	rs := []Result{
		judge(Entry{ID: "d0-a", Doc: "D0", Kind: Ratio, Value: fp(0.8), Claim: "a/b"}, Num(0.7, "a 7, b 10")),
		judge(Entry{ID: "d0-b", Doc: "D0", Kind: Shape, Claim: "it bends"}, Clauses(Check(false, "bends at 3"))),
		judge(Entry{ID: "d1-c", Doc: "D1", Kind: Absolute, Value: fp(2), Unit: "us", Claim: "t"}, NotRunnable("no HPU model")),
	}
	var text bytes.Buffer
	if err := WriteText(&text, rs); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"D0 ", "D1 ", "d0-a", "-12.5%", "holds", "misses: bends at 3", "not runnable: no HPU model",
		"validate: 1 of 3 entries hold (D0 1/2, D1 0/1); 1 miss, 1 not runnable"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text output lacks %q:\n%s", want, text.String())
		}
	}
	var js bytes.Buffer
	prov := &report.Provenance{Program: "gpunetsim", Version: "v9", Commit: "abc", Command: "gpunetsim validate --json v.json", Host: "h"}
	if err := WriteJSON(&js, rs, prov); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Provenance report.Provenance `json:"provenance"`
		Summary    string            `json:"summary"`
		Entries    []map[string]any  `json:"entries"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	objs := doc.Entries
	if len(objs) != 3 || objs[0]["id"] != "d0-a" || objs[0]["holds"] != true || objs[0]["published"] != 0.8 || objs[0]["simulated"] != 0.7 ||
		objs[1]["holds"] != false || objs[2]["simulated"] != nil || doc.Provenance != *prov || !strings.HasPrefix(doc.Summary, "1 of 3 entries hold") {
		t.Errorf("json: %s", js.String())
	}
	var csv bytes.Buffer
	if err := WriteCSV(&csv, rs); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(csv.String()), "\n"); len(lines) != 4 || !strings.HasPrefix(lines[1], "d0-a,D0,") {
		t.Errorf("csv: %s", csv.String())
	}
	var meta bytes.Buffer
	if err := WriteCSVMeta(&meta, "v.csv", rs, prov); err != nil {
		t.Fatal(err)
	}
	var m report.Meta
	if err := json.Unmarshal(meta.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	if m.Provenance == nil || *m.Provenance != *prov || len(m.Tables) != 1 || m.Tables[0].File != "v.csv" || m.Tables[0].Rows != 3 ||
		strings.Join(m.Tables[0].Columns, ",") != strings.SplitN(csv.String(), "\n", 2)[0] {
		t.Errorf("csv sidecar: %s", meta.String())
	}
}
