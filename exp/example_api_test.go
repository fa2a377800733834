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
	// 2 30.837244us 1 37.902574us 0.814 37.10089us 0.831 27.476187us 1.122 26.105509us 1.181
	// 4 47.419408us 1 64.269871us 0.738 61.095139us 0.776 38.535777us 1.231 37.29212us 1.272
	// 8 63.160038us 1 102.219853us 0.618 94.319185us 0.67 48.33477us 1.307 43.44112us 1.454
}
