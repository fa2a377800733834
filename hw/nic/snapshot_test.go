package nic_test

import (
	"bytes"
	"encoding/binary"
	"runtime"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/sim"
)

// overwrittenTransfer moves 10 KiB (five packets) from node 1 to node 0 by
// a put (node 1 sends its buffer) or a get (node 1 reads node 0's ME,
// which node 0's NIC sends back), while a host thread of the sending node
// overwrites the source at time at, and returns what landed. Each packet
// carries the source as it was when the packet's payload was read.
func overwrittenTransfer(t *testing.T, op nic.Op, at sim.Time, eager bool) []byte {
	const size = 10 * 1024
	v := newEnv(t, 2, true)
	for _, n := range v.nics {
		nic.EagerPayloads(n, eager)
	}
	old := func(k int) byte { return byte(k*7 + k/251) }
	tn := v.nics[0]
	pt := tn.PTAlloc(tn.NewEQ(0, 0), false)
	me, md := v.alloc(0, size, nil), v.alloc(1, size, nil)
	var src mem.Addr
	sender := 1
	if op == nic.CmdGet {
		me = v.alloc(0, size, old)
		src, sender = me, 0
	} else {
		md = v.alloc(1, size, old)
		src = md
	}
	tn.MEAppend(pt, nic.ME{Start: me, Length: size, MatchID: nic.AnyID, Options: nic.MEOpPut | nic.MEOpGet}, nic.Priority)
	cmd := nic.Command{Op: op, MD: &nic.MD{Start: md, Length: size, EQ: v.nics[1].NewEQ(0, 0)}, Length: size, PT: pt}
	v.host(1, func(p *sim.Proc) { v.nics[1].Doorbell(p, cmd) })
	v.host(sender, func(p *sim.Proc) {
		p.Sleep(at)
		v.mems[sender].Write(src, bytes.Repeat([]byte{0xee}, size))
	})
	v.run()
	if op == nic.CmdGet {
		return v.read(1, md, size)
	}
	return v.read(0, me, size)
}

// A payload left in the sender's memory until it lands (mem.Snapshot)
// lands the bytes the eager copy at send would have: for an overwrite of
// the source at every time from before the first packet's read to after
// the last one's landing, put and get. The sweep must see packets of one
// transfer on both sides of the overwrite, or it did not test the window.
func TestSnapshotPayloadMatchesEagerCopy(t *testing.T) {
	for _, op := range []nic.Op{nic.CmdPut, nic.CmdGet} {
		mixed := 0
		for at := sim.Time(0); at <= 6*sim.Microsecond; at += 50 * sim.Nanosecond {
			got, want := overwrittenTransfer(t, op, at, false), overwrittenTransfer(t, op, at, true)
			if !bytes.Equal(got, want) {
				t.Fatalf("%v, source overwritten at %v: the landed bytes differ from the eager copy's", op, at)
			}
			if n := bytes.Count(want, []byte{0xee}); n > 0 && n < len(want) {
				mixed++
			}
		}
		if mixed == 0 {
			t.Fatalf("%v: no overwrite time fell between two packets' reads", op)
		}
	}
}

// In a payload-free run a put carries only its source's control words
// (a flag protocol's sequence word in a payload-free buffer), from a pool
// of buffers kept zero but for the control bytes of their last packet
// (ctrlbuf.go). Puts back and forth, one packet each, with their control
// words at different offsets (and one with none), land exactly those
// words and zeros elsewhere in a destination that keeps every byte: no
// control byte of an earlier packet comes along.
func TestPayloadFreeControlWordsLandAlone(t *testing.T) {
	const size = 2048 // one packet
	v := newEnv(t, 2, false)
	pts := [2]int{}
	for i, n := range v.nics {
		pts[i] = n.PTAlloc(n.NewEQ(0, 0), false)
	}
	offsets := [][]int{{0, 8}, {1024}, nil, {512, 2040}, {64}, {1536}}
	type landing struct {
		dst  mem.Addr
		node int
		want []byte
	}
	var checks []landing
	v.host(0, func(p *sim.Proc) {
		for k, offs := range offsets {
			from, to := k%2, 1-k%2
			src := v.mems[from].Alloc(mem.Host, size, "src") // payload-free
			want := make([]byte, size)
			for j, off := range offs {
				a := src + mem.Addr(off)
				v.mems[from].MarkControl(a, 8)
				w := uint64(k*100 + j + 1)
				v.mems[from].Store64(a, w)
				binary.LittleEndian.PutUint64(want[off:], w)
			}
			dst := v.mems[to].AllocData(mem.Host, size, "dst") // every byte kept
			v.nics[to].MEAppend(pts[to], nic.ME{Start: dst, Length: size, MatchID: nic.AnyID, MatchBits: uint64(k), Options: nic.MEOpPut}, nic.Priority)
			flag := v.mems[from].AllocData(mem.Host, 8, "flag")
			cmd := nic.Command{Op: nic.CmdPut, MD: &nic.MD{Start: src, Length: size}, Length: size, Target: to, PT: pts[to], MatchBits: uint64(k), CompletionFlag: flag}
			v.nics[from].Execute(cmd)
			p.WaitUntil(v.mems[from].Watch(flag), "put done", func() bool { return v.mems[from].Load64(flag) == 1 })
			p.Sleep(sim.Microsecond) // the target's landing is visible before the ack
			checks = append(checks, landing{dst, to, want})
		}
	})
	v.run()
	for k, c := range checks {
		if got := v.read(c.node, c.dst, size); !bytes.Equal(got, c.want) {
			t.Errorf("put %d (control words at %v): landed bytes differ from its control words and zeros: %v", k, offsets[k], nonzero(got))
		}
	}
}

