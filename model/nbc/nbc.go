// Package nbc is the libNBC-style schedule model of workloads.md §4.6: a
// collective is a Schedule of Rounds; every op of a round must complete
// before the next round starts. The schedule is data: host progress engines
// (CPU, HDN) walk it with MPI, and the GPU-TN and GDS runtimes map its sends
// to pre-registered triggered or deferred puts, one per (step, slice).
package nbc

// Kind is what an op does.
type Kind uint8

// Op kinds.
const (
	Send   Kind = iota // send chunk Chunk to Peer
	Recv               // receive chunk Chunk from Peer
	Reduce             // combine the received chunk into the local one
	Copy               // copy the received chunk into place
)

func (k Kind) String() string {
	return [...]string{"send", "recv", "reduce", "copy"}[k]
}

// Op is one schedule operation. Chunk names the algorithm's data unit; Step
// is the round index, used as the message tag.
type Op struct {
	Kind  Kind
	Peer  int
	Chunk int
	Step  int
}

// Round is a set of ops that may proceed concurrently.
type Round []Op

// Schedule is a collective's rounds in order.
type Schedule []Round

// Sends returns the number of send ops in the schedule.
func (s Schedule) Sends() int {
	n := 0
	for _, r := range s {
		for _, op := range r {
			if op.Kind == Send {
				n++
			}
		}
	}
	return n
}
