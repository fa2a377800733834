package params

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/gpunetsim/gpunetsim/exp"
)

// DefaultPreset is the preset used when neither the caller nor the
// configuration file names one.
const DefaultPreset = "gputn"

// Options selects the layers Load applies.
type Options struct {
	// Preset names the base preset; "" means the file's run.preset, else
	// DefaultPreset.
	Preset string
	// File is a TOML configuration file; "" means none, "-" standard
	// input (read by ReadFile).
	File string
	// Doc, when non-nil, is File's content, read once by ReadFile: Load
	// then reads no file, so that every configuration one command loads
	// from its --config (a study's points) has the same text, and
	// standard input, which reads once, can be the file.
	Doc []byte
	// Sets are "name=value" overrides applied in order after the file.
	Sets []string
	// Edit, when non-nil, runs after the overrides and before Validate
	// (e.g. a command's own flags such as --seed).
	Edit func(cfg *exp.Config) error
}

// ReadFile reads File into Doc once ("-" from stdin), so that later
// Loads read no file; a File already read, or none, is left as it is.
func (o *Options) ReadFile(stdin io.Reader) error {
	if o.File == "" || o.Doc != nil {
		return nil
	}
	b, err := exp.ReadInputOrStdin(o.File, stdin, exp.MaxInputBytes)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if b == nil {
		b = []byte{}
	}
	o.Doc = b
	return nil
}

// Load builds and validates a configuration from o's layers (see the
// package documentation). Its errors all describe bad input: each names the
// layer, the parameter and what is allowed.
func Load(o Options) (exp.Config, error) {
	var doc []byte
	preset := o.Preset
	if o.File != "" {
		b := o.Doc
		if b == nil {
			var err error
			if b, err = exp.ReadInputOrStdin(o.File, nil, exp.MaxInputBytes); err != nil {
				return exp.Config{}, fmt.Errorf("config: %w", err)
			}
		}
		doc = b
		if err := checkTypes(o.File, doc); err != nil {
			return exp.Config{}, err
		}
		if preset == "" {
			var head struct {
				Run struct {
					Preset string `toml:"preset"`
				} `toml:"run"`
			}
			if err := toml.Unmarshal(doc, &head); err != nil {
				return exp.Config{}, fileError(o.File, doc, err)
			}
			preset = head.Run.Preset
		}
	}
	if preset == "" {
		preset = DefaultPreset
	}
	cfg, err := exp.DefaultConfig(preset)
	if err != nil {
		return exp.Config{}, fmt.Errorf("preset: %w", err)
	}
	if doc != nil {
		if err := decodeFile(&cfg, o.File, doc); err != nil {
			return exp.Config{}, err
		}
		cfg.Run.Preset = preset
	}
	for _, kv := range o.Sets {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(name) == "" {
			// "=5" or "=" names no parameter: said as such, not as an
			// unknown parameter "" with guesses.
			return exp.Config{}, fmt.Errorf("--set %s: %w: want name=value, e.g. link.bandwidth=200Gbps", kv, ErrBadValue)
		}
		name = strings.TrimSpace(name)
		if err := Set(&cfg, name, value); err != nil {
			return exp.Config{}, fmt.Errorf("--set %s=%s: %w", name, value, stripName(err, name))
		}
		if name == "run.preset" && value != preset {
			return exp.Config{}, fmt.Errorf("--set run.preset=%s: %w: choose the preset with --preset or the file's run.preset", value, ErrBadValue)
		}
	}
	if o.Edit != nil {
		if err := o.Edit(&cfg); err != nil {
			return exp.Config{}, err
		}
	}
	if err := validate(cfg); err != nil {
		return exp.Config{}, err
	}
	return cfg, nil
}

// validate is cfg.Validate plus the type-wide bounds of CheckBounds, with
// each parameter reported once.
func validate(cfg exp.Config) error {
	verr := cfg.Validate()
	said := ""
	if verr != nil {
		said = verr.Error()
	}
	v := reflect.ValueOf(cfg)
	errs := []error{verr}
	for _, f := range fields() {
		if strings.Contains(said, f.name+" ") {
			continue // its own Validate has already named it
		}
		errs = append(errs, checkBound(f, v.FieldByIndex(f.index)))
	}
	return errors.Join(errs...)
}

// stripName drops Set's "name: " prefix when the caller already shows it.
func stripName(err error, name string) error {
	if errors.Is(err, ErrUnknown) {
		return err
	}
	if u := errors.Unwrap(err); u != nil && strings.HasPrefix(err.Error(), name+": ") {
		return u
	}
	return err
}

