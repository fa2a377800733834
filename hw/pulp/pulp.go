package pulp

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// port is one resource with a FIFO queue: it moves width bytes per cycle;
// a transfer holds it for its setup cycles plus ⌈n/width⌉ beats.
//
// Cores' loads and stores (word accesses) do not queue behind DMA bursts:
// PULP's memories sit behind logarithmic interconnects that arbitrate
// every cycle, round-robin among the requesters (Rahimi et al., "A
// fully-synthesizable single-cycle interconnection network for shared-L1
// processor clusters", DATE 2011; the cluster DMA's bursts enter as
// word requests like any master's). So a core's access to a bank that a
// burst holds alternates beats with it: it waits at most one burst beat
// per beat of its own, the burst (and every later transfer) loses the
// beats the core took, and word accesses queue behind each other (wfree).
type port struct {
	width unit.Bytes
	cycle sim.Duration
	free  sim.Time // when the bank's reserved beats (bursts and words) end
	wfree sim.Time // when the word accesses issued so far are served
	busy  sim.Duration
}

// word serves `count` word accesses of n bytes each issued together at
// now (a core's load or store; count > 1: a loop's reads, spread over
// its iterations, so they hold the word queue for the first one only)
// under per-beat round-robin with the bursts, and returns the time the
// bank adds: its queue, its beats, and the burst beats it alternates
// with. The caller adds the access latency.
func (p *port) word(now sim.Time, n unit.Bytes, count int) sim.Duration {
	beats := sim.Duration((n+p.width-1)/p.width) * p.cycle
	if beats == 0 || count <= 0 {
		return 0
	}
	start := max(now, p.wfree)
	left := max(0, p.free-start)               // burst beats still reserved on the bank
	p.wfree = start + beats + min(beats, left) // alternating with the burst in progress
	total := sim.Duration(count) * beats
	p.free = max(p.free, start) + total
	p.busy += total
	// A loop's later reads alternate with bursts only while any are left.
	return start - now + total + min(total, left)
}

// reserve queues a transfer of n bytes (plus setup cycles) behind the
// earlier ones, starting no earlier than now, and returns when its last
// beat has passed. A zero-byte transfer without setup takes no time.
func (p *port) reserve(now sim.Time, n unit.Bytes, setup int) sim.Time {
	beats := int64((n+p.width-1)/p.width) + int64(setup)
	if beats == 0 {
		return now
	}
	start := max(now, p.free)
	d := sim.Duration(beats) * p.cycle
	p.free = start + d
	p.busy += d
	return p.free
}

// cluster is one cluster's DMA engine (a channel per direction) and its
// cores' L1 bank pairs.
type cluster struct {
	in, out *port
	banks   []*port // per core of the cluster: its L1 banks as one port
}

// Accel is the PULP accelerator's memory system: L2 banks, clusters with
// their DMA engines and L1 banks, and the network input and PCIe output
// ports. Methods take the time a request is issued (non-decreasing over
// calls, as the engine's clock is) and return when it is done.
type Accel struct {
	spec     Spec
	cycle    sim.Duration
	l2       []*port
	clusters []*cluster
	inPort   *port
	outPort  *port
	stats    Stats
}

// Stats count the accelerator's traffic.
type Stats struct {
	L2Bytes, L1Bytes, DMABytes, OutBytes uint64
	Transfers                            uint64     // DMA transfers
	L2Wait                               sim.Time   // summed queueing at L2 banks (bursts: behind earlier transfers; cores: behind other cores and alternating with bursts)
	L2BankBusy                           []sim.Time // per L2 bank: time its port was busy
	OutBusy                              sim.Time   // time the output port was busy
}

// New builds the accelerator for cores active cores (at most clusters ×
// cores) clocked at freq. The spec must be valid.
func New(spec Spec, freq unit.Freq, cores int) (*Accel, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if cores < 1 || cores > spec.TotalCores() {
		return nil, fmt.Errorf("spin.hpus = %d: the pulp model has %d clusters × %d cores = %d; must be in [1, %d]",
			cores, spec.Clusters, spec.Cores, spec.TotalCores(), spec.TotalCores())
	}
	cyc := freq.Cycles(1)
	mk := func(w unit.Bytes) *port { return &port{width: w, cycle: cyc} }
	a := &Accel{spec: spec, cycle: cyc, inPort: mk(spec.PortWidth), outPort: mk(spec.PortWidth)}
	for range spec.L2Banks {
		a.l2 = append(a.l2, mk(spec.L2Width))
	}
	pair := spec.L1Width * unit.Bytes(spec.L1Banks/spec.Cores) // a core's banks, word-interleaved
	for range spec.Clusters {
		c := &cluster{in: mk(spec.DMAWidth), out: mk(spec.DMAWidth)}
		for range spec.Cores {
			c.banks = append(c.banks, mk(pair))
		}
		a.clusters = append(a.clusters, c)
	}
	return a, nil
}

// Spec returns the parameters.
func (a *Accel) Spec() Spec { return a.spec }

// Cluster returns the cluster core i runs in.
func (a *Accel) Cluster(core int) int { return core % a.spec.Clusters }

// local returns core i's cluster and its L1 banks.
func (a *Accel) local(core int) (*cluster, *port) {
	c := a.clusters[a.Cluster(core)]
	return c, c.banks[(core/a.spec.Clusters)%a.spec.Cores]
}

func (a *Accel) cycles(n int) sim.Duration { return sim.Duration(n) * a.cycle }

// L2Latency returns the base latency of a core's L2 access (no queueing).
func (a *Accel) L2Latency() sim.Duration { return a.cycles(a.spec.L2Latency) }

