package exp

import "strings"

// hardwareSections are the parameter sections of the simulated machine
// and its software stack that every simulation reads.
var hardwareSections = []string{"run", "link", "switch", "topology", "node", "network", "pcie", "c2c", "cpu", "gpu", "gpu_l2", "nic", "cp", "sw", "mpi"}

// ParamSections returns the parameter sections (the part of a dotted name
// before the first dot) that the named experiment reads: its own knobs
// and the models it builds on first, then the hardware. Reports print
// these and leave the other experiments' knobs to the full list (--json,
// the CSV sidecar, "gpunetsim params"). An unknown name reads its own
// section and the hardware.
func ParamSections(name string) (own, hardware []string) {
	hardware = hardwareSections
	switch {
	case name == "strategies":
		return nil, nil
	case name == "jacobi1d":
		own = []string{"jacobi", "jacobi1d"}
	case name == "jacobistrong" || name == "jacobiweak": // GHN_DGPU (IKN) and GNN_GIO read the runtime's knobs
		own = []string{"jacobi", "jacobiscale", "shmem"}
	case name == "mlproj":
		own = []string{"ml", "allreduce"}
	case name == "matrix":
		own = []string{"matrix", "shmem", "gnn"}
	case name == "fft2d":
		own, hardware = []string{"fft2d", "ddt"}, append(hardware[:len(hardware):len(hardware)], "spin")
	case strings.HasPrefix(name, "ddt_pulp"):
		own, hardware = []string{"ddtpulp", "ddt"}, append(hardware[:len(hardware):len(hardware)], "spin")
	case strings.HasPrefix(name, "ddt_"):
		own, hardware = []string{"ddt"}, append(hardware[:len(hardware):len(hardware)], "spin")
	case name == "ghnqueue" || name == "shmemget" || name == "shmemload" || name == "cpl2":
		own = []string{"shmembench", "shmem"}
	case strings.HasPrefix(name, "gpurdma"):
		own = []string{"gpurdma", "gnn"}
	case name == "gio": // GIO's and IKN's costs are the runtime's knobs
		own = []string{"giobench", "gnn", "shmem"}
	case name == "spts":
		own = []string{"spts", "gnn", "shmem"}
	case name == "moe": // its device-shmem implementation reads the runtime's knobs
		own = []string{"moe", "shmem"}
	case name == "gpi":
		own = []string{"gpi", "gnn"}
	default:
		own = []string{name}
	}
	return own, hardware
}