// decodeFile decodes doc onto cfg, rejecting unknown keys and unit-typed
// values given as bare numbers.
func decodeFile(cfg *exp.Config, path string, doc []byte) error {
	var raw map[string]any
	if err := toml.Unmarshal(doc, &raw); err != nil {
		return fileError(path, doc, err)
	}
	var errs []error
	for _, f := range fields() {
		v, ok := lookup(raw, f.name)
		if !ok {
			continue
		}
		switch f.typ {
		case timeType, rateType, freqType:
			if _, isStr := v.(string); !isStr && !isZero(v) {
				errs = append(errs, fmt.Errorf("%s: %s = %v: %w: write a %s with its unit as a string, e.g. %s = %q",
					path, f.name, v, ErrBadValue, typeName(f.typ), f.name[strings.LastIndex(f.name, ".")+1:], example(f.typ)))
			}
		default:
			// The TOML reader rounds 1e-400 to 0 without a word, as
			// ParseFloat does for --set (see parse).
			if x, isFloat := v.(float64); isFloat && x == 0 && f.typ.Kind() == reflect.Float64 {
				if row, lit := literalOf(doc, f.name); row > 0 && nonzeroDigits(strings.ReplaceAll(lit, "_", "")) {
					errs = append(errs, fmt.Errorf("%s:%d: %s = %s: %w: not 0, yet below 4.9e-324 in magnitude, which a float64 holds only as 0: want 0 or a decimal number of magnitude in [4.9e-324, 1e300]",
						path, row, f.name, lit, ErrBadValue))
				}
			}
		case bytesType:
			// An integer is a byte count; a float (8.5, 1e30, nan) reached
			// the size parser as text that named neither line nor key.
			if x, isFloat := v.(float64); isFloat {
				errs = append(errs, fmt.Errorf("%s: %s = %v: %w: write a size as a whole number of bytes or as a string with its unit, e.g. %s = %q",
					path, f.name, x, ErrBadValue, f.name[strings.LastIndex(f.name, ".")+1:], "2KiB"))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	dec := toml.NewDecoder(bytes.NewReader(doc))
	dec.DisallowUnknownFields()
	if err := dec.Decode(cfg); err != nil {
		return fileError(path, doc, err)
	}
	return nil
}

func isZero(v any) bool {
	switch x := v.(type) {
	case int64:
		return x == 0
	case float64:
		return x == 0
	}
	return false
}

func example(t reflect.Type) string {
	switch t {
	case timeType:
		return "1.5us"
	case rateType:
		return "100Gbps"
	}
	return "1.5GHz"
}

// lookup finds a dotted name in a decoded TOML document.
func lookup(m map[string]any, name string) (any, bool) {
	head, rest, nested := strings.Cut(name, ".")
	v, ok := m[head]
	if !ok || !nested {
		return v, ok
	}
	sub, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	return lookup(sub, rest)
}

// fileError turns a go-toml error into one line naming the file, line and
// key, with suggestions for unknown keys.
func fileError(path string, doc []byte, err error) error {
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) && len(strict.Errors) > 0 {
		var errs []error
		for i := range strict.Errors {
			de := &strict.Errors[i]
			row, _ := de.Position()
			name := strings.Join(de.Key(), ".")
			if quoted := quotedDotted(de.Key()); quoted != "" {
				errs = append(errs, fmt.Errorf("%s:%d: %w", path, row, quotedKey(quoted, name)))
				continue
			}
			errs = append(errs, fmt.Errorf("%s:%d: %w", path, row, unknown(name)))
		}
		return errors.Join(errs...)
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, msg := DecodeMessage(doc, de)
		return fileErr{fmt.Sprintf("%s:%d: %s", path, row, msg), err}
	}
	return fmt.Errorf("%s: %w", path, err)
}

// goTypeMessage matches the TOML reader's message for a value of the wrong
// type: the TOML type and the Go type it was to be stored in.
var goTypeMessage = regexp.MustCompile(`^cannot decode TOML ([a-z ]+) into struct field \S+ of type (\S+)$`)

// TypeMessage rewrites the TOML reader's message for a value of the wrong
// type, in Go's words ("cannot decode TOML string into struct field
// study.file.Set of type []string"), in TOML's: "a TOML string, want an
// array of quoted strings". ok is false for any other message.
func TypeMessage(msg string) (words string, ok bool) {
	m := goTypeMessage.FindStringSubmatch(strings.TrimPrefix(msg, "toml: "))
	if m == nil {
		return "", false
	}
	return fmt.Sprintf("a TOML %s, want %s", m[1], goTypeWords(m[2])), true
}

// goTypeWords says what a value of Go type t is written as in TOML.
func goTypeWords(t string) string {
	switch t {
	case "string":
		return "a quoted string"
	case "[]string":
		return "an array of quoted strings"
	case "bool":
		return "true or false (unquoted)"
	case "int", "int64", "int32":
		return "an integer"
	case "uint", "uint64", "uint32":
		return "a non-negative integer"
	case "float64", "float32":
		return "a decimal number"
	case "[]int":
		return "an array of integers"
	}
	if strings.HasPrefix(t, "[]") {
		return "an array of tables"
	}
	return "a table"
}

// quotedDotted returns the last part of key when it holds a dot (a quoted
// key such as "run.seed", one key in TOML) and the whole key names a
// parameter, else "".
func quotedDotted(key []string) string {
	if len(key) == 0 || !strings.Contains(key[len(key)-1], ".") {
		return ""
	}
	if !slices.Contains(Names(), strings.Join(key, ".")) {
		return ""
	}
	return key[len(key)-1]
}

// quotedKey says that the quoted key part (of the parameter name) is one
// TOML key, and how to write the parameter.
func quotedKey(part, name string) error {
	table, key := name[:strings.LastIndex(name, ".")], name[strings.LastIndex(name, ".")+1:]
	return fileErr{fmt.Sprintf("%q is one quoted key with a dot in its name, not the parameter %s: write %s = ... unquoted, or %s = ... under [%s]",
		part, name, name, key, table), ErrUnknown}
}

// DecodeMessage returns the line of doc a TOML decode error is on and its
// text naming the key ("node.gpus: ..."). A value the TOML reader refuses
// before it knows the key (an integer past int64) is named from its line
// ("node.gpus = 9223372036854775808: ...").
func DecodeMessage(doc []byte, de *toml.DecodeError) (row int, msg string) {
	row, _ = de.Position()
	msg = strings.TrimPrefix(de.Error(), "toml: ")
	if key := strings.Join(de.Key(), "."); key != "" {
		if words, ok := TypeMessage(msg); ok {
			if _, value := LineKey(doc, row); value != "" {
				key += " = " + value
			}
			return row, key + ": " + words
		}
		return row, key + ": " + msg
	}
	if name, value := LineKey(doc, row); name != "" {
		return row, name + " = " + value + ": " + msg
	}
	return row, msg
}

// LineKey returns the parameter a "key = value" line (row, from 1) of a
// TOML document sets, with its table's name ("node.gpus"), and the value
// as written; "" when the line is no such line.
func LineKey(doc []byte, row int) (name, value string) {
	lines := strings.Split(string(doc), "\n")
	if row < 1 || row > len(lines) {
		return "", ""
	}
	k, v, ok := strings.Cut(lines[row-1], "=")
	k = strings.Trim(strings.TrimSpace(k), `"`)
	if !ok || k == "" || strings.HasPrefix(k, "[") || strings.HasPrefix(k, "#") {
		return "", ""
	}
	v, _, _ = strings.Cut(strings.TrimSpace(v), "#")
	for i := row - 2; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if strings.HasPrefix(l, "[") {
			if t, _, ok := strings.Cut(strings.Trim(l, "[ "), "]"); ok && t != "" {
				k = strings.TrimSpace(t) + "." + k
			}
			break
		}
	}
	return k, strings.TrimSpace(v)
}

// literalOf returns the line (from 1) of doc that sets the parameter name
// by a "key = value" line, under its table or as a dotted key, and the
// value as written; 0 when no line does.
func literalOf(doc []byte, name string) (row int, value string) {
	table := ""
	for i, l := range strings.Split(string(doc), "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "[") {
			if t, _, ok := strings.Cut(strings.Trim(l, "[ "), "]"); ok {
				table = strings.TrimSpace(t)
			}
			continue
		}
		k, v, ok := strings.Cut(l, "=")
		if !ok || strings.HasPrefix(l, "#") {
			continue
		}
		if k = strings.Trim(strings.TrimSpace(k), `"`); table != "" {
			k = table + "." + k
		}
		if k == name {
			v, _, _ = strings.Cut(strings.TrimSpace(v), "#")
			return i + 1, strings.TrimSpace(v)
		}
	}
	return 0, ""
}

// fileErr is a configuration-file error with its own one-line message.
type fileErr struct {
	msg string
	err error
}

func (f fileErr) Error() string { return f.msg }
func (f fileErr) Unwrap() error { return f.err }
