// Package archregs describes the CPU architectures of Apple platforms and
// decodes their register state from the exact bytes thread_get_state(2) or a
// core file's LC_THREAD command holds.
//
// It is the one architecture table: every per-architecture fact or rule
// the other packages need (register roles, DWARF numbers, frame-pointer
// alignment, the call-site adjustment, the PAC and Thumb rules, thread and
// exception state flavors, the minidump CPU and context values, Mach-O CPU
// names) is a field or method of an Arch, built once per architecture in
// its own file (arm64.go, armv7.go, x86_64.go, i386.go). Code elsewhere
// reads those fields and never names an architecture; a test
// (TestNoArchSwitchOutsideArchregs) fails on a switch or identity check
// on an architecture outside this package. Where behaviour is a format's
// encoding (compact unwind's, a minidump's context layouts, the walker's
// instruction decoders), it stays in that package, found through a field
// of Arch (its CPU type, MinidumpContext).
//
// The package is a leaf: it imports only package unwind (for register
// numbers), so that every parser can use it.
package archregs
