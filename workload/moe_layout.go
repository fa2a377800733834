package workload

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// moeLayout places one MoE layer's messages. Dispatch sends, from GPU s
// to GPU d, the entries s routes to d's experts: in low-latency mode one
// entry per (token, expert) choice (DeepEP's low-latency kernels send a
// token once per expert), in throughput mode one entry per token with
// any expert on d (the token is sent once per GPU, carrying its local
// experts). Combine returns one BF16 vector per entry the other way.
//
// Every (s, d) message has a slot in s's send region and in d's receive
// region: its entries, then an 8-byte flag word that travels with them
// (the trailing-flag protocol of the one-sided families; the two-sided
// families send the entries only). Slots are ordered by peer, so a
// sender knows the remote offset of its slot without asking; the offsets
// come from the routing, which every GPU of the simulation knows (a real
// throughput-mode dispatch first exchanges the counts; that step is not
// simulated).
//
// A dispatch entry is a header — token (u32), source GPU (u32), expert
// (low-latency) or bitmask of d's local experts (throughput) (u64), the
// gating weights of those experts (float32 each, in expert order) — and
// the token's activation: Hidden FP8 values and one float32 scale per 128
// channels, padded to 8 bytes. A combine entry is Hidden BF16 values.
type moeLayout struct {
	sh       MoEShape
	ll       bool
	hidden   int
	hdr      uint64   // dispatch header bytes
	act      uint64   // activation bytes (FP8 + scales)
	de, ce   uint64   // dispatch and combine entry bytes
	n        []int32  // n[s*P+d]: entries s sends to d
	dSendOff []uint64 // [s*P+d]: offset of d's slot in s's dispatch send region
	dRecvOff []uint64 // [d*P+s]: offset of s's slot in d's dispatch receive region
	cSendOff []uint64 // [d*P+s]: offset of s's slot in d's combine send region
	cRecvOff []uint64 // [s*P+d]: offset of d's slot in s's combine receive region
	dSend    []uint64 // per GPU region sizes
	dRecv    []uint64
	cSend    []uint64
	cRecv    []uint64
	// Functional runs only: idx[(s·Tokens+t)·TopK+j] is the entry of
	// choice j of token t of s within its (s, owner) message.
	idx []int32
}

func newMoELayout(r *Routing, hidden int, ll, functional bool) *moeLayout {
	sh := r.Shape
	P := sh.GPUs
	l := &moeLayout{sh: sh, ll: ll, hidden: hidden, n: make([]int32, P*P)}
	l.act = pad8(uint64(hidden) + 4*uint64(hidden/128))
	l.hdr = pad8(16 + 4*uint64(sh.TopK))
	if ll {
		l.hdr = 24
	}
	l.de = l.hdr + l.act
	l.ce = 2 * uint64(hidden)
	if functional {
		l.idx = make([]int32, len(r.Expert))
	}
	seen := make([]int, P) // throughput: last token counted per owner, +1
	for s := range P {
		clear(seen)
		for t := range sh.Tokens {
			for j := range sh.TopK {
				i := r.at(s, t, j)
				d := sh.Owner(int(r.Expert[i]))
				k := s*P + d
				if ll || seen[d] != t+1 {
					seen[d] = t + 1
					l.n[k]++
				}
				if functional {
					l.idx[i] = l.n[k] - 1
				}
			}
		}
	}
	l.dSendOff, l.dRecvOff = make([]uint64, P*P), make([]uint64, P*P)
	l.cSendOff, l.cRecvOff = make([]uint64, P*P), make([]uint64, P*P)
	l.dSend, l.dRecv, l.cSend, l.cRecv = make([]uint64, P), make([]uint64, P), make([]uint64, P), make([]uint64, P)
	for a := range P {
		for b := range P {
			l.dSendOff[a*P+b], l.dSend[a] = l.dSend[a], l.dSend[a]+uint64(l.n[a*P+b])*l.de+8
			l.dRecvOff[a*P+b], l.dRecv[a] = l.dRecv[a], l.dRecv[a]+uint64(l.n[b*P+a])*l.de+8
			l.cSendOff[a*P+b], l.cSend[a] = l.cSend[a], l.cSend[a]+uint64(l.n[b*P+a])*l.ce+8
			l.cRecvOff[a*P+b], l.cRecv[a] = l.cRecv[a], l.cRecv[a]+uint64(l.n[a*P+b])*l.ce+8
		}
	}
	return l
}

