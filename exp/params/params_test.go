package params

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/exp"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

func defaults(t testing.TB) exp.Config {
	t.Helper()
	cfg, err := exp.DefaultConfig("gputn")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestListCoversEveryLeaf(t *testing.T) {
	list := List(defaults(t))
	seen := map[string]bool{}
	for _, p := range list {
		if seen[p.Name] {
			t.Errorf("duplicate parameter %s", p.Name)
		}
		seen[p.Name] = true
		if p.Doc == "" || !slices.Contains([]string{"DOC", "DEFAULT", "RUN"}, p.Src) {
			t.Errorf("%s: doc %q src %q", p.Name, p.Doc, p.Src)
		}
		if strings.HasPrefix(p.Type, "struct") || p.Value == "" && p.Type != "string" {
			t.Errorf("%s: type %q value %q", p.Name, p.Type, p.Value)
		}
	}
	for _, want := range []string{"run.seed", "link.bandwidth", "gpu.launch", "nic.trig_max_entries", "allreduce.nodes", "sw.mpi_match", "mpi.eager_max", "latency.size"} {
		if !seen[want] {
			t.Errorf("missing %s", want)
		}
	}
	if len(list) < 60 {
		t.Errorf("only %d parameters", len(list))
	}
}

// TestRoundTrip checks that every printed value parses back to itself, in
// every preset.
func TestRoundTrip(t *testing.T) {
	for _, preset := range []string{"gputn", "xtq", "compnet", "compnet_paper"} {
		cfg, err := exp.DefaultConfig(preset)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range List(cfg) {
			var fresh exp.Config
			if err := Set(&fresh, p.Name, p.Value); err != nil {
				t.Errorf("%s: Set(%s, %q): %v", preset, p.Name, p.Value, err)
				continue
			}
			if got, _ := Get(fresh, p.Name); got != p.Value {
				t.Errorf("%s: %s: printed %q, reparsed prints %q", preset, p.Name, p.Value, got)
			}
		}
	}
}

func TestSet(t *testing.T) {
	tests := []struct {
		name, value string
		check       func(c exp.Config) bool
		errIs       error  // nil: must succeed
		errHas      string // substring of the error
	}{
		{"link.bandwidth", "200Gbps", func(c exp.Config) bool { return c.Link.Bandwidth == unit.Rate(25e9) }, nil, ""},
		{"link.bandwidth", "fast", nil, ErrBadValue, `link.bandwidth: bad rate "fast": want a number with Gbps`},
		{"link.bandwidth", "-5Gbps", nil, ErrBadValue, "must be positive"},
		{"gpu.launch", "2.5us", func(c exp.Config) bool { return c.GPU.Launch == 2500*sim.Nanosecond }, nil, ""},
		{"gpu.launch", "3", nil, ErrBadValue, "bad duration"},
		{"gpu.freq", "800MHz", func(c exp.Config) bool { return c.GPU.Freq == 800e6 }, nil, ""},
		{"allreduce.size", "64KiB", func(c exp.Config) bool { return c.Allreduce.Size == 64*unit.KiB }, nil, ""},
		{"allreduce.size", "-1KiB", nil, ErrBadValue, "negative"},
		{"allreduce.nodes", "2,3,5", func(c exp.Config) bool { return slices.Equal(c.Allreduce.Nodes, []int{2, 3, 5}) }, nil, ""},
		{"allreduce.nodes", "2-8/2,13", func(c exp.Config) bool { return slices.Equal(c.Allreduce.Nodes, []int{2, 4, 6, 8, 13}) }, nil, ""},
		{"allreduce.nodes", "2,x", nil, ErrBadValue, `"x"`},
		{"allreduce.strategies", " CPU , GPUTN ", func(c exp.Config) bool { return slices.Equal(c.Allreduce.Strategies, []string{"CPU", "GPUTN"}) }, nil, ""},
		{"run.seed", "42", func(c exp.Config) bool { return c.Run.Seed == 42 }, nil, ""},
		{"run.seed", "-1", nil, ErrBadValue, "non-negative"},
		{"run.functional", "false", func(c exp.Config) bool { return !c.Run.Functional }, nil, ""},
		{"run.functional", "maybe", nil, ErrBadValue, "true or false"},
		{"cpu.ipc", "1.25", func(c exp.Config) bool { return c.CPU.IPC == 1.25 }, nil, ""},
		{"cpu.ipc", "NaN", nil, ErrBadValue, "finite"},
		{"cpu.ipc", "0x1p-1", nil, ErrBadValue, "decimal"}, // Go's hexadecimal float: the message promises decimal
		{"cpu.ipc", "1e0", func(c exp.Config) bool { return c.CPU.IPC == 1 }, nil, ""},
		// Below a float64's least magnitude: ParseFloat gives 0 without
		// an error, and cp.ipc = 0 means "derived" (ran with exit 0).
		{"cp.ipc", "1e-400", nil, ErrBadValue, "which a float64 holds only as 0"},
		{"cp.ipc", "-1e-400", nil, ErrBadValue, "in [4.9e-324, 1e300]"},
		{"cp.ipc", "0.0e-400", func(c exp.Config) bool { return c.CP.IPC == 0 }, nil, ""},
		{"cp.ipc", "1e-320", func(c exp.Config) bool { return c.CP.IPC == 1e-320 }, nil, ""}, // a denormal: held to the range by Validate
		{"gpu.cus", "12", func(c exp.Config) bool { return c.GPU.CUs == 12 }, nil, ""},
		{"gpu.cus", "1.5", nil, ErrBadValue, "integer"},
		{"topology.kind", "fattree", func(c exp.Config) bool { return c.Topology.Kind == "fattree" }, nil, ""},
		{"link.bandwith", "1Gbps", nil, ErrUnknown, "did you mean link.bandwidth?"},
		{"bandwidth", "1Gbps", nil, ErrUnknown, "link.bandwidth"},
		{"zzz", "1", nil, ErrUnknown, "names start with run, link"},
	}
	for _, tt := range tests {
		t.Run(tt.name+"="+tt.value, func(t *testing.T) {
			cfg := defaults(t)
			before := cfg
			err := Set(&cfg, tt.name, tt.value)
			if tt.errIs == nil {
				if err != nil {
					t.Fatalf("Set: %v", err)
				}
				if !tt.check(cfg) {
					t.Fatalf("value not stored: %+v", cfg)
				}
				return
			}
			if !errors.Is(err, tt.errIs) || !strings.Contains(err.Error(), tt.errHas) {
				t.Fatalf("Set error = %v; want %v containing %q", err, tt.errIs, tt.errHas)
			}
			if List(cfg)[0] != List(before)[0] || !slices.Equal(Record(cfg), Record(before)) {
				t.Fatalf("failed Set changed the configuration")
			}
		})
	}
}

func TestParseInts(t *testing.T) {
	tests := []struct {
		in   string
		want []int
		err  bool
	}{
		{"", nil, false},
		{"4", []int{4}, false},
		{"2,4,8", []int{2, 4, 8}, false},
		{"2-64/2", func() (ns []int) {
			for n := 2; n <= 64; n += 2 {
				ns = append(ns, n)
			}
			return
		}(), false},
		{"1-4", []int{1, 2, 3, 4}, false},
		{"2-7/2", []int{2, 4, 6}, false},
		{"-3--1", []int{-3, -2, -1}, false},
		{" 2 , 3-5 ", []int{2, 3, 4, 5}, false},
		{"5-2", nil, true},
		{"2-8/0", nil, true},
		{"4/2", nil, true},
		{"2,,3", nil, true},
		{"a-b", nil, true},
		{"1-1000000000", nil, true},
	}
	for _, tt := range tests {
		got, err := ParseInts(tt.in)
		if (err != nil) != tt.err || !slices.Equal(got, tt.want) {
			t.Errorf("ParseInts(%q) = %v, %v; want %v, err %v", tt.in, got, err, tt.want, tt.err)
		}
	}
}

func TestFormatInts(t *testing.T) {
	tests := []struct {
		in   []int
		want string
	}{
		{nil, ""},
		{[]int{2}, "2"},
		{[]int{2, 4}, "2,4"},
		{[]int{2, 4, 8, 16, 32, 64}, "2,4,8,16,32,64"},
		{[]int{2, 4, 6, 8}, "2-8/2"},
		{[]int{1, 2, 3, 7, 9}, "1-3,7,9"},
		{[]int{3, 3, 3}, "3,3,3"},
		{[]int{5, 3, 1}, "5,3,1"},
	}
	for _, tt := range tests {
		if got := FormatInts(tt.in); got != tt.want {
			t.Errorf("FormatInts(%v) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

func TestSuggest(t *testing.T) {
	names := Names()
	tests := []struct {
		in   string
		want string // must be among the suggestions
	}{
		{"link.bandwith", "link.bandwidth"},
		{"gpu.lauch", "gpu.launch"},
		{"nic.trig_max_entry", "nic.trig_max_entries"},
		{"seed", "run.seed"},
		{"allreduce.node", "allreduce.nodes"},
	}
	for _, tt := range tests {
		if got := Suggest(tt.in, names); !slices.Contains(got, tt.want) {
			t.Errorf("Suggest(%q) = %v; want it to contain %q", tt.in, got, tt.want)
		}
	}
}

func writeFile(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "cfg.toml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadLayers(t *testing.T) {
	file := writeFile(t, `
[run]
preset = "xtq"
seed = 7
[link]
bandwidth = "200Gbps"
latency = "10ns"
[allreduce]
nodes = [2, 3, 5]
size = 65536
`)
	t.Run("file picks preset", func(t *testing.T) {
		cfg, err := Load(Options{File: file})
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Run.Preset != "xtq" || cfg.GPU.Launch != 0 || cfg.Run.Seed != 7 || cfg.Link.Bandwidth != 25e9 ||
			cfg.Link.Latency != 10*sim.Nanosecond || !slices.Equal(cfg.Allreduce.Nodes, []int{2, 3, 5}) || cfg.Allreduce.Size != 64*unit.KiB {
			t.Fatalf("got %+v", cfg)
		}
	})
	t.Run("explicit preset wins", func(t *testing.T) {
		cfg, err := Load(Options{Preset: "gputn", File: file})
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Run.Preset != "gputn" || cfg.GPU.Launch != 1500*sim.Nanosecond || cfg.Link.Bandwidth != 25e9 {
			t.Fatalf("got preset %s launch %v bw %v", cfg.Run.Preset, cfg.GPU.Launch, cfg.Link.Bandwidth)
		}
	})
	t.Run("set wins over file, edit over set", func(t *testing.T) {
		cfg, err := Load(Options{File: file, Sets: []string{"link.bandwidth=50Gbps", "run.seed=9"},
			Edit: func(c *exp.Config) error { c.Run.Seed = 11; return nil }})
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Link.Bandwidth != unit.Rate(50e9/8) || cfg.Run.Seed != 11 {
			t.Fatalf("bw %v seed %d", cfg.Link.Bandwidth, cfg.Run.Seed)
		}
	})
	t.Run("no file", func(t *testing.T) {
		cfg, err := Load(Options{})
		if err != nil {
			t.Fatal(err)
		}
		want := defaults(t)
		if !slices.Equal(Record(cfg), Record(want)) {
			t.Fatal("Load() differs from DefaultConfig(gputn)")
		}
	})
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		has  []string
	}{
		{"unknown preset", Options{Preset: "nope"}, []string{`unknown preset "nope"`, "gputn"}},
		{"unknown file key", Options{File: "[link]\nbandwith = \"1Gbps\"\n"}, []string{":2:", `unknown parameter "link.bandwith"`, "did you mean link.bandwidth"}},
		{"unknown table", Options{File: "[lnk]\nbandwidth = \"1Gbps\"\n"}, []string{`unknown parameter "lnk"`, "did you mean link"}},
		{"bad unit in file", Options{File: "[link]\nbandwidth = \"fast\"\n"}, []string{":2:", "link.bandwidth", `bad rate "fast"`}},
		{"bare number duration", Options{File: "[gpu]\nlaunch = 1500\n"}, []string{"gpu.launch = 1500", "with its unit"}},
		{"bare number rate", Options{File: "[link]\nbandwidth = 100\n"}, []string{"link.bandwidth = 100", `"100Gbps"`}},
		{"type mismatch", Options{File: "[gpu]\ncus = \"many\"\n"}, []string{"gpu.cus"}},
		{"syntax", Options{File: "[link\n"}, []string{":1:"}},
		{"set without =", Options{Sets: []string{"link.bandwidth"}}, []string{"want name=value"}},
		{"set without name", Options{Sets: []string{" =5"}}, []string{"--set  =5: bad value: want name=value"}},
		{"set bad unit", Options{Sets: []string{"link.bandwidth=fast"}}, []string{`--set link.bandwidth=fast: bad rate "fast": want a number with Gbps`}},
		{"set unknown", Options{Sets: []string{"gpu.lanch=1us"}}, []string{`--set gpu.lanch=1us: unknown parameter "gpu.lanch": did you mean gpu.launch?`}},
		{"set preset", Options{Sets: []string{"run.preset=xtq"}}, []string{"--preset"}},
		{"zero size", Options{Sets: []string{"allreduce.size=0"}}, []string{"allreduce.size = 0B"}},
		{"node count", Options{Sets: []string{"allreduce.nodes=1,4"}}, []string{"allreduce.nodes contains 1"}},
		{"missing file", Options{File: "\x00missing"}, []string{"config:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.opts
			if o.File != "" && o.File != "\x00missing" {
				o.File = writeFile(t, o.File)
			} else if o.File == "\x00missing" {
				o.File = filepath.Join(t.TempDir(), "missing.toml")
			}
			_, err := Load(o)
			if err == nil {
				t.Fatal("Load succeeded")
			}
			for _, h := range tt.has {
				if !strings.Contains(err.Error(), h) {
					t.Errorf("error %q lacks %q", err, h)
				}
			}
		})
	}
}

// FuzzSet checks that whatever Set accepts prints in a form Set accepts
// again, to the same value, and that Set never panics.
func FuzzSet(f *testing.F) {
	names := Names()
	for i, v := range []string{"100Gbps", "1.5us", "2KiB", "2-64/2", "2,3,5", "1.5GHz", "true", "-1", "x", "0", "1e3", "CPU,GDS", "", "9223372036854775807ps", "1-3,-5--2/1"} {
		f.Add(i*7%len(names), v)
	}
	f.Fuzz(func(t *testing.T, i int, value string) {
		name := names[uint(i)%uint(len(names))]
		var cfg exp.Config
		if err := Set(&cfg, name, value); err != nil {
			if !errors.Is(err, ErrBadValue) || !strings.HasPrefix(err.Error(), name+": ") {
				t.Fatalf("Set(%s, %q) error %q lacks the name or ErrBadValue", name, value, err)
			}
			return
		}
		printed, err := Get(cfg, name)
		if err != nil {
			t.Fatal(err)
		}
		var again exp.Config
		if err := Set(&again, name, printed); err != nil {
			t.Fatalf("Set(%s, %q) accepted, but its print %q is refused: %v", name, value, printed, err)
		}
		if p2, _ := Get(again, name); p2 != printed {
			t.Fatalf("%s: %q prints %q, which reparses to %q", name, value, printed, p2)
		}
	})
}

// FuzzInts checks that FormatInts prints any list ParseInts accepts in a
// form that parses back to the same list.
func FuzzInts(f *testing.F) {
	for _, s := range []string{"2-64/2", "2,3,5", "1-4,7,9-13/2", "-5--1", "", "3,3,3", "9,7,5,3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ns, err := ParseInts(s)
		if err != nil {
			return
		}
		back, err := ParseInts(FormatInts(ns))
		if err != nil || !slices.Equal(back, ns) {
			t.Fatalf("%q → %v → %q → %v, %v", s, ns, FormatInts(ns), back, err)
		}
	})
}

// Every list expandedLists names is a list parameter of one of the
// experiment's own sections, and every experiment it names exists: a
// misspelt name would silently drop a list from the memory bound.
func TestExpandedListsNameOwnLists(t *testing.T) {
	lists := map[string]bool{}
	for _, f := range fields() {
		if f.typ == intSliceType || f.typ == strSliceType {
			lists[f.name] = true
		}
	}
	for name, terms := range expandedLists {
		if _, err := exp.Lookup(name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		own, _ := exp.ParamSections(name)
		for _, term := range terms {
			for _, l := range term {
				section, _, _ := strings.Cut(l, ".")
				if !lists[l] || !slices.Contains(own, section) {
					t.Errorf("%s: %s is no list of its own sections %v", name, l, own)
				}
			}
		}
	}
}
