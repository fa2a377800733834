package exp

import (
	"strings"
	"testing"
)

// A hardware value the user changed is named as unused when the cells run
// on the workloads' presets, and not when they run on this run's hardware.
func TestMatrixNotesUnusedHardware(t *testing.T) {
	cfg, err := DefaultConfig("gputn")
	if err != nil {
		t.Fatal(err)
	}
	if n := unusedHardwareNote(cfg); n != "" {
		t.Fatalf("preset hardware: note %q, want none", n)
	}
	cfg.Spec.Link.Latency += 1000
	if n := unusedHardwareNote(cfg); !strings.Contains(n, "not used") {
		t.Fatalf("changed link latency: note %q, want one saying it is not used", n)
	}
	cfg.Matrix.Hardware = matrixOnRun
	if n := unusedHardwareNote(cfg); n != "" {
		t.Fatalf("matrix.hardware = run: note %q, want none", n)
	}
}
