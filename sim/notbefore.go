package sim

import "fmt"

// A skipped event. An agent that knows what one of its own events will
// find, unless something it watches changes first, need not schedule it:
// a work-group's poll that has read its flag unset ends, one memory
// latency later, by finding the flag unset and starting to wait for a
// write to it — the same wait, only later. The agent reserves the event's
// key now (ReserveSeq) and waits at once with WaitNotBefore. If the
// signal is notified before the key (the flag written while the read was
// in flight, when the event would have found it changed), the wait ends
// at exactly the key: the skipped event runs after all, in its place, and
// does what it would have done. If nothing comes before the key, the
// event would have begun the same wait, so the notification that ends it
// wakes the process as that wait's would. Times, order and every other
// event are those of the run that schedules the event; only the event
// itself is not run (nor counted) when its outcome was known.

// ReserveSeq takes the sequence number an event scheduled now would get
// (it orders after every event scheduled before it and before every one
// scheduled after it) without scheduling anything.
func (e *Engine) ReserveSeq() uint64 {
	e.seq++
	return e.seq
}

// runsBefore reports whether the event being run orders before key
// (t, seq): an event scheduled at that key would still run.
func (e *Engine) runsBefore(t Time, seq uint64) bool {
	return e.now < t || e.now == t && e.queue.cur < seq
}

// WaitNotBefore is Wait on s by step process p in place of p's own event
// at key (t, seq), seq from ReserveSeq in the current step and t not
// before now, which would have found its state unchanged and begun this
// wait. A notification of s before the key, another process starting to
// wait on s before it (it would have waited first), or Nudge before it,
// resumes p at exactly the key, and WokeAtKey then reports true: p runs
// the skipped event itself. Otherwise p is woken as by Wait begun at the
// key. s must have no waiters: with others the skipped event's Wait would
// have queued behind them.
func (p *Proc) WaitNotBefore(s *Signal, what string, t Time, seq uint64) {
	p.waitNotBefore(s, what, nil, t, seq)
}

// waitNotBefore is WaitNotBefore with the reason why, when not nil,
// formatted when read instead of what (blockWhy).
func (p *Proc) waitNotBefore(s *Signal, what string, why Reason, t Time, seq uint64) {
	if p.steps == nil || len(s.waiters) > 0 || t < p.e.now || seq == 0 {
		panic(fmt.Sprintf("sim: WaitNotBefore of %q: a step process, on a signal nobody waits on, at a key not before now", p.name))
	}
	p.keyT, p.keySeq, p.keySig, p.keyWoke = t, seq, s, false
	p.e.keyMax = max(p.e.keyMax, t) // the run's end is not before it
	s.waiters = append(s.waiters, p)
	p.blockWhy(what, why)
	p.since = t // the skipped event's wait begins there (deadlock reports)
}

// Reason is what a process waits on, formatted only when something reads
// it (a deadlock report): a poller's reason names its word and value, one
// string per wait that almost no run reads.
type Reason interface {
	What() string
}

// WaitNotBeforeFor is WaitNotBefore with the wait's reason r, formatted
// when read.
func (p *Proc) WaitNotBeforeFor(s *Signal, r Reason, t Time, seq uint64) {
	p.waitNotBefore(s, "", r, t, seq)
}

// waits returns what p waits on: its reason, or its Reason's text.
func (p *Proc) waits() string {
	if p.why != nil {
		return p.why.What()
	}
	return p.reason
}

// WaitNotBeforeMark is WaitNotBefore for an event that an event at mark
// m's key would have scheduled at t (t not before m's time): its key's
// sequence number is the one m takes when the run passes it, which
// PushAtMark would have given the event. m must carry no deferred event.
func (p *Proc) WaitNotBeforeMark(s *Signal, what string, t Time, m *Mark) {
	if !m.set || t < m.t {
		panic(fmt.Sprintf("sim: WaitNotBeforeMark of %q: a pending mark not after the key", p.name))
	}
	p.WaitNotBefore(s, what, t, max(m.seq, 1)) // (0 until a mark it is chained after passes)
	p.keyMark = m
}

// Stepping reports whether p runs as steps now (a step process, or a
// coroutine lending its process to RunSteps), as WaitNotBefore needs.
func (p *Proc) Stepping() bool { return p.steps != nil }

// WokeAtKey reports whether p's last WaitNotBefore ended at its key (p
// runs the skipped event), and forgets it.
func (p *Proc) WokeAtKey() bool {
	k := p.keyWoke
	p.keyWoke = false
	return k
}

// Nudge ends p's WaitNotBefore at its key if the key is still ahead: the
// state the skipped event reads changed in a way its signal does not
// announce. Otherwise (no such wait, or its key passed) it does nothing.
func (p *Proc) Nudge() {
	if p.keySeq == 0 {
		return
	}
	s := p.keySig
	for i, w := range s.waiters {
		if w == p {
			if p.e.wakeAtKey(p) {
				n := copy(s.waiters[i:], s.waiters[i+1:])
				s.waiters[i+n] = nil
				s.waiters = s.waiters[:i+n]
			}
			return
		}
	}
}

// wakeAtKey ends keyed waiter p's wait at its key when the key is still
// ahead (true; the caller drops p from the signal's waiters); otherwise p
// becomes a plain waiter (false).
func (e *Engine) wakeAtKey(p *Proc) bool {
	t, seq, m := p.keyT, p.keySeq, p.keyMark
	p.keySeq, p.keySig, p.keyMark = 0, nil, nil
	if m != nil {
		if m.got == 0 { // the mark, and so the key after it, is still ahead
			p.keyWoke, p.wakeMark, p.wakeOn = true, nil, nil
			e.PushAtMark(m, t, p) // with the number the mark takes
			return true
		}
		seq = m.got
	}
	if !e.runsBefore(t, seq) {
		return false
	}
	p.keyWoke, p.wakeMark, p.wakeOn = true, nil, nil // resumed at the key: an event as before
	if p.poller {
		e.pollerPending++
		p.pending++
	}
	e.queue.push(t, seq, event{h: p})
	return true
}

// admit is called before a process starts waiting on s: a keyed waiter
// alone on s whose key is still ahead would, at its key, have queued
// behind the newcomer, so it resumes at its key instead.
func (s *Signal) admit() {
	if len(s.waiters) != 1 {
		return
	}
	if w := s.waiters[0]; w.keySeq != 0 && w.e.wakeAtKey(w) {
		s.waiters[0] = nil
		s.waiters = s.waiters[:0]
	}
}
