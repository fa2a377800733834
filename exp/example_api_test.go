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
	// 2 34.43452us 1 39.10791us 0.881 36.96089us 0.932 27.418187us 1.256 26.025509us 1.323
	// 4 54.86324us 1 68.045879us 0.806 60.955139us 0.9 38.455777us 1.427 37.21212us 1.474
	// 8 66.538168us 1 101.054853us 0.658 94.179185us 0.707 48.25477us 1.379 43.36112us 1.535
}
