package params

import (
	"encoding"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/gpunetsim/gpunetsim/exp"
	"github.com/gpunetsim/gpunetsim/exp/report"
	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// Errors returned by Set, wrapped with the parameter's name and value.
var (
	// ErrUnknown reports a parameter name that exp.Config does not have.
	ErrUnknown = errors.New("unknown parameter")
	// ErrBadValue reports a value that does not parse as the parameter's type.
	ErrBadValue = errors.New("bad value")
)

// Info describes one parameter and its value in some configuration.
type Info struct {
	Name  string // dotted name, e.g. "link.bandwidth"
	Type  string // value syntax: duration, size, rate, freq, int, uint, float, bool, string, []int, []string
	Value string // current value printed with units; parses back with Set
	Src   string // DOC, DEFAULT or RUN, from the field's src tag (SPEC on present-day presets)
	Doc   string // one-line description, ending with Ref in parentheses when there is one
	// Ref is where the value comes from: for DOC, the source document and
	// its place (a table, a section); for a preset's own DEFAULT or SPEC
	// value, its reason or datasheet. Empty for a field's plain DEFAULT,
	// whose reason is its doc line.
	Ref string
}

// field is one leaf of exp.Config found by reflection.
type field struct {
	name, src, doc, ref string
	hardware            bool  // a field of the hardware (cluster.Spec)
	index               []int // reflect.Value.FieldByIndex path from exp.Config
	typ                 reflect.Type
}

var (
	timeType     = reflect.TypeFor[sim.Time]()
	bytesType    = reflect.TypeFor[unit.Bytes]()
	rateType     = reflect.TypeFor[unit.Rate]()
	freqType     = reflect.TypeFor[unit.Freq]()
	unmarshaler  = reflect.TypeFor[encoding.TextUnmarshaler]()
	intSliceType = reflect.TypeFor[[]int]()
	strSliceType = reflect.TypeFor[[]string]()
)

// fields lists every leaf of exp.Config in declaration order.
func fields() []field {
	var out []field
	walk(reflect.TypeFor[exp.Config](), "", nil, &out)
	hw := reflect.TypeFor[cluster.Spec]()
	cfg := reflect.TypeFor[exp.Config]()
	for i := range out {
		out[i].hardware = cfg.Field(out[i].index[0]).Type == hw
	}
	return out
}

func walk(t reflect.Type, prefix string, index []int, out *[]field) {
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		idx := append(slices.Clone(index), i)
		tag, _, _ := strings.Cut(sf.Tag.Get("toml"), ",")
		if tag == "-" {
			continue
		}
		doc, isLeaf := sf.Tag.Lookup("doc")
		if !isLeaf && sf.Type.Kind() == reflect.Struct && !reflect.PointerTo(sf.Type).Implements(unmarshaler) {
			p := prefix
			if !sf.Anonymous || tag != "" {
				p = join(prefix, tag)
			}
			walk(sf.Type, p, idx, out)
			continue
		}
		if !isLeaf {
			continue
		}
		*out = append(*out, field{name: join(prefix, tag), src: sf.Tag.Get("src"), doc: doc, ref: sf.Tag.Get("ref"), index: idx, typ: sf.Type})
	}
}

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// typeName names the value syntax of t.
func typeName(t reflect.Type) string {
	switch t {
	case timeType:
		return "duration"
	case bytesType:
		return "size"
	case rateType:
		return "rate"
	case freqType:
		return "freq"
	case intSliceType:
		return "[]int"
	case strSliceType:
		return "[]string"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "int"
	case reflect.Uint, reflect.Uint64, reflect.Uint32:
		return "uint"
	case reflect.Float64, reflect.Float32:
		return "float"
	case reflect.Bool:
		return "bool"
	case reflect.String:
		return "string"
	}
	return t.String()
}

