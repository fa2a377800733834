package mem

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/sim"
)

func TestAllocReadWriteAndBounds(t *testing.T) {
	m := New("m", true)
	a := m.Alloc(Host, 100, "a")
	b := m.Alloc(GPU, 8, "b")
	if a%LineSize != 0 || b%LineSize != 0 || b < a+100 {
		t.Fatalf("allocations a=%#x b=%#x not line-aligned and disjoint", a, b)
	}
	m.Write(a+10, []byte{1, 2, 3})
	got := make([]byte, 3)
	m.Read(a+10, got)
	if string(got) != "\x01\x02\x03" {
		t.Fatalf("read %v", got)
	}
	m.Store64(b, 0xdeadbeef)
	if m.Load64(b) != 0xdeadbeef || m.PoolOf(b) != GPU {
		t.Fatal("word round trip or pool wrong")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("an overrunning access did not panic")
		}
	}()
	m.Bytes(a+120, 16) // past the 128-byte (line-rounded) allocation
}

func TestWatchWakesPollers(t *testing.T) {
	e := sim.New(1)
	m := New("m", true)
	flag := m.AllocData(Host, 8, "flag")
	var seen sim.Time
	e.Spawn("poller", func(p *sim.Proc) {
		p.WaitUntil(m.Watch(flag), "flag", func() bool { return m.Load64(flag) == 1 })
		seen = p.Now()
	})
	e.At(5*sim.Nanosecond, func() { m.Store64(flag+8-8, 1) })
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if seen != 5*sim.Nanosecond {
		t.Fatalf("poller woke at %v", seen)
	}
}

func TestPayloadFreeKeepsControlWords(t *testing.T) {
	m := New("m", false)
	bulk := m.Alloc(Host, 1<<20, "bulk")
	ctl := m.AllocData(Host, 8, "ctl")
	if m.Bytes(bulk, 16) != nil {
		t.Fatal("payload-free allocation has bytes")
	}
	m.Store64(ctl, 9)
	if m.Load64(ctl) != 9 {
		t.Fatal("control word lost in a payload-free memory")
	}
}

func TestServerQueuesFIFO(t *testing.T) {
	s := NewServer(1e9) // 1 byte per ns
	if d := s.Reserve(0, 1000); d != sim.Microsecond {
		t.Fatalf("first done %v", d)
	}
	if d := s.Reserve(500*sim.Nanosecond, 1000); d != 2*sim.Microsecond {
		t.Fatalf("second done %v, want queued behind the first", d)
	}
}

func TestControlLinesInPayloadFreeMemory(t *testing.T) {
	m := New("m", false)
	buf := m.Alloc(Host, 4096, "bulk")
	m.MarkControl(buf+2048, 8)
	m.Store64(buf+2048, 5)
	m.Store64(buf+8, 9) // not a control line: dropped
	if m.Load64(buf+2048) != 5 || m.Load64(buf+8) != 0 {
		t.Fatalf("control word %d, bulk word %d", m.Load64(buf+2048), m.Load64(buf+8))
	}
	if !m.HasData(buf+2000, 100) || m.HasData(buf, 1000) {
		t.Fatal("HasData wrong")
	}
	// A packet-sized write carries the control word with it.
	pkt := make([]byte, 128)
	pkt[120] = 77
	m.Write(buf+2048-120, pkt)
	got := make([]byte, 128)
	m.Read(buf+2048-120, got)
	if got[120] != 77 || got[0] != 0 {
		t.Fatalf("read back %v", got[118:124])
	}
}
