package exp

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/unit"
	"github.com/gpunetsim/gpunetsim/workload"
)

// memChildEnv names the run a child of TestEstimateCoversStrategies
// makes: "preset,strategy,nodes[,experiment]" (default allreduce).
const memChildEnv = "GPUNETSIM_MEM_CHILD"

// memFamilies is one payload-free allreduce per strategy family, each on
// its preset, at a size where its per-node and per-peer state dominate the
// process (the issue-30 families: kernel-boundary, stream-triggered,
// triggered, remote tasks, device shmem with host or CP service, device
// verbs, GIO).
var memFamilies = []struct {
	preset, strategy string
	nodes            int
	exp              string // "" = allreduce
}{
	{"gputn", "CPU", 64, ""},
	{"gputn", "HDN", 64, ""},
	{"gputn", "GDS", 64, ""},
	{"gputn", "GPUTN", 64, ""},
	{"xtq", "XTQ", 64, ""},
	{"xtq", "HSA", 64, ""},
	{"compnet", "GHN_DGPU", 32, ""},
	{"compnet", "COMPNET", 32, ""},
	{"gpurdma", "GNN_GPURDMA", 32, ""},
	{"gio", "GNN_GIO", 16, ""},
	// Jacobi's weak scaling with the device-shmem runtime: its per-node
	// state, which the estimate did not count before (a 128-node run on
	// gio peaked at 515 MB against 80 MiB estimated).
	{"gio", "GHN_DGPU", 32, "jacobiweak"},
	// and with kernels on the gio preset's larger GPU (179 MB at 128
	// nodes against 80 MiB estimated before).
	{"gio", "HDN", 32, "jacobiweak"},
	// and with GIO's connection of every work-group's context to every
	// PE (refused at 128 nodes before connections were made on first
	// use; 814 MB there then, 287 MiB since they are one reserved block).
	{"gio", "GNN_GIO", 32, "jacobiweak"},
	// and with device verbs (GPI's queues per work-group: 255 MB at 128
	// nodes on gio against 80 MiB estimated before).
	{"gio", "GNN_GPURDMA", 32, "jacobiweak"},
	// The halo exchange (26 neighbours, 64 KiB faces) per family, on
	// machine nodes of the preset's GPUs.
	{"gputn", "CPU", 32, "halo3d"},
	{"gputn", "GDS", 32, "halo3d"},
	{"gputn", "GPUTN", 32, "halo3d"},
	{"xtq", "HSA", 32, "halo3d"},
	{"compnet", "COMPNET", 32, "halo3d"},
	{"gpurdma", "GNN_GPURDMA", 32, "halo3d"},
	{"gio", "GNN_GIO", 32, "halo3d"},
	// and on 16 H100s, whose device-shmem puts stream through a 50 MiB
	// L2 (tag blocks made as used; the whole array, 19.7 MB per GPU, was
	// allocated before).
	{"h100-cx7", "GHN_DGPU", 2, "halo3d"},
	// and with 16 MiB faces (6 neighbours) on two h100-cx7 nodes: the
	// packets of the exchange in flight (1.34 GB for GNN_GIO at one
	// exchange against 51 MiB estimated before they were counted).
	{"h100-cx7", "GNN_GIO", 2, "halo3d_16MiB"},
	{"h100-cx7", "GDS", 2, "halo3d_16MiB"},
	// The hierarchical allreduce of 64 MiB on two h100-cx7 nodes: the
	// intra-node phases' packets in flight (475 MB for GNN_GPURDMA at 256
	// MiB against 37 MiB estimated before).
	{"h100-cx7", "GNN_GPURDMA", 2, "allreduce_hier_64MiB"},
	{"h100-cx7", "GNN_GIO", 2, "allreduce_hier_64MiB"},
	// The MoE layer's low-latency all-to-all per family, EP 16.
	{"gputn", "HDN", 16, "moe"},
	{"gputn", "GPUTN", 16, "moe"},
	{"xtq", "HSA", 16, "moe"},
	{"compnet", "GHN_DGPU", 16, "moe"},
	{"gpurdma", "GNN_GPURDMA", 16, "moe"},
	{"gio", "GNN_GIO", 16, "moe"},
	// The ping-pong of 64 MiB (functional): 517 MB for GNN_GIO against
	// the process alone, 32 MiB, estimated before pingpong was counted.
	{"gputn", "GNN_GIO", 2, "pingpong_64MiB"},
	// and 4,096 MPI overflow buffers per rank on two h100-cx7 nodes (16
	// ranks): 216 MB against 32 MiB estimated (65,536 peaked at 3.0 GB).
	{"h100-cx7", "HDN", 2, "pingpong_overflow"},
	// and 256 device-verbs QPs per GPU and peer (gnn.qps; 2 by default)
	// in the MoE all-to-all of EP 16: about 7 KB each (1.73 GB at 1,024
	// against 45 MB estimated before they were counted).
	{"h100-cx7", "GNN_GPURDMA", 16, "moe_qps"},
}

