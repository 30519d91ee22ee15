// Package progen writes fresh C programs for the emulator's accuracy
// sweep: from a seed, a freestanding program in the style of
// fixtures/src/*.c (no libc, no globals, every value a 32-bit unsigned),
// with a random call graph and depth, leaf and non-leaf functions, frames
// of varied size with locals built on the stack, values kept live across
// calls (callee-saved register pressure), direct, indirect and tail calls,
// loops, early returns (shrink-wrapped prologues), and now and then a
// variable-sized allocation.
//
// The walker's rules are checked on the fixtures, which it was tuned on;
// programs generated from seeds it never saw check that the rules fit the
// problem rather than those programs. The same seed always gives the same
// program. Every program has one entry, start (symbol _start), which
// returns a value that depends only on the program: the same on every
// architecture and optimisation level, so that a run that went wrong is
// caught by comparing builds.
//
// The package is pure Go and needs no toolchain; emu's tests compile its
// output with clang-16 and ld64.lld-16 (Build).
package progen
