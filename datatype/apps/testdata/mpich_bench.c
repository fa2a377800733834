/*
 * mpich_bench.c times MPI_Pack, MPI_Unpack and a memcpy of the same
 * packed size for the rows of `gpunetsim ddt bench` that are simple to
 * build in C — the byte-vector sweep vector(n, B, 2B)<byte> with 4 MiB
 * packed, and FFT2D_recv_1536_p4 (the FFT2D receive type, N = 1536,
 * P = 4, count P) — with the statistics `ddt bench` prints: every call
 * timed, GB/s of the median and the 10th-percentile (fast) call, after one
 * warm-up call, from written (non-zero) buffers. docs/ddt.md compares the
 * two. Build and run with MPICH (Debian: libmpich-dev):
 *
 *     mpicc -O2 -o /tmp/mpich_bench datatype/apps/testdata/mpich_bench.c
 *     /tmp/mpich_bench [seconds per row and direction, default 0.3]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

enum { maxCalls = 100000 };
static double calls[maxCalls];

static void fill(char *b, size_t n) {
	for (size_t i = 0; i < n; i++)
		b[i] = (char)(i * 131 + 7);
}

/* bench times count elements of t over a user buffer of buflen bytes and
 * prints one row: pack, unpack and memcpy GB/s (median, p10). */
static int bench(const char *name, MPI_Datatype t, int count, size_t buflen, double secs) {
	int size;
	MPI_Pack_size(count, t, MPI_COMM_WORLD, &size);
	char *user = malloc(buflen), *packed = malloc(size), *src = malloc(size);
	if (!user || !packed || !src) {
		fprintf(stderr, "%s: out of memory\n", name);
		return 1;
	}
	fill(user, buflen);
	fill(src, size);
	double med[3], p10[3];
	for (int dir = 0; dir < 3; dir++) {
		int k = 0;
		double start = now();
		for (int w = 0;; w++) {
			double t0 = now();
			int pos = 0;
			if (dir == 0)
				MPI_Pack(user, count, t, packed, size, &pos, MPI_COMM_WORLD);
			else if (dir == 1)
				MPI_Unpack(packed, size, &pos, user, count, t, MPI_COMM_WORLD);
			else
				memcpy(packed, src, size);
			__asm__ volatile("" : : "r"(packed), "r"(user) : "memory");
			double d = now() - t0;
			if (w > 0 && k < maxCalls)
				calls[k++] = d;
			if (now() - start >= secs && k >= 5)
				break;
		}
		qsort(calls, k, sizeof calls[0], cmp);
		med[dir] = size / calls[k / 2] / 1e9;
		p10[dir] = size / calls[k / 10] / 1e9;
	}
	printf("%38s %9d %9.2f %9.2f %11.2f %10.2f %11.2f %11.2f %13.2f\n", name, size, med[0], p10[0], med[1], p10[1],
	       med[2], med[0] / med[2], med[1] / med[2]);
	free(user);
	free(packed);
	free(src);
	return 0;
}

int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	double secs = argc > 1 ? atof(argv[1]) : 0.3;
	if (!(secs > 0 && secs <= 60)) {
		fprintf(stderr, "seconds per row and direction: want (0, 60], got %s\n", argv[1]);
		return 2;
	}
	printf("%38s %9s %9s %9s %11s %10s %11s %11s %13s\n", "datatype (MPICH)", "packed", "pack GB/s", "pack p10",
	       "unpack GB/s", "unpack p10", "memcpy GB/s", "pack/memcpy", "unpack/memcpy");
	const int packed = 4 << 20;
	const int blocks[] = {4, 8, 16, 64, 256, 2048};
	for (int i = 0; i < 6; i++) {
		int bl = blocks[i];
		MPI_Datatype v;
		MPI_Type_vector(packed / bl, bl, 2 * bl, MPI_BYTE, &v);
		MPI_Type_commit(&v);
		char name[64];
		snprintf(name, sizeof name, "vector<byte> block=%dB stride=%dB", bl, 2 * bl);
		/* true extent: (n−1)·2B + B */
		if (bench(name, v, 1, (size_t)(packed / bl - 1) * 2 * bl + bl, secs))
			return 1;
		MPI_Type_free(&v);
	}
	/* FFT2D_recv: contig(r)<resized(0,16)<vector(r,1,n)<contig(2)<double>>>>, count p */
	const int n = 1536, p = 4, r = n / p;
	MPI_Datatype c, v, col, t;
	MPI_Type_contiguous(2, MPI_DOUBLE, &c);
	MPI_Type_vector(r, 1, n, c, &v);
	MPI_Type_create_resized(v, 0, 16, &col);
	MPI_Type_contiguous(r, col, &t);
	MPI_Type_commit(&t);
	if (bench("FFT2D_recv_1536_p4", t, p, (size_t)r * n * 16, secs))
		return 1;
	MPI_Type_free(&t);
	MPI_Type_free(&col);
	MPI_Type_free(&v);
	MPI_Type_free(&c);
	MPI_Finalize();
	return 0;
}
