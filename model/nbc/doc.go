// Package nbc is the libNBC-style schedule model of the dissertation: a
// collective is a Schedule of Rounds; every op of a round must complete
// before the next round starts. The schedule is data: the host executor
// here runs it as a nonblocking collective over a two-sided transport (MPI)
// — Start posts the first round, Test advances it whenever the caller
// progresses, Wait blocks until the end — and the GPU-TN and GDS runtimes
// map its sends to pre-registered triggered or deferred puts instead.
// Remote-task schedules (tasks.go, xtq.go) add XtqPut, TaskPost and
// TaskWait ops, run over the XTQ/HSA runtime (OverTasks). Over MPI, Wait
// runs its progress loop (and, with WithLocalSteps, the local ops) as steps
// of the host thread's process (steps.go), with the blocking loop's effects.
package nbc