// List returns every parameter of cfg in declaration order, each with its
// provenance on cfg's preset: the field's own tag and reference, unless the
// preset's sources say otherwise (cluster.PresetSources: a value the
// preset's documents do not state is DEFAULT there, with its reason).
func List(cfg exp.Config) []Info {
	v := reflect.ValueOf(cfg)
	fs := fields()
	out := make([]Info, len(fs))
	presentDay := slices.Contains(cluster.PresentDay(), cfg.Run.Preset)
	sources := documentSources(cfg.Run.Preset)
	if sources == nil {
		sources = map[string]cluster.Source{}
	}
	for k, v := range cluster.PresetSources(cfg.Run.Preset) { // the hardware's own list wins
		sources[k] = v
	}
	for i, f := range fs {
		out[i] = Info{Name: f.name, Type: typeName(f.typ), Value: format(v.FieldByIndex(f.index)), Src: f.src, Doc: f.doc, Ref: f.ref}
		if out[i].Ref == "" && f.src == "DOC" {
			out[i].Ref = fieldRefs[f.name]
		}
		if src, ok := sources[f.name]; ok {
			out[i].Src, out[i].Ref = src.Tag, src.Ref
		} else if presentDay && f.src == "DOC" && f.hardware {
			// A present-day machine's value that its sources do not
			// give is the documents' value, a choice for this machine.
			out[i].Src, out[i].Ref = "DEFAULT", "the source documents' value ("+out[i].Ref+"), not sourced for this machine"
		}
		if out[i].Ref != "" {
			out[i].Doc += " (" + out[i].Ref + ")"
		}
	}
	return out
}

// Names returns every parameter name in declaration order.
func Names() []string {
	fs := fields()
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.name
	}
	return out
}

// Record returns cfg's parameters as report.Params, in declaration order,
// each marked Set when its value differs from the default of cfg's preset
// (the user overrode it by --config, --set, --seed or a sweep).
func Record(cfg exp.Config) []report.Param {
	list := List(cfg)
	var defaults []Info
	if d, err := exp.DefaultConfig(cfg.Run.Preset); err == nil {
		defaults = List(d)
	}
	out := make([]report.Param, len(list))
	for i, p := range list {
		set := defaults != nil && defaults[i].Value != p.Value
		out[i] = report.Param{Name: p.Name, Value: p.Value, Src: p.Src, Doc: p.Doc, Set: set,
			NoSource: p.Src == "DEFAULT" && p.Ref == cluster.NoSourceRef}
	}
	return out
}

// Get returns the printed value of the named parameter.
func Get(cfg exp.Config, name string) (string, error) {
	for _, f := range fields() {
		if f.name == name {
			return format(reflect.ValueOf(cfg).FieldByIndex(f.index)), nil
		}
	}
	return "", unknown(name)
}

// Set parses value as the named parameter's type and stores it in cfg. On
// error cfg is unchanged; the error names the parameter and wraps ErrUnknown
// or ErrBadValue.
func Set(cfg *exp.Config, name, value string) error {
	for _, f := range fields() {
		if f.name != name {
			continue
		}
		nv := reflect.New(f.typ).Elem()
		if err := parse(nv, value); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		reflect.ValueOf(cfg).Elem().FieldByIndex(f.index).Set(nv)
		return nil
	}
	return unknown(name)
}

// unknown builds the error for an unknown name, suggesting close names.
// maxListed is how many names of a section an unknown parameter's
// message lists; a larger section is counted.
const maxListed = 12

func unknown(name string) error {
	names := Names()
	var groups []string
	for _, n := range names {
		g, _, _ := strings.Cut(n, ".")
		if !slices.Contains(groups, g) {
			groups = append(groups, g)
		}
	}
	if close := Suggest(name, append(names, groups...)); len(close) > 0 {
		return fmt.Errorf("%w %q: did you mean %s? (gpunetsim params lists all)", ErrUnknown, name, strings.Join(close, ", "))
	}
	// A known section with a name nothing like its own: its names, not
	// every section's (today.bogus listed all 46 sections, today among
	// them).
	if section, rest, ok := strings.Cut(name, "."); ok && slices.Contains(groups, section) {
		var in []string
		for _, n := range names {
			if s, r, _ := strings.Cut(n, "."); s == section {
				in = append(in, r)
			}
		}
		if len(in) <= maxListed {
			return fmt.Errorf("%w %q: section %s has %s (gpunetsim params lists all)", ErrUnknown, name, section, strings.Join(in, ", "))
		}
		return fmt.Errorf("%w %q: section %s has %d parameters, none named %s (gpunetsim params lists them)", ErrUnknown, name, section, len(in), rest)
	}
	return fmt.Errorf("%w %q: names start with %s (gpunetsim params lists all)", ErrUnknown, name, strings.Join(groups, ", "))
}

