package nbc

import "github.com/gpunetsim/gpunetsim/model/mpi"

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
