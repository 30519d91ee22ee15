package demangle

import (
	"strings"

	libdemangle "github.com/ianlancetaylor/demangle"

	"github.com/stackimage/stackimage/swiftdemangle"
)

// Lang is the language a symbol name was recognised as, from its mangling.
// Its values are constants, safe to share.
type Lang string

// The languages Demangle tells apart.
const (
	LangC     Lang = "C"     // plain C, or a name with no mangling we know
	LangCPP   Lang = "C++"   // Itanium C++ ABI (_Z...)
	LangRust  Lang = "Rust"  // Rust v0 (_R...) or legacy (_ZN...17h<hash>E)
	LangSwift Lang = "Swift" // Swift ($s, $S, _T0...)
	LangObjC  Lang = "ObjC"  // Objective-C method: -[Class sel], +[Class sel]
)

// LLVMStyle makes names read as llvm-symbolizer and atos print them
// ("vector<int>>" rather than "vector<int> >").
//
// maxDemangled bounds a demangled name at 2^16 bytes: hostile manglings can
// expand exponentially through substitutions.
var maxDemangled = libdemangle.MaxLength(16)

// Demangle returns the readable form of a symbol name and the language its
// mangling says it is in. It accepts names as DWARF records them (_ZN...) and
// as Mach-O symbol tables do, with one more leading underscore (__ZN...).
// C++ and Rust names are demangled as llvm-symbolizer prints them, Swift
// names as Apple's crash reports print them ("closure #1 in
// ViewController.viewDidLoad()", swiftdemangle.Simplified); ObjC names and
// names that fail to demangle are returned unchanged.
func Demangle(name string) (string, Lang) {
	lang := Language(name)
	if lang == LangSwift {
		if s, err := swiftdemangle.Demangle(name, swiftdemangle.Simplified); err == nil {
			return s, lang
		}
		return name, lang
	}
	if lang != LangCPP && lang != LangRust {
		return name, lang
	}
	m := name
	if strings.HasPrefix(m, "__Z") || strings.HasPrefix(m, "__R") {
		m = m[1:] // Mach-O prepends "_" to every C-level name
	}
	if lang == LangCPP {
		if s, ok := demangleItanium(m); ok {
			return s, lang
		}
	}
	if len(m) > maxLibraryMangled {
		return name, lang
	}
	s, err := libdemangle.ToString(m, maxDemangled, libdemangle.LLVMStyle)
	if err != nil {
		return name, lang
	}
	return s, lang
}

// maxLibraryMangled bounds the names handed to the library: its time grows
// with the square of a deeply nested name (100,000 bytes of "P" take 11 s,
// 4,000 bytes 20 ms), so a hostile symbol file of long names could hold an
// index build or a service for hours. Longer names the library would get
// (C++ names the one-pass demangler declines, and Rust names) are kept as
// they are; real names are far shorter (the corpus' longest C++ name is
// 147 bytes).
const maxLibraryMangled = 4096

// Language tells a symbol name's language from its mangling alone, without
// the cost of demangling it.
func Language(name string) Lang {
	// Every prefix below starts with '-', '+', '$' or '_', and after '_'
	// with '$', 'T', '_', 'R' or 'Z': most names (C, Go's "_pkg.Func")
	// are told apart by their first two bytes.
	if name == "" {
		return LangC
	}
	switch name[0] {
	case '-', '+', '$':
	case '_':
		if len(name) > 1 {
			switch name[1] {
			case '$', 'T', '_', 'R', 'Z':
			default:
				return LangC
			}
		}
	default:
		return LangC
	}
	switch {
	case strings.HasPrefix(name, "-[") || strings.HasPrefix(name, "+["):
		return LangObjC
	case isSwift(name):
		return LangSwift
	}
	m := name
	if strings.HasPrefix(m, "__Z") || strings.HasPrefix(m, "__R") {
		m = m[1:]
	}
	switch {
	case strings.HasPrefix(m, "_R"):
		return LangRust
	case strings.HasPrefix(m, "_Z"):
		if isLegacyRust(m) {
			return LangRust
		}
		return LangCPP
	}
	return LangC
}

// isSwift reports whether name has a Swift mangling prefix: "$s"/"$S"
// (Swift 5 and 4.x), "_T0" (Swift 4.0), "$e" (embedded Swift), each with or
// without Mach-O's extra leading underscore.
func isSwift(name string) bool {
	for _, p := range []string{"$s", "$S", "$e", "_$s", "_$S", "_$e", "_T0", "__T0"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// isLegacyRust reports whether a _ZN name ends the way rustc's legacy
// mangling does: a "17h" path element of 16 hex digits, then "E", before
// any ".suffix" LLVM appended.
func isLegacyRust(name string) bool {
	if !strings.HasPrefix(name, "_ZN") {
		return false
	}
	// Most names have no '.': looking for one costs far less than
	// looking for "E.", on every symbol atos prints.
	if strings.IndexByte(name, '.') >= 0 {
		if i := strings.LastIndex(name, "E."); i > 0 {
			name = name[:i+1]
		}
	}
	if len(name) < 24 || !strings.HasSuffix(name, "E") || name[len(name)-20:len(name)-17] != "17h" {
		return false
	}
	for _, c := range name[len(name)-17 : len(name)-1] {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return true
}
