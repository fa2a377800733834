// Package params names, prints and parses every parameter of an
// exp.Config, and loads a configuration in layers.
//
// A parameter is a leaf field of exp.Config that carries a `doc` tag; its
// name is the dotted path of the fields' `toml` tags, with the embedded
// cluster.Spec flattened: link.bandwidth, gpu.launch, nic.trig_max_entries,
// run.seed, allreduce.nodes, sw.mpi_match, … List walks them in declaration
// order; Set parses one value; Record turns a configuration into the
// report.Params every output carries.
//
// # Value syntax
//
// Values use the same text as the rest of gpunetsim:
//
//	duration  a number with ps, ns, us, ms or s: "1.5us" ("0" alone is allowed)
//	size      a byte count with an optional unit: "64B", "2KiB", "8MiB", "4096"
//	rate      bits or bytes per second: "100Gbps", "28GB/s"
//	freq      "1.5GHz", "800MHz"
//	int, uint decimal integers; float a finite decimal number in [-1e300, 1e300],
//	          0 or of magnitude at least 2.2e-308 (no denormal); bool true/false
//	[]int     a comma list of integers and ranges: "2,3,5", "2-64/2" (2 to 64
//	          step 2), "1-4" (step 1); printed back in the same form
//	[]string  a comma list: "CPU,GPUTN"
//
// Set checks syntax only; ranges and cross-field rules are exp.Config.Validate's.
//
// # Layers
//
// Load builds a configuration in this order, each layer overriding the one
// before: the preset's defaults (exp.DefaultConfig); a TOML file, whose
// run.preset chooses the base preset unless an explicit preset is given;
// the --set overrides in order; then Validate. Unknown keys in the file are
// rejected, and durations, rates and frequencies must be strings with a unit
// there too (a bare number other than 0 is refused rather than read as
// picoseconds or bytes per second). Sizes may be bare byte counts.
package params
