package exp

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/gpunetsim/gpunetsim/strategy"
)

// strategyLists returns every experiment's strategy list of c by its
// parameter name ("allreduce.strategies"), as pointers into c.
func (c *Config) strategyLists() map[string]*[]string {
	out := map[string]*[]string{}
	v := reflect.ValueOf(c).Elem()
	t := v.Type()
	for i := range t.NumField() {
		sec, ok := t.Field(i).Tag.Lookup("toml")
		if !ok || v.Field(i).Kind() != reflect.Struct {
			continue
		}
		st := v.Field(i).Type()
		for j := range st.NumField() {
			name, _, _ := strings.Cut(st.Field(j).Tag.Get("toml"), ",")
			// The matrix runs its cells on the documents' presets unless
			// matrix.hardware = run, and reports a cell the run's hardware
			// cannot hold as a row: its list is not an experiment's.
			if sec == "matrix" {
				continue
			}
			if strings.HasSuffix(name, "strategies") && st.Field(j).Type == reflect.TypeFor[[]string]() {
				out[sec+"."+name] = v.Field(i).Field(j).Addr().Interface().(*[]string)
			}
		}
	}
	return out
}

// DropUnavailable removes from every strategy list the strategies the
// preset's NIC cannot run (docs/today.md), and from cpl2's ratios those
// one CU cannot hold: a present-day preset's defaults, and the report's
// study sizes on it, compare only what its machine can do. A list the
// user sets is checked instead (unavailable, cpl2's List).
func DropUnavailable(c Config) Config {
	for _, list := range c.strategyLists() {
		*list = slices.DeleteFunc(slices.Clone(*list), func(s string) bool {
			d, err := strategy.Lookup(s)
			return err == nil && d.RunsOn(c.Spec) != nil
		})
	}
	// Likewise the cpl2 ratios whose work-groups one CU of this GPU cannot
	// hold at once (a Hopper SM: at most 15 streaming per networking one).
	most := cpl2MaxRatio(c)
	if fit := slices.DeleteFunc(slices.Clone(c.ShmemBench.L2Ratios), func(r int) bool { return r > most }); len(fit) > 0 {
		c.ShmemBench.L2Ratios = fit // none fitting: cpl2 itself says why
	}
	return c
}

// unavailable reports every listed strategy the hardware cannot run, each
// naming its list and the reason.
func (c Config) unavailable() []error {
	var errs []error
	lists := c.strategyLists()
	names := make([]string, 0, len(lists))
	for n := range lists {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		for _, s := range *lists[n] {
			d, err := strategy.Lookup(s)
			if err != nil {
				continue // the list's own validation names it
			}
			if err := d.RunsOn(c.Spec); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w (preset %s)", n, err, c.Run.Preset))
			}
		}
	}
	return errs
}
