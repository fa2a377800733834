package cluster

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cpu"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/hw/pcie"
	"github.com/gpunetsim/gpunetsim/sim"
)

// On a GH200 node the CPU's and the GPU's word accesses to the other
// side's memory cross NVLink-C2C: a round trip (two link latencies plus
// the line's serialisation) on top of the memory's own latency, and the
// link's byte servers count the bytes; accesses to their own memory do
// not touch the link. The seeds' nodes have no C2C link.
func TestC2CWordCrossings(t *testing.T) {
	s := GH200CX7()
	c, err := New(sim.New(1), s, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Engine.Close()
	nd := c.Nodes[0]
	if nd.C2C == nil || nd.GPULink != nd.C2C {
		t.Fatal("gh200-cx7 node has no C2C link, or the GPU's link is not it")
	}
	hostW := nd.Mem.AllocData(mem.Host, 64, "host")
	gpuW := nd.Mem.AllocData(mem.GPU, 64, "gpu")
	line := sim.FromPicoseconds(float64(mem.LineSize) * s.C2C.Bandwidth.PerByte())
	var cpuHost, cpuGPU, gpuHost, gpuGPU sim.Duration
	nd.CPU.Spawn("host", func(th *cpu.Thread) {
		t0 := th.Now()
		th.Load(hostW)
		cpuHost = th.Now() - t0
		t0 = th.Now()
		th.Load(gpuW)
		cpuGPU = th.Now() - t0
	})
	op, _ := nd.GPU.DispatchOp(gpu.Kernel{Name: "k", WGs: 1, WGSize: 64, Body: func(w *gpu.WG) {
		t0 := w.Now()
		w.AtomicLoad64(gpuW)
		gpuGPU = w.Now() - t0
		t0 = w.Now()
		w.AtomicLoad64(hostW)
		gpuHost = w.Now() - t0
	}})
	nd.GPU.Submit(op)
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	if cpuHost != s.CPU.DRAMLatency {
		t.Errorf("CPU load of host memory = %v, want the DRAM latency %v", cpuHost, s.CPU.DRAMLatency)
	}
	if want := s.CPU.DRAMLatency + 2*s.C2C.Latency + line; cpuGPU != want {
		t.Errorf("CPU load of GPU memory = %v, want DRAM latency + C2C round trip + a line's serialisation = %v", cpuGPU, want)
	}
	if gpuGPU != s.GPU.MissLatency() {
		t.Errorf("GPU load of GPU memory = %v, want the L2 lookup + memory latency %v", gpuGPU, s.GPU.MissLatency())
	}
	if want := s.GPU.MissLatency() + 2*s.C2C.Latency + line; gpuHost != want {
		t.Errorf("GPU load of host memory = %v, want L2 lookup + memory latency + C2C round trip + a line's serialisation = %v", gpuHost, want)
	}
	// One line each way's data: the CPU's read came up, the GPU's went down.
	if _, up := nd.C2C.Stats(pcie.Up); up != mem.LineSize {
		t.Errorf("C2C GPU→CPU bytes = %d, want one line (the CPU's read of GPU memory)", up)
	}
	if _, down := nd.C2C.Stats(pcie.Down); down != mem.LineSize {
		t.Errorf("C2C CPU→GPU bytes = %d, want one line (the GPU's read of host memory)", down)
	}
	seed, err := New(sim.New(1), GPUTN(), 1, false)
	if err != nil {
		t.Fatal(err)
	}
	defer seed.Engine.Close()
	if seed.Nodes[0].C2C != nil {
		t.Error("preset gputn has a C2C link")
	}
}

// putInto has node 1 put n bytes into node 0's buffer in pool and returns
// when the target's event was visible and node 0's C2C link.
func putInto(t *testing.T, s Spec, pool mem.Pool, n uint64) (sim.Time, *pcie.Link) {
	t.Helper()
	c, err := New(sim.New(1), s, 2, true)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Engine.Close()
	n0, n1 := c.Nodes[0], c.Nodes[1]
	eq := n0.NIC.NewEQ(0, 0)
	pt := n0.NIC.PTAlloc(eq, false)
	dst := n0.Mem.Alloc(pool, n, "recv")
	n0.NIC.MEAppend(pt, nic.ME{Start: dst, Length: n, MatchID: nic.AnyID, MatchBits: 7, Options: nic.MEOpPut}, nic.Priority)
	src := n1.Mem.Alloc(pool, n, "send")
	c.Engine.Spawn("host", func(p *sim.Proc) {
		n1.NIC.Doorbell(p, nic.Command{Op: nic.CmdPut, MD: &nic.MD{Start: src, Length: n}, Length: n, Target: 0, PT: pt, MatchBits: 7})
	})
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	ev, ok := eq.Get()
	if !ok || ev.MLength != n {
		t.Fatalf("no %d-byte put event: %+v", n, ev)
	}
	return ev.Time, n0.C2C
}

// The NIC hangs on the Grace's PCIe root complex: a put into host memory
// never touches C2C; a put into GPU memory is read out of the sender's
// HBM over its C2C and written over the receiver's, arriving later by at
// least both sides' crossings, with every payload byte counted on the
// receiver's link toward the GPU.
func TestC2CNICDMA(t *testing.T) {
	const n = 64 << 10
	s := GH200CX7()
	host, l := putInto(t, s, mem.Host, n)
	if _, b := l.Stats(pcie.Down); b != 0 {
		t.Errorf("put into host memory moved %d bytes over C2C", b)
	}
	dev, l := putInto(t, s, mem.GPU, n)
	if _, b := l.Stats(pcie.Down); b != n {
		t.Errorf("put into GPU memory moved %d bytes toward the GPU over C2C, want %d", b, n)
	}
	if min := 2 * s.C2C.Latency; dev-host < min {
		t.Errorf("put into GPU memory done at %v, host memory at %v: want at least the two C2C crossings (%v) later", dev, host, min)
	}
}

// A GPU's trigger store to a Cassini counter on a GH200 crosses C2C before
// the NIC's PCIe link: the store's 8 bytes show on the C2C link toward
// the CPU and on the PCIe link toward the NIC.
func TestC2CTriggerStore(t *testing.T) {
	s := GH200()
	c, err := New(sim.New(1), s, s.Node.GPUs, false)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Engine.Close()
	c.SetCheckInvariants(false) // a bare store: no trigger entry waits for it
	nd := c.Nodes[0]
	var left sim.Time
	c.Engine.Spawn("wg", func(p *sim.Proc) {
		nd.NIC.TriggerWrite(p, 1)
		left = p.Now()
	})
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	if _, up := nd.C2C.Stats(pcie.Up); up != 8 {
		t.Errorf("C2C bytes toward the CPU = %d, want the 8-byte trigger store", up)
	}
	if _, down := nd.PCIe.Stats(pcie.Down); down != 8 {
		t.Errorf("PCIe bytes toward the NIC = %d, want the 8-byte trigger store", down)
	}
	if left <= 0 {
		t.Errorf("the store left at %v", left)
	}
}

// c2c.arrays says where the workloads' arrays live on a superchip: in
// HBM (the default) a kernel's bulk traffic never touches NVLink-C2C; in
// host memory it crosses the link, half its bytes each way, at the link's
// bandwidth per direction, and takes the LPDDR5X's bandwidth. Bulk lines
// of host memory cross it whatever the knob (their address says where
// they live).
func TestC2CArraysInHost(t *testing.T) {
	const n = 64 << 20
	stream := func(s Spec, lines bool) (sim.Duration, uint64, uint64) {
		t.Helper()
		s.GPU.LSUBytes = 0 // one work-group streams at the memory's rate, not one SM's
		c, err := New(sim.New(1), s, 1, false)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Engine.Close()
		nd := c.Nodes[0]
		if s.C2C.ArraysInHost() {
			nd.GPU.UseHostArrays() // as strategy.Setup does
		}
		host := nd.Mem.Alloc(mem.Host, n, "arrays")
		var d sim.Duration
		op, _ := nd.GPU.DispatchOp(gpu.Kernel{Name: "k", WGs: 1, WGSize: 64, Body: func(w *gpu.WG) {
			t0 := w.Now()
			if lines {
				w.StreamLines(host, n)
			} else {
				w.Stream(n)
			}
			d = w.Now() - t0
		}})
		nd.GPU.Submit(op)
		if err := c.Run(); err != nil {
			t.Fatal(err)
		}
		_, up := nd.C2C.Stats(pcie.Up)
		_, down := nd.C2C.Stats(pcie.Down)
		return d, up, down
	}
	s := GH200CX7()
	if s.C2C.Arrays != pcie.ArraysHBM {
		t.Fatalf("gh200-cx7: c2c.arrays = %q, want the default %q", s.C2C.Arrays, pcie.ArraysHBM)
	}
	dHBM, up, down := stream(s, false)
	if up+down != 0 {
		t.Errorf("arrays in HBM: %d bytes crossed C2C, want none", up+down)
	}
	hbm := sim.FromPicoseconds(float64(n) * s.GPU.MemBandwidth.PerByte())
	if dHBM < hbm || dHBM > hbm+2*s.GPU.MemLatency {
		t.Errorf("arrays in HBM: %v, want the HBM's %v", dHBM, hbm)
	}
	s.C2C.Arrays = pcie.ArraysHost
	dHost, up, down := stream(s, false)
	if up != n/2 || down != n/2 {
		t.Errorf("arrays in host memory: C2C carried %d up, %d down, want %d each way", up, down, n/2)
	}
	lp := sim.FromPicoseconds(float64(n) * s.CPU.DRAMBandwidth.PerByte())
	if dHost < lp || dHost > lp+sim.Microsecond {
		t.Errorf("arrays in host memory: %v, want the LPDDR5X's %v (the link's two directions carry more)", dHost, lp)
	}
	s.C2C.Bandwidth /= 10 // 45 GB/s per direction: now the link decides
	dSlow, _, _ := stream(s, false)
	link := sim.FromPicoseconds(float64(n/2) * s.C2C.Bandwidth.PerByte())
	if dSlow < link || dSlow > link+sim.Microsecond {
		t.Errorf("arrays in host memory, C2C at %v: %v, want half the bytes at the link's rate, %v", s.C2C.Bandwidth, dSlow, link)
	}
	s = GH200CX7()
	dLines, up, down := stream(s, true)
	if up+down != n || dLines < lp {
		t.Errorf("bulk lines of host memory: %v, %d bytes across C2C; want ≥ %v, %d", dLines, up+down, lp, n)
	}
	s.C2C.On = false
	s.C2C.Arrays = pcie.ArraysHost
	if err := s.Validate(); err == nil {
		t.Error("c2c.arrays = host without c2c.on: accepted")
	}
	s.C2C.Arrays = "ddr"
	if err := s.Validate(); err == nil {
		t.Error("c2c.arrays = ddr: accepted")
	}
}
