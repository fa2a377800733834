package exp

import (
	"errors"
	"testing"

	spinmodel "github.com/gpunetsim/gpunetsim/model/spin"
)

// A functional static sPIN run whose host memory differs from the
// reference is a failed run (exit 1), not a note; payload-free runs check
// no bytes.
func TestStaticCheckFailsUnverifiedRuns(t *testing.T) {
	cfg, err := DefaultConfig("gputn")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Run.Functional = true
	if err := staticCheck(cfg, spinmodel.StaticResult{Verified: false}, nil, "pulp bw b=64"); !errors.Is(err, ErrVerification) {
		t.Errorf("functional, not verified: %v; want ErrVerification", err)
	}
	if err := staticCheck(cfg, spinmodel.StaticResult{Verified: true}, nil, "x"); err != nil {
		t.Errorf("functional, verified: %v", err)
	}
	cfg.Run.Functional = false
	if err := staticCheck(cfg, spinmodel.StaticResult{}, nil, "x"); err != nil {
		t.Errorf("payload-free: %v", err)
	}
	boom := errors.New("boom")
	if err := staticCheck(cfg, spinmodel.StaticResult{}, boom, "x"); err != boom {
		t.Errorf("a run error: %v; want it unchanged", err)
	}
}