// Suggest returns up to three of names close to name: those within a small
// edit distance, or sharing its last component. Order follows names.
func Suggest(name string, names []string) []string {
	type cand struct {
		n string
		d int
	}
	var cs []cand
	_, last, _ := strings.Cut(name, ".")
	for _, n := range names {
		d := distance(strings.ToLower(name), strings.ToLower(n))
		limit := max(2, len(name)/4)
		_, nl, _ := strings.Cut(n, ".")
		switch {
		case d <= limit:
			cs = append(cs, cand{n, d})
		case last != "" && nl == last:
			cs = append(cs, cand{n, limit + 1})
		case !strings.Contains(name, ".") && nl == name:
			cs = append(cs, cand{n, limit + 1})
		}
	}
	slices.SortStableFunc(cs, func(a, b cand) int { return a.d - b.d })
	var out []string
	for i := 0; i < len(cs) && i < 3; i++ {
		out = append(out, cs[i].n)
	}
	return out
}

// distance is the Levenshtein distance between a and b in bytes.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// format prints v in the syntax parse accepts.
func format(v reflect.Value) string {
	if m, ok := v.Interface().(encoding.TextMarshaler); ok {
		b, err := m.MarshalText()
		if err != nil {
			return fmt.Sprint(v.Interface())
		}
		return string(b)
	}
	switch v.Type() {
	case intSliceType:
		return FormatInts(v.Interface().([]int))
	case strSliceType:
		return strings.Join(v.Interface().([]string), ",")
	}
	switch v.Kind() {
	case reflect.Float64, reflect.Float32:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	}
	return fmt.Sprint(v.Interface())
}

// parse parses s into v according to v's type.
func parse(v reflect.Value, s string) error {
	if u, ok := v.Addr().Interface().(encoding.TextUnmarshaler); ok {
		if err := u.UnmarshalText([]byte(s)); err != nil {
			return badValue{err}
		}
		return nil
	}
	switch v.Type() {
	case intSliceType:
		ns, err := ParseInts(s)
		if err != nil {
			return err
		}
		v.Set(reflect.ValueOf(ns))
		return nil
	case strSliceType:
		var ss []string
		for p := range strings.SplitSeq(s, ",") {
			if p = strings.TrimSpace(p); p != "" {
				ss = append(ss, p)
			}
		}
		v.Set(reflect.ValueOf(ss))
		return nil
	}
	t := strings.TrimSpace(s)
	switch v.Kind() {
	case reflect.Int, reflect.Int64, reflect.Int32:
		n, err := strconv.ParseInt(t, 10, v.Type().Bits())
		if err != nil {
			return fmt.Errorf("%w %q: want a decimal integer", ErrBadValue, s)
		}
		v.SetInt(n)
	case reflect.Uint, reflect.Uint64, reflect.Uint32:
		n, err := strconv.ParseUint(t, 10, v.Type().Bits())
		if err != nil {
			return fmt.Errorf("%w %q: want a non-negative decimal integer", ErrBadValue, s)
		}
		v.SetUint(n)
	case reflect.Float64, reflect.Float32:
		f, err := strconv.ParseFloat(t, 64)
		// ParseFloat also reads Go's hexadecimal floats (0x1p-2) and
		// underscores, which the message promises not and an integer
		// refuses (0x10): decimal only, as documented.
		if err != nil || f != f || f > 1e300 || f < -1e300 || strings.ContainsAny(t, "xX_") { // (a margin below MaxFloat64 so that products of two stay finite more often)
			return fmt.Errorf("%w %q: want a finite decimal number in [-1e300, 1e300]", ErrBadValue, s)
		}
		if f == 0 && nonzeroDigits(t) {
			// ParseFloat rounds 1e-400 to 0 without an error, and 0
			// often means "none" or "derived" (cp.ipc): the value
			// written is not the value run.
			return fmt.Errorf("%w %q: not 0, yet below 4.9e-324 in magnitude, which a float64 holds only as 0: want 0 or a decimal number of magnitude in [4.9e-324, 1e300]", ErrBadValue, s)
		}
		v.SetFloat(f)
	case reflect.Bool:
		b, err := strconv.ParseBool(t)
		if err != nil {
			return fmt.Errorf("%w %q: want true or false", ErrBadValue, s)
		}
		v.SetBool(b)
	case reflect.String:
		v.SetString(t)
	default:
		return fmt.Errorf("%w: parameters of type %s cannot be set", ErrBadValue, v.Type())
	}
	return nil
}

// nonzeroDigits says whether the decimal number t has a nonzero digit in
// its mantissa (the part before an exponent).
func nonzeroDigits(t string) bool {
	if i := strings.IndexAny(t, "eE"); i >= 0 {
		t = t[:i]
	}
	return strings.ContainsAny(t, "123456789")
}

