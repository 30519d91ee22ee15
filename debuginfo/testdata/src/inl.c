// inl.c: a freestanding program with nested inlining, for debuginfo's
// DWARF 2, 4 and 5 fixtures. See build.sh.

static inline __attribute__((always_inline)) int leaf(volatile int *p, int x) {
	*p = x * 3; // the innermost inlined line
	return *p + 1;
}

static inline __attribute__((always_inline)) int middle(volatile int *p, int x) {
	int r = leaf(p, x);
	r += leaf(p, r);
	return r;
}

__attribute__((noinline)) int outer(volatile int *p, int x) {
	int r = middle(p, x);
	return r + middle(p, r);
}

void _start(void) {
	volatile int v = 0;
	outer(&v, 5);
	for (;;) {
	}
}
