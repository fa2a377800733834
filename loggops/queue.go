package loggops

import "github.com/gpunetsim/gpunetsim/sim"

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

func (a *key) before(b *key) bool {
	return a.t < b.t || a.t == b.t && a.ts < b.ts
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
		end := min(c+4, n)
		for j := c + 1; j < end; j++ {
			if k[j].before(&k[m]) {
				m = j
			}
		}
		if !k[m].before(&last) {
			break
		}
		k[i] = k[m]
		i = m
	}
	k[i] = last
	return top
}
