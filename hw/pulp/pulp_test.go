package pulp_test

import (
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/pulp"
	"github.com/gpunetsim/gpunetsim/sim"
)

const ns = sim.Nanosecond // one cycle at 1 GHz

func newAccel(t *testing.T) *pulp.Accel {
	t.Helper()
	a, err := pulp.New(pulp.DefaultSpec(), 1e9, 32)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// An L2 bank is a server with a queue: a second access to the same bank
// waits for the first one's beats; an access to the other bank does not.
func TestL2BankContention(t *testing.T) {
	a := newAccel(t)
	// 64 B = 2 beats of the 32 B port, + 10 cycles base latency.
	if got := a.L2Access(0, 0, 0, 64); got != 12*ns {
		t.Fatalf("lone L2 access done at %v, want 12ns", got)
	}
	// Same bank (address 4 KiB is granule 2 → bank 0): queues 2 beats.
	if got := a.L2Access(0, 1, 4096, 64); got != 14*ns {
		t.Fatalf("second access to the same bank done at %v, want 14ns (2 beats of queueing)", got)
	}
	// Bank 1 (granule 1) is free.
	if got := a.L2Access(0, 2, 2048, 64); got != 12*ns {
		t.Fatalf("access to the other bank done at %v, want 12ns", got)
	}
	if w := a.Stats().L2Wait; w != 2*ns {
		t.Fatalf("L2 queueing %v, want 2ns", w)
	}
}

// A core's load does not wait for a DMA burst to finish: the bank
// arbitrates per beat, so the load alternates with the burst (one beat of
// its own, one of the burst's), and the burst's bank loses that beat:
// the next transfer on the bank starts one beat later.
func TestWordAlternatesWithBurst(t *testing.T) {
	a := newAccel(t)
	a.PacketIn(0, 0, 2048) // bank 0 busy 64 beats
	if got := a.L2Access(0, 0, 0, 8); got != 12*ns {
		t.Fatalf("8 B load during a 2 KiB burst done at %v, want 12ns (1 beat + 1 alternated + 10 latency), not behind the burst", got)
	}
	// Second packet on bank 0: the input port frees at 128, the bank at
	// 64 + 1 (the load's beat) + 64 = 129; + 10 latency.
	if got := a.PacketIn(0, 4096, 2048); got != 139*ns {
		t.Fatalf("next packet on the bank done at %v, want 139ns (delayed by the load's beat)", got)
	}
	// With the bank idle, a load costs its beat and the latency only.
	b := newAccel(t)
	if got := b.L2Access(100*ns, 3, 2048, 8); got != 111*ns {
		t.Fatalf("load on an idle bank done at %v, want 111ns", got)
	}
	// A loop's reads alternate with a burst only while it lasts: 100
	// one-beat reads beside a 64-beat burst take 100 + 64 bank cycles.
	c := newAccel(t)
	c.PacketIn(0, 0, 2048)
	if got := c.L2Reads(0, 0, 0, 8, 100); got != 164*ns {
		t.Fatalf("100 reads beside a 2 KiB burst add %v, want 164ns", got)
	}
	// A loop's reads (L2Reads) add their beats, not a queue per read.
	if got := b.L2Reads(200*ns, 3, 2048, 8, 16); got != 16*ns {
		t.Fatalf("16 reads of 8 B on an idle bank add %v, want 16ns (16 beats)", got)
	}
}

// A packet spanning both banks holds each for its share.
func TestL2Interleave(t *testing.T) {
	a := newAccel(t)
	a.PacketIn(0, 1024, 2048) // 1 KiB in bank 0, 1 KiB in bank 1
	busy := a.Stats().L2BankBusy
	if busy[0] != 32*ns || busy[1] != 32*ns {
		t.Fatalf("bank busy %v, want 32ns each (1 KiB at 32 B/cycle)", busy)
	}
}

// The cluster DMA moves 8 B per cycle plus its setup; cores of one
// cluster share it, cores of different clusters do not.
func TestClusterDMA(t *testing.T) {
	a := newAccel(t)
	s := pulp.DefaultSpec()
	// 2 KiB L2 → L1: 256 beats + setup, + 10 (L2) + 1 (L1) latency.
	want := sim.Time(256+s.DMASetup+s.L2Latency+s.L1Latency) * ns
	if got := a.Stage(0, 0, 0, 2048); got != want {
		t.Fatalf("stage of 2 KiB done at %v, want %v", got, want)
	}
	// Core 4 is in cluster 0 too (core i in cluster i mod 4): it queues.
	if per := sim.Time(256+s.DMASetup) * ns; a.Stage(0, 4, 1<<20, 2048) != want+per {
		t.Fatalf("second stage in the same cluster not done at %v", want+per)
	}
	// Core 1 is in cluster 1 and address 2 KiB in bank 1: nothing shared.
	if got := a.Stage(0, 1, 2048, 2048); got != want {
		t.Fatalf("stage in another cluster done at %v, want %v", got, want)
	}
	if a.Cluster(5) != 1 || a.Cluster(31) != 3 {
		t.Fatal("core i must run in cluster i mod 4")
	}
}

// The output port (32 B/cycle) is shared by the four clusters' outbound
// DMA channels (8 B/cycle each): four clusters together saturate it.
func TestOutPort(t *testing.T) {
	a := newAccel(t)
	var last sim.Time
	for c := range 4 {
		last = max(last, a.Out(0, c, 4096))
	}
	// Each channel: 512 beats + setup; the port: 4 × 128 beats = 512.
	setup := sim.Time(pulp.DefaultSpec().DMASetup)
	if want := (512 + setup + 1) * ns; last != want {
		t.Fatalf("four clusters' 4 KiB out done at %v, want %v", last, want)
	}
	// A fifth transfer from cluster 0 waits for its channel.
	if got, want := a.Out(0, 4, 256), (512+setup+32+setup+1)*ns; got != want {
		t.Fatalf("fifth transfer done at %v, want %v", got, want)
	}
}

// Small transfers waste the port's width: a 4 B beat costs a full cycle.
func TestBeats(t *testing.T) {
	a := newAccel(t)
	var done sim.Time
	for range 32 {
		done = a.OutFromL2(0, 0, 4)
	}
	// 32 beats on the port (and the bank), + 10 cycles L2 latency.
	if done != 42*ns {
		t.Fatalf("32 four-byte transfers done at %v, want 42ns", done)
	}
}

func TestSpecValidate(t *testing.T) {
	if err := pulp.DefaultSpec().Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		edit func(*pulp.Spec)
		want string
	}{
		{func(s *pulp.Spec) { s.Clusters = 0 }, "spin.pulp.clusters = 0: must be in [1, 1024]"},
		{func(s *pulp.Spec) { s.L2Width = 0 }, "spin.pulp.l2_width = 0B: must be in"},
		{func(s *pulp.Spec) { s.L1Banks = 4 }, "spin.pulp.l1_banks = 4: must be ≥ spin.pulp.cores = 8"},
		{func(s *pulp.Spec) { s.L2Interleave = 0 }, "spin.pulp.l2_interleave"},
	} {
		s := pulp.DefaultSpec()
		tc.edit(&s)
		err := s.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate() = %v, want %q", err, tc.want)
		}
	}
	if _, err := pulp.New(pulp.DefaultSpec(), 1e9, 33); err == nil || !strings.Contains(err.Error(), "spin.hpus = 33") {
		t.Errorf("New with 33 cores = %v, want an error naming spin.hpus", err)
	}
}
