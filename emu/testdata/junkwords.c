// junkwords leaves, on a stack without frame pointers, the kinds of word
// a stack scan must refuse when only a dSYM checks it (emu's
// TestJunkWordsDSYMOnly): a function pointer (leaf's first instruction),
// a __TEXT constant and a pointer into it (a table's symbol is listed as
// a function's is) in middle's frame, below the return address into
// start, and a second copy of that return address in start's frame,
// above it (as a crash reporter's stack holds a second copy of dyld's
// start). Built with -fomit-frame-pointer; freestanding, no globals but
// the constant, 32-bit results (see fixtures/src/chain.c for the rules).

typedef unsigned long word;

// table is read-only data: __TEXT,__const.
static const unsigned table[8] = {3, 1, 4, 1, 5, 9, 2, 6};

__attribute__((noinline)) unsigned leaf(unsigned x) {
	unsigned acc = 0;
	for (unsigned i = 0; i < 8; i++)
		acc += table[i] * (x + i);
	return acc;
}

__attribute__((noinline)) unsigned middle(unsigned x, volatile word *outer) {
	volatile word junk[3];
	junk[0] = (word)&leaf;     // a function pointer: leaf's first instruction
	junk[1] = (word)table;     // a __TEXT constant
	junk[2] = (word)&table[5]; // a pointer into it, past its symbol
	// A second copy of the return address into start, in start's frame.
	// On arm64 __builtin_return_address strips a signature with XPACI,
	// which the emulator does not run: LR is read as it is (no call has
	// written it yet).
#if defined(__aarch64__)
	word lr;
	__asm__ volatile("mov %0, x30" : "=r"(lr));
	*outer = lr;
#else
	*outer = (word)__builtin_return_address(0);
#endif
	unsigned r = leaf(x + (unsigned)(junk[0] & 1));
	return r + (unsigned)(junk[1] & 1) + (unsigned)(junk[2] & 1);
}

unsigned start(void) {
	volatile word slot[2];
	slot[0] = 0;
	slot[1] = 0;
	unsigned r = middle(7, &slot[0]);
	return r + (unsigned)(slot[1] & 1) + (slot[0] != 0);
}
