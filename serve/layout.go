package serve

import (
	"encoding/hex"
	"strings"

	"github.com/stackimage/stackimage/symbolicator"
	"github.com/stackimage/stackimage/uuid"
)

// FileKind is the kind of symbol file a source is asked for.
type FileKind int

const (
	// KindDebug is a dSYM's DWARF file (symbolicator's "debuginfo").
	KindDebug FileKind = iota
	// KindCode is the binary itself ("executable").
	KindCode
	// KindBreakpad is a Breakpad .sym file.
	KindBreakpad
)

// kinds are the kinds fetched for a UUID, in the order tried: the dSYM
// names the most, the binary adds function starts and exports, a .sym
// file stands in when neither exists.
var kinds = []FileKind{KindDebug, KindCode, KindBreakpad}

func (k FileKind) String() string {
	switch k {
	case KindDebug:
		return "debuginfo"
	case KindCode:
		return "executable"
	default:
		return "breakpad"
	}
}

// parseDebugID reads a module's identifier as symbolicator sends it: a
// debug_id ("67e9247c-814e-392b-a027-dbde6748fcbf", optionally with an
// appendix "-0"), a Breakpad id (33 hex digits ending in the age 0) or a
// code_id (32 hex digits). Only hex digits and dashes in those places are
// accepted: the UUID is the only part of a request that ever reaches a
// path or an object key.
func parseDebugID(s string) (uuid.UUID, error) { return symbolicator.ParseDebugID(s) }

// simple is the UUID as 32 lower-case hex digits.
func simple(u uuid.UUID) string { return hex.EncodeToString(u[:]) }

// layoutPaths returns the relative paths at which a layout keeps the file
// of one kind for a UUID, most likely first; name is the image's file name
// when known (Breakpad and SSQP paths need it; those without a name are
// left out). Every path is built from the UUID's hex digits and a file
// name reduced to its base, so nothing a request sends can climb out of a
// source.
func layoutPaths(l LayoutConfig, u uuid.UUID, kind FileKind, name string) []string {
	id := simple(u)
	name = safeName(name)
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

// safeName reduces a module's file name (a path on the device, in a
// request) to a base name fit for a path segment, or "" when nothing safe
// is left.
func safeName(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "\x00%?#") || len(name) > 255 {
		return ""
	}
	return name
}
