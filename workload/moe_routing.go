package workload

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// MoEShape is the size of one MoE layer's routing: GPUs of the expert-
// parallel group, experts spread evenly over them (expert e lives on GPU
// e / (Experts/GPUs), as DeepEP places them), the experts each token is
// routed to (top-k) and the tokens per GPU.
type MoEShape struct {
	GPUs, Experts, TopK, Tokens int
}

// Validate reports a shape the workload cannot run, naming the field and
// its allowed range.
func (s MoEShape) Validate() error {
	switch {
	case s.GPUs < 2 || s.GPUs > 4096:
		return fmt.Errorf("moe GPUs = %d: must be in [2, 4096]", s.GPUs)
	case s.Experts < s.GPUs || s.Experts%s.GPUs != 0 || s.Experts/s.GPUs > 64:
		return fmt.Errorf("moe.experts = %d on %d GPUs: must be a multiple of the GPU count with at most 64 experts per GPU", s.Experts, s.GPUs)
	case s.TopK < 1 || s.TopK > min(s.Experts, 32):
		return fmt.Errorf("moe.topk = %d: must be in [1, %d] (at most the expert count and 32)", s.TopK, min(s.Experts, 32))
	case s.Tokens < 1 || s.Tokens > 65536:
		return fmt.Errorf("moe tokens per GPU = %d: must be in [1, 65536]", s.Tokens)
	}
	return nil
}

// PerGPU returns the experts each GPU holds.
func (s MoEShape) PerGPU() int { return s.Experts / s.GPUs }

// Owner returns the GPU that holds expert e.
func (s MoEShape) Owner(e int) int { return e / s.PerGPU() }

// Routing is the gate's decision for every token of every GPU: the TopK
// experts of token t of GPU g are Expert[(g·Tokens+t)·TopK + j] for
// j < TopK, with gating weights Weight at the same indices, in the order
// the gate ranked them (the combine sums in this order).
type Routing struct {
	Shape  MoEShape
	Expert []int32
	Weight []float32
}

// at returns the index of (gpu, token, choice j).
func (r *Routing) at(g, t, j int) int { return (g*r.Shape.Tokens+t)*r.Shape.TopK + j }

// SeededRouting draws every token's TopK distinct experts uniformly at
// random from seed (the load-balanced routing MoE benchmarks use), with
// gating weights in {1/8, 2/8, …, 8/8}.
func SeededRouting(sh MoEShape, seed uint64) (Routing, error) {
	if err := sh.Validate(); err != nil {
		return Routing{}, err
	}
	n := sh.GPUs * sh.Tokens * sh.TopK
	r := Routing{Shape: sh, Expert: make([]int32, n), Weight: make([]float32, n)}
	x := seed ^ 0x6d6f65 // splitmix64 stream of the seed
	next := func() uint64 {
		x += 0x9e3779b97f4a7c15
		z := x
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		return z ^ (z >> 31)
	}
	for g := range sh.GPUs {
		for t := range sh.Tokens {
			base := r.at(g, t, 0)
			for j := range sh.TopK {
			draw:
				e := int32(next() % uint64(sh.Experts))
				for i := range j {
					if r.Expert[base+i] == e {
						goto draw
					}
				}
				r.Expert[base+j] = e
				r.Weight[base+j] = float32(1+next()%8) / 8
			}
		}
	}
	return r, nil
}

