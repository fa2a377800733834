package nic

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/sim"
)

// PostTriggered posts a Portals triggered operation from host thread p
// (§2.7): the doorbell and descriptor fetch cost as for Doorbell, then cmd
// is armed on ct with threshold (see Arm).
func (n *NIC) PostTriggered(p *sim.Proc, cmd Command, ct *CT, threshold uint64) {
	n.check(cmd)
	n.checkCT(ct)
	n.hostPost(p, "trig post", true, func() { n.Arm(cmd, ct, threshold) })
}

// Arm stores cmd on the NIC attached to ct, to issue once ct's success
// count reaches threshold. It is checked now, costing TrigEvalCost, and on
// every later change of ct, costing TrigEvalCost per armed entry examined
// (the fired ones plus the first still armed). Evaluation is one unit per
// NIC, so evaluations queue. A fired op issues CmdLatency after its
// evaluation (a host command minus the fetch). Ops on one CT fire in
// non-decreasing threshold order, ties in arm order. Arm never blocks; it
// is the NIC-side half of PostTriggered.
func (n *NIC) Arm(cmd Command, ct *CT, threshold uint64) {
	n.check(cmd)
	n.checkCT(ct)
	n.trigSeq++
	a := armedOp{cmd: cmd, threshold: threshold, seq: n.trigSeq}
	done := n.evaluate(1)
	if ct.success >= threshold {
		n.fireTriggered(a, done)
		return
	}
	i := len(ct.armed)
	for i > 0 && ct.armed[i-1].threshold > threshold {
		i--
	}
	ct.armed = append(ct.armed, armedOp{})
	copy(ct.armed[i+1:], ct.armed[i:])
	ct.armed[i] = a
}

func (n *NIC) checkCT(ct *CT) {
	if ct == nil || ct.n != n {
		panic(fmt.Sprintf("%s: triggered op on a CT of another NIC (or nil)", n.name))
	}
}

// evaluate reserves the evaluation unit for k entry checks and returns
// when they are done.
func (n *NIC) evaluate(k int) sim.Time {
	start := max(n.e.Now(), n.trigFree)
	n.trigFree = start + sim.Time(k)*n.spec.TrigEvalCost
	return n.trigFree
}

// checkTriggered fires the armed ops of ct that its success count reached.
func (n *NIC) checkTriggered(ct *CT) {
	if len(ct.armed) == 0 {
		return
	}
	k := 0
	for k < len(ct.armed) && ct.armed[k].threshold <= ct.success {
		k++
	}
	checks := k
	if k < len(ct.armed) {
		checks++
	}
	done := n.evaluate(checks)
	for _, a := range ct.armed[:k] {
		n.fireTriggered(a, done)
	}
	ct.armed = append(ct.armed[:0], ct.armed[k:]...)
}

func (n *NIC) fireTriggered(a armedOp, evaluated sim.Time) {
	n.stats.TriggeredFired++
	start := n.e.Now()
	n.e.At(evaluated+n.spec.CmdLatency, func() {
		n.spanOp("trig ", a.cmd.Op.String(), start)
		n.issue(a.cmd)
	})
}
