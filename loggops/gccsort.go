package loggops

import "math/bits"

// gccSort sorts s in place into the exact order that libstdc++'s std::sort
// (GCC 4.9 and later) produces for the same input and comparator.
//
// It exists for LogGOPSim compatibility: LogGOPSim orders each batch of
// simultaneously ready operations with std::sort comparing the operation
// type only (SEND < RECV < LOCOP). std::sort is not stable, so operations of
// equal type come out permuted, and that permutation decides which of them
// runs first and therefore the simulated times. sort.Slice, slices.SortFunc
// and any stable sort give a different order; to match LogGOPSim's results
// bit for bit we must permute equal elements exactly as libstdc++ does.
//
// The algorithm is libstdc++'s introsort, re-implemented from its public
// description: quicksort with a median-of-three pivot moved to the front
// (candidates first+1, middle, last-1) and an unguarded Hoare partition,
// recursing on the right part and looping on the left, until parts have at
// most 16 elements; a part that exceeds the depth limit of 2·⌊log2 n⌋
// partitioning levels is heap-sorted instead; finally one insertion sort
// pass over the whole slice (guarded over the first 16 elements, unguarded
// after them). Each helper below mirrors one libstdc++ routine, including
// the exact sequence of comparisons and moves, which is what fixes the order
// of equal elements.
//
// less must be a strict weak ordering. gccSort allocates nothing.
func gccSort[T any](s []T, less func(a, b T) bool) {
	gccSortCounted(s, less)
}

// gccSortCounted is gccSort, returning how many parts were heap-sorted
// because the depth limit was reached (tests use it to check that the
// fallback is exercised).
func gccSortCounted[T any](s []T, less func(a, b T) bool) (heapSorts int) {
	n := len(s)
	if n < 2 {
		return 0
	}
	heapSorts = gccIntrosortLoop(s, 2*(bits.Len(uint(n))-1), less)
	gccFinalInsertionSort(s, less)
	return heapSorts
}

// gccThreshold is libstdc++'s _S_threshold: introsort leaves parts of at most
// this many elements to the final insertion sort.
const gccThreshold = 16

// gccIntrosortLoop mirrors std::__introsort_loop. It returns the number of
// parts handed to the heap-sort fallback.
func gccIntrosortLoop[T any](s []T, depth int, less func(a, b T) bool) (heapSorts int) {
	for len(s) > gccThreshold {
		if depth == 0 {
			gccPartialSort(s, less) // std::__partial_sort(first, last, last)
			return heapSorts + 1
		}
		depth--
		cut := gccUnguardedPartitionPivot(s, less)
		heapSorts += gccIntrosortLoop(s[cut:], depth, less)
		s = s[:cut]
	}
	return heapSorts
}

// gccUnguardedPartitionPivot mirrors std::__unguarded_partition_pivot: move
// the median of s[1], s[mid], s[last] to s[0], then partition s[1:] around
// it. It returns the cut index within s.
func gccUnguardedPartitionPivot[T any](s []T, less func(a, b T) bool) int {
	n := len(s)
	gccMoveMedianToFirst(s, 0, 1, n/2, n-1, less)
	return gccUnguardedPartition(s, 1, n, 0, less)
}

// gccMoveMedianToFirst mirrors std::__move_median_to_first: swap the median
// of s[a], s[b], s[c] into s[result].
func gccMoveMedianToFirst[T any](s []T, result, a, b, c int, less func(a, b T) bool) {
	var m int
	if less(s[a], s[b]) {
		switch {
		case less(s[b], s[c]):
			m = b
		case less(s[a], s[c]):
			m = c
		default:
			m = a
		}
	} else {
		switch {
		case less(s[a], s[c]):
			m = a
		case less(s[b], s[c]):
			m = c
		default:
			m = b
		}
	}
	s[result], s[m] = s[m], s[result]
}

// gccUnguardedPartition mirrors std::__unguarded_partition over s[first:last]
// with the pivot at s[pivot] (outside that range). Both scans stop at
// elements equal to the pivot, which are swapped.
func gccUnguardedPartition[T any](s []T, first, last, pivot int, less func(a, b T) bool) int {
	for {
		for less(s[first], s[pivot]) {
			first++
		}
		last--
		for less(s[pivot], s[last]) {
			last--
		}
		if first >= last {
			return first
		}
		s[first], s[last] = s[last], s[first]
		first++
	}
}

