package exp

// checkedCell is a table's "verified" cell: the verdict of a functional
// run, or "-" (an empty CSV cell, as allreduce and jacobi print it) for a
// payload-free one, where nothing was compared: false there read as a
// failed check (pingpong, halo3d and allreduce_hier in `today`, which runs
// payload-free).
func checkedCell(functional, verified bool) any {
	if !functional {
		return "-"
	}
	return verified
}

// payloadFreeNote is the note of a run whose verified column is empty.
const payloadFreeNote = "payload-free run (run.functional = false): buffers carry no bytes (same timing); nothing verified, the verified column is empty"
