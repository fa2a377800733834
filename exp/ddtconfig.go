package exp

import (
	"errors"
	"fmt"

	spinmodel "github.com/gpunetsim/gpunetsim/model/spin"
	"github.com/gpunetsim/gpunetsim/unit"
)

// DDTBenchSpec holds the knobs of the sPIN datatype studies (the dissertation
// §11). Run them on preset spin (--preset spin); the hardware they use is
// cluster.Spec's spin.*, pcie.* and link.* values.
type DDTBenchSpec struct {
	Size    unit.Bytes `toml:"size" doc:"message size of the vector studies (throughput, breakdown, HPU scaling, NIC memory, DMA queue)" src:"DOC"`
	Blocks  []int      `toml:"blocks" doc:"vector block sizes in bytes (stride = 2 × block)" src:"DEFAULT"`
	Gammas  []int      `toml:"gammas" doc:"γ (blocks per 2KiB packet) of the breakdown and DMA-queue studies" src:"DOC"`
	HPUs    []int      `toml:"hpus" doc:"HPU counts of the scaling and memory studies" src:"DEFAULT"`
	Stated  int        `toml:"hpus_stated" doc:"HPUs of the vector, breakdown, DMA-queue and NIC-memory-vs-block studies, which the sPIN datatype paper runs at 16 (its Fig 8, 12, 13b, 14); 0 = spin.hpus" src:"DOC"`
	Methods []string   `toml:"methods" doc:"methods to compare: host, iovec, specialized, hpu-local, ro-cp, rw-cp" src:"DOC"`
	Apps    string     `toml:"apps" doc:"application datatypes of the speedup, memory-traffic and amortization studies: all (the SC'19 paper sizes) or fixtures (the small app_* cases)" src:"DEFAULT"`
}

func defaultDDTBench() DDTBenchSpec {
	return DDTBenchSpec{Size: 4 * unit.MiB, Blocks: []int{4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096},
		Gammas: []int{1, 2, 4, 8, 16}, HPUs: []int{1, 2, 4, 8, 16, 32}, Stated: 16,
		Methods: []string{"host", "iovec", "specialized", "hpu-local", "ro-cp", "rw-cp"}, Apps: "all"}
}

// methods parses the method list.
func (d DDTBenchSpec) methods() ([]spinmodel.Method, error) {
	var out []spinmodel.Method
	for _, s := range d.Methods {
		m, err := spinmodel.ParseMethod(s)
		if err != nil {
			return nil, fmt.Errorf("ddtbench.methods: %w", err)
		}
		out = append(out, m)
	}
	return out, nil
}

func (d DDTBenchSpec) validate() error {
	var errs []error
	sizeOK := d.Size >= 2*unit.KiB && d.Size <= 256*unit.MiB
	if !sizeOK {
		errs = append(errs, fmt.Errorf("ddtbench.size = %v: must be in [2KiB, 256MiB]", d.Size))
	}
	if len(d.Blocks) == 0 {
		errs = append(errs, errors.New("ddtbench.blocks is empty: give at least one block size"))
	}
	errs = append(errs, blocksWithin("ddtbench.blocks", d.Blocks, "ddtbench.size", d.Size, sizeOK, 256*unit.MiB)...)
	// An empty list would run nothing and print an empty table.
	if len(d.Gammas) == 0 {
		errs = append(errs, errors.New("ddtbench.gammas is empty: give at least one γ (blocks per 2KiB packet), e.g. 1,2,4,8,16"))
	}
	if len(d.HPUs) == 0 {
		errs = append(errs, errors.New("ddtbench.hpus is empty: give at least one HPU count, e.g. 1,2,4,8,16,32"))
	}
	for _, g := range d.Gammas {
		if g < 1 || g > 2048 {
			errs = append(errs, fmt.Errorf("ddtbench.gammas contains %d: γ must be in [1, 2048] (blocks of 2KiB/γ bytes)", g))
		}
	}
	for _, h := range d.HPUs {
		if h < 1 || h > 4096 {
			errs = append(errs, fmt.Errorf("ddtbench.hpus contains %d: HPU counts must be in [1, 4096]", h))
		}
	}
	if d.Stated < 0 || d.Stated > 4096 {
		// "0 = the preset's", not spin.hpus by name: a line naming it
		// is dropped when spin.hpus is bad too (cmd dropDerived).
		errs = append(errs, fmt.Errorf("ddtbench.hpus_stated = %d: must be in [0, 4096] (0 = the preset's HPU count)", d.Stated))
	}
	if len(d.Methods) == 0 {
		errs = append(errs, errors.New("ddtbench.methods is empty: give some of host, iovec, specialized, hpu-local, ro-cp, rw-cp"))
	}
	if _, err := d.methods(); err != nil {
		errs = append(errs, err)
	}
	if d.Apps != "all" && d.Apps != "fixtures" {
		errs = append(errs, fmt.Errorf("ddtbench.apps = %q: must be all or fixtures", d.Apps))
	}
	return errors.Join(errs...)
}

// blocksWithin checks a list of block sizes against the size they
// divide: against that size when it is valid (sizeOK), else against the
// size's own upper bound most, so that a block bad on its own is
// reported even beside a bad size, without naming it (a line naming the
// size is dropped as following from the size's own, cmd dropDerived).
func blocksWithin(field string, blocks []int, sizeField string, size unit.Bytes, sizeOK bool, most unit.Bytes) []error {
	var errs []error
	for _, b := range blocks {
		switch {
		case sizeOK && (b < 1 || unit.Bytes(b) > size):
			errs = append(errs, fmt.Errorf("%s contains %d: block sizes must be in [1, %s = %v]", field, b, sizeField, size))
		case !sizeOK && (b < 1 || unit.Bytes(b) > most):
			errs = append(errs, fmt.Errorf("%s contains %d: block sizes must be in [1, %v]", field, b, most))
		}
	}
	return errs
}

// ddtInterval checks a user-set checkpoint interval against the packet
// payload; the other constraints depend on the message and are checked
// when the receive is planned.
func (c Config) ddtInterval() error {
	if c.DDT.Interval > 0 && c.Link.Payload > 0 && c.DDT.Interval%c.Link.Payload != 0 {
		return fmt.Errorf("ddt.interval = %v: must be a multiple of link.payload = %v (0 = chosen by the model)", c.DDT.Interval, c.Link.Payload)
	}
	return nil
}

// quickDDT shrinks the datatype studies to seconds (tests, the quick
// report): small messages, three block sizes, the small app fixtures.
func quickDDT(cfg *Config) {
	cfg.DDTBench.Size = 64 * unit.KiB
	cfg.DDTBench.Blocks = []int{16, 256, 2048}
	cfg.DDTBench.Gammas = []int{1, 16}
	cfg.DDTBench.HPUs = []int{1, 16}
	cfg.DDTBench.Apps = "fixtures"
}

// quickFFT2D is a seconds-long FFT2D projection: n = 512 on 4 and 16 ranks.
func quickFFT2D(cfg *Config) {
	cfg.DDTFFT.N, cfg.DDTFFT.Procs, cfg.DDTFFT.SplitAt = 512, []int{4, 16}, 16
}
