// Package mpi is a two-sided MPI-style layer over the Portals NIC
// (the dissertation (Portals 4)): Isend/Irecv/Wait with tag matching, an eager protocol for
// messages up to mpi.eager_max and rendezvous (receiver-issued Get) above
// it, unexpected messages held in NIC overflow buffers, and progress only
// inside MPI calls on the calling host thread.
//
// Match bits are context(16) | source rank(24) | tag(24); AnySource and
// AnyTag become ignore bits. A rendezvous header is a zero-byte Put whose
// hdr_data carries the length, a per-sender cookie and a flag; the receiver
// Gets the data from the sender's exposed ME on the rendezvous PT, and the
// sender's request completes on the GET event.
//
// Software costs follow the dissertation: mpi_match per send or receive
// posted, portals_post per NIC command, event_dispatch per event handled,
// mpi_poll per progress poll that finds nothing.
//
// Isend, Irecv, Block and ScheduleStep also have step forms (steps.go:
// Begin* and Try) that a nonblocking collective's wait runs as a state
// machine in the rank thread's process (model/nbc): the same events at the
// same times, without two coroutine switches per wait.
package mpi
