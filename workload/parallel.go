package workload

import (
	"runtime"
	"sync"
)

// parallelMin is the least work, in bytes, worth splitting across cores.
const parallelMin = 1 << 20

// forBlocks calls fn(i) for every i in [0, n), in contiguous blocks on up
// to GOMAXPROCS goroutines when bytes (the work's size) is worth it, and
// returns the error of the smallest i that failed, so the result does not
// depend on the number of cores. It is for the host-side work of a
// functional run outside simulated time — writing inputs, comparing results
// — where each i touches its own bytes; the simulation itself stays on one
// goroutine.
func forBlocks(n int, bytes uint64, fn func(i int) error) error {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 || bytes < parallelMin {
		for i := range n {
			if err := fn(i); err != nil {
				return err
			}
		}
		return nil
	}
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := n*w/workers, n*(w+1)/workers
		wg.Go(func() {
			for i := lo; i < hi; i++ {
				if err := fn(i); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	return firstErr(errs)
}
