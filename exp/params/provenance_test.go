package params

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/exp"
	"github.com/gpunetsim/gpunetsim/hw/cluster"
)

// Every parameter's tag is true on every preset: a DOC value names the
// document and place it comes from (never the specification's own files),
// a preset's own DEFAULT says why it has that value, and no other tag
// appears. It walks the whole parameter table of each preset.
func TestDocTagsHaveReferences(t *testing.T) {
	for _, preset := range cluster.PresetNames() {
		cfg, err := exp.DefaultConfig(preset)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range List(cfg) {
			switch {
			case !slices.Contains([]string{"DOC", "DEFAULT", "RUN", "SPEC"}, p.Src):
				t.Errorf("%s on %s: tag %q", p.Name, preset, p.Src)
			case p.Src == "DOC" && p.Ref == "":
				t.Errorf("%s = %s on %s: tagged DOC without a reference to the document that states it", p.Name, p.Value, preset)
			case p.Src == "SPEC" && p.Ref == "":
				t.Errorf("%s on %s: tagged SPEC without its source", p.Name, preset)
			}
			for _, m := range sectionSign.FindAllStringIndex(p.Doc, -1) {
				if !sectionOwner.MatchString(p.Doc[:m[0]]) {
					t.Errorf("%s on %s: %q in %q names no document (a section of the specification?): cite the document by title", p.Name, preset, p.Doc[m[0]:m[1]], p.Doc)
				}
			}
			for _, bad := range []string{"errata", "workloads.md", "hardware.md", "nic.md", "overview.md", "gpu-networking.md", "datatypes.md", "present-day.md"} {
				if strings.Contains(p.Ref, bad) {
					t.Errorf("%s on %s: reference %q cites the specification's files, not the source document", p.Name, preset, p.Ref)
				}
			}
		}
	}
}

// sectionSign matches a section number; sectionOwner the words before it
// that name whose section it is (the dissertation, a paper, a chapter,
// the GIO slides, a guide or manual).
var (
	sectionSign  = regexp.MustCompile(`§ ?[0-9][0-9.–a-z]*`)
	sectionOwner = regexp.MustCompile(`dissertation|paper|chapter|slides|SDM|vol\.|[Gg]uide|manual|specification|Table|PCIe Base|thesis`)
)

// fieldRefs names only parameters that exist and are tagged DOC: a
// reference left behind by a renamed or re-tagged field fails here.
func TestFieldRefsNameDocParameters(t *testing.T) {
	src := map[string]string{}
	for _, f := range fields() {
		src[f.name] = f.src
		if f.ref != "" && fieldRefs[f.name] != "" {
			t.Errorf("%s: a ref tag and a fieldRefs entry", f.name)
		}
	}
	for name := range fieldRefs {
		if s, ok := src[name]; !ok || s != "DOC" {
			t.Errorf("fieldRefs[%q]: no DOC parameter of that name (tag %q)", name, s)
		}
	}
}

// The dGPU presets' kernel latencies are not the documents' (they come
// from the GPU-TN chapter's APU); the gputn preset's are.
func TestLaunchCostProvenancePerPreset(t *testing.T) {
	want := map[string]string{"gputn": "DOC", "xtq": "DOC", "compnet": "DEFAULT", "compnet_paper": "DEFAULT", "gpurdma": "DEFAULT", "gio": "DEFAULT", "spin": "DEFAULT"}
	for preset, tag := range want {
		cfg, err := exp.DefaultConfig(preset)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range List(cfg) {
			if (p.Name == "gpu.launch" || p.Name == "gpu.teardown") && p.Src != tag {
				t.Errorf("%s on %s: %s (%s), want %s", p.Name, preset, p.Src, p.Ref, tag)
			}
		}
	}
}

// Every stage of the HCA's pipeline on the verbs presets (doorbell and
// command processing, engines, per-QP window, DMA read tags and request
// size, BlueFlame, the PCIe path and the PLX switch) says where its value
// comes from, or is marked as a value nobody publishes (a knob listed
// with every result): none is a bare [DEFAULT].
func TestHCAPipelineStagesAreSourced(t *testing.T) {
	stages := []string{"nic.cmd_latency", "nic.verbs_engines", "nic.verbs_wqe_cost", "nic.verbs_qp_inflight", "nic.read_tags",
		"nic.verbs_blueflame", "pcie.latency", "pcie.max_read_request", "pcie.p2p_read_latency", "pcie.switch_latency"}
	for _, preset := range []string{"gpurdma", "gio"} {
		cfg, err := exp.DefaultConfig(preset)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, p := range List(cfg) {
			if !slices.Contains(stages, p.Name) {
				continue
			}
			seen[p.Name] = true
			if p.Src == "DEFAULT" && p.Ref == "" {
				t.Errorf("%s on %s: [DEFAULT] %s with no source and not marked as a knob", p.Name, preset, p.Value)
			}
		}
		for _, s := range stages {
			if !seen[s] {
				t.Errorf("%s: no parameter %s", preset, s)
			}
		}
	}
}
