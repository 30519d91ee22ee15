package symindex

import (
	"encoding/binary"
	"slices"

	"github.com/stackimage/stackimage/debuginfo"
	"github.com/stackimage/stackimage/demangle"
)

// maxDepth bounds the inline chain a lookup follows, as debuginfo does.
const maxDepth = 256

// Source returns the source-level frames at the unslid address, innermost
// first, as the DWARF indexes the file was made from answer; ok is false
// when they did not cover the address (or the bytes that would answer
// are damaged: see Err).
func (ix *Index) Source(addr uint64) (frames []debuginfo.Frame, ok bool) {
	return ix.source(addr, false)
}

// SourceMangled is Source for callers that print linkage names (atos
// --no-demangle): a frame whose Function is the demangled linkage name
// (C++, Rust, Swift) gets the linkage name as its Function instead, and
// no demangled name is read.
func (ix *Index) SourceMangled(addr uint64) (frames []debuginfo.Frame, ok bool) {
	return ix.source(addr, true)
}

func (ix *Index) source(addr uint64, mangled bool) ([]debuginfo.Frame, bool) {
	// The chain is built on the stack and copied out at its length: one
	// allocation per lookup.
	var buf [8]debuginfo.Frame
	frames, ok := ix.appendSource(buf[:0], addr, mangled)
	if !ok || len(frames) == 0 {
		return nil, ok
	}
	return slices.Clone(frames), true
}

// AppendSource is Source appending the frames to dst and returning the
// extended slice: a caller answering many addresses reuses one slice
// instead of allocating one per lookup. dst is returned unchanged when ok
// is false.
func (ix *Index) AppendSource(dst []debuginfo.Frame, addr uint64) (frames []debuginfo.Frame, ok bool) {
	return ix.appendSource(dst, addr, false)
}

// AppendSourceMangled is SourceMangled appending to dst, as AppendSource.
func (ix *Index) AppendSourceMangled(dst []debuginfo.Frame, addr uint64) (frames []debuginfo.Frame, ok bool) {
	return ix.appendSource(dst, addr, true)
}

func (ix *Index) appendSource(dst []debuginfo.Frame, addr uint64, mangled bool) ([]debuginfo.Frame, bool) {
	r, ok := ix.lineRange(addr)
	if !ok || !r.ok {
		return dst, false
	}
	if r.leaf == 0 {
		return append(dst, debuginfo.Frame{File: ix.file(r.file), Line: int(r.line), Column: int(r.col)}), true
	}
	start := len(dst)
	file, line, col := ix.file(r.file), int(r.line), int(r.col)
	// Each node is decoded from the tree's bytes, not kept: a chain's
	// nodes lie side by side in the tree, so that decoding them again
	// costs less than finding them in a cache of decoded nodes, whose
	// slots and nodes lie all over memory (on the big generated dSYM,
	// 100,000 random addresses reach 97,000 distinct nodes: a cache
	// mostly missed, and an allocation per node).
	off := uint64(r.leaf) - 1
	for depth := 0; depth < maxDepth; depth++ {
		n, ok := ix.node(off)
		if !ok {
			break
		}
		f := debuginfo.Frame{
			LinkageName: ix.str(n.linkage),
			Lang:        demangle.Lang(ix.lang(n.lang)),
			Inlined:     n.flags&nodeInlined != 0,
			File:        file, Line: line, Column: col,
		}
		switch {
		case n.flags&nodeDemangled != 0 && mangled:
			f.Function = f.LinkageName
		case n.flags&nodeDemangled != 0:
			f.Function = ix.demangled(n.linkage, f.LinkageName)
		default:
			f.Function = ix.str(n.function)
		}
		dst = append(dst, f)
		file, line, col = ix.file(n.callFile), int(n.callLine), int(n.callCol)
		if n.parentDelta == 0 || n.parentDelta > off {
			break // parents come first: anything else is a loop
		}
		off -= n.parentDelta
	}
	if ix.Err() != nil {
		return dst[:start], false // no answer from damaged bytes
	}
	return dst, true
}

// decodedNode is one node of the inline tree.
type decodedNode struct {
	flags                       uint64
	parentDelta                 uint64
	function, linkage           uint32
	lang                        uint8
	callFile, callLine, callCol uint32
}

// maxNodeSize bounds the bytes of one node: eight uvarints.
const maxNodeSize = 8 * binary.MaxVarintLen64

// node decodes the node at off in the inline tree; ok is false when off
// is outside the tree, the node's bytes are damaged (Err then says where)
// or it cannot be decoded.
func (ix *Index) node(off uint64) (n decodedNode, ok bool) {
	if off >= uint64(len(ix.nodes.b)) {
		return decodedNode{}, false
	}
	end := min(off+maxNodeSize, uint64(len(ix.nodes.b)))
	if !ix.verifyRange(ix.nodes.off+off, ix.nodes.off+end) {
		return decodedNode{}, false
	}
	b := ix.nodes.b[off:end]
	i := 0
	if n.flags, i = uvarintAt(b, i); i < 0 {
		return decodedNode{}, false
	}
	if n.parentDelta, i = uvarintAt(b, i); i < 0 {
		return decodedNode{}, false
	}
	var v uint64
	n.function, n.linkage = noString, noString
	if n.flags&nodeFunction != 0 {
		if v, i = uvarintAt(b, i); i < 0 {
			return decodedNode{}, false
		}
		n.function = sat32(v)
	}
	if n.flags&nodeLinkage != 0 {
		if v, i = uvarintAt(b, i); i < 0 {
			return decodedNode{}, false
		}
		n.linkage = sat32(v)
	}
	if n.flags&nodeCall != 0 {
		if v, i = uvarintAt(b, i); i < 0 {
			return decodedNode{}, false
		}
		n.callFile = sat32(v)
		if v, i = uvarintAt(b, i); i < 0 {
			return decodedNode{}, false
		}
		n.callLine = sat32(v)
		if v, i = uvarintAt(b, i); i < 0 {
			return decodedNode{}, false
		}
		n.callCol = sat32(v)
	}
	n.lang = uint8(min(n.flags>>nodeLangShift, 255))
	return n, true
}

// file returns the path of file table entry id-1; "" for 0 or a bad id.
func (ix *Index) file(id uint32) string {
	if id == 0 || uint64(id) > uint64(len(ix.files.b)/4) || !ix.verifyRange(ix.files.off+4*uint64(id-1), ix.files.off+4*uint64(id)) {
		return ""
	}
	return ix.str(le.Uint32(ix.files.b[4*(id-1):]))
}

// lang returns the name of language table entry id-1; "" for 0 or a bad
// id.
func (ix *Index) lang(id uint8) string {
	if id == 0 {
		return ""
	}
	names := ix.langNames.Load()
	if names == nil {
		if names = ix.loadLangs(); names == nil {
			return ""
		}
	}
	if int(id) > len(*names) {
		return ""
	}
	return (*names)[id-1]
}

// loadLangs looks up the names of the language table, which every frame
// asks for, and keeps them; nil when the table is damaged. Names read
// while a damaged chunk is known are not kept (one of them may read "").
func (ix *Index) loadLangs() *[]string {
	if !ix.verify(ix.langs) {
		return nil
	}
	names := make([]string, min(len(ix.langs.b)/4, 255)) // ids are bytes
	for i := range names {
		names[i] = ix.str(le.Uint32(ix.langs.b[4*i:]))
	}
	if ix.Err() != nil {
		return &names
	}
	ix.langNames.CompareAndSwap(nil, &names)
	return ix.langNames.Load()
}