// ParseRouting reads a routing table in CSV: one line per (gpu, token,
// choice), fields gpu,token,expert,weight, an optional header line
// "gpu,token,expert,weight", blank lines and lines starting with '#'
// ignored. Every token of every GPU of sh must appear exactly TopK times
// with distinct experts; the order of a token's lines is its choices'
// order. Every error names the line and the field with its allowed range.
func ParseRouting(data []byte, sh MoEShape) (Routing, error) {
	if err := sh.Validate(); err != nil {
		return Routing{}, err
	}
	n := sh.GPUs * sh.Tokens * sh.TopK
	// Every entry takes a line of at least 8 bytes ("g,t,e,w\n"). The
	// tables below take 8 bytes an entry, up to 69 GB at the largest shape
	// (4,096 GPUs x 65,536 tokens x 32): a file too small to hold the
	// shape's entries is refused before they are allocated, not by the
	// runtime's out-of-memory crash. (Small shapes go on, so that the
	// message names the first token short of experts.)
	if n > 1<<20 && int64(n)*8 > int64(len(data))+1 {
		return Routing{}, fmt.Errorf("routing: %d bytes cannot hold the %d entries of %d GPUs x %d tokens x moe.topk = %d (a line of at least 8 bytes each)",
			len(data), n, sh.GPUs, sh.Tokens, sh.TopK)
	}
	// A spreadsheet's "CSV UTF-8" starts with a byte-order mark: not part
	// of the header.
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	r := Routing{Shape: sh, Expert: make([]int32, n), Weight: make([]float32, n)}
	count := make([]uint8, sh.GPUs*sh.Tokens)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<16)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" || s[0] == '#' {
			continue
		}
		f := strings.Split(s, ",")
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		if len(f) == 4 && strings.EqualFold(f[0], "gpu") && strings.EqualFold(f[1], "token") && strings.EqualFold(f[2], "expert") && strings.EqualFold(f[3], "weight") {
			continue
		}
		if len(f) != 4 {
			return Routing{}, fmt.Errorf("routing line %d: %d fields: want gpu,token,expert,weight", line, len(f))
		}
		field := func(i int, name string, hi int) (int, error) {
			v, err := strconv.Atoi(f[i])
			if err != nil || v < 0 || v >= hi {
				return 0, fmt.Errorf("routing line %d: %s = %q: must be an integer in [0, %d]", line, name, f[i], hi-1)
			}
			return v, nil
		}
		g, err := field(0, "gpu", sh.GPUs)
		if err != nil {
			return Routing{}, err
		}
		t, err := field(1, "token", sh.Tokens)
		if err != nil {
			return Routing{}, err
		}
		e, err := field(2, "expert", sh.Experts)
		if err != nil {
			return Routing{}, err
		}
		w, err := strconv.ParseFloat(f[3], 32)
		if err != nil || math.IsNaN(w) || w < 0 || w > 1e6 {
			return Routing{}, fmt.Errorf("routing line %d: weight = %q: must be a number in [0, 1e6]", line, f[3])
		}
		k := g*sh.Tokens + t
		if int(count[k]) == sh.TopK {
			return Routing{}, fmt.Errorf("routing line %d: gpu %d token %d has more than moe.topk = %d experts", line, g, t, sh.TopK)
		}
		base := r.at(g, t, 0)
		for i := range int(count[k]) {
			if r.Expert[base+i] == int32(e) {
				return Routing{}, fmt.Errorf("routing line %d: gpu %d token %d lists expert %d twice: a token's experts must be distinct", line, g, t, e)
			}
		}
		r.Expert[base+int(count[k])] = int32(e)
		r.Weight[base+int(count[k])] = float32(w)
		count[k]++
	}
	if err := sc.Err(); err != nil {
		return Routing{}, fmt.Errorf("routing line %d: %w (lines must be shorter than 64 KiB)", line+1, err)
	}
	for k, c := range count {
		if int(c) != sh.TopK {
			return Routing{}, fmt.Errorf("routing: gpu %d token %d has %d experts: every token of the %d GPUs x %d tokens needs exactly moe.topk = %d",
				k/sh.Tokens, k%sh.Tokens, c, sh.GPUs, sh.Tokens, sh.TopK)
		}
	}
	return r, nil
}

// CSV writes r in the format ParseRouting reads.
func (r Routing) CSV() []byte {
	var b bytes.Buffer
	b.WriteString("gpu,token,expert,weight\n")
	sh := r.Shape
	for g := range sh.GPUs {
		for t := range sh.Tokens {
			for j := range sh.TopK {
				i := r.at(g, t, j)
				fmt.Fprintf(&b, "%d,%d,%d,%s\n", g, t, r.Expert[i], strconv.FormatFloat(float64(r.Weight[i]), 'g', -1, 32))
			}
		}
	}
	return b.Bytes()
}
