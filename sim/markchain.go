package sim

import (
	"fmt"
	"math/bits"
)

// MarkChain is a run of marks each chained after the one before (the
// chain SetMark, SetMarkAfter…SetMarkAfter, PushAtMark on the last builds),
// held by the engine as one entry whose key moves on in place as the run
// passes each mark: a spinning agent's wake-ups that do nothing others see
// (a host helper's empty polls), hundreds per chain.
//
// Why: with a Mark per wake-up, each pass popped the mark from the
// engine's marks and inserted its successor (a FIFO by offset or the
// heap), and looked for the earliest again: at moe throughput EP 32 on
// mi300a-ss11 that bookkeeping was most of the run's CPU. A chain's pass
// takes the mark's number and moves the entry's key to the next mark
// (time plus the gap, the number just taken): one sift in a heap of
// chains, none while the chain stays ahead of every other entry.
//
// The keys are those of the Mark chain, mark by mark: the first mark
// takes a number when the chain is set (SetMark's ReserveSeq), each later
// one the number its predecessor took when the run passed it, and the
// event deferred to the chain's end goes into the queue at the last
// mark's number (PushAtMark). So every event runs at the key it has with
// the Mark chain, and Events and MarksPassed count the same.
type MarkChain struct {
	t    Time   // the key of the first mark not passed
	seq  uint64 // (its number: reserved at SetChain, or the predecessor's)
	gaps []Duration
	i    int // marks passed
	end  Time
	h    Handler
	set  bool // pending: in the engine's chain heap
	// dead: the mark at the key became an event (WakeAtChain); the entry
	// stays until the run passes the key, taking no number, as a dead
	// Mark does (Pending and the windows count it until then).
	dead bool
}

// SetChain sets c to len(gaps)+1 marks, the first at t with a number
// taken now (SetMark), the i-th after it gaps[i−1] after its predecessor
// (SetMarkAfter), and defers h's event to the last, at end (PushAtMark).
// gaps is kept, not copied, until the chain is done; each gap must be
// ≥ 0 (a mark may share its predecessor's instant, as with SetMarkAfter)
// and end not before the last mark's time; c must not be pending.
func (e *Engine) SetChain(c *MarkChain, t Time, gaps []Duration, end Time, h Handler) {
	if c.set || t < e.now || h == nil {
		panic(fmt.Sprintf("sim: SetChain at %v (now %v) of a chain still pending or without an event", t, e.now))
	}
	last := t
	for _, d := range gaps {
		if d < 0 {
			panic(fmt.Sprintf("sim: SetChain with a gap of %v", d))
		}
		last += d
	}
	if end < last {
		panic(fmt.Sprintf("sim: SetChain's event at %v before its last mark at %v", end, last))
	}
	*c = MarkChain{t: t, seq: e.ReserveSeq(), gaps: gaps, end: end, h: h, set: true}
	e.pushChain(c)
}

// SleepOnChain blocks p on a chain of marks set by SetChain, its wake-up
// the event deferred to the last mark.
func (p *Proc) SleepOnChain(c *MarkChain, t Time, gaps []Duration, end Time) {
	p.e.SetChain(c, t, gaps, end, p)
	p.block("sleep")
}

// Pending reports whether the chain has marks the run has not passed.
func (c *MarkChain) Pending() bool { return c.set && !c.dead }

// Passed returns how many of the chain's marks the run has passed.
func (c *MarkChain) Passed() int { return c.i }

// WakeAtChain is WakeAtMark on the chain's first mark not yet passed: p's
// wake-up at that mark's own key, the marks after it dropped, with the
// event deferred to the chain's end. It returns how many marks had passed
// (that mark's index). The chain must be pending.
func (p *Proc) WakeAtChain(c *MarkChain) int {
	e := p.e
	if !c.Pending() {
		panic(fmt.Sprintf("sim: WakeAtChain of %q on a chain not pending", p.name))
	}
	c.dead, c.h = true, nil
	if e.checkFuture(c.t) {
		if p.poller {
			e.pollerPending++
			p.pending++
		}
		e.queue.push(c.t, c.seq, event{h: p})
	}
	return c.i
}

// chainKey is a pending chain in the engine's heap, its key kept beside
// it (a pass compares keys only; the chain's own state is read at the top).
type chainKey struct {
	t   Time
	seq uint64
	c   *MarkChain
}

func (a *chainKey) less(b *chainKey) bool { return chainLessBit(a, b) == 1 }

// chainLessBit is 1 when a orders before b, else 0, without branches (as
// lessBit: the heap's comparisons are unpredictable).
func chainLessBit(a, b *chainKey) int {
	_, borrow := bits.Sub64(a.seq, b.seq, 0)
	_, borrow = bits.Sub64(uint64(a.t), uint64(b.t), borrow)
	return int(borrow)
}

// pushChain adds c to the engine's heap of chains.
func (e *Engine) pushChain(c *MarkChain) {
	hs := append(e.chains, chainKey{t: c.t, seq: c.seq, c: c})
	k := hs[len(hs)-1]
	i := len(hs) - 1
	for i > 0 {
		up := (i - 1) / 2
		if !k.less(&hs[up]) {
			break
		}
		hs[i] = hs[up]
		i = up
	}
	hs[i] = k
	e.chains = hs
}

// chainDown restores the heap order below the top, whose key grew.
func (e *Engine) chainDown() {
	hs := e.chains
	n := len(hs)
	k := hs[0]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		b := l
		if l+1 < n {
			b += chainLessBit(&hs[l+1], &hs[l])
		}
		if !hs[b].less(&k) {
			break
		}
		hs[i] = hs[b]
		i = b
	}
	hs[i] = k
}

// popChain removes the heap's first chain.
func (e *Engine) popChain() {
	hs := e.chains
	n := len(hs) - 1
	hs[0].c.set = false
	hs[0] = hs[n]
	hs[n] = chainKey{}
	e.chains = hs[:n]
	if n > 1 {
		e.chainDown()
	}
}

// passChains passes the chains' marks, earliest first, while they order
// before the key (bt, bs), the earliest pending event or Mark (bok false:
// none), and are at or before limit: each takes the next number, as its
// event would have, and its chain's key moves to the chain's next mark, in
// place. After a chain's last mark its deferred event goes into the queue,
// and passChains returns true (the queue's first key may have changed).
func (e *Engine) passChains(bt Time, bs uint64, bok bool, limit Time) bool {
	for len(e.chains) > 0 {
		top := &e.chains[0]
		if top.t > limit || bok && (bt < top.t || bt == top.t && bs < top.seq) {
			return false
		}
		c := top.c
		if c.dead { // its event is queued at this key (WakeAtChain)
			e.popChain()
			continue
		}
		if top.t > e.now {
			e.now = top.t
		}
		e.seq++
		e.marksPassed++
		c.i++
		if c.i > len(c.gaps) { // the last mark: its deferred event
			h := c.h
			c.h, c.gaps = nil, nil
			e.popChain()
			if p, ok := h.(*Proc); ok && p.poller {
				e.pollerPending++
				p.pending++
			}
			e.queue.push(c.end, e.seq, event{h: h})
			return true
		}
		c.t += c.gaps[c.i-1]
		c.seq = e.seq
		top.t, top.seq = c.t, c.seq
		if n := len(e.chains); n > 1 {
			if e.chains[1].less(top) || n > 2 && e.chains[2].less(top) {
				e.chainDown()
			}
		}
	}
	return false
}