// l2Banks holds the L2 banks covering [addr, addr+n) for their shares of the
// bytes and returns when the last has passed; the base latency is the
// caller's (it is paid once per access, not per bank).
func (a *Accel) l2Banks(now sim.Time, addr uint64, n unit.Bytes) sim.Time {
	done := now
	for b, s := range a.l2Shares(addr, n) {
		if s == 0 {
			continue
		}
		a.stats.L2Wait += max(0, a.l2[b].free-now)
		done = max(done, a.l2[b].reserve(now, s, 0))
	}
	a.stats.L2Bytes += uint64(n)
	return done
}

// l2Shares returns the bytes of [addr, addr+n) each L2 bank holds.
func (a *Accel) l2Shares(addr uint64, n unit.Bytes) []unit.Bytes {
	share := make([]unit.Bytes, len(a.l2))
	g := uint64(a.spec.L2Interleave)
	for o, end := addr, addr+uint64(n); o < end; {
		next := min((o/g+1)*g, end)
		share[(o/g)%uint64(len(a.l2))] += unit.Bytes(next - o)
		o = next
	}
	return share
}

// PacketIn writes a packet of n bytes arriving from the network into L2
// at addr through the input port.
func (a *Accel) PacketIn(now sim.Time, addr uint64, n unit.Bytes) sim.Time {
	done := max(a.inPort.reserve(now, n, 0), a.l2Banks(now, addr, n))
	return done + a.cycles(a.spec.L2Latency)
}

// L2Access is a core's load or store of n bytes at L2 address addr over
// the interconnect: the base latency plus the bank's word arbitration
// (port.word).
func (a *Accel) L2Access(now sim.Time, core int, addr uint64, n unit.Bytes) sim.Time {
	return now + a.L2Reads(now, core, addr, n, 1) + a.cycles(a.spec.L2Latency)
}

// L2Reads is count accesses of n bytes each at L2 address addr by a core
// loop that issues one per iteration (a catch-up reading the leaf
// dataloop per skipped block): it returns the time the bank adds to the
// loop in all (queue, beats, alternation with bursts), latencies
// excluded (the caller pays one per access).
func (a *Accel) L2Reads(now sim.Time, core int, addr uint64, n unit.Bytes, count int) sim.Duration {
	if count <= 0 || n <= 0 {
		return 0
	}
	var wait sim.Duration
	for b, s := range a.l2Shares(addr, n) {
		if s == 0 {
			continue
		}
		w := a.l2[b].word(now, s, count)
		a.stats.L2Wait += max(0, w-sim.Duration(count)*sim.Duration((s+a.l2[b].width-1)/a.l2[b].width)*a.cycle)
		wait = max(wait, w)
	}
	a.stats.L2Bytes += uint64(n) * uint64(count)
	return wait
}

// L1Access is a core's load or store of n bytes in its own L1 banks,
// alternating beats with any DMA burst into or out of them (port.word).
func (a *Accel) L1Access(now sim.Time, core int, n unit.Bytes) sim.Time {
	_, b := a.local(core)
	a.stats.L1Bytes += uint64(n)
	return now + b.word(now, n, 1) + a.cycles(a.spec.L1Latency)
}

// Stage DMAs n bytes from L2 address addr into core's L1 buffers through
// its cluster's inbound DMA channel.
func (a *Accel) Stage(now sim.Time, core int, addr uint64, n unit.Bytes) sim.Time {
	c, b := a.local(core)
	a.count(n)
	done := max(a.l2Banks(now, addr, n), c.in.reserve(now, n, a.spec.DMASetup), b.reserve(now, n, 0))
	return done + a.cycles(a.spec.L2Latency+a.spec.L1Latency)
}

// Out DMAs n bytes from core's L1 buffers to the PCIe output port through
// its cluster's outbound DMA channel.
func (a *Accel) Out(now sim.Time, core int, n unit.Bytes) sim.Time {
	c, b := a.local(core)
	a.count(n)
	a.stats.OutBytes += uint64(n)
	done := max(b.reserve(now, n, 0), c.out.reserve(now, n, a.spec.DMASetup), a.outPort.reserve(now, n, 0))
	return done + a.cycles(a.spec.L1Latency)
}

// OutFromL2 moves n bytes from L2 address addr to the output port without
// a core (the NIC's own deposit of a packet whose context has no payload
// handler).
func (a *Accel) OutFromL2(now sim.Time, addr uint64, n unit.Bytes) sim.Time {
	a.stats.OutBytes += uint64(n)
	done := max(a.l2Banks(now, addr, n), a.outPort.reserve(now, n, 0))
	return done + a.cycles(a.spec.L2Latency)
}

// Move DMAs n bytes from the L1 of core from to the L1 of core to: out of
// one cluster, over the interconnect, into the other (within a cluster it
// is an L1 copy through the inbound channel).
func (a *Accel) Move(now sim.Time, from, to int, n unit.Bytes) sim.Time {
	src, sb := a.local(from)
	dst, db := a.local(to)
	a.count(n)
	done := max(sb.reserve(now, n, 0), db.reserve(now, n, 0), dst.in.reserve(now, n, a.spec.DMASetup))
	if src != dst {
		done = max(done, src.out.reserve(now, n, a.spec.DMASetup))
	}
	return done + a.cycles(2*a.spec.L1Latency)
}

func (a *Accel) count(n unit.Bytes) {
	a.stats.Transfers++
	a.stats.DMABytes += uint64(n)
}

// Stats returns a copy of the counters.
func (a *Accel) Stats() Stats {
	st := a.stats
	st.L2BankBusy = make([]sim.Time, len(a.l2))
	for i, b := range a.l2 {
		st.L2BankBusy[i] = b.busy
	}
	st.OutBusy = a.outPort.busy
	return st
}