func memFamilyConfig(t *testing.T, preset, strategy string, nodes int, exp string) Config {
	t.Helper()
	cfg, err := DefaultConfig(preset)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Run.Parallel, cfg.Run.Partitions = 1, 1
	switch exp {
	case "jacobiweak": // as the CLI runs it, at one node count
		cfg.JacobiScale.WeakNodes, cfg.JacobiScale.Strategies = []int{nodes}, []string{strategy}
		return cfg
	case "halo3d": // nodes machine nodes, 26 neighbours, 64 KiB faces
		cfg.Run.Functional = false
		cfg.Halo3D.Nodes, cfg.Halo3D.Neighbours, cfg.Halo3D.Strategies = []int{nodes}, []int{26}, []string{strategy}
		cfg.Halo3D.MinFace, cfg.Halo3D.MaxFace = 64*unit.KiB, 64*unit.KiB
		return cfg
	case "halo3d_16MiB": // nodes machine nodes, 6 neighbours, 16 MiB faces
		cfg.Run.Functional = false
		cfg.Halo3D.Nodes, cfg.Halo3D.Neighbours, cfg.Halo3D.Strategies = []int{nodes}, []int{6}, []string{strategy}
		cfg.Halo3D.MinFace, cfg.Halo3D.MaxFace = 16*unit.MiB, 16*unit.MiB
		return cfg
	case "allreduce_hier_64MiB": // nodes machine nodes, 64 MiB per GPU
		cfg.Run.Functional = false
		cfg.AllreduceHier.Nodes, cfg.AllreduceHier.Strategies, cfg.AllreduceHier.Size = []int{nodes}, []string{strategy}, 64*unit.MiB
		return cfg
	case "pingpong_64MiB": // one size, functional
		cfg.PingPong.MinSize, cfg.PingPong.MaxSize, cfg.PingPong.Strategies = 64*unit.MiB, 64*unit.MiB, []string{strategy}
		return cfg
	case "pingpong_overflow": // the smallest size, 4,096 overflow buffers
		cfg.PingPong.MinSize, cfg.PingPong.MaxSize, cfg.PingPong.Strategies = 8, 8, []string{strategy}
		cfg.MPI.OverflowBufs = 4096
		return cfg
	case "moe_qps": // as moe, 256 QPs per GPU and peer
		cfg.Run.Functional = false
		cfg.MoE.EP, cfg.MoE.Modes, cfg.MoE.Strategies = []int{nodes}, []string{workload.MoELowLatency}, []string{strategy}
		cfg.GNN.QPs = 256
		return cfg
	case "moe": // nodes GPUs of expert parallelism, low-latency
		cfg.Run.Functional = false
		cfg.MoE.EP, cfg.MoE.Modes, cfg.MoE.Strategies = []int{nodes}, []string{workload.MoELowLatency}, []string{strategy}
		return cfg
	}
	cfg.Run.Functional = false
	cfg.Allreduce.Nodes, cfg.Allreduce.Strategies = []int{nodes}, []string{strategy}
	return cfg
}

