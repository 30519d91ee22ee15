// Package breakpadsym reads Breakpad text symbol files (.sym), as written
// by Breakpad's and Mozilla's dump_syms, and answers two questions about
// an address in the module they describe: which function, source line and
// inlined frames are there (Lookup), and how to recover the caller's
// registers from there (CFIRules, then CFIRules.Eval).
//
// # Addresses
//
// Every address in a symbol file, and every address this package takes or
// returns, is relative to the module's base: the address the image was
// loaded at, minus that. For a Mach-O image the base is the load address
// of its __TEXT segment (the mach_header), so a module-relative address is
// the unslid address minus __TEXT's vmaddr (0x100000000 for a typical
// 64-bit executable) and the runtime address minus the image's load
// address in a crash report or minidump. For ELF it is the address minus
// the load bias, and for PE the RVA.
//
// # Records
//
// Read: MODULE (first line), INFO CODE_ID, FILE, FUNC [m], line records,
// PUBLIC [m], INLINE_ORIGIN (the current form, "INLINE_ORIGIN id name"),
// INLINE, STACK CFI INIT and STACK CFI. STACK WIN records are counted and
// skipped. A malformed record is skipped with a warning naming its line;
// the rest of the file is still read. Of FUNC records (and of STACK CFI
// INIT records) that overlap, the one at the lower address, or earlier in
// the file, is kept, as Breakpad's processor does.
//
// A File is immutable once Parse returns and safe for concurrent use.
package breakpadsym
