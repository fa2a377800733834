package net

import "testing"

// TestSettledTakeNamesTheKeptFlow checks which flow settledTake asks to
// join the set when two rates within floorSlack of each other are taken
// from one port and one of them is a kept flow's: the kept flow of the
// later step, else that of the earlier; none when both are steps of the
// set (their order is the set's heap's) or the rates are equal or far
// apart.
func TestSettledTakeNamesTheKeptFlow(t *testing.T) {
	a, b := &flow{}, &flow{}
	const r = 1.0
	near := r * (1 + floorSlack/4)
	for _, c := range []struct {
		name        string
		first, then *flow // nil: a step of the set
		r2          float64
		want        *flow
	}{
		{"set then kept, near", nil, a, near, a},
		{"kept then set, near", a, nil, near, a},
		{"kept then kept, near", a, b, near, b},
		{"set then set, near", nil, nil, near, nil},
		{"kept then kept, equal", a, b, r, nil},
		{"kept then set, far", a, nil, 2 * r, nil},
	} {
		pt := &port{capLeft: 10, unfrozen: 5}
		if got := settledTake(pt, r, c.first); got != nil {
			t.Fatalf("%s: the first take named a flow", c.name)
		}
		got := settledTake(pt, c.r2, c.then)
		if got != c.want {
			t.Errorf("%s: joins %p, want %p (a %p, b %p)", c.name, got, c.want, a, b)
		}
		if wantLeft := 10 - r - c.r2; got == nil && (pt.capLeft != wantLeft || pt.unfrozen != 3) {
			t.Errorf("%s: capacity left %v, %d unfrozen; want %v, 3", c.name, pt.capLeft, pt.unfrozen, wantLeft)
		}
	}
}
