package cluster

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/hw/pcie"
	"github.com/gpunetsim/gpunetsim/sim"
)

// putOnce has node 1's host put 5 bytes into node 0 and returns when the
// target's event became visible and node 1's NIC attachment.
func putOnce(t *testing.T, s Spec) (sim.Time, *pcie.Link) {
	t.Helper()
	c, err := New(sim.New(1), s, 2, true)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Engine.Close()
	n0, n1 := c.Nodes[0], c.Nodes[1]
	eq := n0.NIC.NewEQ(0, 0)
	pt := n0.NIC.PTAlloc(eq, false)
	dst := n0.Mem.Alloc(mem.Host, 64, "recv")
	n0.NIC.MEAppend(pt, nic.ME{Start: dst, Length: 64, MatchID: nic.AnyID, MatchBits: 7, Options: nic.MEOpPut}, nic.Priority)
	src := n1.Mem.Alloc(mem.Host, 64, "send")
	n1.Mem.Write(src, []byte("hello"))
	c.Engine.Spawn("host", func(p *sim.Proc) {
		n1.NIC.Doorbell(p, nic.Command{Op: nic.CmdPut, MD: &nic.MD{Start: src, Length: 64}, Length: 5, Target: 0, PT: pt, MatchBits: 7})
	})
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	ev, ok := eq.Get()
	if !ok || ev.MLength != 5 {
		t.Fatalf("no 5-byte put event: %+v", ev)
	}
	return ev.Time, n1.PCIe
}

// A command reaches the NIC as a doorbell plus a 64-byte command packet the
// NIC reads from memory, on either attachment; on the APU's directory the
// doorbell is an on-chip MMIO store and the reads are coherent accesses, so
// the same put arrives far sooner than behind PCIe.
func TestCommandDeliveryPerAttachment(t *testing.T) {
	apu := GPUTN()
	onDir, link := putOnce(t, apu)
	if !link.OnChip() {
		t.Fatal("gputn's NIC is not on the directory")
	}
	_, devBound := link.Stats(pcie.Down)
	// Device-bound bytes: the 8-byte doorbell, the 64-byte command packet
	// and the 5-byte payload the NIC read.
	if want := uint64(8 + apu.NIC.CmdSize + 5); devBound != want {
		t.Errorf("bytes toward the NIC = %d, want doorbell + %d-byte command packet + payload = %d", devBound, apu.NIC.CmdSize, want)
	}
	viaPCIe := apu
	viaPCIe.SoC.NICAttach = pcie.AttachPCIe
	onBus, link := putOnce(t, viaPCIe)
	if link.OnChip() {
		t.Fatal("soc.nic_attach = pcie left the NIC on the directory")
	}
	if _, b := link.Stats(pcie.Down); b != devBound {
		t.Errorf("PCIe attachment moved %d bytes toward the NIC, want the same %d", b, devBound)
	}
	// Behind PCIe: doorbell (L), command read (2L), payload read (2L) and
	// the target's data write (L; its event follows right behind it on
	// the same ordered path) all pay the 250 ns link, where the directory
	// charges its own, shorter, accesses.
	if gain := onBus - onDir; gain < 4*apu.PCIe.Latency {
		t.Errorf("put arrives at %v on the directory and %v behind PCIe: want at least 4 PCIe latencies saved", onDir, onBus)
	}
}
