package remote

import (
	"strings"

	"github.com/stackimage/stackimage/uuid"
)

// Kind is the kind of symbol file a source is asked for.
type Kind int

const (
	// KindDebug is a dSYM's DWARF file (symbolicator's "debuginfo").
	KindDebug Kind = iota
	// KindCode is the binary itself ("executable").
	KindCode
	// KindBreakpad is a Breakpad .sym file.
	KindBreakpad
)

// Kinds are the kinds fetched for a UUID, in the order tried: the dSYM
// names the most, the binary adds function starts and exports, a .sym
// file stands in when neither exists.
var Kinds = []Kind{KindDebug, KindCode, KindBreakpad}

func (k Kind) String() string {
	switch k {
	case KindDebug:
		return "debuginfo"
	case KindCode:
		return "executable"
	default:
		return "breakpad"
	}
}

// Layout is a source's directory layout, as symbolicator names them.
type Layout struct {
	// Type is "unified", "native" (LLDB's UUID directories), "breakpad",
	// "ssqp" (Microsoft's symbol server keys, as symbolicator's
	// "symstore") or "debuginfod".
	Type string
	// Casing is "default" (or ""), "lowercase" or "uppercase": how the
	// path is cased after the layout built it.
	Casing string
}

// Layouts are the layout types LayoutPaths knows.
var Layouts = []string{"unified", "native", "breakpad", "ssqp", "debuginfod"}

// LayoutPaths returns the relative paths at which a layout keeps the file
// of one kind for a UUID, most likely first; name is the image's file name
// when known (Breakpad and SSQP paths need it; those without a name are
// left out). Every path is built from the UUID's hex digits and a file
// name reduced to its base, so nothing a request sends can climb out of a
// source.
func LayoutPaths(l Layout, u uuid.UUID, kind Kind, name string) []string {
	id := u.Hex()
	name = SafeName(name)
	var out []string
	switch l.Type {
	case "unified":
		out = []string{id[:2] + "/" + id[2:] + "/" + kind.String()}
	case "debuginfod":
		if kind != KindBreakpad {
			out = []string{"buildid/" + id + "/" + kind.String()}
		}
	case "native":
		// LLDB's "File Mapped UUID Directories": XXXX/XXXX/XXXX/XXXX/XXXX/XXXXXXXXXXXX.
		up := strings.ToUpper(id)
		p := up[0:4] + "/" + up[4:8] + "/" + up[8:12] + "/" + up[12:16] + "/" + up[16:20] + "/" + up[20:]
		switch kind {
		case KindDebug:
			out = []string{p}
		case KindCode:
			out = []string{p + ".app"}
		}
	case "breakpad":
		if kind == KindBreakpad && name != "" {
			out = []string{name + "/" + strings.ToUpper(id) + "0/" + name + ".sym"}
		}
	case "ssqp":
		switch kind {
		case KindDebug:
			out = []string{"_.dwarf/mach-uuid-sym-" + id + "/_.dwarf"}
		case KindCode:
			if name != "" {
				out = []string{name + "/mach-uuid-" + id + "/" + name}
			}
		}
	}
	for i, p := range out {
		switch l.Casing {
		case "lowercase":
			out[i] = strings.ToLower(p)
		case "uppercase":
			out[i] = strings.ToUpper(p)
		}
	}
	return out
}

// SafeName reduces a module's file name (a path on the device, in a
// request) to a base name fit for a path segment, or "" when nothing safe
// is left.
func SafeName(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "\x00%?#") || len(name) > 255 {
		return ""
	}
	return name
}
