package nic_test

import (
	"bytes"
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
