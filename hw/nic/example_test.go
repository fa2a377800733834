package nic_test

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/net"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/hw/pcie"
	"github.com/gpunetsim/gpunetsim/sim"
)

// A host thread on node 1 puts 5 bytes into an ME on node 0.
func Example() {
	s := cluster.GPUTN()
	e := sim.New(1)
	fab, _ := net.New(e, 2, s.Link, s.Switch, s.Topology)
	var nics [2]*nic.NIC
	var mems [2]*mem.Memory
	for i := range 2 {
		mems[i] = mem.New(fmt.Sprintf("node[%d]", i), true)
		nics[i] = nic.New(e, i, fmt.Sprintf("node[%d]", i), s.NIC, mems[i], pcie.New(s.PCIe), fab, s.Link.Payload)
	}
	eq := nics[0].NewEQ(0, 0)
	pt := nics[0].PTAlloc(eq, false)
	dst := mems[0].Alloc(mem.Host, 64, "recv")
	nics[0].MEAppend(pt, nic.ME{Start: dst, Length: 64, MatchID: nic.AnyID, MatchBits: 42, Options: nic.MEOpPut}, nic.Priority)

	src := mems[1].Alloc(mem.Host, 64, "send")
	mems[1].Write(src, []byte("hello"))
	e.Spawn("node[1].host", func(p *sim.Proc) {
		md := &nic.MD{Start: src, Length: 64}
		nics[1].Doorbell(p, nic.Command{Op: nic.CmdPut, MD: md, Length: 5, Target: 0, PT: pt, MatchBits: 42})
	})
	if err := e.Run(); err != nil {
		panic(err)
	}
	ev, _ := eq.Get()
	buf := make([]byte, 5)
	mems[0].Read(dst, buf)
	fmt.Println(ev.Type, ev.MLength, string(buf), ev.Time > 0)
	// Output: PUT 5 hello true
}
