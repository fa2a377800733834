package params

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/gpunetsim/gpunetsim/exp"
)

// checkTypes reports, one line per parameter, each value of the TOML
// document doc whose TOML type the parameter cannot take (a string for an
// integer, an integer for a list, a boolean for a size), naming the file,
// the line, the parameter and its value as written, and what it wants.
// The TOML reader's own message named Go's types and fields
// ("cannot decode TOML string into struct field exp.RunSpec.Parallel of
// type int"; for run.preset a whole struct literal). A document that does
// not parse is left to the decoder, which names the syntax error; values
// of the unit types other than sizes keep their own check (decodeFile).
func checkTypes(path string, doc []byte) error {
	var raw map[string]any
	if toml.Unmarshal(doc, &raw) != nil {
		return nil
	}
	type line struct {
		row  int
		text string
	}
	var lines []line
	var examples map[string]string
	for _, f := range fields() {
		v, ok := lookup(raw, f.name)
		if !ok {
			continue
		}
		got, want, ok := typeMismatch(f.typ, v)
		if ok {
			continue
		}
		if examples == nil {
			examples = exampleValues()
		}
		key := f.name[strings.LastIndex(f.name, ".")+1:]
		if ex := examples[f.name]; ex != "" {
			want += ", e.g. " + key + " = " + ex
		}
		where := path
		row, lit := literalOf(doc, f.name)
		if row > 0 {
			where = fmt.Sprintf("%s:%d", path, row)
		} else if str, isStr := v.(string); isStr {
			lit = strconv.Quote(str) // in an inline table: no line of its own
		} else {
			lit = fmt.Sprint(v)
		}
		lines = append(lines, line{row, fmt.Sprintf("%s: %s = %s: %s, want %s", where, f.name, lit, got, want)})
	}
	if len(lines) == 0 {
		return nil
	}
	slices.SortStableFunc(lines, func(a, b line) int { return a.row - b.row }) // in the file's order
	texts := make([]string, len(lines))
	for i, l := range lines {
		texts[i] = l.text
	}
	return fileErr{strings.Join(texts, "\n"), ErrBadValue}
}

// typeMismatch reports whether the decoded TOML value v suits a parameter
// of type t (ok), else what v is and what t wants, in words.
func typeMismatch(t reflect.Type, v any) (got, want string, ok bool) {
	switch t {
	case timeType, rateType, freqType:
		return "", "", true // decodeFile's own check: a bare number wants its unit
	case bytesType:
		switch v.(type) {
		case int64, string, float64: // a float: decodeFile's own message
			return "", "", true
		}
		return tomlKind(v), "a size as a string with its unit or a whole number of bytes", false
	case intSliceType:
		return arrayOf(v, "integers", func(e any) bool { _, ok := e.(int64); return ok })
	case strSliceType:
		return arrayOf(v, "quoted strings", func(e any) bool { _, ok := e.(string); return ok })
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Uint, reflect.Uint64, reflect.Uint32:
		n, isInt := v.(int64)
		ok, want = isInt, "an integer"
		if k := t.Kind(); k == reflect.Uint || k == reflect.Uint64 || k == reflect.Uint32 {
			want = "a non-negative integer"
			if isInt && n < 0 {
				return "a negative integer", want, false
			}
		}
	case reflect.Float64, reflect.Float32:
		switch v.(type) {
		case int64, float64:
			ok = true
		}
		want = "a decimal number"
	case reflect.Bool:
		_, ok = v.(bool)
		want = "true or false (unquoted)"
	case reflect.String:
		_, ok = v.(string)
		want = "a quoted string"
	default:
		return "", "", true
	}
	return tomlKind(v), want, ok
}

// arrayOf checks a TOML array whose elements must all pass elem.
func arrayOf(v any, elems string, elem func(any) bool) (got, want string, ok bool) {
	want = "an array of " + elems
	arr, isArr := v.([]any)
	if !isArr {
		return tomlKind(v), want, false
	}
	for _, e := range arr {
		if !elem(e) {
			return "an array holding " + tomlKind(e), want, false
		}
	}
	return "", "", true
}

// tomlKind names the TOML type of a decoded value.
func tomlKind(v any) string {
	switch v.(type) {
	case int64:
		return "a TOML integer"
	case float64:
		return "a TOML float"
	case string:
		return "a TOML string"
	case bool:
		return "a TOML boolean"
	case []any:
		return "a TOML array"
	case map[string]any:
		return "a TOML table"
	}
	return "a TOML date or time"
}

// exampleValues returns, per parameter, its value in the default preset
// written as TOML, for the messages of checkTypes.
func exampleValues() map[string]string {
	cfg, err := exp.DefaultConfig(DefaultPreset)
	if err != nil {
		return nil
	}
	out := map[string]string{}
	for _, in := range List(cfg) {
		switch in.Type {
		case "int", "uint", "float", "bool":
			out[in.Name] = in.Value
		case "string":
			if in.Value != "" {
				out[in.Name] = fmt.Sprintf("%q", in.Value)
			}
		case "[]int":
			if in.Value != "" {
				out[in.Name] = "[" + strings.Join(strings.Split(in.Value, ","), ", ") + "]"
			}
		case "[]string":
			if in.Value != "" {
				out[in.Name] = `["` + strings.Join(strings.Split(in.Value, ","), `", "`) + `"]`
			}
		case "size":
			out[in.Name] = fmt.Sprintf("%q", in.Value)
		}
	}
	return out
}
