// Package demangle turns symbol names into readable ones and tells their
// language from their mangling: Itanium C++ (_Z...), Rust legacy and v0
// (_ZN...17h<hash>E, _R...), Swift ($s, $S, $e, _T0...) and Objective-C
// method names, each with or without Mach-O's extra leading underscore.
// It holds the one place every other package gets a name from: the DWARF
// reader, the symbol index and the symbolizers import it rather than each
// other, as symbolic's symbolic-demangle serves every symbolic crate.
//
// C++ and Rust names are demangled as llvm-symbolizer prints them, by
// github.com/ianlancetaylor/demangle with LLVMStyle; the common C++ names
// by a one-pass demangler of the package's own (itanium.go), which
// declines what it does not know and leaves it to the library, and whose
// output is the library's byte for byte. Names the library would take too
// long over (more than 4,096 bytes) are kept as they are. Swift names are
// demangled by swiftdemangle in the style of Apple's crash reports.
package demangle
