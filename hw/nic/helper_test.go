package nic_test

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/net"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/hw/pcie"
	"github.com/gpunetsim/gpunetsim/sim"
)

// env is a small cluster: an engine, a star fabric, and per node a memory,
// a PCIe link and a NIC, all from preset gputn.
type env struct {
	t    testing.TB
	e    *sim.Engine
	spec cluster.Spec
	mems []*mem.Memory
	nics []*nic.NIC
	// unchecked skips the end-of-run invariant check, for tests that hand
	// packets to a NIC past the fabric (its counters then disagree).
	unchecked bool
}

type opt func(*cluster.Spec)

// withFlows runs the env in the flow network model.
func withFlows(s *cluster.Spec) { s.Network.Model = net.ModelFlow }

func newEnv(t testing.TB, nodes int, functional bool, opts ...opt) *env {
	t.Helper()
	s := cluster.GPUTN()
	for _, o := range opts {
		o(&s)
	}
	e := sim.New(1)
	fab, err := net.New(e, nodes, s.Link, s.Switch, s.Topology)
	if err != nil {
		t.Fatal(err)
	}
	flows := s.Network.Model == net.ModelFlow // the flow model (withFlows)
	if flows {
		fab.UseFlows()
	}
	v := &env{t: t, e: e, spec: s}
	for i := range nodes {
		name := fmt.Sprintf("node[%d]", i)
		m := mem.New(name, functional)
		v.mems = append(v.mems, m)
		n := nic.New(e, i, name, s.NIC, m, pcie.New(s.PCIe), fab, s.Link.Payload)
		if flows {
			n.UseFlows()
		}
		// Every NIC test also checks that no retired packet is used again
		// (recycle.go): a stale read would see impossible values.
		nic.PoisonRetired(n, true)
		v.nics = append(v.nics, n)
	}
	// Every NIC test checks the fabric's and the NICs' invariants.
	e.AddEndCheck(func(now sim.Time) []sim.Violation {
		if v.unchecked {
			return nil
		}
		out := fab.Invariants(now)
		for _, n := range v.nics {
			out = append(out, n.Invariants(now)...)
		}
		return out
	})
	return v
}

// run drains the engine and fails the test on a deadlock or panic.
func (v *env) run() {
	v.t.Helper()
	if err := v.e.Run(); err != nil {
		v.t.Fatal(err)
	}
}

// alloc allocates n bytes on node i filled with fill(k) for byte k.
func (v *env) alloc(i int, n uint64, fill func(k int) byte) mem.Addr {
	a := v.mems[i].Alloc(mem.Host, n, "buf")
	if fill != nil {
		b := make([]byte, n)
		for k := range b {
			b[k] = fill(k)
		}
		v.mems[i].Write(a, b)
	}
	return a
}

func (v *env) read(i int, a mem.Addr, n int) []byte {
	b := make([]byte, n)
	v.mems[i].Read(a, b)
	return b
}

// drain returns every event in q.
func drain(q *nic.EQ) []nic.Event {
	var out []nic.Event
	for {
		ev, ok := q.Get()
		if !ok {
			return out
		}
		out = append(out, ev)
	}
}

func types(evs []nic.Event) []nic.EventType {
	var out []nic.EventType
	for _, ev := range evs {
		out = append(out, ev.Type)
	}
	return out
}

func u64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }

// putCmd is a put of md[0:n) to target's pt with bits.
func putCmd(md *nic.MD, n uint64, target, pt int, bits uint64) nic.Command {
	return nic.Command{Op: nic.CmdPut, MD: md, Length: n, Target: target, PT: pt, MatchBits: bits}
}

// host spawns a host-thread process on node i.
func (v *env) host(i int, body func(p *sim.Proc)) *sim.Proc {
	return v.e.Spawn(fmt.Sprintf("node[%d].host", i), body)
}
