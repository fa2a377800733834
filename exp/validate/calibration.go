package validate

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/gpunetsim/gpunetsim/exp/params"
	"github.com/gpunetsim/gpunetsim/hw/cluster"
)

// calibrationTOML is the calibration set shipped with the program, a
// byte-identical copy of the project's validation/calibration.toml (a test
// compares them where the project's copy is present).
//
//go:embed calibration.toml
var calibrationTOML []byte

// Embedded returns the shipped calibration file's bytes.
func Embedded() []byte { return bytes.Clone(calibrationTOML) }

// Kind is how an entry's published outcome is compared.
type Kind string

// The kinds of the calibration set (its README's verdict rule).
const (
	// Ratio: a dimensionless ratio, holds within ±Tolerance.
	Ratio Kind = "ratio"
	// Absolute: a value with a unit, holds within ±Tolerance.
	Absolute Kind = "absolute"
	// Ordering: an ordering or a crossover, holds on the published side.
	Ordering Kind = "ordering"
	// Shape: several clauses, holds when every clause holds.
	Shape Kind = "shape"
	// Bound: a value that holds within [Low, High].
	Bound Kind = "bound"
)

// Tolerance is the relative error within which a ratio or an absolute value
// holds (the documents' own comparisons use ±15 %).
const Tolerance = 0.15

var kinds = []Kind{Ratio, Absolute, Ordering, Shape, Bound}

// Docs names the source documents an entry's doc field may cite.
var docTitles = map[string]string{
	"D0": `"Optimizing Communication for Clusters of GPUs" (dissertation, 2018)`,
	"D1": `"Network-Accelerated Non-Contiguous Memory Transfers" (SC'19)`,
	"D2": `"GPUrdma" (ROSS'16)`,
	"D3": `"ComP-Net" (PACT'18)`,
	"D4": `"GPU Initiated OpenSHMEM" (2020 slides)`,
}

// DocTitle returns the title of source document doc (D0 … D4), or doc.
func DocTitle(doc string) string {
	if t, ok := docTitles[doc]; ok {
		return t
	}
	return doc
}

// Entry is one published outcome with its set-up.
type Entry struct {
	ID     string   `toml:"id"`
	Doc    string   `toml:"doc"`
	Figure string   `toml:"figure"`
	Preset string   `toml:"preset"`
	Setup  string   `toml:"setup"`
	Kind   Kind     `toml:"kind"`
	Claim  string   `toml:"claim"`
	Value  *float64 `toml:"value"`
	Low    *float64 `toml:"low"`
	High   *float64 `toml:"high"`
	Unit   string   `toml:"unit"`
}

// file is the calibration file's layout.
type file struct {
	Entry []Entry `toml:"entry"`
}

// Parse reads a calibration file (name is used in messages) and checks every
// entry: a unique id, a known doc, preset and kind, and the numbers its kind
// needs. Each problem is one line naming the entry and the field.
func Parse(name string, data []byte) ([]Entry, error) {
	var f file
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, decodeError(name, err)
	}
	if len(f.Entry) == 0 {
		return nil, fmt.Errorf("%s: no [[entry]] tables: a calibration file lists its entries as [[entry]] tables", name)
	}
	var errs []error
	seen := map[string]bool{}
	presets := cluster.PresetNames()
	for i, e := range f.Entry {
		where := fmt.Sprintf("%s: entry %d", name, i+1)
		if e.ID != "" {
			where = fmt.Sprintf("%s: entry %q", name, e.ID)
		}
		bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(where+": "+format, a...)) }
		switch {
		case e.ID == "":
			bad("field id is missing: every entry needs a unique id")
		case seen[e.ID]:
			bad("field id repeats an earlier entry's id")
		case strings.ContainsAny(e.ID, ", \t\n"):
			bad("field id = %q: must not contain commas or white space", e.ID)
		}
		seen[e.ID] = true
		if _, ok := docTitles[e.Doc]; !ok {
			bad("field doc = %q: must be one of D0, D1, D2, D3, D4", e.Doc)
		}
		if !slices.Contains(presets, e.Preset) {
			bad("field preset = %q: must be one of %s", e.Preset, strings.Join(presets, ", "))
		}
		if e.Claim == "" {
			bad("field claim is missing: say what was published")
		}
		switch e.Kind {
		case Ratio, Absolute:
			if e.Value == nil {
				bad("field value is missing: a %s entry needs the published value", e.Kind)
			} else if *e.Value == 0 {
				bad("field value = 0: a %s entry's relative error needs a non-zero value", e.Kind)
			} else if v := *e.Value; math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				// Every comparison with NaN fails: the entry was a
				// silent miss. Published times, rates, counts and their
				// ratios are positive.
				bad("field value = %v: must be a finite number > 0", v)
			}
			if e.Kind == Absolute && e.Unit == "" {
				bad("field unit is missing: an absolute entry needs the value's unit")
			}
		case Bound:
			switch {
			case e.Low == nil || e.High == nil:
				bad("fields low and high: a bound entry needs both")
			case !finite(*e.Low):
				bad("field low = %v: must be a finite number", *e.Low)
			case !finite(*e.High):
				bad("field high = %v: must be a finite number", *e.High)
			case *e.Low > *e.High:
				bad("field low = %g: must be ≤ high = %g", *e.Low, *e.High)
			}
		case Ordering, Shape:
		default:
			bad("field kind = %q: must be one of %s", e.Kind, joinKinds())
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return f.Entry, nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func joinKinds() string {
	s := make([]string, len(kinds))
	for i, k := range kinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

// decodeError turns a go-toml error into one line naming the file, line
// and key.
func decodeError(name string, err error) error {
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) && len(strict.Errors) > 0 {
		var errs []error
		for i := range strict.Errors {
			de := &strict.Errors[i]
			row, _ := de.Position()
			errs = append(errs, fmt.Errorf("%s:%d: unknown field %q: an entry has the fields id, doc, figure, preset, setup, kind, claim, value, low, high, unit",
				name, row, strings.Join(de.Key(), ".")))
		}
		return errors.Join(errs...)
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, _ := de.Position()
		msg := strings.TrimPrefix(de.Error(), "toml: ")
		if words, ok := params.TypeMessage(msg); ok {
			msg = words // not Go's struct field and type
		}
		if key := strings.Join(de.Key(), "."); key != "" {
			msg = "field " + key + ": " + msg
		}
		return fmt.Errorf("%s:%d: %s", name, row, msg)
	}
	return fmt.Errorf("%s: %w", name, err)
}

// Select keeps the entries whose id starts with one of prefixes (all of
// them when prefixes is empty), in file order. A prefix that matches no
// entry is an error naming it.
func Select(entries []Entry, prefixes []string) ([]Entry, error) {
	if len(prefixes) == 0 {
		return entries, nil
	}
	var errs []error
	for i, p := range prefixes {
		if slices.Contains(prefixes[:i], p) {
			continue // one line per bad prefix, however often listed ("x,x", ",,")
		}
		found := p != "" && slices.ContainsFunc(entries, func(e Entry) bool { return strings.HasPrefix(e.ID, p) })
		if !found {
			errs = append(errs, fmt.Errorf("--only %q: no calibration entry's id starts with it (ids look like d0-fig6.5-gds-vs-hdn; prefixes such as d0, d0-fig4.6, d1 select groups)", p))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var out []Entry
	for _, e := range entries {
		if slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(e.ID, p) }) {
			out = append(out, e)
		}
	}
	return out, nil
}
