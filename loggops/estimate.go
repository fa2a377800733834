package loggops

import "github.com/gpunetsim/gpunetsim/goal"

// Memory and work of a run, estimated from the program's windows before it
// starts. The constants are measured peaks: a 1,048,576-rank binomial
// broadcast (the leanest generated schedule) holds 523 B per rank; a
// 500-rank linear all-to-all, whose 499,000 operations are all in memory
// from the start, 175 MB, about 330 B per operation beyond the ranks.
const (
	// BytesPerRank is a rank's clocks, queues and reader.
	BytesPerRank = 500
	// BytesPerHeldOp is an operation read and not yet finished, with its
	// queue entry and dependency edges.
	BytesPerHeldOp = 400
)

// Estimate is the expected size of a run of a program.
type Estimate struct {
	// Ranks is the program's rank count.
	Ranks int
	// HeldOps is how many operations are in memory at once at the start:
	// every rank's roots and lookahead window.
	HeldOps float64
	// Stmts is the program's statements (operations and dependencies).
	Stmts float64
	// Events estimates the queue entries processed: each statement
	// once, and for each operation ready from the start (a root) its
	// message's arrival and one wait for its busy CPU or NIC (wait.go:
	// entries waiting for one resource do not retry), so a linear
	// all-to-all grows as ranks², not ranks³.
	Events float64
}

// Bytes is the estimated peak memory.
func (e Estimate) Bytes() float64 {
	return float64(e.Ranks)*BytesPerRank + e.HeldOps*BytesPerHeldOp
}

// EstimateRun estimates a run of prog from its windows. A generated
// program's ranks are alike, so rank 0's window stands for every rank;
// a file's windows were computed when it was indexed and are summed.
func EstimateRun(prog goal.Program) Estimate {
	n := prog.NumRanks()
	e := Estimate{Ranks: n}
	add := func(w goal.Window, times float64) {
		ops := float64(w.Stmts)
		e.HeldOps += times * float64(w.Roots+w.Lookahead)
		e.Stmts += times * ops
		e.Events += times * (ops + 2*float64(w.Roots))
	}
	if _, ok := prog.(*goal.Generated); ok {
		if n > 0 {
			add(prog.Window(0), float64(n))
		}
		return e
	}
	for r := range n {
		add(prog.Window(r), 1)
	}
	return e
}
