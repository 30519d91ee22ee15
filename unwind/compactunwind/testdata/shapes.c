// Functions of the shapes clang gives prologues and epilogues: leaf,
// frame with callee-saved registers, large frames, floating-point
// registers, several returns. Built by build.sh; see README.md.
#define NOINLINE __attribute__((noinline))

volatile int sink;

NOINLINE int leaf(int a, int b) { return a * b + 3; }

NOINLINE int callee(int x) {
	sink = x;
	return x + 1;
}

// Keeps values live across calls: callee-saved registers.
NOINLINE int saves(int a, int b, int c, int d) {
	int x = callee(a);
	int y = callee(b + x);
	int z = callee(c + y);
	int w = callee(d + z);
	return a + b + c + d + x + y + z + w;
}

// More live values: all callee-saved registers.
NOINLINE int many(int a, int b, int c, int d, int e, int f) {
	int x1 = callee(a), x2 = callee(b), x3 = callee(c), x4 = callee(d);
	int x5 = callee(e), x6 = callee(f), x7 = callee(x1 + x2);
	return a + b + c + d + e + f + x1 + x2 + x3 + x4 + x5 + x6 + x7 + callee(x3 * x4);
}

// A frame larger than an 8-bit stack size: x86 "indirect" sizes.
NOINLINE int big(int n) {
	volatile char buf[3000];
	for (int i = 0; i < n && i < 3000; i++)
		buf[i] = (char)i;
	callee(buf[n & 1023]);
	return buf[7] + callee(n);
}

// A small local array with a call: frame with locals.
NOINLINE int locals(int n) {
	volatile int buf[16];
	for (int i = 0; i < 16; i++)
		buf[i] = i * n;
	return callee(buf[n & 15]) + buf[3];
}

// Several returns: epilogues in the middle of the function.
NOINLINE int branches(int a, int b) {
	if (a > 10) {
		int x = callee(a);
		return x + callee(b + x);
	}
	if (b > 20)
		return callee(b) * 2;
	return a - b;
}

// Floating point values live across calls: d8-d15 on arm64.
NOINLINE double fp(double a, double b, double c) {
	double x = a * 1.5;
	callee((int)x);
	double y = b * x;
	callee((int)y);
	double z = c * y + x;
	callee((int)z);
	return x + y + z + a + b + c;
}

void start(void) __asm__("_start");
void start(void) {
	sink = leaf(1, 2) + saves(1, 2, 3, 4) + many(1, 2, 3, 4, 5, 6) + big(5) + locals(3) + branches(11, 2) + (int)fp(1, 2, 3);
	for (;;)
		;
}
