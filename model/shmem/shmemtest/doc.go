// Package shmemtest is the conformance suite of the device-side
// OpenSHMEM API (model/shmem), in the style of testing/fstest: Run checks
// one backend — every call's functional result, fence ordering, quiet
// that waits only on its own context, wait_until's comparisons, the
// barrier, errors naming the work-group, and the ping/pong example of
// the dissertation's ComP-Net chapter — on a small simulated cluster. Every backend
// runs it, including the ideal one the suite is tested with.
package shmemtest
