package datatype_test

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/datatype"
)

// The README's datatype snippet: parse a type from its text form, commit
// it and pack count elements.
func Example() {
	t, err := datatype.Parse("vector(1024,2,4)<float64>")
	if err != nil {
		fmt.Println(err)
		return
	}
	c := t.Commit()
	count := 2
	src := make([]byte, t.Extent()*count)
	for i := range src {
		src[i] = byte(i)
	}
	dst := make([]byte, t.Size()*count)
	n, err := c.Pack(dst, src, 0, count) // origin index 0 in src; c.NewSegment(count) for ranges
	fmt.Println(n, err, dst[:20])
	// Output:
	// 32768 <nil> [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 32 33 34 35]
}
