package image

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"sort"

	"github.com/stackimage/stackimage/internal/leb128"
)

// Symtab returns the raw LC_SYMTAB data; ok is false when there is none.
// Both tables are checked against the data present before they are read, so
// a hostile nsyms or strsize is an error, not an allocation. Each call reads
// them afresh: the slices are the caller's, to keep without copying.
func (im *Image) Symtab() (raw RawSymtab, ok bool, err error) {
	if im == nil || im.hdr == nil {
		return RawSymtab{}, false, ErrNoHeader
	}
	st := im.hdr.symtab
	if st == nil {
		return RawSymtab{}, false, nil
	}
	entSize := uint64(nlistSize)
	if im.hdr.is64 {
		entSize = nlist64Size
	}
	syms, err := im.src.read(uint64(st.symoff), uint64(st.nsyms)*entSize,
		fmt.Sprintf("LC_SYMTAB symbol table (symoff %#x, nsyms %d)", st.symoff, st.nsyms), st.cmdOff+12)
	if err != nil {
		return RawSymtab{}, false, im.wrap(err)
	}
	strs, err := im.src.read(uint64(st.stroff), uint64(st.strsize),
		fmt.Sprintf("LC_SYMTAB string table (stroff %#x, strsize %d)", st.stroff, st.strsize), st.cmdOff+20)
	if err != nil {
		return RawSymtab{}, false, im.wrap(err)
	}
	return RawSymtab{Is64: im.hdr.is64, ByteOrder: im.hdr.order, NSyms: int(st.nsyms), Syms: syms, Strings: strs}, true, nil
}

// wrap names the image in an error of ours.
// ErrNoHeader is the error of an Image's methods on a nil Image, or one
// not made by Open, NewFile or FromMemory (a zero Image has no file).
var ErrNoHeader = errors.New("image: no Mach-O file behind the image (nil or zero Image)")

func (im *Image) wrap(err error) error { return fmt.Errorf("image: %s: %w", im.Name, err) }

// readLinkedit reads the table a linkedit_data_command points at.
func (im *Image) readLinkedit(ref *linkeditRef) ([]byte, error) {
	b, err := im.src.read(uint64(ref.off), uint64(ref.size),
		fmt.Sprintf("%s (dataoff %#x, datasize %d)", ref.what, ref.off, ref.size), ref.cmdOff+8)
	if err != nil {
		return nil, im.wrap(err)
	}
	return b, nil
}

// FunctionStarts returns the unslid function start addresses from
// LC_FUNCTION_STARTS, sorted; nil when the image has none. The table is
// ULEB128 deltas, the first from the __TEXT segment's vmaddr, ended by a
// zero delta. On armv7 a Thumb function's start has bit 0 set, as the table
// stores it. When the table is damaged part way, the starts before the
// damage come back with the error.
func (im *Image) FunctionStarts() ([]uint64, error) {
	if im == nil || im.hdr == nil {
		return nil, ErrNoHeader
	}
	ref := im.hdr.funcStarts
	if ref == nil || ref.size == 0 {
		return nil, nil
	}
	data, err := im.readLinkedit(ref)
	if err != nil {
		return nil, err
	}
	text, _ := im.TextSegment()
	addr := text.Addr
	var starts []uint64
	for p := 0; p < len(data); {
		delta, next, err := leb128.Uint(data, p)
		if err != nil {
			return starts, im.wrap(&FormatError{int64(ref.off) + int64(p), "LC_FUNCTION_STARTS: " + err.Error(), nil})
		}
		if delta == 0 {
			break
		}
		if addr+delta < addr {
			return starts, im.wrap(&FormatError{int64(ref.off) + int64(p), "LC_FUNCTION_STARTS: address overflows", delta})
		}
		p = next
		addr += delta
		starts = append(starts, addr)
	}
	return starts, nil
}

// Export trie flags, as <mach-o/loader.h> defines them.
const (
	exportKindMask = 0x03 // EXPORT_SYMBOL_FLAGS_KIND_MASK
	exportAbsolute = 0x02 // EXPORT_SYMBOL_FLAGS_KIND_ABSOLUTE
	exportReexport = 0x08 // EXPORT_SYMBOL_FLAGS_REEXPORT
)

// Bounds on what an export trie can make us build: no real symbol name is
// anywhere near maxExportName, and prefix sharing rarely makes the names
// more than a few times the trie's size.
const (
	maxExportName      = 64 << 10
	exportNamesPerByte = 32
)

