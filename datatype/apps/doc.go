// Package apps builds the application datatypes of the SC'19 paper (the
// ddtbench micro-applications: NAS LU and MG, MILC, FFT2D, SPECFEM3D,
// LAMMPS, WRF, COMB, SW4LITE) as datatype.Types parameterized by their sizes.
//
// Every constructor returns a Case: the type, the count it is used with, and
// the length of the user buffer it addresses from origin 0. Arrays that
// ddtbench addresses absolutely are laid back to back in one buffer (an
// "arena") in the order the spec lists them; struct displacements are their
// byte offsets in it. Index lists use the deterministic
// idx[j] = (a·j + 13) mod D, with a the smallest integer ≥ 7919 coprime with D.
//
// Fixtures: the small app_* reference cases (MPICH's results, which the
// tests compare against where the project's fixture set is present) are
// reproduced by FixtureCases; BenchCases lists the benchmark sizes.
package apps
