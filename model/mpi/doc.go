// Package mpi is a two-sided MPI-style layer over the Portals NIC
// (the dissertation (Portals 4)) with the protocol of Open MPI's Portals 4
// transport (its MTL): Isend/Irecv/Wait with tag matching, short messages
// (up to mpi.eager_max, 2 KiB) as one put, copied out of an overflow
// buffer (a short receive block) when unexpected, and progress only inside
// MPI calls on the calling host thread.
//
// Above mpi.eager_max, mpi.long_protocol decides. Long-eager (the default,
// Open MPI's): one full-length put with an ack request, the send buffer
// exposed on the rendezvous PT. A posted receive takes the data directly
// and the ack completes the send; a message that finds no receive lands on
// a zero-length overflow entry, so only its header is kept, and the receive
// gets the data from the exposed buffer once posted — the send then
// completes on the GET event. Rendezvous (rndv): a zero-byte header put and
// always the receiver's get.
//
// Match bits are long(1) | context(15) | source rank(24) | tag(24);
// AnySource and AnyTag become ignore bits, receives ignore the long bit,
// and it steers unexpected messages to the short blocks or the header-only
// entry. A long or rendezvous header's hdr_data carries the length, a
// per-sender cookie and a flag.
//
// Software costs follow the dissertation: mpi_match per send or receive
// posted, portals_post per NIC command, event_dispatch per event handled,
// mpi_poll per progress poll that finds nothing, then the wait for the
// next event and one miss to read the slot the NIC wrote (a real progress
// engine polls the empty queue again: Open MPI's Portals 4 MTL returns on
// PTL_EQ_EMPTY and its request wait calls opal_progress again; an event
// already queued is read without a miss, an under-charge docs/model.md
// describes).
//
// Isend, Irecv, Block and ScheduleStep also have step forms (steps.go:
// Begin* and Try) that a nonblocking collective's wait runs as a state
// machine in the rank thread's process (model/nbc): the same events at the
// same times, without two coroutine switches per wait.
package mpi
