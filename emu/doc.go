// Package emu runs Mach-O code for arm64, armv7, x86_64 and i386 under the
// Unicorn CPU emulator, so that the stack walker can be checked against what
// really happened: it loads an image at a chosen slide, sets up the entry
// state the ABI and kernel would, keeps a shadow stack of calls and returns
// from code hooks, and captures snapshots at any instruction boundary.
//
// Everything but this file needs cgo and the Unicorn C library (Debian's
// libunicorn-dev) and is behind the unicorn build tag:
//
//	go test -tags unicorn ./emu/
//
// Without the tag the package is empty, so that the rest of the module
// builds with CGO_ENABLED=0.
//
// # Layers
//
// Engine is a minimal binding of Unicorn: memory, registers, start/stop,
// code hooks (through a C shim and cgo.Handle, never a Go pointer in C) and
// an invalid-memory hook that turns a stray access into a *MemFault naming
// the address, size, kind and PC. Unicorn's own errors are *Error with
// uc_strerror's message.
//
// Machine is one emulated thread. New maps a 1 MiB stack (top at
// 0x7ff000000000 on 64-bit, 0xb0000000 on 32-bit) and a sentinel page
// (0x7fffdead0000 or 0xdead0000). LoadFile maps an executable's segments
// (all but __PAGEZERO) at vmaddr + slide with their initial protections,
// or an i386 object's single segment at vmaddr + ObjectBase + slide. It
// refuses what would need dyld or a linker: dylibs, bundles, binds,
// chained fixups, rebases at a nonzero slide, objects of other
// architectures and i386 objects with any relocation (outside debug
// sections) that is not PC-relative to a local section or a section
// difference. SetEntry sets the entry state; Run executes under a step
// budget and a wall-clock backstop.
//
// # When the shadow stack changes
//
// Code hooks fire before an instruction executes. At every boundary the
// hook first offers the boundary to RunOptions.StopAt and OnStep, with the
// shadow stack reflecting every instruction executed so far, and only then
// records the effect of the instruction about to run: a call pushes its
// call site and return address, a return pops. The next boundary checks
// that a return landed where its call said (a *ShadowError otherwise).
// Conditional ARM instructions are classified by evaluating their
// condition against CPSR; Thumb IT blocks are not.
//
// # Capture
//
// Capture encodes the registers as thread_get_state's native flavor
// (archregs.Encode) and decodes them back (archregs.Decode), so that the
// capture takes the same path as a real dump; it copies the stack from SP
// less the red zone (128 bytes on arm64 and x86_64, whose ABIs have one;
// none on armv7 and i386) to the stack top. For a sweep, Registers, the
// Machine itself as walker.Memory and ShadowStack.Chain avoid JSON and
// copies.
package emu
