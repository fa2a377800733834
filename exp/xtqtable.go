package exp

import (
	"github.com/gpunetsim/gpunetsim/strategy"
	"github.com/gpunetsim/gpunetsim/workload"
)

// xtqTableChecked wraps an experiment's point list so that every point run
// under a strategy with the remote-task runtime (XTQ, HSA) is checked
// against nic.xtq_table_size before any point runs: the registrations that
// would fail at a point's setup are refused up front (exit 2), not after
// the points before it have run. strats returns a point's strategies.
func xtqTableChecked(list func(Config) ([]Point, error), strats func(Config) []string) func(Config) ([]Point, error) {
	return func(cfg Config) ([]Point, error) {
		pts, err := list(cfg)
		if err != nil {
			return nil, err
		}
		for _, p := range pts {
			for _, name := range strats(p.Config) {
				if s, err := strategy.Parse(name); err != nil || (s != strategy.XTQ && s != strategy.HSA) {
					continue // an unknown name is reported by the point's own validation
				}
				if err := workload.CheckXtqTable(p.Config.NIC.XtqTableSize); err != nil {
					return nil, err
				}
			}
		}
		return pts, nil
	}
}
