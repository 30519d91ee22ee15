package breakpadsym

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/stackimage/stackimage/uuid"
)

// Module is what a symbol file's MODULE record (and INFO CODE_ID record,
// when Parse reads the whole file) says about the image it describes.
type Module struct {
	OS      string // "mac", "Linux", "windows", ... as written
	Arch    string // "x86_64", "arm64", "x86", "arm", ... as written
	DebugID string // hex digits as written, e.g. 73781EDEBF5B34EC81B2749A0F1FA5FD0
	Name    string // the image's base name; may contain spaces

	// CodeID and CodeFile come from an INFO CODE_ID record. ReadModuleLine
	// leaves them empty.
	CodeID   string
	CodeFile string
}

// UUID returns the first 32 hex digits of the debug id as 16 bytes, in the
// order written. For a Mach-O image this is its LC_UUID; for PE and ELF it
// is a GUID whose first three fields Breakpad wrote byte-swapped. It is all
// zeros when the debug id is malformed (ParseDebugID says why).
func (m Module) UUID() uuid.UUID {
	u, _, _ := ParseDebugID(m.DebugID)
	return u
}

// Age returns the hex digits after the first 32 of the debug id (0 for
// Mach-O and ELF; the PDB age on Windows), or 0 when the id is malformed.
func (m Module) Age() uint32 {
	_, age, _ := ParseDebugID(m.DebugID)
	return age
}

// PointerSize returns the size in bytes of a pointer on the module's
// architecture, or 0 when the architecture is not one this package knows.
func (m Module) PointerSize() int {
	// archcheck: Breakpad's own names, for every CPU it dumps (mips, ppc,
	// aarch64), most of which archregs does not describe.
	switch strings.ToLower(m.Arch) {
	case "x86", "i386", "arm", "armv7", "armv7s", "armv7k", "arm64_32", "ppc", "mips":
		return 4
	case "x86_64", "amd64", "arm64", "arm64e", "aarch64", "ppc64", "mips64":
		return 8
	}
	return 0
}

// ParseDebugID splits a Breakpad debug id into the 16 bytes of its first 32
// hex digits and the age that the remaining (1 to 8) hex digits encode.
func ParseDebugID(id string) (u uuid.UUID, age uint32, err error) {
	if len(id) < 33 || len(id) > 40 {
		return u, 0, fmt.Errorf("breakpadsym: debug id %q is %d hex digits, want 33 to 40", id, len(id))
	}
	if _, err := hex.Decode(u[:], []byte(id[:32])); err != nil {
		return uuid.UUID{}, 0, fmt.Errorf("breakpadsym: debug id %q: %v", id, err)
	}
	a, err := strconv.ParseUint(id[32:], 16, 32)
	if err != nil {
		return uuid.UUID{}, 0, fmt.Errorf("breakpadsym: debug id %q: age %q is not hex", id, id[32:])
	}
	return u, uint32(a), nil
}

// maxModuleLine bounds the first line ReadModuleLine reads: a MODULE record
// is four short fields and a base name.
const maxModuleLine = 4096

// ReadModuleLine parses the first line of a symbol file as a MODULE
// record, reading at most 4096 bytes of r (it may read past the line), so that a directory of symbol files can
// be indexed by debug id without parsing them. The debug id must be well
// formed (see ParseDebugID).
func ReadModuleLine(r io.Reader) (Module, error) {
	if r == nil {
		return Module{}, errors.New("breakpadsym: nil reader")
	}
	br := bufio.NewReaderSize(io.LimitReader(r, maxModuleLine), 512)
	line, err := br.ReadString('\n')
	if err != nil && !(errors.Is(err, io.EOF) && line != "") {
		if errors.Is(err, io.EOF) {
			return Module{}, &FormatError{Line: 1, Record: "MODULE", Msg: "no MODULE record: the file is empty or its first line is longer than 4096 bytes"}
		}
		return Module{}, err
	}
	m, msg := parseModule(trimEOL(line))
	if msg != "" {
		return Module{}, &FormatError{Line: 1, Record: "MODULE", Msg: msg}
	}
	return m, nil
}

// parseModule parses a MODULE line; msg says what is wrong when it is not
// a valid one.
func parseModule(line string) (m Module, msg string) {
	kw, rest := cut(line)
	if kw != "MODULE" {
		return Module{}, "first record is not MODULE"
	}
	m.OS, rest = cut(rest)
	m.Arch, rest = cut(rest)
	m.DebugID, rest = cut(rest)
	m.Name = rest
	if m.Name == "" {
		return Module{}, "MODULE record has fewer than 4 fields"
	}
	if _, _, err := ParseDebugID(m.DebugID); err != nil {
		return Module{}, err.Error()
	}
	return m, ""
}

// FindInStore returns the path of the symbol file for the module called
// name with the given debug id in a Breakpad symbol store rooted at root
// (the layout NAME/DEBUGID/NAME.sym, where a trailing ".pdb" of NAME
// becomes ".sym"), or "" when there is none. Only the base name of name is
// used, so a module path from a crash report cannot reach outside root;
// the debug id is tried as given and in upper case.
func FindInStore(root, name, debugID string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	if name == "" || name == "." || name == ".." || debugID == "" {
		return ""
	}
	for _, c := range []byte(debugID) {
		if !isHex(c) {
			return ""
		}
	}
	symName := strings.TrimSuffix(name, ".pdb") + ".sym"
	ids := []string{debugID}
	if up := strings.ToUpper(debugID); up != debugID {
		ids = append(ids, up)
	}
	for _, id := range ids {
		p := filepath.Join(root, name, id, symName)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p
		}
	}
	return ""
}
