package strategy

import "testing"

func TestParse(t *testing.T) {
	for in, want := range map[string]Strategy{"GPUTN": GPUTN, "gpu-tn": GPUTN, "cpu": CPU, "Hdn": HDN, "GDS": GDS} {
		got, err := Parse(in)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := Parse("XTQ2"); err == nil {
		t.Error("an unknown strategy was accepted")
	}
}

func TestCharacteristicTableMatchesOverview(t *testing.T) {
	rows := map[Strategy]Info{}
	for _, in := range All() {
		rows[in.Strategy] = in
	}
	if rows[HDN].KernelBoundary != "Yes" || rows[HDN].GPUTriggered != "No" {
		t.Errorf("HDN row %+v", rows[HDN])
	}
	if rows[GPUTN].KernelBoundary != "No" || rows[GPUTN].GPUTriggered != "Yes" || rows[GPUTN].GPUOverhead != "Network trigger" {
		t.Errorf("GPU-TN row %+v", rows[GPUTN])
	}
	if rows[GDS].KernelBoundary != "Yes" || rows[GDS].GPUTriggered != "Yes" {
		t.Errorf("GDS row %+v", rows[GDS])
	}
}
