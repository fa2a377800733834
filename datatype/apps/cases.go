package apps

import "fmt"

// FixtureCases returns the small app_* reference cases, keyed by the
// fixture name (app_...).
func FixtureCases() (map[string]Case, error) {
	out := map[string]Case{}
	var firstErr error
	put := func(name string) func(Case, error) {
		return func(c Case, err error) {
			if err != nil && firstErr == nil {
				firstErr = err
			}
			out[name] = c
		}
	}
	put("app_nas_lu_x_12")(NASLUx(12, 12))
	put("app_nas_lu_y_12")(NASLUy(12, 12))
	put("app_nas_mg_x_34_18_18")(NASMG('x', 34, 18, 18))
	put("app_nas_mg_y_34_18_18")(NASMG('y', 34, 18, 18))
	put("app_nas_mg_z_34_18_18")(NASMG('z', 34, 18, 18))
	put("app_milc_8_8_8_8")(MILC(8, 8, 8, 8))
	put("app_fft2d_gather_16_p4")(FFT2D(16, 4, false))
	put("app_fft2d_scatter_16_p4")(FFT2D(16, 4, true))
	put("app_specfem3d_oc_30_100")(SPECFEM3Doc(30, 100))
	put("app_specfem3d_cm_20_60_10_30")(SPECFEM3Dcm(20, 10, 60, 30))
	put("app_lammps_full_20_50")(LAMMPS(true, false, 20, 50))
	put("app_lammps_atomic_20_50")(LAMMPS(false, false, 20, 50))
	y8 := WRFDefault(4, 22, 4, 27, 8, 18, 11, 13)
	x8 := WRFDefault(4, 22, 4, 27, 13, 15, 8, 23)
	put("app_wrf_y_vec_8x8")(WRF("y_8x8", y8, false))
	put("app_wrf_y_sa_8x8")(WRF("y_8x8", y8, true))
	put("app_wrf_x_vec_8x8")(WRF("x_8x8", x8, false))
	put("app_wrf_x_sa_8x8")(WRF("x_8x8", x8, true))
	tiny := WRFGrid{IMS: 1, IME: 6, JMS: 1, JME: 5, KMS: 1, KME: 3, IS: 2, IE: 4, JS: 4, JE: 4, KS: 1, KE: 3,
		N2D: 1, N3D: 1, N4D: 1, NScalars: 3, P0: 1, NSend: 2}
	put("app_wrf_y_vec_tiny")(WRF("y_tiny", tiny, false))
	put("app_wrf_y_sa_tiny")(WRF("y_tiny", tiny, true))
	put("app_comb_face_x_10")(COMB(8, 1, [3]int{1, 0, 0}, false))
	put("app_comb_face_y_10")(COMB(8, 1, [3]int{0, 1, 0}, false))
	put("app_comb_face_z_10")(COMB(8, 1, [3]int{0, 0, 1}, false))
	put("app_comb_edge_xy_10")(COMB(8, 1, [3]int{1, 1, 0}, false))
	put("app_sw4lite_x_8_7_6")(SW4LITE('x', false, 8, 7, 6, 2))
	put("app_sw4lite_y_8_7_6")(SW4LITE('y', false, 8, 7, 6, 2))
	put("app_sw4lite_x_corder_8_7_6")(SW4LITE('x', true, 8, 7, 6, 2))
	put("app_sw4lite_y_corder_8_7_6")(SW4LITE('y', true, 8, 7, 6, 2))
	return out, firstErr
}

// wrfCases are the WRF patches of the SC'19 paper:
// (ims,ime; jms,jme; is..ie; js..je).
var wrfCases = []struct {
	name string
	b    [8]int
}{
	{"y_2x2", [8]int{-4, 27, 34, 85, 1, 23, 41, 43}},
	{"y_3x3", [8]int{8, 34, 21, 61, 12, 30, 28, 30}},
	{"y_4x4", [8]int{4, 27, 14, 47, 8, 23, 21, 23}},
	{"y_5x5", [8]int{10, 31, 10, 39, 14, 27, 17, 19}},
	{"y_8x8", [8]int{4, 22, 4, 27, 8, 18, 11, 13}},
	{"x_2x2", [8]int{-4, 27, 34, 85, 18, 20, 38, 81}},
	{"x_4x4", [8]int{4, 27, 14, 47, 18, 20, 18, 43}},
	{"x_8x8", [8]int{4, 22, 4, 27, 13, 15, 8, 23}},
}

