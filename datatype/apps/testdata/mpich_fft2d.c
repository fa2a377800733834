/*
 * mpich_fft2d.c times MPI_Pack and MPI_Unpack of the FFT2D receive type
 * (FFT2D_recv_1536_p4 of `gpunetsim ddt bench`: N = 1536, P = 4, count P)
 * and a memcpy of the same packed size, with the statistics `ddt bench`
 * prints: every call timed, GB/s of the median and the 10th-percentile
 * (fast) call, after one warm-up call, from a written (non-zero) buffer.
 * docs/ddt.md compares the two. Build and run with MPICH (Debian:
 * libmpich-dev):
 *
 *     mpicc -O2 -o /tmp/mpich_fft2d datatype/apps/testdata/mpich_fft2d.c
 *     /tmp/mpich_fft2d [seconds per direction, default 0.3]
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

int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	const int n = 1536, p = 4, r = n / p;
	double secs = argc > 1 ? atof(argv[1]) : 0.3;
	if (!(secs > 0 && secs <= 60)) {
		fprintf(stderr, "seconds per direction: want (0, 60], got %s\n", argv[1]);
		return 2;
	}
	/* contig(r)<resized(0,16)<vector(r,1,n)<contig(2)<double>>>> */
	MPI_Datatype c, v, col, t;
	MPI_Type_contiguous(2, MPI_DOUBLE, &c);
	MPI_Type_vector(r, 1, n, c, &v);
	MPI_Type_create_resized(v, 0, 16, &col);
	MPI_Type_contiguous(r, col, &t);
	MPI_Type_commit(&t);
	size_t buflen = (size_t)r * n * 16;
	int size;
	MPI_Pack_size(p, t, MPI_COMM_WORLD, &size);
	char *user = malloc(buflen), *packed = malloc(size), *src = malloc(size);
	if (!user || !packed || !src) {
		fprintf(stderr, "out of memory\n");
		return 1;
	}
	for (size_t i = 0; i < buflen; i++)
		user[i] = (char)(i * 131 + 7);
	for (int i = 0; i < size; i++)
		src[i] = (char)(i * 131 + 7);
	const char *names[] = {"pack", "unpack", "memcpy"};
	for (int dir = 0; dir < 3; dir++) {
		int k = 0;
		double start = now();
		for (int w = 0;; w++) {
			double t0 = now();
			int pos = 0;
			if (dir == 0)
				MPI_Pack(user, p, t, packed, size, &pos, MPI_COMM_WORLD);
			else if (dir == 1)
				MPI_Unpack(packed, size, &pos, user, p, t, MPI_COMM_WORLD);
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
		printf("FFT2D_recv_1536_p4 %s %d bytes: median %.2f GB/s, p10 %.2f GB/s (%d calls)\n", names[dir], size,
		       size / calls[k / 2] / 1e9, size / calls[k / 10] / 1e9, k);
	}
	MPI_Type_free(&t);
	MPI_Type_free(&col);
	MPI_Type_free(&v);
	MPI_Type_free(&c);
	free(user);
	free(packed);
	free(src);
	MPI_Finalize();
	return 0;
}
