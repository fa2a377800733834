package exp

import "testing"

// With allreduce.algorithm=rhd a node keeps state for its 2·log2 n
// partners, not for every other node: the 16,384-node payload-free run
// is estimated at a few GiB (measured 1.75 GB peak, docs/speed.md), the
// ring at more than ten times that.
func TestEstimateMemoryRHD(t *testing.T) {
	cfg, err := DefaultConfig("gputn")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Run.Functional = false
	cfg.Run.Parallel = 1
	cfg.Allreduce.Nodes = []int{16384}
	cfg.Allreduce.Strategies = []string{"CPU"}
	ring := EstimateMemory("allreduce", cfg)
	cfg.Allreduce.Algorithm = "rhd"
	rhd := EstimateMemory("allreduce", cfg)
	const gib = 1 << 30
	if rhd.Bytes < 2*gib || rhd.Bytes > 5*gib || ring.Bytes < 10*rhd.Bytes || rhd.Param != "allreduce.nodes" {
		t.Errorf("rhd %.3g B (%s), ring %.3g B", rhd.Bytes, rhd.Param, ring.Bytes)
	}
}
