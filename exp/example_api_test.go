package exp_test

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/exp"
	"github.com/gpunetsim/gpunetsim/unit"
)

// The README's first Go API snippet: run a registered experiment on a
// preset's configuration.
func Example() {
	cfg, _ := exp.DefaultConfig("gputn")
	cfg.Allreduce.Nodes = []int{2, 4, 8}
	cfg.Allreduce.Size = 256 * unit.KiB
	ex, _ := exp.Lookup("allreduce")
	res, err := ex.Run(cfg, exp.Env{}) // *report.Result: tables, plot, notes
	if err != nil {
		fmt.Println(err)
		return
	}
	t := res.Tables[0]
	fmt.Println(t.Name, t.Columns)
	for _, row := range t.Rows {
		fmt.Println(row...)
	}
	// Output:
	// speedup vs CPU [nodes CPU time CPU speedup HDN time HDN speedup GDS time GDS speedup GHN_APU time GHN_APU speedup GPUTN time GPUTN speedup]
	// 2 30.837244us 1 37.742574us 0.817 36.96089us 0.834 27.418187us 1.125 26.025509us 1.185
	// 4 47.419408us 1 63.949871us 0.742 60.955139us 0.778 38.455777us 1.233 37.21212us 1.274
	// 8 63.160038us 1 101.579853us 0.622 94.179185us 0.671 48.25477us 1.309 43.36112us 1.457
}