// Exports returns the export trie's entries (LC_DYLD_EXPORTS_TRIE, else
// LC_DYLD_INFO(_ONLY)'s) sorted by address, then name. Names are raw, with
// C's leading underscore; addresses are unslid (__TEXT vmaddr + the trie's
// offset; for a stub-and-resolver export, the stub). Re-exports (no address
// in this image) and absolute symbols (not addresses) are left out; nil when
// the image has no trie. A damaged trie gives the entries of its readable
// nodes together with the error about the first damaged one.
func (im *Image) Exports() ([]Export, error) {
	if im == nil || im.hdr == nil {
		return nil, ErrNoHeader
	}
	ref := im.hdr.exports()
	if ref == nil || ref.size == 0 {
		return nil, nil
	}
	data, err := im.readLinkedit(ref)
	if err != nil {
		return nil, err
	}
	text, _ := im.TextSegment()
	exps, err := parseExportTrie(data, text.Addr)
	if err != nil {
		if fe, ok := err.(*FormatError); ok {
			fe.Off += int64(ref.off)
		}
		return exps, im.wrap(err)
	}
	return exps, nil
}

// parseExportTrie walks the trie iteratively. Each node may be entered once,
// which rules out cycles and the exponential walk of a trie whose edges
// share nodes. A damaged node, or an edge to a node already entered, is
// skipped and the walk goes on with the rest; the first problem is
// returned with the entries found. FormatError offsets are relative to the
// trie.
func parseExportTrie(data []byte, base uint64) ([]Export, error) {
	type item struct {
		off  uint64
		name string
	}
	seen := make([]bool, len(data))
	budget := exportNamesPerByte*len(data) + maxExportName
	var exps []Export
	var firstErr error
	stack := []item{{0, ""}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		exp, children, err := readExportNode(data, it.off, seen)
		if exp != nil {
			exps = append(exps, Export{Name: it.name, Addr: base + *exp})
		}
		for _, c := range children {
			name := it.name + c.label
			if len(name) > maxExportName {
				err = cmp.Or(err, error(&FormatError{int64(it.off), "export trie: symbol name too long", len(name)}))
				break
			}
			if budget -= len(name); budget < 0 {
				// Not one damaged node but the whole trie: stop.
				err = cmp.Or(err, error(&FormatError{int64(it.off), "export trie: names far larger than the trie", nil}))
				stack = nil
				break
			}
			stack = append(stack, item{c.off, name})
		}
		firstErr = cmp.Or(firstErr, err)
	}
	sort.Slice(exps, func(i, j int) bool {
		if exps[i].Addr != exps[j].Addr {
			return exps[i].Addr < exps[j].Addr
		}
		return exps[i].Name < exps[j].Name
	})
	return exps, firstErr
}

// exportEdge is one edge of an export trie node.
type exportEdge struct {
	label string
	off   uint64
}

// readExportNode reads the node at off, marking it seen: the address it
// exports (nil for none) and its edges.
func readExportNode(data []byte, off uint64, seen []bool) (*uint64, []exportEdge, error) {
	bad := func(msg string, val any) error { return &FormatError{int64(off), "export trie: " + msg, val} }
	if off >= uint64(len(data)) {
		return nil, nil, bad("node offset past the end of the trie", off)
	}
	if seen[off] {
		return nil, nil, bad("node reached twice", off)
	}
	seen[off] = true
	p := int(off)
	termSize, p, err := leb128.Uint(data, p)
	if err != nil {
		return nil, nil, bad(err.Error(), nil)
	}
	if termSize > uint64(len(data)-p) {
		return nil, nil, bad("terminal size past the end of the trie", termSize)
	}
	children := p + int(termSize)
	var exp *uint64
	if termSize > 0 {
		term := data[p:children]
		flags, n, err := leb128.Uint(term, 0)
		if err != nil {
			return nil, nil, bad("terminal flags: "+err.Error(), nil)
		}
		if flags&exportReexport == 0 && flags&exportKindMask != exportAbsolute {
			// For a stub-and-resolver export the stub comes first, then
			// the resolver: the stub is the symbol's address.
			addr, _, err := leb128.Uint(term, n)
			if err != nil {
				return nil, nil, bad("terminal address: "+err.Error(), nil)
			}
			exp = &addr
		}
	}
	if children >= len(data) {
		return exp, nil, bad("child count past the end of the trie", nil)
	}
	nchild := int(data[children])
	p = children + 1
	var edges []exportEdge
	for i := 0; i < nchild; i++ {
		nul := bytes.IndexByte(data[p:], 0)
		if nul < 0 {
			return exp, edges, bad("unterminated edge label", nil)
		}
		label := data[p : p+nul]
		p += nul + 1
		var child uint64
		var err error
		if child, p, err = leb128.Uint(data, p); err != nil {
			return exp, edges, bad("child offset: "+err.Error(), nil)
		}
		edges = append(edges, exportEdge{string(label), child})
	}
	return exp, edges, nil
}

// ReadSegment returns a segment's file bytes (FileSize of them).
func (im *Image) ReadSegment(seg Segment) ([]byte, error) {
	if im == nil || im.hdr == nil {
		return nil, ErrNoHeader
	}
	b, err := im.src.read(seg.Offset, seg.FileSize, "segment "+seg.Name, 0)
	if err != nil {
		return nil, im.wrap(err)
	}
	return b, nil
}