// badValue marks a parse error of a unit type as ErrBadValue without
// repeating "bad value" in front of the unit parser's own message.
type badValue struct{ err error }

func (b badValue) Error() string        { return b.err.Error() }
func (b badValue) Unwrap() error        { return b.err }
func (b badValue) Is(target error) bool { return target == ErrBadValue }

// expandedLists says, for the experiments whose points are not the cross
// product of every list of their own sections, how their lists expand:
// a sum of terms, each the cross product of the lists it names. An
// experiment that shares its section with others reads only some of its
// lists (cpl2 reads one of shmembench's); gio crosses its strategies with
// its sizes and adds a work-group scaling over its wgs (at two sizes, for
// two strategies); mlproj crosses ml.strategies with its table's sizes.
// The others cross every list of their own sections.
var expandedLists = map[string][][]string{
	"cpl2":             {{"shmembench.l2_ratios"}},
	"ghnqueue":         {{"shmembench.queue_strategies", "shmembench.queue_wgs"}},
	"shmemget":         {{"shmembench.get_strategies"}},
	"shmemload":        {{"shmembench.load_strategies", "shmembench.load_threads"}},
	"gio":              {{"giobench.strategies", "giobench.sizes"}, {"giobench.wgs"}},
	"gpurdma":          {{"gpurdma.sizes", "gpurdma.variants"}},
	"gpurdma_multiqp":  {{"gpurdma.multi_sizes", "gpurdma.multi_modes"}},
	"jacobi":           {{"jacobi.strategies", "jacobi.sizes"}},
	"jacobi1d":         {{"jacobi1d.log2_elements", "jacobi1d.strategies"}},
	"jacobistrong":     {{"jacobiscale.grids", "jacobiscale.nodes", "jacobiscale.strategies"}},
	"jacobiweak":       {{"jacobiscale.weak_nodes", "jacobiscale.strategies"}},
	"mlproj":           {{"ml.strategies"}},
	"ddt_pulp_bw":      {{"ddtpulp.bw_blocks"}},
	"ddt_pulp_kernels": {{"ddtpulp.blocks"}},
}

// ListLen is one list-valued parameter and how many values it holds.
type ListLen struct {
	Name string
	Len  int
}

// ListTerms is how an experiment's own lists expand into points: the sum
// of its terms' cross products.
type ListTerms [][]ListLen

// Points returns the sum over the terms of the product of their lists'
// lengths (a float: a cross product can pass any integer).
func (t ListTerms) Points() float64 {
	sum := 0.0
	for _, term := range t {
		p := 1.0
		for _, l := range term {
			p *= float64(l.Len)
		}
		sum += p
	}
	return sum
}

// String writes the terms as "a (3 values) × b (2 values) + c (9
// values)".
func (t ListTerms) String() string {
	var terms []string
	for _, term := range t {
		var names []string
		for _, l := range term {
			names = append(names, fmt.Sprintf("%s (%d values)", l.Name, l.Len))
		}
		terms = append(terms, strings.Join(names, " × "))
	}
	return strings.Join(terms, " + ")
}

// OwnLists returns how the list-valued parameters ([]int, []string) of
// experiment name's own sections (exp.ParamSections) that hold more than
// one value expand, and the points they expand to: a bound, known before
// an experiment lists its points, on how many points its own lists can
// give (an experiment's points are at most that, times a few fixed
// variants). Lists that are added (expandedLists) are added, not
// crossed: a long additive list is no cross product.
func OwnLists(name string, cfg exp.Config) (terms ListTerms, points float64) {
	own, _ := exp.ParamSections(name)
	v := reflect.ValueOf(cfg)
	lens := map[string]int{}
	var crossAll []ListLen
	for _, f := range fields() {
		if f.typ != intSliceType && f.typ != strSliceType {
			continue
		}
		n := v.FieldByIndex(f.index).Len()
		lens[f.name] = n
		section, _, _ := strings.Cut(f.name, ".")
		if n > 1 && slices.Contains(own, section) {
			crossAll = append(crossAll, ListLen{f.name, n})
		}
	}
	spec, ok := expandedLists[name]
	if !ok {
		if len(crossAll) > 0 {
			terms = ListTerms{crossAll}
		}
		return terms, max(1, terms.Points())
	}
	for _, names := range spec {
		var term []ListLen
		for _, n := range names {
			if lens[n] > 1 {
				term = append(term, ListLen{n, lens[n]})
			}
		}
		terms = append(terms, term)
	}
	return terms, max(1, terms.Points())
}
