package study

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/pelletier/go-toml/v2"

	"github.com/gpunetsim/gpunetsim/exp"
	"github.com/gpunetsim/gpunetsim/exp/params"
)

// Study is a list of entries, each an experiment over its sweeps.
type Study struct {
	Name    string
	Entries []Entry
}

// Entry is one experiment of a study: its configuration layers and the
// parameters it sweeps (crossed, first sweep outermost).
type Entry struct {
	// Label names the entry's outputs; unique within the study.
	Label      string
	Experiment exp.Experiment
	Load       params.Options
	Sweeps     []params.Sweep
}

// file is the TOML form of a study (docs/studies.md).
type file struct {
	Name       string      `toml:"name"`
	Preset     string      `toml:"preset"`
	Config     string      `toml:"config"`
	Set        []string    `toml:"set"`
	Sweep      []string    `toml:"sweep"`
	Experiment []fileEntry `toml:"experiment"`
}

type fileEntry struct {
	Name   string   `toml:"name"`
	Label  string   `toml:"label"`
	Preset string   `toml:"preset"`
	Set    []string `toml:"set"`
	Sweep  []string `toml:"sweep"`
}

// decodeError is a study file's decoding error in one line naming the
// file, the line and the field (the TOML reader's own text of an unknown
// field is the file's lines up to it, one terminal line each).
func decodeError(path string, doc []byte, err error) error {
	var sm *toml.StrictMissingError
	if errors.As(err, &sm) && len(sm.Errors) > 0 {
		de := &sm.Errors[0]
		row, _ := de.Position()
		return fmt.Errorf("study %s:%d: unknown field %s: a study has name, preset, config, set, sweep and [[experiment]] tables of name, label, preset, set and sweep", path, row, strings.Join(de.Key(), "."))
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, msg := params.DecodeMessage(doc, de)
		return fmt.Errorf("study %s:%d: %s", path, row, msg)
	}
	return fmt.Errorf("study %s: %w", path, err)
}

// Load reads a study TOML file: top-level name, preset, config (a
// parameter file, relative to the study file), set and sweep apply to
// every [[experiment]], which adds its own name, label, preset, set and
// sweep. Unknown fields, experiments and parameters, and malformed sweeps
// are errors naming the field.
func Load(path string) (Study, error) {
	b, err := exp.ReadInputFile(path, exp.MaxInputBytes)
	if err != nil {
		return Study{}, fmt.Errorf("study: %w", err)
	}
	var f file
	dec := toml.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return Study{}, decodeError(path, b, err)
	}
	if len(f.Experiment) == 0 {
		return Study{}, fmt.Errorf("study %s: no [[experiment]]: list at least one", path)
	}
	if f.Config != "" && !filepath.IsAbs(f.Config) {
		f.Config = filepath.Join(filepath.Dir(path), f.Config)
	}
	s := Study{Name: f.Name}
	if s.Name == "" {
		s.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	for i, fe := range f.Experiment {
		e, err := exp.Lookup(fe.Name)
		if err != nil {
			return Study{}, fmt.Errorf("study %s: experiment %d: %w", path, i+1, err)
		}
		preset := fe.Preset
		if preset == "" {
			preset = f.Preset
		}
		en := Entry{Label: fe.Label, Experiment: e,
			Load: params.Options{Preset: preset, File: f.Config, Sets: append(append([]string(nil), f.Set...), fe.Set...)}}
		for _, spec := range append(append([]string(nil), f.Sweep...), fe.Sweep...) {
			sw, err := params.ParseSweep(spec)
			if err != nil {
				return Study{}, fmt.Errorf("study %s: experiment %s: %w", path, fe.Name, err)
			}
			en.Sweeps = append(en.Sweeps, sw)
		}
		s.Entries = append(s.Entries, en)
	}
	return s, s.Check()
}

// Check makes the study's name and every entry's label safe file names
// and the labels unique, and rejects a parameter swept twice in one entry.
//
// An entry's label (its experiment's name when it has none) names its
// output files, <out>/<label>.csv and so on, so it is sanitised (safeName:
// no path separators, no leading dot, no control characters) and then
// de-duplicated deterministically: the first entry with a label keeps it,
// a later one takes the first of label-2, label-3, ... that no entry
// asked for and none has taken. Labels are compared without case, so no
// two entries share a file on a case-insensitive file system either.
func (s *Study) Check() error {
	s.Name = safeName(s.Name, "study")
	want := make([]string, len(s.Entries))
	asked := map[string]bool{}
	for i := range s.Entries {
		e := &s.Entries[i]
		seen := map[string]bool{}
		for _, sw := range e.Sweeps {
			if seen[sw.Name] {
				return fmt.Errorf("study: experiment %s sweeps %s twice: merge the values into one sweep", e.Experiment.Name, sw.Name)
			}
			seen[sw.Name] = true
		}
		label := e.Label
		if label == "" {
			label = e.Experiment.Name
		}
		want[i] = safeName(label, e.Experiment.Name)
		asked[strings.ToLower(want[i])] = true
	}
	taken := map[string]bool{}
	for i := range s.Entries {
		label := want[i]
		if taken[strings.ToLower(label)] {
			for n := 2; ; n++ {
				c := fmt.Sprintf("%s-%d", label, n)
				if !asked[strings.ToLower(c)] && !taken[strings.ToLower(c)] {
					label = c
					break
				}
			}
		}
		taken[strings.ToLower(label)] = true
		s.Entries[i].Label = label
	}
	return nil
}

// maxNameBytes bounds a label or study name, leaving room in a file name
// (255 bytes on common file systems) for a suffix and an extension.
const maxNameBytes = 120

// safeName returns name as one safe file-name component: every character
// but letters, digits and _ - + = , @ becomes _ (so no /, \, control
// character or space survives, and no dot: no hidden file, no . or .., and
// an entry's files, <label>.csv, <label>.<table>.csv, <label>.meta.json,
// never meet another entry's, whose names start with another label before
// their first dot), and the result is at most maxNameBytes long; an empty
// result is fallback.
func safeName(name, fallback string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("_-+=,@", r):
			if b.Len()+utf8.RuneLen(r) > maxNameBytes {
				return finishName(b.String(), fallback)
			}
			b.WriteRune(r)
		default:
			if b.Len()+1 > maxNameBytes {
				return finishName(b.String(), fallback)
			}
			b.WriteByte('_')
		}
	}
	return finishName(b.String(), fallback)
}

// finishName replaces the leading dots of a sanitised name.
func finishName(s, fallback string) string {
	if s == "" {
		if fallback == "" {
			return "entry"
		}
		return safeName(fallback, "")
	}
	trimmed := strings.TrimLeft(s, ".")
	return strings.Repeat("_", len(s)-len(trimmed)) + trimmed
}

// Single is the study of one experiment over sweeps.
func Single(e exp.Experiment, load params.Options, sweeps []params.Sweep) (Study, error) {
	s := Study{Name: e.Name, Entries: []Entry{{Experiment: e, Load: load, Sweeps: sweeps}}}
	return s, s.Check()
}

// combos returns the cross product of sweeps' values, first sweep
// outermost; one empty combination when there are no sweeps.
func combos(sweeps []params.Sweep) [][]string {
	out := [][]string{nil}
	for _, sw := range sweeps {
		var next [][]string
		for _, c := range out {
			for _, v := range sw.Values {
				next = append(next, append(append([]string(nil), c...), v))
			}
		}
		out = next
	}
	return out
}
