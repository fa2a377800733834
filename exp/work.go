package exp

// workUnitBytes is the payload that counts as one unit of expected work
// per node (plus one unit per node for the fixed cost of a simulation).
const workUnitBytes = 64 << 10

// ExpectedWork estimates how much simulating experiment name on cfg costs,
// relative to other runs: for each simulation the memory estimate knows
// (simsOf: node counts and payload sizes), nodes × (1 + payload / 64 KiB);
// 1 for a run whose size no parameter grows. It weights progress bars and
// ETAs, so that a 64-node point counts for more than a 2-node one: a guess
// from the sizes, not a measurement.
func ExpectedWork(name string, cfg Config) float64 {
	sims := simsOf(name, cfg)
	if len(sims) == 0 {
		return 1
	}
	w := 0.0
	for _, s := range sims {
		w += max(1, s.nodes) * (1 + s.payload/workUnitBytes)
	}
	return w
}
