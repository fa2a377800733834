package spin_test

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	spinmodel "github.com/gpunetsim/gpunetsim/model/spin"
	"github.com/gpunetsim/gpunetsim/sim"
)

// TestHostCreateOnlyForCheckpoints: the host builds checkpoints (on its
// simulated core) for RO-CP and RW-CP only; the other methods are charged
// nothing at post time beyond their structure copy.
func TestHostCreateOnlyForCheckpoints(t *testing.T) {
	hw := cluster.Spin()
	env := spinmodel.Env{Spin: hw.Spin, Host: hw.CPU, Costs: spinmodel.DefaultCosts(), K: 2048, TPkt: 85 * sim.Nanosecond}
	ty := vector(t, 256<<10, 64)
	for _, m := range []spinmodel.Method{spinmodel.HostUnpack, spinmodel.Iovec, spinmodel.Specialized, spinmodel.HPULocal, spinmodel.ROCP, spinmodel.RWCP} {
		p, err := spinmodel.NewPlan(m, ty, 1, env)
		if err != nil {
			t.Fatal(err)
		}
		creates := m == spinmodel.ROCP || m == spinmodel.RWCP
		if (p.HostCreate > 0) != creates {
			t.Errorf("%v: host creation %v, want >0 only for RO-CP and RW-CP", m, p.HostCreate)
		}
	}
	// Under the affine model the same creation is regions × host_region.
	env.Costs.HostModel = spinmodel.HostAffine
	p, err := spinmodel.NewPlan(spinmodel.RWCP, ty, 1, env)
	if err != nil || p.HostCreate != sim.Duration(p.Regions)*env.Costs.HostRegion {
		t.Errorf("affine: %v, %v; want %d × %v", p.HostCreate, err, p.Regions, env.Costs.HostRegion)
	}
}