// AllCases returns every size of every application listed in the SC'19 paper
// §8 (FFT2D with P = 4; COMB with 100 cells and 1 ghost layer; SW4LITE at
// 79×79×345).
func AllCases() ([]Case, error) {
	var out []Case
	var firstErr error
	add := func(c Case, err error) {
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			return
		}
		out = append(out, c)
	}
	for _, d := range []int{12, 33, 64, 102, 162, 408, 1020} {
		add(NASLUx(d, d))
		add(NASLUy(d, d))
	}
	for _, s := range [][3]int{{34, 18, 18}, {130, 66, 66}, {258, 130, 130}, {514, 258, 258}} {
		for _, ax := range []byte("xyz") {
			add(NASMG(ax, s[0], s[1], s[2]))
		}
	}
	for _, s := range [][4]int{{16, 16, 16, 16}, {8, 16, 16, 16}, {8, 8, 8, 16}, {8, 8, 8, 8}} {
		add(MILC(s[0], s[1], s[2], s[3]))
	}
	for _, n := range []int{256, 512, 768, 1024, 1536} {
		add(FFT2D(n, 4, false))
		add(FFT2D(n, 4, true))
	}
	for _, s := range [][2]int{{3225, 88881}, {1897, 38585}, {877, 12857}, {493, 3697}} {
		add(SPECFEM3Doc(s[0], s[1]))
	}
	for _, s := range [][4]int{{11797, 3009, 834917, 51153}, {7125, 1729, 396849, 22477}, {3801, 801, 152001, 7209}, {1957, 245, 39929, 1225}} {
		add(SPECFEM3Dcm(s[0], s[1], s[2], s[3]))
	}
	for _, s := range [][2]int{{3062, 3534}, {2243, 2597}, {1662, 1907}} {
		add(LAMMPS(true, false, s[0], s[1]))
	}
	for _, s := range [][2]int{{243, 4084}, {145, 2157}, {114, 1217}} {
		add(LAMMPS(false, false, s[0], s[1]))
	}
	for _, w := range wrfCases {
		g := WRFDefault(w.b[0], w.b[1], w.b[2], w.b[3], w.b[4], w.b[5], w.b[6], w.b[7])
		add(WRF(w.name, g, false))
		add(WRF(w.name, g, true))
	}
	for _, dir := range [][3]int{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 0}, {1, 0, 1}, {0, 1, 1}, {1, 1, 1}} {
		add(COMB(100, 1, dir, false))
	}
	for _, ax := range []byte("xy") {
		add(SW4LITE(ax, false, 79, 79, 345, 2))
		add(SW4LITE(ax, true, 79, 79, 345, 2))
	}
	return out, firstErr
}

// BenchCases returns the application types the issue sets a throughput bar
// for, at their benchmark sizes.
func BenchCases() ([]Case, error) {
	var out []Case
	for _, f := range []func() (Case, error){
		func() (Case, error) { return NASMG('x', 514, 258, 258) },
		func() (Case, error) { return FFT2D(1536, 4, true) },
		func() (Case, error) { return LAMMPS(true, false, 3062, 3534) },
		func() (Case, error) { return SPECFEM3Doc(3225, 88881) },
		func() (Case, error) { return SW4LITE('x', false, 79, 79, 345, 2) },
		func() (Case, error) {
			w := wrfCases[5] // x_2x2, the largest WRF_x
			return WRF(w.name, WRFDefault(w.b[0], w.b[1], w.b[2], w.b[3], w.b[4], w.b[5], w.b[6], w.b[7]), false)
		},
	} {
		c, err := f()
		if err != nil {
			return nil, fmt.Errorf("apps: bench cases: %w", err)
		}
		out = append(out, c)
	}
	return out, nil
}
