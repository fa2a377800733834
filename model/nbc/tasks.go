package nbc

import "fmt"

// Remote-task op kinds (the dissertation's XTQ chapter): a schedule whose sends
// launch kernels at their targets.
const (
	// XtqPut sends Len bytes at Addr to Peer as a remote task whose kernel
	// combines them into the peer's buffer at Offset.
	XtqPut Kind = Copy + 1 + iota
	// TaskPost posts the receive resources for the next incoming task
	// (completes at once).
	TaskPost
	// TaskWait completes when the node's next incoming task (the
	// counterpart of a peer's XtqPut) has run.
	TaskWait
)

// TaskTransport is a Transport that also runs the remote-task kinds.
type TaskTransport interface {
	Transport
	Task(op Op) (Request, error)
}

// task starts a remote-task op on a transport that supports them.
func (h *Handle) task(op Op) (Request, error) {
	tt, ok := h.tr.(TaskTransport)
	if !ok {
		return nil, fmt.Errorf("transport %T cannot run %s ops", h.tr, op.Kind)
	}
	return tt.Task(op)
}
