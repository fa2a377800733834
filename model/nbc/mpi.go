package nbc

import (
	"github.com/gpunetsim/gpunetsim/model/mpi"
	"github.com/gpunetsim/gpunetsim/sim"
)

// overMPI runs schedules over an MPI communicator, tagging each message
// with its round.
type overMPI struct{ c *mpi.Comm }

// OverMPI returns a Transport over c.
func OverMPI(c *mpi.Comm) Transport { return overMPI{c} }

func (o overMPI) Isend(op Op) (Request, error) { return o.c.Isend(op.Addr, op.Len, op.Peer, op.Step) }
func (o overMPI) Irecv(op Op) (Request, error) { return o.c.Irecv(op.Addr, op.Len, op.Peer, op.Step) }
func (o overMPI) Poll()                        { o.c.Poll() }
func (o overMPI) Block()                       { o.c.Block() }
func (o overMPI) Step()                        { o.c.ScheduleStep() }

// The step forms (StepTransport).

func (o overMPI) Proc() *sim.Proc { return o.c.Proc() }
func (o overMPI) BeginIsend(op Op) (Request, error) {
	return o.c.BeginIsend(op.Addr, op.Len, op.Peer, op.Step)
}
func (o overMPI) BeginIrecv(op Op) (Request, error) {
	return o.c.BeginIrecv(op.Addr, op.Len, op.Peer, op.Step)
}
func (o overMPI) BeginBlock() { o.c.BeginBlock() }
func (o overMPI) BeginStep()  { o.c.BeginScheduleStep() }
func (o overMPI) Try() bool   { return o.c.Try() }
