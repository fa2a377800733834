// gen prints golden permutations of libstdc++'s std::sort for gccsort_test.go.
//
// Regenerate (from this directory):
//
//	g++ -O2 -o /tmp/gen gen.cpp && /tmp/gen > golden.txt
//
// Each output line is "label|keys|perm": the input keys, and the order in
// which std::sort, comparing keys only, leaves the elements, given as their
// original indices. Lines labelled "partial_sort-..." instead record
// std::partial_sort(first, last, last), which is exactly the heap sort that
// std::sort falls back to, so that its handling of equal keys is checked
// directly. All lines are deterministic (own PRNG, no <random>
// distributions), so the output depends only on libstdc++'s std::sort.
// The committed golden.txt was produced with g++ 12.2.0 (Debian 12.2.0-14).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

struct Elem {
	int key;
	int idx;
};

static bool byKey(const Elem &a, const Elem &b) { return a.key < b.key; }

static uint64_t rngState = 0x9e3779b97f4a7c15ULL;

// splitmix64
static uint64_t next64() {
	uint64_t z = (rngState += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static int below(int n) { return (int)(next64() % (uint64_t)n); }

static void emit(const std::string &label, const std::vector<int> &keys) {
	std::vector<Elem> v;
	for (size_t i = 0; i < keys.size(); i++) v.push_back(Elem{keys[i], (int)i});
	if (label.rfind("partial_sort-", 0) == 0)
		std::partial_sort(v.begin(), v.end(), v.end(), byKey);
	else
		std::sort(v.begin(), v.end(), byKey);
	printf("%s|", label.c_str());
	for (size_t i = 0; i < keys.size(); i++) printf(i ? " %d" : "%d", keys[i]);
	printf("|");
	for (size_t i = 0; i < v.size(); i++) printf(i ? " %d" : "%d", v[i].idx);
	printf("\n");
}

// Keys uniformly drawn from 1..d.
static std::vector<int> randomKeys(int n, int d) {
	std::vector<int> k(n);
	for (int i = 0; i < n; i++) k[i] = 1 + below(d);
	return k;
}

// A random permutation of 0..n-1 (distinct keys).
static std::vector<int> randomPerm(int n) {
	std::vector<int> k(n);
	for (int i = 0; i < n; i++) k[i] = i;
	for (int i = n - 1; i > 0; i--) std::swap(k[i], k[below(i + 1)]);
	return k;
}

// keys divided by q: coarser keys with runs of equal ones.
static std::vector<int> divided(std::vector<int> k, int q) {
	for (int &x : k) x /= q;
	return k;
}

// McIlroy's adversary ("A killer adversary for quicksort", 1999): std::sort
// runs on items whose values are fixed lazily, each comparison of two
// unfixed ("gas") items freezing one of them so that the pivot candidate
// stays small. The values seen are then a fixed input on which std::sort
// makes the same comparisons: quicksort degenerates and introsort falls
// back to heap sort.
struct Adversary {
	std::vector<int> val;
	int gas, nsolid, candidate;
};

struct AdversaryLess {
	Adversary *a;
	bool operator()(int x, int y) const {
		std::vector<int> &val = a->val;
		if (val[x] == a->gas && val[y] == a->gas) {
			if (x == a->candidate)
				val[x] = a->nsolid++;
			else
				val[y] = a->nsolid++;
		}
		if (val[x] == a->gas)
			a->candidate = x;
		else if (val[y] == a->gas)
			a->candidate = y;
		return val[x] < val[y];
	}
};

static std::vector<int> adversarial(int n) {
	Adversary a;
	a.val.assign(n, n - 1);
	a.gas = n - 1;
	a.nsolid = 0;
	a.candidate = 0;
	std::vector<int> items(n);
	for (int i = 0; i < n; i++) items[i] = i;
	std::sort(items.begin(), items.end(), AdversaryLess{&a});
	return a.val;
}

int main() {
	for (int n = 0; n <= 40; n++) {
		for (int rep = 0; rep < 5; rep++) {
			const int ds[] = {1, 2, 3, 5};
			for (int d : ds) emit("n" + std::to_string(n) + "-d" + std::to_string(d), randomKeys(n, d));
			emit("n" + std::to_string(n) + "-d2n", randomKeys(n, 2 * n + 1));
			emit("n" + std::to_string(n) + "-perm", randomPerm(n));
		}
		if (n > 16) {
			std::vector<int> adv = adversarial(n);
			emit("n" + std::to_string(n) + "-adversary", adv);
			emit("n" + std::to_string(n) + "-adversary-div2", divided(adv, 2));
		}
		for (int rep = 0; rep < 2; rep++) {
			const int ds[] = {1, 2, 3, 5};
			for (int d : ds) emit("partial_sort-n" + std::to_string(n) + "-d" + std::to_string(d), randomKeys(n, d));
			emit("partial_sort-n" + std::to_string(n) + "-perm", randomPerm(n));
		}
	}
	const int larges[] = {50, 64, 100, 257, 1000};
	for (int n : larges) {
		std::string p = "n" + std::to_string(n) + "-";
		const int ds[] = {1, 2, 3, 5};
		for (int d : ds) emit(p + "d" + std::to_string(d), randomKeys(n, d));
		emit(p + "perm", randomPerm(n));
		std::vector<int> k = randomKeys(n, 3);
		std::sort(k.begin(), k.end());
		emit(p + "d3-sorted", k);
		std::reverse(k.begin(), k.end());
		emit(p + "d3-reversed", k);
		k = randomPerm(n);
		std::sort(k.begin(), k.end());
		emit(p + "sorted", k);
		std::reverse(k.begin(), k.end());
		emit(p + "reversed", k);
		std::vector<int> adv = adversarial(n);
		emit(p + "adversary", adv);
		// Adversarial inputs whose keys are divided by 2 (and sometimes by
		// larger q) still hit the heap-sort fallback, now with equal keys.
		const int qs[] = {2, 3, 4, 8};
		for (int q : qs) emit(p + "adversary-div" + std::to_string(q), divided(adv, q));
		emit("partial_sort-" + p + "d3", randomKeys(n, 3));
	}
	emit("n5000-d3", randomKeys(5000, 3));
	std::vector<int> adv = adversarial(5000);
	emit("n5000-adversary", adv);
	emit("n5000-adversary-div3", divided(adv, 3));
	return 0;
}
