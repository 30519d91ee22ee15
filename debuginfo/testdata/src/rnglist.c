// rnglist.c: functions whose DWARF 5 address ranges are range lists
// (DW_AT_ranges in DW_FORM_rnglistx) at -O2, for debuginfo's DWARF 5
// fixtures: inlined subroutines whose code the optimizer splits around a
// cold path, a lexical block split the same way, a function placed in a
// second text section (so the unit's own ranges are a list). See build.sh.

static inline __attribute__((always_inline)) int check(volatile int *p, int x) {
	int a = *p;
	if (__builtin_expect(a == x, 0)) {
		*p = a * 7; // the cold path, moved to the function's end
		*p = *p + x;
		return *p - 1;
	}
	*p = a + x;
	return *p;
}

static inline __attribute__((always_inline)) int twice(volatile int *p, int x) {
	int r = check(p, x);
	r += check(p, r);
	return r;
}

__attribute__((noinline)) int hot(volatile int *p, int n) {
	int s = 0;
	for (int i = 0; i < n; i++) {
		s += twice(p, i);
		if (__builtin_expect(s == 12345, 0)) {
			volatile int blk = s; // a lexical block on the cold path
			blk = blk * 3;
			s = blk + twice(p, s);
		}
	}
	return s;
}

__attribute__((noinline, cold, section("__TEXT,__text_cold"))) int rare(volatile int *p, int x) {
	return twice(p, x) * 2;
}

void _start(void) {
	volatile int v = 0;
	hot(&v, 5);
	rare(&v, 3);
	for (;;) {
	}
}
