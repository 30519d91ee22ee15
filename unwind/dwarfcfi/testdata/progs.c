/* Functions whose unwinding needs DWARF call frame information: variable
   frames without a frame pointer, many callee-saved registers, large frames,
   early returns (epilogues in the middle of a function). */
extern void use(void *p, long n);
extern long ext(long v);
extern double extd(double v);

long vla(int n) {
	char buf[n];
	use(buf, n);
	return buf[0];
}

long with_alloca(int n) {
	char *p = __builtin_alloca(n);
	use(p, n);
	return p[1];
}

long many_saved(long a, long b, long c, long d, long e, long f) {
	long x1 = ext(a), x2 = ext(b), x3 = ext(c), x4 = ext(d);
	long x5 = ext(e), x6 = ext(f), x7 = ext(x1), x8 = ext(x2);
	long x9 = ext(x3 + x4), x10 = ext(x5 ^ x6);
	return x1 + x2 * x3 + x4 * x5 + x6 * x7 + x8 * x9 + x10 + ext(x1 + x10);
}

long large_frame(int i) {
	volatile char big[3000];
	big[i & 1023] = 1;
	use((void *)big, i);
	return big[(i + 1) & 1023];
}

long early_return(long a) {
	if (a < 0)
		return -1;
	long r = ext(a);
	if (r)
		return ext(r + 1) * 2;
	return r;
}

double fp_saved(double a, double b) {
	double x = extd(a), y = extd(b), z = extd(x + y);
	double w = extd(x * y);
	return x + y + z + w + extd(x - w);
}

static long leaf_helper(long a) { return a * 3 + 1; }

long calls_leaf(long a) { return leaf_helper(a) + ext(a); }
