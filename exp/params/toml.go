package params

import (
	"bytes"
	"encoding"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gpunetsim/gpunetsim/exp"
	"github.com/gpunetsim/gpunetsim/exp/report"
)

// TOML returns cfg as a configuration file that Load (Options.File) reads
// back to cfg: one table per parameter section in declaration order, each
// value in the syntax the file takes (units as strings, "100Gbps"; lists
// as arrays), each key followed by its source and meaning as a comment
// (above the key, wrapped, where the line would pass 120 columns).
// It is what "gpunetsim config" prints: the effective configuration of a
// preset, a file and --set overrides, to keep, edit and pass to --config.
func TOML(cfg exp.Config) []byte {
	type entry struct {
		key, value, comment string
		items               []string // an array's elements, for wrapping
	}
	var tables []string
	entries := map[string][]entry{}
	v := reflect.ValueOf(cfg)
	for _, f := range fields() {
		dot := strings.LastIndex(f.name, ".")
		table, key := f.name[:max(dot, 0)], f.name[dot+1:]
		if _, ok := entries[table]; !ok {
			tables = append(tables, table)
		}
		fv := v.FieldByIndex(f.index)
		entries[table] = append(entries[table], entry{key, tomlValue(fv), "[" + f.src + "] " + f.doc, tomlItems(fv)})
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# gpunetsim configuration: preset %s with every parameter at its effective value.\n", cfg.Run.Preset)
	b.WriteString("# Use it with: gpunetsim run <experiment> --config <this file>\n")
	for _, t := range tables {
		fmt.Fprintf(&b, "\n[%s]\n", t)
		for _, e := range entries[t] {
			line := fmt.Sprintf("%s = %s  # %s", e.key, e.value, oneLineComment(e.comment))
			if utf8.RuneCountInString(line) <= tomlWidth {
				b.WriteString(line + "\n")
				continue
			}
			// A long meaning goes above its key, wrapped, and a long array
			// spans lines (TOML allows newlines between its elements), so
			// the file reads within tomlWidth columns.
			b.WriteString(report.WrapWidth("# ", "#   ", oneLineComment(e.comment), tomlWidth))
			if len(e.key)+3+len(e.value) <= tomlWidth || e.items == nil {
				fmt.Fprintf(&b, "%s = %s\n", e.key, e.value)
				continue
			}
			b.WriteString(report.WrapWidth(e.key+" = [", "  ", strings.Join(e.items, ", ")+",", tomlWidth))
			b.WriteString("]\n")
		}
	}
	return b.Bytes()
}

// tomlWidth is the widest line TOML writes where a value allows: the text
// report's width.
const tomlWidth = 120

// tomlItems returns an array parameter's elements as TOML values (nil
// for any other kind), for an array too long for one line.
func tomlItems(v reflect.Value) []string {
	if _, ok := v.Interface().(encoding.TextMarshaler); ok {
		return nil
	}
	switch v.Type() {
	case intSliceType:
		parts := make([]string, v.Len())
		for i := range parts {
			parts[i] = strconv.FormatInt(v.Index(i).Int(), 10)
		}
		return parts
	case strSliceType:
		parts := make([]string, v.Len())
		for i := range parts {
			parts[i] = tomlString(v.Index(i).String())
		}
		return parts
	}
	return nil
}

// tomlValue writes one parameter value as TOML.
func tomlValue(v reflect.Value) string {
	if m, ok := v.Interface().(encoding.TextMarshaler); ok {
		if text, err := m.MarshalText(); err == nil {
			return tomlString(string(text))
		}
	}
	if v.Type() == intSliceType || v.Type() == strSliceType {
		return "[" + strings.Join(tomlItems(v), ", ") + "]"
	}
	switch v.Kind() {
	case reflect.Int, reflect.Int64, reflect.Int32:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Uint, reflect.Uint64, reflect.Uint32:
		return strconv.FormatUint(v.Uint(), 10)
	case reflect.Float64, reflect.Float32:
		s := strconv.FormatFloat(v.Float(), 'g', -1, 64)
		if !strings.ContainsAny(s, ".eEn") {
			s += ".0" // a TOML float, not an integer
		}
		return s
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	}
	return tomlString(fmt.Sprint(v.Interface()))
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// oneLineComment keeps a comment on its line.
func oneLineComment(s string) string {
	return strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
}
