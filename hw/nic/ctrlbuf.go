package nic

import "github.com/gpunetsim/gpunetsim/hw/mem"

// ctrlBuf is a payload buffer of a payload-free run's packet that carries
// control words (a flag protocol's sequence word inside a payload-free data
// buffer): zeros but for the control lines' bytes in [lo, hi). Such
// buffers come from the NIC's own pool, whose buffers are kept zero but
// for that span, so a packet costs clearing its previous control lines
// instead of its whole payload (a tenth of a payload-free GPU-TN run).
type ctrlBuf struct {
	b      []byte // maxPayload bytes
	lo, hi int    // the bytes that may be non-zero
}

// ctrlPayload returns the payload of packet pk read from the payload-free
// range at a: nil when it holds no control lines, else a ctrlBuf's bytes
// (pk.ctrl), which the landing gives back to its NIC's pool.
func (n *NIC) ctrlPayload(pk *Packet, a mem.Addr) []byte {
	cb, ok := n.ctrlFree.Get()
	if !ok {
		cb = &ctrlBuf{b: make([]byte, n.maxPayload)}
	}
	clear(cb.b[cb.lo:cb.hi])
	b := cb.b[:pk.Len]
	cb.lo, cb.hi = n.mem.ReadControlInto(a, b)
	if cb.lo == cb.hi {
		n.ctrlFree.Put(cb)
		return nil
	}
	pk.ctrl = cb
	return b
}
