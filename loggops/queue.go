package loggops

import (
	"math/bits"

	"github.com/gpunetsim/gpunetsim/sim"
)

// Event kinds.
const (
	evOp  uint32 = iota // an operation is due: ref is an op handle
	evMsg               // a message arrives: ref is a message handle
)

// key is one queue entry, ordered by (t, ts). Unlike sim.Engine's sequence
// number, ts is chosen by the caller and kept when an entry is re-queued
// because its CPU or NIC was busy; LogGOPSim breaks ties that way.
type key struct {
	t    sim.Time
	ts   uint64
	ref  uint32
	kind uint32
}

func (a *key) before(b *key) bool { return lessBit(a, b) == 1 }

// lessBit is 1 when a orders before b, else 0, computed without branches as
// the borrow of the 128-bit subtraction (a.t, a.ts) − (b.t, b.ts); heap
// comparisons are unpredictable, so the branch costs more than the
// arithmetic. Times are never negative.
func lessBit(a, b *key) uint64 {
	_, borrow := bits.Sub64(a.ts, b.ts, 0)
	_, borrow = bits.Sub64(uint64(a.t), uint64(b.t), borrow)
	return borrow
}

// queue is a 4-ary min-heap of keys.
type queue struct{ k []key }

func (q *queue) len() int { return len(q.k) }

func (q *queue) push(e key) {
	q.k = append(q.k, e)
	k := q.k
	i := len(k) - 1
	for i > 0 {
		p := (i - 1) / 4
		if !e.before(&k[p]) {
			break
		}
		k[i] = k[p]
		i = p
	}
	k[i] = e
}

// pop removes the earliest key. It uses Floyd's variant: the hole at the
// root moves down along the smallest children (chosen by a branch-free
// tournament) to a leaf, and the displaced last key sifts up from there,
// usually zero or one step.
func (q *queue) pop() key {
	k := q.k
	top := k[0]
	n := len(k) - 1
	last := k[n]
	q.k = k[:n]
	k = k[:n]
	if n == 0 {
		return top
	}
	i := 0
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		if c+4 <= n {
			a := c + int(lessBit(&k[c+1], &k[c]))
			b := c + 2 + int(lessBit(&k[c+3], &k[c+2]))
			m = a + int(lessBit(&k[b], &k[a]))*(b-a)
		} else {
			for j := c + 1; j < n; j++ {
				if k[j].before(&k[m]) {
					m = j
				}
			}
		}
		k[i] = k[m]
		i = m
	}
	for i > 0 {
		p := (i - 1) / 4
		if !last.before(&k[p]) {
			break
		}
		k[i] = k[p]
		i = p
	}
	k[i] = last
	return top
}
