package cluster

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/sim"
)

func TestPresetsAreValid(t *testing.T) {
	for _, name := range PresetNames() {
		s, err := Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(); err != nil {
			t.Errorf("preset %s: %v", name, err)
		}
	}
	if _, err := Preset("nope"); err == nil {
		t.Error("unknown preset accepted")
	}
	if g := GPUTN(); g.GPU.Launch != 1500*sim.Nanosecond || g.NIC.TrigMaxEntries != 16 || g.GPU.CUs != 24 {
		t.Errorf("gputn preset drifted from the dissertation's Table 6.1: %+v", g.GPU)
	}
	if CompNet().GPU.Mode != "dgpu" || XTQ().GPU.Launch != 0 {
		t.Error("compnet must be dGPU and xtq must have no fixed launch overhead")
	}
}

func TestNewRejectsBadInput(t *testing.T) {
	if _, err := New(sim.New(1), GPUTN(), 0, true); err == nil {
		t.Error("0 nodes accepted")
	}
	bad := GPUTN()
	bad.Link.Bandwidth = 0
	if _, err := New(sim.New(1), bad, 2, true); err == nil {
		t.Error("zero bandwidth accepted")
	}
	c, err := New(sim.New(1), GPUTN(), 3, false)
	if err != nil || len(c.Nodes) != 3 || c.Nodes[2].Name != "node[2]" || c.Nodes[0].Mem.Functional() {
		t.Fatalf("cluster %+v, %v", c, err)
	}
}

// The APU presets' NIC hangs on the coherent system directory; the
// ComP-Net presets (all five designs) and the dGPU/PCIe presets keep it
// behind PCIe.
func TestNICAttachment(t *testing.T) {
	for _, tc := range []struct {
		preset string
		onChip bool
	}{{"gputn", true}, {"xtq", true}, {"compnet", false}, {"compnet_paper", false}, {"spin", false}, {"pulp", false}, {"gpurdma", false}, {"gio", false}} {
		s, err := Preset(tc.preset)
		if err != nil {
			t.Fatal(err)
		}
		c, err := New(sim.New(1), s, 1, false)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Nodes[0].PCIe.OnChip(); got != tc.onChip {
			t.Errorf("preset %s: NIC on the directory = %v, want %v", tc.preset, got, tc.onChip)
		}
		c.Engine.Close()
	}
}

// The documents' presets: 10 wavefronts per SIMD (480 one-wavefront
// work-groups fill 12 CUs) and a host core with 16 requests in flight and
// no prefetcher (gem5 Ruby's sequencer), so one core streams from DRAM at
// 16 × 64 B per miss (the directory's 15 ns, then the 80 ns DRAM access).
func TestDocumentsPresetsResidencyAndHostParallelism(t *testing.T) {
	for _, s := range []Spec{GPUTN(), XTQ(), CompNet()} {
		if s.GPU.WavesPerSIMD != 10 {
			t.Errorf("waves per SIMD %d, want 10", s.GPU.WavesPerSIMD)
		}
		if s.CPU.Outstanding() != 16 || s.CPU.Prefetch {
			t.Errorf("outstanding %d prefetch %v, want 16 and off", s.CPU.Outstanding(), s.CPU.Prefetch)
		}
	}
	c := CompNet()
	if wgs := c.GPU.CUs * c.GPU.SIMDs * c.GPU.WavesPerSIMD; wgs != 480 {
		t.Errorf("compnet holds %d one-wavefront work-groups, want 480", wgs)
	}
	g := GPUTN().CPU
	if got, want := g.CoreStreamRate(), 16*64/(95*sim.Nanosecond).Seconds(); got != want {
		t.Errorf("gputn core stream rate %v B/s, want %v", got, want)
	}
}

// On the documents' APU presets the GPU's misses go through the system
// directory that the NIC's coherent accesses and the host's misses use,
// and pay its lookup; a dGPU's own memory, and the present-day APUs (no
// directory modelled on their hosts either), do not.
func TestGPUMissesThroughTheDirectory(t *testing.T) {
	dgpu, apu := CompNet(), CompNet()
	apu.GPU.Mode = "apu" // GHN_APU's mode on the ComP-Net preset (its NIC stays behind PCIe)
	for _, c := range []struct {
		name  string
		spec  Spec
		extra sim.Duration
	}{
		{"xtq", XTQ(), XTQ().SoC.DirLatency},
		{"gputn", GPUTN(), GPUTN().SoC.DirLatency},
		{"compnet (dGPU)", dgpu, 0},
		{"compnet (APU)", apu, apu.SoC.DirLatency},
		{"mi300a-ss11", MI300ASS11(), 0},
	} {
		cl, err := New(sim.New(1), c.spec, 1, true)
		if err != nil {
			t.Fatal(err)
		}
		g := cl.Nodes[0].GPU
		if want := c.spec.GPU.MissLatency() + c.extra; g.MissLatency() != want {
			t.Errorf("%s: GPU miss %v, want %v", c.name, g.MissLatency(), want)
		}
		if c.extra > 0 && (c.extra != 15*sim.Nanosecond || c.spec.CPU.MissLatency() != c.spec.CPU.DRAMLatency+c.extra) {
			t.Errorf("%s: directory lookup %v, host miss %v: want the same 15 ns lookup on both", c.name, c.extra, c.spec.CPU.MissLatency())
		}
	}
}
