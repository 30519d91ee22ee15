package symstore

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/stackimage/stackimage/symtab"
	"github.com/stackimage/stackimage/uuid"
)

// A bitcode build hides names: the App Store recompiles the app from
// bitcode and its symbol table and DWARF say "__hidden#12_" where a name
// or a source file's path was. The build's UUID.bcsymbolmap gives them
// back: after the line "BCSymbolMap Version: 2.0" (or 1.0), line N
// (counting from 0) is what "__hidden#N_" stands for.

// bcSymbolMapHeader starts every symbol map.
const bcSymbolMapHeader = "BCSymbolMap Version: "

// maxSymbolMap bounds the size of a symbol map read into memory: the
// largest apps' maps are tens of megabytes.
const maxSymbolMap = 1 << 30

// SymbolMap holds the names a bitcode build hid. The zero value restores
// nothing. It is safe for concurrent use once built.
type SymbolMap struct {
	names []string
}

// ParseSymbolMap reads a .bcsymbolmap file's contents. Versions 1.0 and
// 2.0 are read alike; the error names an unknown header or version.
func ParseSymbolMap(data []byte) (*SymbolMap, error) {
	first, rest, _ := bytes.Cut(data, []byte("\n"))
	first = bytes.TrimSuffix(first, []byte("\r"))
	version, ok := bytes.CutPrefix(first, []byte(bcSymbolMapHeader))
	if !ok {
		return nil, fmt.Errorf("bcsymbolmap: line 1 is %.40q, want %q and a version", first, bcSymbolMapHeader)
	}
	if v := string(version); v != "1.0" && v != "2.0" {
		return nil, fmt.Errorf("bcsymbolmap: unknown version %.20q (line 1): want 1.0 or 2.0", v)
	}
	m := &SymbolMap{}
	// One string for all names: the slices share its memory.
	text := strings.TrimSuffix(string(rest), "\n")
	if text == "" {
		return m, nil
	}
	m.names = strings.Split(text, "\n")
	for i, n := range m.names {
		m.names[i] = strings.TrimSuffix(n, "\r")
	}
	return m, nil
}

// Len returns the number of names the map holds.
func (m *SymbolMap) Len() int {
	if m == nil {
		return 0
	}
	return len(m.names)
}

// Resolve returns the name a hidden one stands for: "__hidden#N_" becomes
// line N, with any underscores before it (a Mach-O symbol table adds one)
// kept. Any other name, or a hidden one the map does not reach, is
// returned as is, with ErrNotFound.
func (m *SymbolMap) Resolve(name string) (string, error) {
	if s, ok := m.resolve(name); ok {
		return s, nil
	}
	return name, ErrNotFound
}

func (m *SymbolMap) resolve(name string) (string, bool) {
	if m == nil || len(m.names) == 0 {
		return name, false
	}
	// Look past at most three underscores, as symtab does.
	i := 0
	for i < len(name) && i < 3 && name[i] == '_' {
		i++
	}
	if i < 2 {
		return name, false
	}
	rest, ok := strings.CutPrefix(name[i:], "hidden#")
	if !ok {
		return name, false
	}
	digits, ok := strings.CutSuffix(rest, "_")
	if !ok || digits == "" || len(digits) > 10 {
		return name, false
	}
	n, err := strconv.ParseUint(digits, 10, 64)
	if err != nil || n >= uint64(len(m.names)) {
		return name, false
	}
	return name[:i-2] + m.names[n], true
}

// symbolMapUUID returns the UUID a file named UUID.bcsymbolmap is for.
func symbolMapUUID(path string) (uuid.UUID, bool) {
	base := filepath.Base(path)
	stem, ok := strings.CutSuffix(base, ".bcsymbolmap")
	if !ok {
		return uuid.UUID{}, false
	}
	u, err := uuid.Parse(stem)
	return u, err == nil
}

// readSymbolMap reads and parses a .bcsymbolmap file, bounded in size.
func readSymbolMap(path string) (*SymbolMap, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSymbolMap+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxSymbolMap {
		return nil, fmt.Errorf("bcsymbolmap: %s: larger than %d bytes", path, maxSymbolMap)
	}
	m, err := ParseSymbolMap(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// addSymbolMap indexes a UUID.bcsymbolmap file; the map is read when its
// UUID is looked up.
func (s *Symbols) addSymbolMap(path string, u uuid.UUID) {
	s.mu.Lock()
	if s.side.symbolMaps == nil {
		s.side.symbolMaps = map[uuid.UUID]string{}
	}
	s.side.symbolMaps[u] = path
	stale := s.forgetLoad(u) // reload with the map
	s.mu.Unlock()
	if stale != nil {
		stale.refs.release()
	}
}

// unhide restores hidden names in a symbol table answer.
func (e *Entry) unhide(sym symtab.Symbol) symtab.Symbol {
	if e.SymbolMap == nil {
		return sym
	}
	if raw, err := e.SymbolMap.Resolve(sym.RawName); err == nil {
		sym.RawName = raw
		sym.Name, _ = e.SymbolMap.Resolve(sym.Name)
	}
	return sym
}

// unhideFrame restores hidden names, linkage names and file paths in a
// frame DWARF described.
func (e *Entry) unhideFrame(f *Frame) {
	if e.SymbolMap == nil {
		return
	}
	f.File, _ = e.SymbolMap.Resolve(f.File)
	f.MangledSymbol, _ = e.SymbolMap.Resolve(f.MangledSymbol)
	f.Symbol, _ = e.SymbolMap.Resolve(f.Symbol)
}

// isHiddenName reports whether a raw symbol name is one a bitcode build
// hid: "__hidden#N_" after at most three underscores.
func isHiddenName(raw string) bool {
	i := 0
	for i < len(raw) && i < 3 && raw[i] == '_' {
		i++
	}
	return i >= 2 && strings.HasPrefix(raw[i:], "hidden#")
}
