package apps

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/datatype"
)

// Case is one application datatype instance.
type Case struct {
	Name   string         // e.g. "NAS_MG_x_514x258x258"
	Type   *datatype.Type // the datatype
	Count  int            // elements per pack/unpack (1 except FFT2D: P)
	BufLen int            // bytes of the user buffer, origin at offset 0
}

// PackedSize is the number of bytes one pack of the case produces.
func (c Case) PackedSize() int { return c.Count * c.Type.Size() }

const (
	f4 = 4
	f8 = 8
)

// builder chains constructor calls, keeping the first error.
type builder struct{ err error }

func (b *builder) t(t *datatype.Type, err error) *datatype.Type {
	if err != nil && b.err == nil {
		b.err = err
	}
	return t
}

func (b *builder) done(name string, t *datatype.Type, count, buflen int) (Case, error) {
	if b.err != nil {
		return Case{}, fmt.Errorf("apps: %s: %w", name, b.err)
	}
	return Case{Name: name, Type: t, Count: count, BufLen: buflen}, nil
}

func positive(name string, v ...int) error {
	for _, x := range v {
		if x <= 0 {
			return fmt.Errorf("apps: %s: sizes must be positive, got %v", name, v)
		}
	}
	return nil
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// IndexList returns the deterministic permutation prefix used instead of
// ddtbench's random lists: idx[j] = (a·j + 13) mod d for j < n, with a the
// smallest integer ≥ 7919 coprime with d.
func IndexList(n, d int) []int {
	a := 7919
	for gcd(a, d) != 1 {
		a++
	}
	out := make([]int, n)
	for j := range out {
		out[j] = (a*j + 13) % d
	}
	return out
}

func scaled(v []int, k int) []int {
	out := make([]int, len(v))
	for i, x := range v {
		out[i] = x * k
	}
	return out
}

// NASLUx is NAS LU's x face: contiguous(5·D2, f8) over f8 u[D3+2][D2+2][5].
func NASLUx(d2, d3 int) (Case, error) {
	if err := positive("NAS_LU_x", d2, d3); err != nil {
		return Case{}, err
	}
	var b builder
	t := b.t(datatype.Contiguous(5*d2, datatype.Float64()))
	return b.done(fmt.Sprintf("NAS_LU_x_%d", d2), t, 1, (d3+2)*(d2+2)*5*f8)
}

// NASLUy is NAS LU's y face: vector(D3, 1, D2+2, contiguous(5, f8)).
func NASLUy(d2, d3 int) (Case, error) {
	if err := positive("NAS_LU_y", d2, d3); err != nil {
		return Case{}, err
	}
	var b builder
	c5 := b.t(datatype.Contiguous(5, datatype.Float64()))
	t := b.t(datatype.Vector(d3, 1, d2+2, c5))
	return b.done(fmt.Sprintf("NAS_LU_y_%d", d2), t, 1, (d3+2)*(d2+2)*5*f8)
}

// NASMG returns NAS MG's face type along axis 'x', 'y' or 'z' of f8 u[D3][D2][D1].
func NASMG(axis byte, d1, d2, d3 int) (Case, error) {
	if err := positive("NAS_MG", d1-2, d2-2, d3-2); err != nil {
		return Case{}, err
	}
	var b builder
	var t *datatype.Type
	f := datatype.Float64()
	switch axis {
	case 'x':
		t = b.t(datatype.HVector(d3-2, 1, f8*d1*d2, b.t(datatype.Vector(d2-2, 1, d1, f))))
	case 'y':
		t = b.t(datatype.Vector(d3-2, d1-2, d1*d2, f))
	case 'z':
		t = b.t(datatype.Vector(d2-2, d1-2, d1, f))
	default:
		return Case{}, fmt.Errorf("apps: NAS_MG axis %q not x, y or z", axis)
	}
	return b.done(fmt.Sprintf("NAS_MG_%c_%dx%dx%d", axis, d1, d2, d3), t, 1, d1*d2*d3*f8)
}

// MILC is MILC's su3_zdown halo over f4 lattice[D5][D4][D3][D2][6].
func MILC(d2, d3, d4, d5 int) (Case, error) {
	if err := positive("MILC", d2, d3, d4, d5); err != nil {
		return Case{}, err
	}
	var b builder
	su3 := b.t(datatype.Contiguous(6, datatype.Float32()))
	v := b.t(datatype.Vector(d5, d2*d3/2, d2*d3*d4/2, su3))
	t := b.t(datatype.HVector(2, 1, 24*d2*d3*d4*d5/2, v))
	return b.done(fmt.Sprintf("MILC_%dx%dx%dx%d", d2, d3, d4, d5), t, 1, d2*d3*d4*d5*6*f4)
}

// FFT2D returns the send (recv=false) or receive (transpose) type of the
// row-column 2-D FFT of an N×N complex matrix over P ranks (N/P rows
// each); both are used with count P.
func FFT2D(n, p int, recv bool) (Case, error) {
	if err := positive("FFT2D", n, p); err != nil {
		return Case{}, err
	}
	if n%p != 0 {
		return Case{}, fmt.Errorf("apps: FFT2D: N=%d not a multiple of P=%d", n, p)
	}
	var b builder
	c := b.t(datatype.Contiguous(2, datatype.Float64()))
	r := n / p
	var t *datatype.Type
	name := "FFT2D_send"
	if recv {
		name = "FFT2D_recv"
		col := b.t(datatype.Resized(b.t(datatype.Vector(r, 1, n, c)), 0, 16))
		t = b.t(datatype.Contiguous(r, col))
	} else {
		t = b.t(datatype.Resized(b.t(datatype.Vector(r, r, n, c)), 0, 16*r))
	}
	return b.done(fmt.Sprintf("%s_%d_p%d", name, n, p), t, p, r*n*16)
}

// SPECFEM3Doc is SPECFEM3D's outer-core exchange:
// indexed_block(icount, 1, list, f4) over f4[D].
func SPECFEM3Doc(icount, d int) (Case, error) {
	if err := positive("SPECFEM3D_oc", icount, d); err != nil {
		return Case{}, err
	}
	var b builder
	t := b.t(datatype.IndexedBlock(1, IndexList(icount, d), datatype.Float32()))
	return b.done(fmt.Sprintf("SPECFEM3D_oc_%d_%d", icount, d), t, 1, d*f4)
}

// SPECFEM3Dcm is SPECFEM3D's crust-mantle exchange over f4 cm[Dcm][3] and
// f4 ic[Dic][3] laid back to back.
func SPECFEM3Dcm(icm, iic, dcm, dic int) (Case, error) {
	if err := positive("SPECFEM3D_cm", icm, iic, dcm, dic); err != nil {
		return Case{}, err
	}
	var b builder
	f := datatype.Float32()
	cm := b.t(datatype.IndexedBlock(3, scaled(IndexList(icm, dcm), 3), f))
	ic := b.t(datatype.IndexedBlock(3, scaled(IndexList(iic, dic), 3), f))
	t := b.t(datatype.Struct([]int{1, 1}, []int{0, dcm * 3 * f4}, []*datatype.Type{cm, ic}))
	return b.done(fmt.Sprintf("SPECFEM3D_cm_%d_%d_%d_%d", icm, iic, dcm, dic), t, 1, (dcm+dic)*3*f4)
}

// LAMMPS returns the LAMMPS exchange type: full (x, tag, type, mask, q,
// molecule) or atomic (x, tag, type, mask), send (indexed by the list) or
// receive (contiguous from element D). Per-atom f8 arrays have L = D+icount
// entries; x is [L][3].
func LAMMPS(full, recv bool, icount, d int) (Case, error) {
	if err := positive("LAMMPS", icount, d); err != nil {
		return Case{}, err
	}
	narr := 4
	name := "LAMMPS_atomic"
	if full {
		narr, name = 6, "LAMMPS_full"
	}
	if recv {
		name += "_recv"
	}
	l := d + icount
	f := datatype.Float64()
	var b builder
	list := IndexList(icount, d)
	bls := make([]int, narr)
	displs := make([]int, narr)
	types := make([]*datatype.Type, narr)
	off := 0
	for k := range narr {
		per := 1
		if k == 0 {
			per = 3
		}
		bls[k] = 1
		if recv {
			displs[k] = off + d*per*f8
			types[k] = b.t(datatype.Contiguous(per*icount, f))
		} else {
			displs[k] = off
			types[k] = b.t(datatype.IndexedBlock(per, scaled(list, per), f))
		}
		off += l * per * f8
	}
	t := b.t(datatype.Struct(bls, displs, types))
	return b.done(fmt.Sprintf("%s_%d_%d", name, icount, d), t, 1, off)
}

// WRFGrid describes a WRF halo exchange: memory bounds (ims..ime etc.),
// patch bounds (is..ie etc.), the number of 2-D, 3-D and 4-D arrays, the
// first dimension of the 4-D arrays (scalars) and which scalars are sent.
type WRFGrid struct {
	IMS, IME, JMS, JME, KMS, KME int
	IS, IE, JS, JE, KS, KE       int
	N2D, N3D, N4D                int // arrays of each rank
	NScalars                     int // first dimension of the 4-D arrays
	P0, NSend                    int // first scalar sent, number of scalars sent
}

// WRFDefault returns the em_b_wave grid of the SC'19 paper for the given
// memory and patch bounds in i and j (k runs 1..65; 4 2-D, 3 3-D and 2 4-D
// arrays with 2 scalars of which the second is sent).
func WRFDefault(ims, ime, jms, jme, is, ie, js, je int) WRFGrid {
	return WRFGrid{IMS: ims, IME: ime, JMS: jms, JME: jme, KMS: 1, KME: 65,
		IS: is, IE: ie, JS: js, JE: je, KS: 1, KE: 65,
		N2D: 4, N3D: 3, N4D: 2, NScalars: 2, P0: 1, NSend: 1}
}

// WRF builds the halo type of grid g: with sa false, a struct of vector
// types at the patch starts ("vec"); with sa true, a struct of C-order
// subarrays at the array bases ("sa"). Both have the same type map.
func WRF(name string, g WRFGrid, sa bool) (Case, error) {
	d1, d2, d3 := g.IME-g.IMS+1, g.KME-g.KMS+1, g.JME-g.JMS+1
	s1, s2, s3 := g.IE-g.IS+1, g.KE-g.KS+1, g.JE-g.JS+1
	oi, ok, oj := g.IS-g.IMS, g.KS-g.KMS, g.JS-g.JMS
	if err := positive("WRF "+name, d1, d2, d3, s1, s2, s3, g.NScalars, g.NSend); err != nil {
		return Case{}, err
	}
	if oi < 0 || ok < 0 || oj < 0 || oi+s1 > d1 || ok+s2 > d2 || oj+s3 > d3 || g.P0 < 0 || g.P0+g.NSend > g.NScalars {
		return Case{}, fmt.Errorf("apps: WRF %s: patch outside the memory bounds", name)
	}
	f := datatype.Float32()
	var b builder
	a2, a3 := d3*d1*f4, d3*d2*d1*f4
	a4 := g.NScalars * a3
	var t2, t3, t4 *datatype.Type
	if sa {
		t2 = b.t(datatype.Subarray([]int{d3, d1}, []int{s3, s1}, []int{oj, oi}, datatype.OrderC, f))
		t3 = b.t(datatype.Subarray([]int{d3, d2, d1}, []int{s3, s2, s1}, []int{oj, ok, oi}, datatype.OrderC, f))
		t4 = b.t(datatype.Subarray([]int{g.NScalars, d3, d2, d1}, []int{g.NSend, s3, s2, s1},
			[]int{g.P0, oj, ok, oi}, datatype.OrderC, f))
	} else {
		t2 = b.t(datatype.Vector(s3, s1, d1, f))
		t3 = b.t(datatype.HVector(s3, 1, f4*d1*d2, b.t(datatype.Vector(s2, s1, d1, f))))
		t4 = b.t(datatype.HVector(g.NSend, 1, a3, t3))
	}
	var bls, displs []int
	var types []*datatype.Type
	off := 0
	add := func(n, size, start int, t *datatype.Type) {
		for range n {
			bls = append(bls, 1)
			if sa {
				displs = append(displs, off)
			} else {
				displs = append(displs, off+start*f4)
			}
			types = append(types, t)
			off += size
		}
	}
	add(g.N2D, a2, oj*d1+oi, t2)
	add(g.N3D, a3, (oj*d2+ok)*d1+oi, t3)
	add(g.N4D, a4, ((g.P0*d3+oj)*d2+ok)*d1+oi, t4)
	variant := "vec"
	if sa {
		variant = "sa"
	}
	t := b.t(datatype.Struct(bls, displs, types))
	return b.done(fmt.Sprintf("WRF_%s_%s", name, variant), t, 1, off)
}

// COMBBox is a COMB message: the box [starts, starts+subsizes) of an f8
// array of sizes (Fortran order, i fastest).
func COMBBox(name string, sizes, subsizes, starts [3]int) (Case, error) {
	var b builder
	t := b.t(datatype.Subarray(sizes[:], subsizes[:], starts[:], datatype.OrderFortran, datatype.Float64()))
	return b.done("COMB_"+name, t, 1, sizes[0]*sizes[1]*sizes[2]*f8)
}

// COMB returns the message of a 3-D COMB exchange with n owned cells per
// side and g ghost layers toward the neighbour in direction dir (each
// component −1, 0 or +1; one non-zero component is a face, two an edge,
// three a corner). Send boxes are the owned boundary layer; receive boxes
// (recv true) the ghost layer.
func COMB(n, g int, dir [3]int, recv bool) (Case, error) {
	if err := positive("COMB", n, g); err != nil {
		return Case{}, err
	}
	var sizes, sub, start [3]int
	name := ""
	for k, d := range dir {
		sizes[k] = n + 2*g
		switch d {
		case 0:
			sub[k], start[k] = n, g
		case 1:
			sub[k], start[k] = g, n // send: last g owned layers
			if recv {
				start[k] = n + g
			}
			name += fmt.Sprintf("%c+", 'x'+k)
		case -1:
			sub[k], start[k] = g, g
			if recv {
				start[k] = 0
			}
			name += fmt.Sprintf("%c-", 'x'+k)
		default:
			return Case{}, fmt.Errorf("apps: COMB direction %v: components must be -1, 0 or 1", dir)
		}
	}
	if name == "" {
		return Case{}, fmt.Errorf("apps: COMB direction %v is zero", dir)
	}
	if recv {
		name += "_recv"
	}
	return COMBBox(fmt.Sprintf("%s_%d", name, n), sizes, sub, start)
}

// SW4LITE returns the x or y halo type of a 3-component f8 field of
// ni×nj×nk points with pad ghost points, in the default order or, with
// corder, SW4LITE's corder=1 layout.
func SW4LITE(axis byte, corder bool, ni, nj, nk, pad int) (Case, error) {
	if err := positive("SW4LITE", ni, nj, nk, pad); err != nil {
		return Case{}, err
	}
	f := datatype.Float64()
	var b builder
	var t *datatype.Type
	switch {
	case axis == 'x' && !corder:
		t = b.t(datatype.Vector(nj*nk, 3*pad, 3*ni, f))
	case axis == 'y' && !corder:
		t = b.t(datatype.Vector(nk, 3*pad*ni, 3*ni*nj, f))
	case axis == 'x':
		t = b.t(datatype.Vector(3*nj*nk, pad, ni, f))
	case axis == 'y':
		t = b.t(datatype.Vector(3*nk, pad*ni, ni*nj, f))
	default:
		return Case{}, fmt.Errorf("apps: SW4LITE axis %q not x or y", axis)
	}
	name := fmt.Sprintf("SW4LITE_%c_%d_%d_%d", axis, ni, nj, nk)
	if corder {
		name = fmt.Sprintf("SW4LITE_%c_corder_%d_%d_%d", axis, ni, nj, nk)
	}
	return b.done(name, t, 1, 3*ni*nj*nk*f8)
}
