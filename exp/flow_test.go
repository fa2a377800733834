package exp

import (
	"strconv"
	"testing"

	"github.com/gpunetsim/gpunetsim/unit"
)

// TestFlowModelAgreesWithPacketModel cross-validates network.model = flow
// against the packet model on the allreduce: every strategy, odd and even
// node counts, within 2 % (docs/network.md has the 2–64-node table).
func TestFlowModelAgreesWithPacketModel(t *testing.T) {
	cfg, err := DefaultConfig("gputn")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Allreduce.Nodes = []int{2, 5, 8}
	cfg.Allreduce.Size = 512 * unit.KiB
	cfg.Allreduce.Strategies = []string{"CPU", "HDN", "GDS", "GPUTN"}
	run := func(model string) map[string]float64 {
		c := cfg
		c.Network.Model = model
		res, err := runAllreduce(c, Env{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, row := range res.Tables[1].Rows {
			out[row[1].(string)+"/"+strconv.Itoa(row[0].(int))] = row[3].(float64)
		}
		return out
	}
	packet, flow := run("packet"), run("flow")
	for k, p := range packet {
		if d := (flow[k] - p) / p; d > 0.02 || d < -0.02 {
			t.Errorf("%s: flow %.3fus vs packet %.3fus (%.1f%%)", k, flow[k], p, 100*d)
		}
	}
}
