package validate

import (
	"slices"
	"strings"
)

// Evaluator runs the experiment behind the entries whose id starts with
// Prefix and returns what the model says.
type Evaluator struct {
	// Prefix selects the entries (the longest registered prefix of an id
	// wins, so a whole figure and one of its entries may have different
	// evaluators).
	Prefix string
	// Eval simulates entry e. It must use c.Config(e.Preset) unchanged but
	// for the experiment's own set-up knobs (sizes, strategies, sweeps):
	// one parameter set per preset.
	Eval func(c *Ctx, e Entry) (Outcome, error)
}

// Group is the evaluators of one file: the unit whose held entries are
// recorded together (testdata/holds_<Name>.txt), so that each file's owner
// updates only their own record.
type Group struct {
	Name       string
	Evaluators []Evaluator
}

// Groups returns every registered evaluator group. Each group lives in the
// file of its name.
func Groups() []Group {
	return []Group{
		{Name: "d0ch4", Evaluators: d0ch4()},
		{Name: "d0ch5", Evaluators: d0ch5()},
		{Name: "d0ch6", Evaluators: d0ch6()},
		{Name: "d1", Evaluators: d1()},
		{Name: "d2", Evaluators: d2()},
		{Name: "d4", Evaluators: d4()},
	}
}

// find returns the evaluator with the longest prefix of id and its group.
func find(groups []Group, id string) (Evaluator, string, bool) {
	var best Evaluator
	var group string
	for _, g := range groups {
		for _, ev := range g.Evaluators {
			if strings.HasPrefix(id, ev.Prefix) && len(ev.Prefix) > len(best.Prefix) {
				best, group = ev, g.Name
			}
		}
	}
	return best, group, best.Eval != nil
}

// GroupOf returns the name of the evaluator group that judges id ("" if
// none does).
func GroupOf(id string) string {
	_, g, _ := find(Groups(), id)
	return g
}

// groupNames lists the groups' names in order.
func groupNames(groups []Group) []string {
	var out []string
	for _, g := range groups {
		out = append(out, g.Name)
	}
	return slices.Clip(out)
}
