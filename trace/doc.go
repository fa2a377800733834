// Package trace records simulated activity as Chrome trace-event JSON, the
// format Perfetto (ui.perfetto.dev) and chrome://tracing open.
//
// A Writer implements sim.Tracer. Each span becomes a complete ("X") event
// with ts and dur in microseconds. A track name such as
// "GPUTN n=4/node[0].gpu.wg[3]" is split at its first "/": the part before
// names the simulation run, shown as a process (pid), and the rest names the
// agent, shown as a thread (tid) of that process; a track without "/"
// belongs to the process "sim". Chrome requires the complete events of one
// thread to nest, so spans of an agent that overlap without nesting (a NIC
// serving several transfers at once) are spread over extra lanes, threads
// named "agent #2", "agent #3", … Processes and threads carry
// process_name/thread_name metadata and sort indices so they appear in name
// order.
//
// Spans are buffered in memory and written by Encode at the end of a run.
// The output is deterministic: pids and tids are numbered in natural name
// order (node[2] before node[10]) and events are sorted by (process, thread, start, longest first,
// name), so the same set of spans gives the same bytes whatever order they
// arrived in, even from simulations run in parallel (Span is safe for
// concurrent use). Callers that want the file to appear atomically write it
// through report.WriteFile.
package trace
