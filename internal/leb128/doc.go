// Package leb128 reads and writes the LEB128 variable-length numbers of
// DWARF (debug_info, debug_line, call frame information) and of Mach-O's
// link-edit data (function starts, the export trie): the one decoder the
// module's readers share, as delve's pkg/dwarf/leb128 serves its DWARF
// packages.
//
// Readers take a byte slice and a position and return the next position,
// so a hot loop decodes in place without reslicing; a one-byte number (the
// common case) costs one comparison. What a reader does with a number that
// overflows 64 bits is its own rule: DWARF readers keep the low bits as
// debug/dwarf does, Mach-O's and the CFI parser fail.
package leb128
