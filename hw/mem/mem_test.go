package mem

import (
	"math/rand/v2"
	"slices"
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

// RegionName names the allocation an address falls in, anywhere in it,
// and "" for an address no allocation holds.
func TestRegionName(t *testing.T) {
	m := New("m", true)
	a := m.Alloc(Host, 100, "a")
	b := m.AllocData(GPU, 8, "b")
	for _, c := range []struct {
		at   Addr
		want string
	}{{a, "a"}, {a + 99, "a"}, {b, "b"}, {b + 7, "b"}, {a - 1, ""}} {
		if got := m.RegionName(c.at); got != c.want {
			t.Errorf("RegionName(%#x) = %q, want %q", uint64(c.at), got, c.want)
		}
	}
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

// Consume gives back the whole pages of a consumed range inside the
// allocation's scratch range (they read as zeros), and nothing else: not
// the partial pages at its ends, not bytes outside the scratch range, not
// a small allocation on the Go heap.
func TestConsumeGivesBackScratchPages(t *testing.T) {
	m := New("m", true)
	const size = 4 << 20
	a := m.Alloc(Host, size, "buf")
	small := m.Alloc(Host, 64<<10, "small")
	m.Scratch(a+size/2, size/2)
	all := m.Bytes(a, size)
	for i := range all {
		all[i] = byte(i%251 + 1)
	}
	copy(m.Bytes(small, 64<<10), all)
	// From the middle of a page before the scratch range to the middle of
	// a page inside it, then one spanning whole pages.
	m.Consume(a+size/2-100, 5*pageSize+300)
	m.Consume(a+size/2+8*pageSize+10, 4*pageSize)
	m.Consume(small, 64<<10)
	zero := func(off int) bool { return all[off] == 0 }
	for off := range size {
		inPages := off >= size/2 && off < size/2+5*pageSize ||
			off >= size/2+9*pageSize && off < size/2+12*pageSize
		if zero(off) != inPages {
			t.Fatalf("byte %d: zero=%v, want %v (given back: the whole scratch pages consumed)", off, zero(off), inPages)
		}
	}
	if got, want := m.Consumed(), uint64(8*pageSize); got != want {
		t.Errorf("Consumed = %d, want %d", got, want)
	}
	if b := m.Bytes(small, 64<<10); b[100] != byte(100%251+1) {
		t.Error("a heap allocation outside any scratch range lost its bytes")
	}
	free := New("free", false)
	f := free.Alloc(Host, size, "buf")
	free.Scratch(f, size)
	free.Consume(f, size)
	if free.Consumed() != 0 {
		t.Error("a payload-free memory gave bytes back")
	}
}

// TestWatchOnceForgottenAfterWrite: a WatchOnce watch wakes its poller at
// the write and is then forgotten (a poller of thousands of flags in turn
// keeps one watch); the poller asking again gets a fresh watch the next
// write wakes; a line Watch handed out stays watched.
func TestWatchOnceForgottenAfterWrite(t *testing.T) {
	e := sim.New(1)
	m := New("m", false)
	buf := m.Alloc(GPU, 1<<16, "flags")
	flags := []Addr{buf + 64, buf + 8192, buf + 8192 + 128}
	for _, f := range flags {
		m.MarkControl(f, 8)
	}
	var woke []sim.Time
	e.Spawn("poller", func(p *sim.Proc) {
		for i, f := range flags {
			for m.Load64(f) != uint64(i+1) {
				p.Wait(m.WatchOnce(f), "flag")
			}
			woke = append(woke, p.Now())
		}
	})
	kept := m.Watch(buf + 4096) // a persistent watch, never waited on
	for i, f := range flags {
		e.At(sim.Time(i+1)*sim.Nanosecond, func() { m.Store64(f+0, 7) }) // a wrong value: wait again
		e.At(sim.Time(i+1)*sim.Nanosecond+500, func() { m.Store64(f, uint64(i+1)) })
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if len(woke) != 3 || woke[2] != 3*sim.Nanosecond+500 {
		t.Fatalf("poller saw its flags at %v", woke)
	}
	if m.nwatched != 1 {
		t.Fatalf("%d lines still watched, want 1 (the Watch one)", m.nwatched)
	}
	r, _ := m.find(buf, 0)
	if w := r.watched.find(buf + 4096); w == nil || w.sig != kept {
		t.Fatal("the Watch line was forgotten")
	}
	if !r.watched.maybe(buf+4096, buf+4104) || r.watched.maybe(buf+8192, buf+8192+192) {
		t.Fatal("the watch summary does not follow the forgotten watches")
	}
}

// With slots (ScratchSlots), a page that slots share goes back once the
// last of them is consumed (by Consumed at the latest: dead pages gather
// before they go), a slot consumed twice counts once, and the pages the
// range shares with bytes outside it never go.
func TestConsumeSlotsGivesBackSharedPages(t *testing.T) {
	m := New("m", true)
	const size = 4 << 20
	const slot = 5000 // slots straddle pages
	a := m.Alloc(Host, size, "buf")
	lo := 100 // the range starts and ends inside a page
	m.ScratchSlots(a+Addr(lo), 4*slot, slot)
	all := m.Bytes(a, size)
	for i := range all {
		all[i] = byte(i%251 + 1)
	}
	zeroPages := func() []int {
		m.Consumed() // gives back the dead pages still gathering
		var z []int
		for p := 0; p*pageSize < size; p++ {
			if all[p*pageSize] == 0 {
				z = append(z, p)
			}
		}
		return z
	}
	// Slot 0 is [100, 5100): no page wholly inside, page 0 holds bytes
	// outside the range, page 1 is shared with slot 1.
	m.Consume(a+Addr(lo), slot)
	m.Consume(a+Addr(lo), slot) // again: no double count
	if z := zeroPages(); len(z) != 0 {
		t.Fatalf("after slot 0: pages %v given back, want none", z)
	}
	// Slot 1 is [5100, 10100): page 1 [4096, 8192) now all dead.
	m.Consume(a+Addr(lo+slot), slot)
	if z := zeroPages(); !slices.Equal(z, []int{1}) {
		t.Fatalf("after slots 0, 1: pages %v given back, want [1]", z)
	}
	// Slots 2 and 3 [10100, 20100): pages 2-4 dead; page 4 [16384, 20480)
	// holds bytes after the range and stays.
	m.Consume(a+Addr(lo+3*slot), slot)
	m.Consume(a+Addr(lo+2*slot), slot)
	if z := zeroPages(); !slices.Equal(z, []int{1, 2, 3}) {
		t.Fatalf("after every slot: pages %v given back, want [1 2 3]", z)
	}
	if got := m.Consumed(); got != 3*pageSize {
		t.Errorf("Consumed = %d, want %d", got, 3*pageSize)
	}
	if all[lo-1] == 0 || all[lo+4*slot] == 0 {
		t.Error("a byte outside the scratch range was given back")
	}
}

// Dead slot pages gather and go back in runs once pendPages of them are
// dead, without a call to Consumed.
func TestConsumeSlotsGivesBackInRuns(t *testing.T) {
	m := New("m", true)
	const slot = 3 * pageSize / 2 // slots share every other page
	const n = 2 * pendPages       // slots: 3 pendPages pages
	a := m.Alloc(Host, 4<<20, "buf")
	m.ScratchSlots(a, n*slot, slot)
	all := m.Bytes(a, n*slot)
	for i := range all {
		all[i] = 1
	}
	// Odd slots first: their pages shared with even ones stay.
	for k := 1; k < n; k += 2 {
		m.Consume(a+Addr(k*slot), slot)
	}
	for k := 0; k < n; k += 2 {
		m.Consume(a+Addr(k*slot), slot)
	}
	if m.consumed < 2*pendPages*pageSize {
		t.Errorf("%d bytes given back before Consumed, want at least %d: dead pages must go in runs as they gather", m.consumed, 2*pendPages*pageSize)
	}
	if got := m.Consumed(); got != n*slot {
		t.Errorf("Consumed = %d, want %d (every page)", got, n*slot)
	}
	for i, v := range all {
		if v != 0 {
			t.Fatalf("byte %d not given back", i)
		}
	}
}

// PoolOf answers from its own memo of the last allocations it found, so
// it is checked against the allocations' pools over random addresses:
// the first and last byte of an allocation, interleaved with reads and
// writes elsewhere (which move find's last and prev) and with
// allocations made between queries, among them AllocDataAt's inserted
// below the others' addresses; and it leaves find's last region alone.
func TestPoolOfMatchesAllocations(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 30))
	m := New("m", false)
	type al struct {
		base Addr
		size int
		pool Pool
	}
	var all []al
	low := m.ReserveSpan(1<<20, 8)
	lowEnd := low + 1<<20
	add := func() {
		p, size := Pool(r.IntN(2)), 64+r.IntN(9000)
		if r.IntN(8) == 0 && low+Addr(size)+2*LineSize < lowEnd {
			m.AllocDataAt(low, p, uint64(size), "at")
			all = append(all, al{low, size, p})
			low += Addr((size+int(LineSize)-1)/int(LineSize)*int(LineSize)) + LineSize
			return
		}
		all = append(all, al{m.Alloc(p, uint64(size), "a"), size, p})
	}
	for range 20 {
		add()
	}
	for step := range 20_000 {
		if r.IntN(50) == 0 {
			add()
		}
		x := all[r.IntN(len(all))]
		a := x.base
		if r.IntN(2) == 0 {
			a += Addr(x.size - 1)
		}
		if r.IntN(3) == 0 { // an access elsewhere first
			y := all[r.IntN(len(all))]
			m.Touch(y.base, 8)
		}
		last := m.last
		if got := m.PoolOf(a); got != x.pool {
			t.Fatalf("step %d: PoolOf(%#x) = %v, want %v", step, uint64(a), got, x.pool)
		}
		if m.last != last {
			t.Fatalf("step %d: PoolOf moved find's last region", step)
		}
	}
}
