package exp

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/exp/report"
	"github.com/gpunetsim/gpunetsim/unit"
)

// The quick today study covers every preset × workload, names a winner the
// preset can run (no GPU-TN on the ConnectX presets), and its ranges cover
// every winner row.
func TestTodayStudy(t *testing.T) {
	cfg, err := DefaultConfig("gputn")
	if err != nil {
		t.Fatal(err)
	}
	quickToday(&cfg)
	res, err := runToday(cfg, Env{})
	if err != nil {
		t.Fatal(err)
	}
	where, winners := res.Tables[0].Rows, res.Tables[1].Rows
	seen := map[string]bool{}
	for _, r := range winners {
		seen[r[0].(string)+" "+r[1].(string)] = true
		if strings.HasSuffix(r[0].(string), "cx7") && (r[3] == "GPUTN" || r[5] == "GPUTN") {
			t.Errorf("%v: GPU-TN on a ConnectX preset", r)
		}
	}
	for _, p := range cfg.Today.Presets {
		for _, w := range []string{"pingpong", "allreduce_hier", "halo3d", "moe"} {
			if !seen[p+" "+w] {
				t.Errorf("no winner rows for %s on %s", w, p)
			}
		}
	}
	if len(where) < len(seen) || len(where) > len(winners) {
		t.Errorf("%d ranges for %d (preset, workload) pairs and %d points", len(where), len(seen), len(winners))
	}
	cfg.Today.Presets, cfg.Today.Workloads, cfg.Today.Factor = []string{"h100"}, []string{"fft"}, 1
	err = cfg.Validate()
	for _, field := range []string{"today.presets", "today.workloads", "today.factor"} {
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("want an error naming %s, got %v", field, err)
		}
	}
}

// The tornado perturbs every unpublished value of the preset down and up,
// checks the thinned grid, and reports every flip in the winners table;
// a knob that changes nothing changes no winner.
func TestTodayTornado(t *testing.T) {
	cfg, err := DefaultConfig("gputn")
	if err != nil {
		t.Fatal(err)
	}
	quickToday(&cfg)
	cfg.Today.Presets, cfg.Today.Workloads, cfg.Today.Tornado = []string{"gh200-cx7"}, []string{"pingpong", "allreduce_hier"}, true
	cfg.PingPong.MinSize, cfg.PingPong.MaxSize, cfg.AllreduceHier.Size = 8, 64*unit.KiB, 4*unit.KiB
	res, err := runToday(cfg, Env{})
	if err != nil {
		t.Fatal(err)
	}
	var tornado, trust [][]any
	for _, tb := range res.Tables {
		switch tb.Name {
		case "tornado":
			tornado = tb.Rows
		case "trust":
			trust = tb.Rows
		}
	}
	pc, err := cfg.presetConfig("gh200-cx7")
	if err != nil {
		t.Fatal(err)
	}
	knobs := todayKnobs(pc, cfg.Today.Workloads)
	if len(tornado) != len(knobs) || len(knobs) < 5 {
		t.Fatalf("%d tornado rows for %d knobs %v", len(tornado), len(knobs), knobs)
	}
	for _, r := range tornado {
		if r[4].(int) != 6 { // 4 of the 14 sizes (8 B, 512 B, 32 KiB, 64 KiB) + 2 node counts
			t.Errorf("%v: %v points checked, want 6", r, r[4])
		}
		if r[1] == "node.fabric_latency" && (r[5].(int) != 0 || r[6].(int) != 0) {
			t.Errorf("%v: one GPU per node has no fabric, yet its latency flips a winner", r)
		}
		// Printed as given; in the CSV a number beside its unit.
		if r[1] == "gpu.launch" && (r[2] != report.Quantity{Text: "1.25us", Value: 1.25, Unit: "us"} || r[3] != report.Quantity{Text: "5us", Value: 5, Unit: "us"}) {
			t.Errorf("%v: gpu.launch 2.5us / and x 2 should be 1.25us and 5us", r)
		}
		if r[1] == "shmem.threads" && (r[2] != report.Quantity{Text: "1", Value: 1} || r[3] != report.Quantity{Text: "4", Value: 4}) {
			t.Errorf("%v: shmem.threads 2 / and x 2 should be the counts 1 and 4", r)
		}
	}
	files, err := report.CSVFiles("today.csv", res)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f.Table != "tornado" {
			continue
		}
		csv := string(f.Data)
		if !strings.HasPrefix(csv, "preset,knob,low,low unit,high,high unit,points,") || !strings.Contains(csv, "\ngh200-cx7,gpu.launch,1.25,us,5,us,6,") {
			t.Errorf("tornado CSV: one knob's values a row, each a number beside its unit:\n%s", csv)
		}
	}
	if len(trust) != 2 || trust[0][3] != 4 || trust[0][4].(int) > 4 {
		t.Errorf("trust %v", trust)
	}
	if res.Plot == nil || len(res.Plot.Tornado) != len(knobs) {
		t.Errorf("tornado plot: %+v", res.Plot)
	}
	// A strategy knob re-runs only its family's points (the rows above
	// still count the whole grid); a hardware value re-runs every one.
	items, err := todayList(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ran := map[string]map[string]bool{} // knob -> strategies
	for _, it := range items {
		kn, _, ok := strings.Cut(it.variant, "=")
		if !ok {
			continue
		}
		if ran[kn] == nil {
			ran[kn] = map[string]bool{}
		}
		ran[kn][todayWorkloadNamed(it.workload).strategy(it.point.Config)] = true
	}
	// On gh200-cx7 (one GPU per node, ConnectX): no GPU-TN for the
	// trigger FIFO's pop time, no fabric for its latency, and the
	// ping-pong's one work-group shares no QP: nothing to re-run.
	for _, k := range []string{"nic.trig_pop", "node.fabric_latency"} {
		if got := ran[k]; len(got) != 0 {
			t.Errorf("%s re-ran %v, want none", k, got)
		}
	}
	// allreduce_hier's device-verbs kernel has allreduce_hier.comm_wgs
	// work-groups on gnn.qps QPs: the knob re-runs GNN_GPURDMA alone.
	if got := ran["gnn.qps"]; !slices.Contains(knobs, "gnn.qps") || len(got) != 1 || !got["GNN_GPURDMA"] {
		t.Errorf("knobs %v: gnn.qps re-ran %v, want GNN_GPURDMA only", knobs, got)
	}
	if got := ran["shmem.threads"]; len(got) != 1 || !got["GHN_APU"] {
		t.Errorf("shmem.threads re-ran %v, want GHN_APU (the APU preset's proxy in today's lists) only", got)
	}
	if got := ran["gpu.launch"]; len(got) < 4 {
		t.Errorf("gpu.launch re-ran only %v", got)
	}
	// moe with GNN_GPURDMA: gnn.qps is a knob and re-runs only it.
	cfg.Today.Workloads = []string{"moe"}
	items, err = todayList(cfg)
	if err != nil {
		t.Fatal(err)
	}
	qps := map[string]bool{}
	for _, it := range items {
		if strings.HasPrefix(it.variant, "gnn.qps=") {
			qps[todayWorkloadNamed(it.workload).strategy(it.point.Config)] = true
		}
	}
	if len(qps) != 1 || !qps["GNN_GPURDMA"] {
		t.Errorf("gnn.qps re-ran %v, want GNN_GPURDMA only", qps)
	}
}

