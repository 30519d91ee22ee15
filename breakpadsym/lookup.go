package breakpadsym

import (
	"sort"

	"github.com/stackimage/stackimage/lookup"
)

// Symbol is the answer to a lookup: the function that holds an address
// and the source frames at it.
type Symbol struct {
	Name    string // the FUNC's or PUBLIC's name
	Address uint64 // its start, module-relative
	Size    uint64 // the FUNC's size; 0 for a PUBLIC
	Public  bool   // found from a PUBLIC record: no size, lines or inlined frames

	// Frames are the source frames at the address, innermost first, as
	// llvm-symbolizer --inlining and atos -i list them. The last frame is
	// the FUNC or PUBLIC itself; the ones before it are inlined.
	//
	// The innermost frame's File and Line come from the line record
	// covering the address; each outer frame's are the call site of the
	// INLINE record one level deeper. So an inlined frame's call site is
	// the File and Line of the frame after it. Line is 0 when unknown.
	Frames []Frame
}

// Frame is one source-level frame at an address.
type Frame struct {
	Function string
	File     string
	Line     uint32
	Inlined  bool
}

// Lookup returns what the file says about addr, a module-relative address
// (see the package documentation): the FUNC record covering it, or else
// the nearest PUBLIC record at or below it with no FUNC in between. The
// error is ErrNotFound when neither exists, and when that PUBLIC is the
// Mach-O header's symbol (_mh_execute_header and the like), which marks no
// code. The cost is a few binary searches.
func (f *File) Lookup(addr uint64) (Symbol, error) {
	if s, ok := f.lookup(addr); ok {
		return s, nil
	}
	return Symbol{}, ErrNotFound
}

// ErrNotFound is Lookup's error for an address no record covers:
// lookup.ErrNotFound, the one "not found" of every Lookup and Resolve.
var ErrNotFound = lookup.ErrNotFound

func (f *File) lookup(addr uint64) (Symbol, bool) {
	if fn, ok := f.funcAt(addr); ok {
		return f.funcSymbol(fn, addr), true
	}
	i := sort.Search(len(f.publics), func(i int) bool { return f.publics[i].Address > addr }) - 1
	if i < 0 {
		return Symbol{}, false
	}
	pub := &f.publics[i]
	if isMachHeader(pub.Name) {
		// dump_syms lists the Mach-O header symbol at offset 0; what
		// follows it up to the first function is load commands, not code.
		return Symbol{}, false
	}
	// A PUBLIC extends only to the next symbol: a FUNC that starts between
	// it and addr (and ends before addr) is where it stops.
	j := f.lastFuncAtOrBelow(addr)
	if j >= 0 && f.funcAddrs[j] > pub.Address {
		return Symbol{}, false
	}
	return Symbol{Name: pub.Name, Address: pub.Address, Public: true, Frames: []Frame{{Function: pub.Name}}}, true
}

// FunctionStart returns the start of the FUNC or PUBLIC that Lookup finds
// for the module-relative address addr. Its shape is the walker's
// FunctionStarter, for addresses made module-relative by the caller.
func (f *File) FunctionStart(addr uint64) (uint64, bool) {
	if fn, ok := f.funcAt(addr); ok {
		return fn.Address, true
	}
	sym, ok := f.lookup(addr)
	return sym.Address, ok
}

// isMachHeader reports whether name is the linker's symbol for a Mach-O
// image's header, with the one leading underscore dump_syms strips or not.
func isMachHeader(name string) bool {
	switch name {
	case "_mh_execute_header", "__mh_execute_header", "_mh_dylib_header", "__mh_dylib_header", "_mh_bundle_header", "__mh_bundle_header":
		return true
	}
	return false
}

// funcAt returns the FUNC whose range holds addr.
func (f *File) funcAt(addr uint64) (*Func, bool) {
	i := f.lastFuncAtOrBelow(addr)
	if i < 0 {
		return nil, false
	}
	fn := &f.funcs[i]
	if addr-fn.Address >= fn.Size {
		return nil, false
	}
	return fn, true
}

// lastFuncAtOrBelow returns the index of the last FUNC starting at or
// below addr, or -1.
func (f *File) lastFuncAtOrBelow(addr uint64) int {
	lo, hi := 0, len(f.funcAddrs)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if f.funcAddrs[mid] <= addr {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo - 1
}

func (f *File) funcSymbol(fn *Func, addr uint64) Symbol {
	sym := Symbol{Name: fn.Name, Address: fn.Address, Size: fn.Size}

	// The inlined frames, outermost (depth 0) first; fn.Inlines is sorted
	// by depth then address and ranges at one depth do not overlap.
	var chain []*Inline
	rest := fn.Inlines
	for depth := uint32(0); len(rest) > 0; depth++ {
		lo := sort.Search(len(rest), func(i int) bool { return rest[i].Depth >= depth })
		rest = rest[lo:]
		n := sort.Search(len(rest), func(i int) bool { return rest[i].Depth > depth })
		level := rest[:n]
		k := sort.Search(len(level), func(i int) bool { return level[i].Address > addr }) - 1
		if k < 0 || addr-level[k].Address >= level[k].Size {
			break
		}
		chain = append(chain, &level[k])
		rest = rest[n:]
	}

	sym.Frames = make([]Frame, 0, len(chain)+1)
	file, line := f.lineAt(fn, addr)
	for i := len(chain) - 1; i >= 0; i-- {
		name, _ := f.InlineOrigin(chain[i].Origin)
		sym.Frames = append(sym.Frames, Frame{Function: name, File: file, Line: line, Inlined: true})
		file, _ = f.FileName(chain[i].CallFile)
		line = chain[i].CallLine
	}
	sym.Frames = append(sym.Frames, Frame{Function: fn.Name, File: file, Line: line})
	return sym
}

// lineAt returns the file name and line of the line record of fn covering
// addr.
func (f *File) lineAt(fn *Func, addr uint64) (string, uint32) {
	i := sort.Search(len(fn.Lines), func(i int) bool { return fn.Lines[i].Address > addr }) - 1
	if i < 0 {
		return "", 0
	}
	l := &fn.Lines[i]
	if addr-l.Address >= uint64(l.Size) {
		return "", 0
	}
	name, _ := f.FileName(l.File)
	return name, l.Line
}
