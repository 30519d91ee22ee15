package demangle

import "strings"

// MayBeMangled reports whether a symbol table name could be a C++, Rust or
// Swift mangling, cheaply: a caller answering many names (atos) demangles
// only those it accepts. Swift's prefixes are those Language knows, with
// or without Mach-O's underscore.
func MayBeMangled(raw string) bool {
	// Every prefix starts with '_' or '$' and goes on with one of a few
	// bytes: most names are ruled out by their first two, which matters on
	// batches of 100k addresses.
	if len(raw) < 2 {
		return false
	}
	switch raw[0] {
	case '_':
		switch raw[1] {
		case 'Z', 'R', '$', 'T', '_':
		default:
			return false
		}
	case '$':
		switch raw[1] {
		case 's', 'S', 'e':
		default:
			return false
		}
	default:
		return false
	}
	for _, p := range manglingPrefixes {
		if strings.HasPrefix(raw, p) {
			return true
		}
	}
	return false
}

var manglingPrefixes = []string{
	"_Z", "__Z", "_R", "__R", // C++, Rust
	"$s", "_$s", "$S", "_$S", "$e", "_$e", "_T0", "__T", // Swift
}
