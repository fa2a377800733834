// Package xtq is the remote-task programming model of XTQ and of its HSA
// baseline (the dissertation's XTQ chapter): the host API RdmaPostBuffer
// (PostBuffer), TaskingInit, XtqRegisterKernel/Queue (RegisterKernel,
// RegisterQueue), XtqPut (Put), ExecutionBarrier (Barrier) and SignalWait,
// plus zero-length notifications (Notify, WaitNotify) that the workloads use
// for acks and resource-ready syncs.
//
// Both modes send a task as one gathered message [64 B command packet |
// kernel arguments | payload] into a receive buffer the target posted
// (MANAGE_LOCAL). They differ at the target:
//
//   - XTQ: the registrations fill the NIC's lookup tables and the target NIC
//     rewrites the packet, enqueues it into the GPU user-mode queue and
//     rings the doorbell (hw/nic xtq.go). The target CPU does nothing.
//   - HSA: the message is a plain two-sided receive. A host progress thread
//     on the target polls the event queue (a poll that sees a new event
//     misses in the cache), pays the MPI receive-matching and event-dispatch
//     paths, reads the task description, looks the kernel and queue up in
//     host tables, writes kernel arguments 0 and 1, then runs the AQL
//     producer protocol on the CPU: an atomic add on the write index, a
//     wait for room if the queue is full, the packet body, the header last,
//     and the doorbell store (each store visible after the memory latency,
//     in program order). The initiator also pays the MPI send path.
//
// From the doorbell on both are the GPU's AQL packet processor (hw/gpu
// aql.go): packet read, dispatch, completion-signal decrement.
//
// Failures (an unknown kernel or queue index, a payload larger than the
// posted buffer, no posted buffer) are failure events at the target: TASK
// events from the NIC under XTQ, records of the progress thread under HSA.
// A waiter on the task's signal then waits forever, as on the hardware; the
// engine stops with a deadlock, and Failures names the cause.
//
// CPU tasks (cputask.go; the dissertation's XTQ chapter): PutCPU sends an agent-dispatch
// packet (function and queue indices, four embedded arguments) that the
// NIC (XTQ) or the progress thread (HSA) rewrites through the function
// table (RegisterFunction) and enqueues into a CPU agent queue
// (TaskingInitCPU), whose own host thread polls the doorbell and runs the
// function (hw/cpu agent.go). A task whose queue index names a queue of
// the other agent fails with XTQ_WRONG_AGENT.
//
// Not modelled: queues shared by several processes, signal handles other
// than the address of their value.
package xtq