// memExp returns the experiment of a memFamilies entry.
func memExp(exp string) string {
	if exp == "" {
		return "allreduce"
	}
	e, _, _ := strings.Cut(exp, "_16MiB")
	e, _, _ = strings.Cut(e, "_64MiB")
	e, _, _ = strings.Cut(e, "_overflow")
	e, _, _ = strings.Cut(e, "_qps")
	return e
}

// TestEstimateCoversStrategies runs each family's allreduce (and the
// Jacobi, halo and MoE points of memFamilies) in a child process under the
// data limit (ulimit -d) at which the CLI lets the run through: what the
// child maps before the run, the CLI's slack for threads and the estimate.
// The child must complete under it, and its peak resident size (the
// kernel's accounting, what an out-of-memory kill goes by) must be within
// the estimate, so that nothing the estimate lets through is killed; the
// estimate must not exceed the peak more than 3× (plus the process), so
// that runs that fit are not refused. Not a ulimit -v at the estimate: the
// Go runtime reserves far more address space than it uses.
func TestEstimateCoversStrategies(t *testing.T) {
	if os.Getenv(memChildEnv) != "" {
		t.Skip("in a child")
	}
	if runtime.GOOS != "linux" {
		t.Skip("reads the child's peak from /proc")
	}
	for _, f := range memFamilies {
		t.Run(fmt.Sprintf("%s/%s/%d", memExp(f.exp), f.strategy, f.nodes), func(t *testing.T) {
			t.Parallel() // children: each measures its own peak
			need := EstimateMemory(memExp(f.exp), memFamilyConfig(t, f.preset, f.strategy, f.nodes, f.exp))
			cmd := exec.Command(os.Args[0], "-test.run=^TestMemChild$")
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s,%s,%d,%s", memChildEnv, f.preset, f.strategy, f.nodes, f.exp))
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("child: %v\n%s", err, out)
			}
			// The child's own high-water mark: its rusage would also count
			// this process's resident size at the fork.
			_, after, ok := strings.Cut(string(out), "VmHWM:")
			kb, err := strconv.Atoi(strings.Fields(after + " x")[0])
			if !ok || err != nil {
				t.Fatalf("child printed no VmHWM: %v\n%s", err, out)
			}
			rss := float64(kb) * 1024
			t.Logf("peak RSS %s, estimate %s", FormatBytes(rss), FormatBytes(need.Bytes))
			if rss > need.Bytes {
				t.Errorf("peak RSS %s above the estimate %s: a run the estimate lets through may be killed", FormatBytes(rss), FormatBytes(need.Bytes))
			}
			if need.Bytes > 3*rss+memBase {
				t.Errorf("estimate %s more than 3x the peak RSS %s: runs that fit are refused", FormatBytes(need.Bytes), FormatBytes(rss))
			}
		})
	}
}

// TestMemChild is the child of TestEstimateCoversStrategies.
func TestMemChild(t *testing.T) {
	spec := os.Getenv(memChildEnv)
	if spec == "" {
		t.Skip("run by TestEstimateCoversStrategies")
	}
	parts := strings.Split(spec, ",")
	nodes, err := strconv.Atoi(parts[2])
	if err != nil {
		t.Fatal(err)
	}
	exp := ""
	if len(parts) > 3 {
		exp = parts[3]
	}
	ex, err := Lookup(memExp(exp))
	if err != nil {
		t.Fatal(err)
	}
	cfg := memFamilyConfig(t, parts[0], parts[1], nodes, exp)
	// The run goes under the data limit the CLI would accept it under.
	lim, err := limitDataAtEstimate(EstimateMemory(memExp(exp), cfg).Bytes)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("ulimit -d %d KiB\n", lim>>10)
	if _, err := ex.Run(cfg, Env{}); err != nil {
		t.Fatal(err)
	}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, l := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			fmt.Println(l)
		}
	}
}
