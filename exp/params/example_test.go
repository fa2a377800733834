package params_test

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/exp"
	"github.com/gpunetsim/gpunetsim/exp/params"
)

func ExampleSet() {
	cfg, _ := exp.DefaultConfig("gputn")
	fmt.Println(params.Set(&cfg, "link.bandwidth", "200Gbps"))
	fmt.Println(params.Set(&cfg, "allreduce.nodes", "2-16/2,32"))
	fmt.Println(params.Set(&cfg, "link.bandwidth", "fast"))
	fmt.Println(params.Set(&cfg, "link.bandwith", "1Gbps"))
	fmt.Println(cfg.Allreduce.Nodes)
	v, _ := params.Get(cfg, "link.bandwidth")
	fmt.Println(v)
	// Output:
	// <nil>
	// <nil>
	// link.bandwidth: bad rate "fast": want a number with Gbps, Mbps, GB/s, MB/s or GiB/s (e.g. "100Gbps")
	// unknown parameter "link.bandwith": did you mean link.bandwidth? (gpunetsim params lists all)
	// [2 4 6 8 10 12 14 16 32]
	// 200Gbps
}

func ExampleLoad() {
	cfg, err := params.Load(params.Options{Preset: "xtq", Sets: []string{"allreduce.nodes=2,3,5", "run.seed=7"}})
	fmt.Println(err, cfg.Run.Preset, cfg.Allreduce.Nodes, cfg.Run.Seed)
	_, err = params.Load(params.Options{Sets: []string{"allreduce.nodes=1"}})
	fmt.Println(err)
	// Output:
	// <nil> xtq [2 3 5] 7
	// allreduce.nodes contains 1: node counts must be in [2, 65536]
}

func ExampleFormatInts() {
	fmt.Println(params.FormatInts([]int{2, 4, 6, 8, 16, 32}))
	ns, _ := params.ParseInts("2-8/2,16,32")
	fmt.Println(ns)
	// Output:
	// 2-8/2,16,32
	// [2 4 6 8 16 32]
}
