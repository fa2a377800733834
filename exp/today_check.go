package exp

import (
	"encoding"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
)

// todayTakes says whether the today study applies parameter name (a
// top-level section of Config and a leaf) to its presets: the run values
// (but the preset), its own, and the present-day workloads' values but
// their strategy lists (TodayEntryConfig, presetConfig).
func todayTakes(section, leaf string) bool {
	switch section {
	case "run", "today":
		return true
	case "pingpong", "allreduce_hier", "halo3d", "moe":
		return leaf != "strategies"
	}
	return false
}

// todayPresetSections are the sections each present-day preset sets for
// itself: its hardware (cluster.Spec, inline) and software.
var todayPresetSections = []string{"sw", "mpi", "shmem", "gnn"}

// checkToday refuses, before any work, what the today study would not run
// as asked: a hardware or software value or a workload's strategy list
// that differs from run.preset's (each preset keeps its own, so the value
// reached none), MoE EP counts that are not whole nodes of every preset
// (they were dropped on that preset) and a ping-pong over the GPU fabric
// on a preset of one GPU per node (it ran over the rails).
func checkToday(cfg Config) error {
	def, err := DefaultConfig(cfg.Run.Preset)
	if err != nil {
		return fmt.Errorf("run.preset: %w", err)
	}
	var set []string
	v, d, t := reflect.ValueOf(cfg), reflect.ValueOf(def), reflect.TypeFor[Config]()
	for i := range t.NumField() {
		sf := t.Field(i)
		section, _, _ := strings.Cut(sf.Tag.Get("toml"), ",")
		switch {
		case sf.Anonymous && section == "": // cluster.Spec: the hardware
			set = append(set, differing("", v.Field(i), d.Field(i), nil)...)
		case slices.Contains(todayPresetSections, section):
			set = append(set, differing(section, v.Field(i), d.Field(i), nil)...)
		case section == "pingpong" || section == "allreduce_hier" || section == "halo3d" || section == "moe":
			set = append(set, differing(section, v.Field(i), d.Field(i), func(leaf string) bool { return todayTakes(section, leaf) })...)
		}
	}
	if len(set) > 0 {
		return fmt.Errorf("%s: gpunetsim today runs each preset of today.presets on its own hardware and software, and applies no such value; set only run.*, today.* and the pingpong, allreduce_hier, halo3d and moe values (but their strategies), or run one preset with gpunetsim run",
			strings.Join(set, ", "))
	}
	return errors.Join(todayWholeNodes(cfg), todayFabric(cfg))
}

// differing returns "name = value" for each leaf of v (a parameter: a
// field with a doc tag) that differs from d's, skipping the leaves skip
// keeps.
func differing(prefix string, v, d reflect.Value, keep func(leaf string) bool) []string {
	var out []string
	t := v.Type()
	for i := range t.NumField() {
		sf := t.Field(i)
		tag, _, _ := strings.Cut(sf.Tag.Get("toml"), ",")
		if !sf.IsExported() || tag == "-" {
			continue
		}
		name := tag
		if prefix != "" && tag != "" {
			name = prefix + "." + tag
		} else if tag == "" {
			name = prefix
		}
		if _, leaf := sf.Tag.Lookup("doc"); !leaf {
			if sf.Type.Kind() == reflect.Struct && !reflect.PointerTo(sf.Type).Implements(reflect.TypeFor[encoding.TextUnmarshaler]()) {
				out = append(out, differing(name, v.Field(i), d.Field(i), keep)...)
			}
			continue
		}
		if keep != nil && keep(tag) {
			continue
		}
		if !reflect.DeepEqual(v.Field(i).Interface(), d.Field(i).Interface()) {
			out = append(out, name+" = "+formatValue(v.Field(i)))
		}
	}
	return out
}

// formatValue writes a parameter's value as --set takes it.
func formatValue(v reflect.Value) string {
	if v.Kind() == reflect.Slice {
		parts := make([]string, v.Len())
		for i := range parts {
			parts[i] = fmt.Sprint(v.Index(i).Interface())
		}
		return strings.Join(parts, ",")
	}
	return fmt.Sprint(v.Interface())
}

// todayWholeNodes refuses MoE EP counts that are not whole nodes of every
// preset of the study.
func todayWholeNodes(cfg Config) error {
	if !slices.Contains(cfg.Today.Workloads, "moe") {
		return nil
	}
	lcm, per := 1, make([]string, 0, len(cfg.Today.Presets))
	for _, p := range cfg.Today.Presets {
		spec, err := cluster.Preset(p)
		if err != nil {
			return fmt.Errorf("today.presets: %w", err)
		}
		g := max(1, spec.Node.GPUs)
		lcm = lcm / gcd(lcm, g) * g
		per = append(per, fmt.Sprintf("%d on %s", g, p))
	}
	for _, ep := range cfg.MoE.EP {
		if ep%lcm != 0 {
			return fmt.Errorf("moe.ep contains %d: gpunetsim today runs the MoE layer on whole nodes of every preset of today.presets: must be a multiple of %d (node.gpus = %s)",
				ep, lcm, strings.Join(per, ", "))
		}
	}
	return nil
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// todayFabric refuses a ping-pong over the GPU fabric of a preset of one
// GPU per node.
func todayFabric(cfg Config) error {
	if cfg.PingPong.Placement != "fabric" || !slices.Contains(cfg.Today.Workloads, "pingpong") {
		return nil
	}
	for _, p := range cfg.Today.Presets {
		spec, err := cluster.Preset(p)
		if err != nil {
			return fmt.Errorf("today.presets: %w", err)
		}
		if spec.Node.GPUs < 2 {
			return fmt.Errorf("pingpong.placement = fabric: %s has one GPU per node (node.gpus = %d); must be rails, or drop %s from today.presets", p, spec.Node.GPUs, p)
		}
	}
	return nil
}
