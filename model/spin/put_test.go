package spin_test

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	spinmodel "github.com/gpunetsim/gpunetsim/model/spin"
	"github.com/gpunetsim/gpunetsim/sim"
)

// TestPutWindow: the paper's window (data leaving the initiator → data in
// host memory) is inside the doorbell-to-event time, and the sPIN path's
// one handler adds to it what the plain DMA path does not have.
func TestPutWindow(t *testing.T) {
	var r [2]spinmodel.PutResult
	for i, with := range []bool{false, true} {
		c, err := cluster.New(sim.New(1), cluster.Spin(), 2, true)
		if err != nil {
			t.Fatal(err)
		}
		r[i], err = spinmodel.PutLatency(c, with)
		c.Engine.Close()
		if err != nil || !r[i].Verified {
			t.Fatalf("sPIN %v: %+v, %v", with, r[i], err)
		}
		if r[i].Window <= 0 || r[i].Window >= r[i].DoorbellToEvent {
			t.Errorf("sPIN %v: window %v, doorbell to event %v: want 0 < window < doorbell to event", with, r[i].Window, r[i].DoorbellToEvent)
		}
	}
	if r[1].Window <= r[0].Window {
		t.Errorf("window with a handler %v, plain %v: want the handler path longer", r[1].Window, r[0].Window)
	}
}
