package verbs_test

import (
	"fmt"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/model/verbs"
	"github.com/gpunetsim/gpunetsim/sim"
)

// PostRing's doorbell takes Ring's route: on a GH200 (the GPU's link is
// NVLink-C2C to the Grace) the MMIO write crosses the NIC's PCIe link
// too, so the stepped post and the blocking Post and Ring complete the
// same write at the same time, with and without BlueFlame, in GPU and
// host memory, on a chip-to-chip preset and on a dGPU one.
func TestPostRingStepsMatchPostAndRing(t *testing.T) {
	for _, p := range []struct {
		name string
		hw   func() cluster.Spec
	}{{"gh200-cx7", cluster.GH200CX7}, {"gpurdma", cluster.GPURDMA}} {
		for _, bf := range []bool{false, true} {
			for _, loc := range []string{"gpu", "host"} {
				run := func(steps bool) string {
					spec := verbs.DefaultSpec()
					spec.QPLoc = loc
					r := newRigWith(t, spec, func(s *clusterSpec) {
						*s = p.hw()
						s.NIC.VerbsBlueFlame = bf
					})
					var rung, done sim.Time
					r.kernel(t, func(wg *gpu.WG) {
						for k := range 2 {
							ws := []nic.WQE{r.write(k, 64)}
							if steps {
								wg.Proc.RunSteps(r.qp.NewPostRing(wg, ws))
							} else {
								if err := r.qp.Post(wg, ws[0]); err != nil {
									t.Error(err)
									return
								}
								r.qp.Ring(wg)
							}
							rung = wg.Now()
							if e, ok := r.cq.WaitQP(wg, r.qp, 0); !ok {
								t.Errorf("error CQE %+v", e)
							}
							done = wg.Now()
						}
					})
					st := r.qp.Stats()
					return fmt.Sprintf("rung %v done %v doorbell %v events %d", rung, done, st.DoorbellTime, r.c.Engine.Events())
				}
				ring, steps := run(false), run(true)
				if ring != steps {
					t.Errorf("%s blueflame %v QP in %s memory: Post+Ring %s\nPostRing steps %s", p.name, bf, loc, ring, steps)
				}
			}
		}
	}
}