// The answer's tables take every workload value of the run but the
// strategies (each preset compares what its NIC runs), as the study's
// per-preset entries do: a value the run sets (the hierarchical
// allreduce's inter-node algorithm, the comm_wgs knobs) reaches the
// preset's configuration.
func TestTodayPresetConfigCarriesWorkloadValues(t *testing.T) {
	cfg, err := DefaultConfig("gputn")
	if err != nil {
		t.Fatal(err)
	}
	cfg.AllreduceHier.Inter, cfg.AllreduceHier.CommWGs, cfg.AllreduceHier.WGSize = "tree", 5, 128
	cfg.Halo3D.CommWGs, cfg.Halo3D.Iters, cfg.MoE.CommWGs, cfg.PingPong.Iters = 3, 4, 7, 3
	cfg.MoE.EP, cfg.MoE.Hidden = []int{8, 16}, 512
	pc, err := cfg.presetConfig("h100-cx7")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		run, pres any
	}{
		{"pingpong", cfg.PingPong, pc.PingPong},
		{"allreduce_hier", cfg.AllreduceHier, pc.AllreduceHier},
		{"halo3d", cfg.Halo3D, pc.Halo3D},
		{"moe", cfg.MoE, pc.MoE},
	} {
		rv, pv := reflect.ValueOf(c.run), reflect.ValueOf(c.pres)
		for i := range rv.NumField() {
			f := rv.Type().Field(i)
			if f.Name == "Strategies" {
				continue
			}
			if !reflect.DeepEqual(rv.Field(i).Interface(), pv.Field(i).Interface()) {
				t.Errorf("%s.%s: the run has %v, the preset's configuration %v", c.name, f.Tag.Get("toml"),
					rv.Field(i).Interface(), pv.Field(i).Interface())
			}
		}
	}
	if slices.Equal(pc.AllreduceHier.Strategies, cfg.AllreduceHier.Strategies) {
		t.Errorf("allreduce_hier.strategies %v: want h100-cx7's own list (no GPU-TN), not the run's", pc.AllreduceHier.Strategies)
	}
}

// The today experiment's memory estimate covers each of its workloads on
// each preset (it was the process alone, 32 MiB, while "run today" peaked
// at 7.5 GB).
func TestTodayEstimateCoversWorkloads(t *testing.T) {
	cfg, err := DefaultConfig("gputn")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Run.Parallel = 1
	need := EstimateMemory("today", cfg)
	for _, p := range cfg.Today.Presets {
		pc, err := cfg.presetConfig(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range cfg.Today.Workloads {
			if m := EstimateMemory(w, pc); m.Bytes > need.Bytes {
				t.Errorf("%s on %s needs %s, the today estimate %s", w, p, FormatBytes(m.Bytes), FormatBytes(need.Bytes))
			}
		}
	}
	if need.Bytes < 1<<30 {
		t.Errorf("today (functional, EP up to 32) estimated at %s, want at least 1 GiB", FormatBytes(need.Bytes))
	}
}
