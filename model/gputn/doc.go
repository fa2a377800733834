// Package gputn is the GPU Triggered Networking programming model
// (the dissertation's GPU-TN chapter): the host builds full Portals commands and
// registers them on the NIC as trigger entries (TrigPut, TrigGet), and
// kernels fire them with a system-scope store of a tag to the NIC's trigger
// address, after a system-scope release of the data. TrigPutBlock
// registers a schedule of puts made from their index (a ring's put per
// step): the NIC's entries then hold the index, not a command each.
//
// Granularities (the dissertation's GPU-TN chapter) are expressed by the tags and thresholds the
// host registers and the helpers kernels call: TriggerWorkItem (one tag per
// work-item), TriggerWorkGroup (the leader after a barrier), TriggerKernel
// (every WG leader writes one tag whose threshold is the number of WGs) and
// TriggerMixed (k work-items share a tag).
package gputn