// count returns the entries s sends to d in dispatch (and d returns to s
// in combine).
func (l *moeLayout) count(s, d int) uint64 { return uint64(l.n[s*l.sh.GPUs+d]) }

// maxOf returns the largest value of v (a symmetric allocation's size).
func maxOf(v []uint64) uint64 {
	var m uint64
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

// moeFP8 is the FP8 code of channel k of token t of GPU s (4 bits of
// information, so the dequantised values and their weighted sums stay
// small), moeScale the float32 scale of its 128-channel block c.
func moeFP8(s, t, k int) byte { return byte((s*131 + t*31 + k*7 + k/11) & 15) }

func moeScale(s, t, c int) float32 { return float32(1) / float32(int(1)<<((s+t+c)%3)) }

// moeExpert is expert e's function of one dequantised channel value (the
// expert's FFN in miniature: a per-expert gain, so a token that reached
// the wrong expert gives a different result).
func moeExpert(e int, x float32) float32 { return x * float32(1+e%4) }

// bf16 rounds f to bfloat16 (round to nearest even) and returns its bits.
func bf16(f float32) uint16 {
	b := math.Float32bits(f)
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

func fromBF16(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// writeActivation writes token t of s's activation (FP8 codes, then one
// float32 scale per 128 channels) into b.
func (l *moeLayout) writeActivation(b []byte, s, t int) {
	H := l.hidden
	for k := range H {
		b[k] = moeFP8(s, t, k)
	}
	for c := range H / 128 {
		binary.LittleEndian.PutUint32(b[H+4*c:], math.Float32bits(moeScale(s, t, c)))
	}
}

// dequant reads channel k of an activation written by writeActivation.
func (l *moeLayout) dequant(b []byte, k int) float32 {
	return float32(b[k]) * math.Float32frombits(binary.LittleEndian.Uint32(b[l.hidden+4*(k/128):]))
}

// writeEntries writes the dispatch entries s sends to d into dst (n·de
// bytes), in the order of the routing.
func (l *moeLayout) writeEntries(r *Routing, dst []byte, s, d int) {
	sh := l.sh
	per := sh.PerGPU()
	pos := 0
	for t := range sh.Tokens {
		var mask uint64
		var ws []float32
		for j := range sh.TopK {
			i := r.at(s, t, j)
			e := int(r.Expert[i])
			if sh.Owner(e) != d {
				continue
			}
			if l.ll {
				l.putEntry(dst[pos:pos+int(l.de)], s, t, uint64(e), []float32{r.Weight[i]})
				pos += int(l.de)
				continue
			}
			mask |= 1 << uint(e-d*per)
		}
		if l.ll || mask == 0 {
			continue
		}
		// Weights in expert order: the order the expert GPU sums them.
		for b := range per {
			if mask&(1<<uint(b)) != 0 {
				for j := range sh.TopK {
					if i := r.at(s, t, j); int(r.Expert[i]) == d*per+b {
						ws = append(ws, r.Weight[i])
					}
				}
			}
		}
		l.putEntry(dst[pos:pos+int(l.de)], s, t, mask, ws)
		pos += int(l.de)
	}
}

func (l *moeLayout) putEntry(b []byte, s, t int, sel uint64, ws []float32) {
	binary.LittleEndian.PutUint32(b[0:], uint32(t))
	binary.LittleEndian.PutUint32(b[4:], uint32(s))
	binary.LittleEndian.PutUint64(b[8:], sel)
	for i, w := range ws {
		binary.LittleEndian.PutUint32(b[16+4*i:], math.Float32bits(w))
	}
	l.writeActivation(b[l.hdr:], s, t)
}

// expertCompute runs GPU d's experts on every entry it received from s
// (src, n·de bytes) and writes the combine entries (n·ce bytes, the same
// order) into dst: low-latency, the weighted output of the entry's expert;
// throughput, the weighted sum over the token's experts on d, in expert
// order, rounded once to BF16. It reads only the entries' bytes (headers
// and activations): an entry that landed wrongly gives a wrong combine.
func (l *moeLayout) expertCompute(dst, src []byte, d int, n uint64) error {
	per := l.sh.PerGPU()
	y := make([]float32, l.hidden)
	for i := range n {
		e := src[i*l.de : (i+1)*l.de]
		sel := binary.LittleEndian.Uint64(e[8:])
		act := e[l.hdr:]
		clear(y)
		w := 0
		for b := range per {
			ex := d*per + b
			if l.ll {
				if int(sel) != ex {
					continue
				}
			} else if sel&(1<<uint(b)) == 0 {
				continue
			}
			wt := math.Float32frombits(binary.LittleEndian.Uint32(e[16+4*w:]))
			w++
			for k := range y {
				y[k] += wt * moeExpert(ex, l.dequant(act, k))
			}
		}
		if w == 0 {
			return fmt.Errorf("moe: an entry on GPU %d names no expert of this GPU (selector %#x)", d, sel)
		}
		out := dst[i*l.ce : (i+1)*l.ce]
		for k, v := range y {
			binary.LittleEndian.PutUint16(out[2*k:], bf16(v))
		}
	}
	return nil
}

// reduceToken sums the combine entries of token t of s into out (Hidden
// float32): low-latency, choice by choice in routing order; throughput,
// once per GPU in the order of the GPUs' first choice. recv(d, i) returns
// combine entry i from d.
func (l *moeLayout) reduceToken(r *Routing, out []float32, s, t int, recv func(d int, i int32) []byte) {
	clear(out)
	var done [32]int
	nd := 0
	for j := range l.sh.TopK {
		i := r.at(s, t, j)
		d := l.sh.Owner(int(r.Expert[i]))
		if !l.ll {
			if slices.Contains(done[:nd], d) {
				continue
			}
			done[nd] = d
			nd++
		}
		b := recv(d, l.idx[i])
		for k := range out {
			out[k] += fromBF16(binary.LittleEndian.Uint16(b[2*k:]))
		}
	}
}

// reference is the serial result of token t of s: the same arithmetic in
// the same order, straight from the routing and the activations.
func (l *moeLayout) reference(r *Routing, out []float32, s, t int) {
	sh := l.sh
	per := sh.PerGPU()
	act := make([]byte, l.act)
	l.writeActivation(act, s, t)
	y := make([]float32, l.hidden)
	b := make([]byte, l.ce)
	// part is the BF16 partial of the token's experts on d (only >= 0:
	// that expert alone), summed in expert order.
	part := func(d, only int) []byte {
		clear(y)
		for x := range per {
			ex := d*per + x
			if only >= 0 && ex != only {
				continue
			}
			for j := range sh.TopK {
				if i := r.at(s, t, j); int(r.Expert[i]) == ex {
					for k := range y {
						y[k] += r.Weight[i] * moeExpert(ex, l.dequant(act, k))
					}
				}
			}
		}
		for k, v := range y {
			binary.LittleEndian.PutUint16(b[2*k:], bf16(v))
		}
		return b
	}
	clear(out)
	var done []int
	for j := range sh.TopK {
		e := int(r.Expert[r.at(s, t, j)])
		d := sh.Owner(e)
		var p []byte
		if l.ll {
			p = part(d, e)
		} else {
			if slices.Contains(done, d) {
				continue
			}
			done = append(done, d)
			p = part(d, -1)
		}
		for k := range out {
			out[k] += fromBF16(binary.LittleEndian.Uint16(p[2*k:]))
		}
	}
}