// gccPartialSort mirrors std::__partial_sort(first, last, last) as
// introsort calls it: __heap_select with middle == last is just
// std::__make_heap, followed by std::__sort_heap.
func gccPartialSort[T any](s []T, less func(a, b T) bool) {
	gccMakeHeap(s, less)
	gccSortHeap(s, less)
}

// gccMakeHeap mirrors std::__make_heap: sift down every parent, from the
// last one to the root.
func gccMakeHeap[T any](s []T, less func(a, b T) bool) {
	n := len(s)
	if n < 2 {
		return
	}
	for parent := (n - 2) / 2; ; parent-- {
		gccAdjustHeap(s, parent, n, s[parent], less)
		if parent == 0 {
			return
		}
	}
}

// gccSortHeap mirrors std::__sort_heap: repeatedly pop the maximum to the
// end of the shrinking heap.
func gccSortHeap[T any](s []T, less func(a, b T) bool) {
	for last := len(s) - 1; last > 0; last-- {
		gccPopHeap(s, last, last, less)
	}
}

// gccPopHeap mirrors std::__pop_heap(first, first+last, first+result): the
// root goes to s[result] and the element that was there is sifted into the
// heap s[:last].
func gccPopHeap[T any](s []T, last, result int, less func(a, b T) bool) {
	v := s[result]
	s[result] = s[0]
	gccAdjustHeap(s, 0, last, v, less)
}

// gccAdjustHeap mirrors std::__adjust_heap: move the hole at hole down to a
// leaf, always following the larger child (the right one unless the left is
// strictly greater), then push v up from there with gccPushHeap.
func gccAdjustHeap[T any](s []T, hole, n int, v T, less func(a, b T) bool) {
	top := hole
	child := hole
	for child < (n-1)/2 {
		child = 2 * (child + 1)
		if less(s[child], s[child-1]) {
			child--
		}
		s[hole] = s[child]
		hole = child
	}
	if n&1 == 0 && child == (n-2)/2 {
		child = 2 * (child + 1)
		s[hole] = s[child-1]
		hole = child - 1
	}
	gccPushHeap(s, hole, top, v, less)
}

// gccPushHeap mirrors std::__push_heap: move v up from hole while its
// parent is less than it, but not above top.
func gccPushHeap[T any](s []T, hole, top int, v T, less func(a, b T) bool) {
	parent := (hole - 1) / 2
	for hole > top && less(s[parent], v) {
		s[hole] = s[parent]
		hole = parent
		parent = (hole - 1) / 2
	}
	s[hole] = v
}

// gccFinalInsertionSort mirrors std::__final_insertion_sort: a guarded
// insertion sort over the first 16 elements, then an unguarded one over the
// rest (introsort guarantees that the minimum is among the first 16).
func gccFinalInsertionSort[T any](s []T, less func(a, b T) bool) {
	if len(s) > gccThreshold {
		gccInsertionSort(s[:gccThreshold], less)
		for i := gccThreshold; i < len(s); i++ { // std::__unguarded_insertion_sort
			gccUnguardedLinearInsert(s, i, less)
		}
	} else {
		gccInsertionSort(s, less)
	}
}

// gccInsertionSort mirrors std::__insertion_sort: an element less than the
// first is moved straight to the front; any other is inserted by an
// unguarded backward scan.
func gccInsertionSort[T any](s []T, less func(a, b T) bool) {
	for i := 1; i < len(s); i++ {
		if less(s[i], s[0]) {
			v := s[i]
			copy(s[1:i+1], s[:i]) // std::move_backward
			s[0] = v
		} else {
			gccUnguardedLinearInsert(s, i, less)
		}
	}
}

// gccUnguardedLinearInsert mirrors std::__unguarded_linear_insert: shift
// s[i] left past every element it is less than. Some element to its left
// must not be greater than it.
func gccUnguardedLinearInsert[T any](s []T, i int, less func(a, b T) bool) {
	v := s[i]
	j := i - 1
	for less(v, s[j]) {
		s[i] = s[j]
		i = j
		j--
	}
	s[i] = v
}