// nonzero returns the offsets and values of b's non-zero bytes.
func nonzero(b []byte) map[int]byte {
	out := map[int]byte{}
	for i, x := range b {
		if x != 0 {
			out[i] = x
		}
	}
	return out
}

// In the flow model a message is one packet, and a payload-free buffer's
// megabytes before its trailing control words are not carried as zeros
// (Packet.DataAt): puts of 1 MiB with control words in the last piece, in
// the middle, in two pieces, in the first and none land exactly those
// words and zeros elsewhere in a destination that keeps every byte (old
// bytes there included), and the run allocates far less than the bytes
// moved.
func TestFlowPayloadFreeCarriesTrailingControlWords(t *testing.T) {
	const size = 1 << 20
	v := newEnv(t, 2, false, withFlows)
	pts := [2]int{}
	for i, n := range v.nics {
		pts[i] = n.PTAlloc(n.NewEQ(0, 0), false)
	}
	offsets := [][]int{{size - 8}, {size / 2}, {size - 4096, size - 8}, nil, {0, size - 8}}
	type landing struct {
		src, dst, flag mem.Addr
		want           []byte
	}
	var checks []landing
	old := bytes.Repeat([]byte{0xee}, size)
	for k, offs := range offsets {
		src := v.mems[0].Alloc(mem.Host, size, "src") // payload-free
		want := make([]byte, size)
		for j, off := range offs {
			a := src + mem.Addr(off)
			v.mems[0].MarkControl(a, 8)
			w := uint64(k*100 + j + 1)
			v.mems[0].Store64(a, w)
			binary.LittleEndian.PutUint64(want[off:], w)
		}
		dst := v.mems[1].AllocData(mem.Host, size, "dst") // every byte kept
		v.mems[1].Write(dst, old)
		v.nics[1].MEAppend(pts[1], nic.ME{Start: dst, Length: size, MatchID: nic.AnyID, MatchBits: uint64(k), Options: nic.MEOpPut}, nic.Priority)
		checks = append(checks, landing{src, dst, v.mems[0].AllocData(mem.Host, 8, "flag"), want})
	}
	v.host(0, func(p *sim.Proc) {
		for k, c := range checks {
			cmd := nic.Command{Op: nic.CmdPut, MD: &nic.MD{Start: c.src, Length: size}, Length: size, Target: 1, PT: pts[1], MatchBits: uint64(k), CompletionFlag: c.flag}
			v.nics[0].Execute(cmd)
			p.WaitUntil(v.mems[0].Watch(c.flag), "put done", func() bool { return v.mems[0].Load64(c.flag) == 1 })
			p.Sleep(sim.Microsecond)
		}
	})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	v.run()
	runtime.ReadMemStats(&after)
	for k, c := range checks {
		if got := v.read(1, c.dst, size); !bytes.Equal(got, c.want) {
			t.Errorf("put %d (control words at %v): landed bytes differ from its control words and zeros (%d non-zero bytes)", k, offsets[k], len(nonzero(got)))
		}
	}
	// Carried as dense zeros, the first four puts alone would allocate 3
	// MiB and the last another 1 MiB; the tails are 4 KiB, 512 KiB and 8
	// KiB, the last put still 1 MiB.
	if got := after.TotalAlloc - before.TotalAlloc; got > 2<<20 {
		t.Errorf("the run allocated %d bytes; want under 2 MiB", got)
	}
}
