package spin

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/sim"
)

// IntervalInput holds the inputs of the Δr choice (the SC'19 paper).
type IntervalInput struct {
	K    int          // packet payload size (bytes)
	M    int          // message size (bytes)
	P    int          // physical HPUs
	TPkt sim.Duration // packet inter-arrival time
	TPH  sim.Duration // estimated payload-handler time T_PH(γ) without catch-up
	// CatchUp is the catch-up a handler adds to T_PH^setup per packet its
	// packet lies past the nearest checkpoint (RO-CP: γ skipped blocks;
	// 0 for RW-CP, which with in-order arrival never catches up). The
	// paper's T_PH^setup includes any catch-up, so T_PH at an interval of
	// q packets is TPH + CatchUp·(q−1)/2, the mean over a sequence's
	// positions.
	CatchUp sim.Duration
	C       int     // checkpoint size (bytes)
	Copies  int     // checkpoint copies kept (2 with RW-CP master copies)
	MNIC    int     // NIC memory available for checkpoints (bytes)
	BPkt    int     // packet buffer (bytes)
	Eps     float64 // ε
	// BufferAware also keeps every HPU's sequence start within the packet
	// buffer when a handler is slower than P packet arrivals (see
	// ChooseInterval).
	BufferAware bool
}

// IntervalChoice is the chosen checkpoint interval and how it was reached.
type IntervalChoice struct {
	Interval    int  // Δr in bytes, a multiple of K
	Q           int  // packets per sequence, Δr / K
	Checkpoints int  // ⌈n_pkt / Q⌉
	Sched       bool // constraint 1 holds (scheduling overhead ≤ ε)
	Grown       bool // Δr grown to fit NIC memory (constraint 2)
	Shrunk      bool // Δr shrunk to the packet buffer (constraint 3)
}

// ChooseInterval picks Δr by the procedure of the SC'19 paper: the
// largest interval meeting the scheduling-overhead constraint, grown until
// the checkpoints fit NIC memory, shrunk to the packet buffer if needed. It
// fails, naming the sizes, when no interval meets constraints 2 and 3.
// With BufferAware (ours, off by default), when a handler takes longer than a
// packet's arrival, Δr is further capped at B_pkt/P so the
// first packets of all P sequences fit the buffer together; the spec's
// constraint 3 bounds one sequence only, and the simulated back-pressure
// then runs the message one sequence at a time.
func ChooseInterval(in IntervalInput) (IntervalChoice, error) {
	if in.K <= 0 || in.M <= 0 || in.P <= 0 || in.TPkt <= 0 || in.C <= 0 || in.Copies <= 0 {
		return IntervalChoice{}, fmt.Errorf("Δr: k = %d, m = %d, P = %d, T_pkt = %v, C = %d, copies = %d: all must be > 0",
			in.K, in.M, in.P, in.TPkt, in.C, in.Copies)
	}
	npkt := (in.M + in.K - 1) / in.K
	perHPU := float64((npkt + in.P - 1) / in.P)
	// Constraint 1, T_pkt + (P−1)·q·T_pkt ≤ ε·⌈n_pkt/P⌉·T_PH(q), is
	// linear in q on both sides: a·q ≤ b.
	a := float64(in.P-1)*float64(in.TPkt) - in.Eps*perHPU*float64(in.CatchUp)/2
	b := in.Eps*perHPU*(float64(in.TPH)-float64(in.CatchUp)/2) - float64(in.TPkt)
	var q int
	switch {
	case in.P == 1:
		q = npkt // no other HPU to fill: any interval meets constraint 1
	case a > 0:
		// Compared before converting: a nearly balanced a makes b/a
		// larger than any int.
		if qf := b / a; qf >= float64(npkt) {
			q = npkt
		} else if qf >= 0 {
			q = int(qf)
		}
	case a*float64(npkt) <= b:
		// A longer interval lengthens the handlers' catch-up at least as
		// much as the fill: every interval up to the message meets it.
		q = npkt
	}
	ch := IntervalChoice{Sched: q >= 1}
	q = min(max(q, 1), npkt)
	cps := func(q int) int { return (npkt + q - 1) / q }
	if cps(q)*in.C*in.Copies > in.MNIC {
		need := (npkt*in.C*in.Copies + in.MNIC - 1) / max(in.MNIC, 1)
		if in.MNIC <= 0 || need > npkt {
			return ch, fmt.Errorf("Δr: even one checkpoint (%d B × %d) does not fit %d B of NIC memory", in.C, in.Copies, in.MNIC)
		}
		q, ch.Grown = need, true
		for cps(q)*in.C*in.Copies > in.MNIC {
			q++
		}
	}
	buffered := int(float64(in.tph(q)) * float64(in.K) / float64(in.TPkt))
	if min(buffered, q*in.K) > in.BPkt {
		q2 := in.BPkt / in.K
		if q2 < 1 || cps(q2)*in.C*in.Copies > in.MNIC {
			return ch, fmt.Errorf("Δr: the packets buffered during scheduling (%d B) exceed the %d B packet buffer and no smaller interval fits NIC memory", min(buffered, q*in.K), in.BPkt)
		}
		q, ch.Shrunk = min(q, q2), true
	}
	if in.BufferAware && in.P > 1 && in.tph(q) > in.TPkt {
		// With in-order arrival under blocked round-robin, vHPU j's first
		// packet arrives after j·Δr bytes; when one handler is slower than
		// a packet arrival those bytes pile up in the packet buffer, and once it is
		// full the inbound engine stalls and later vHPUs never start: the
		// simulated back-pressure serializes the message. So P sequences
		// must fit the buffer.
		if qmax := max(in.BPkt/(in.K*in.P), 1); q > qmax && cps(qmax)*in.C*in.Copies <= in.MNIC {
			q, ch.Shrunk = qmax, true
		}
	}
	ch.Q, ch.Interval, ch.Checkpoints = q, q*in.K, cps(q)
	return ch, nil
}

// tph is T_PH at an interval of q packets: the estimate plus the mean
// catch-up over the sequence's positions.
func (in IntervalInput) tph(q int) sim.Duration {
	return in.TPH + in.CatchUp*sim.Duration(q-1)/2
}
