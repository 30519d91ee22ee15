package symindex

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"slices"

	"github.com/stackimage/stackimage/debuginfo"
	"github.com/stackimage/stackimage/symtab"
	"github.com/stackimage/stackimage/uuid"
)

// Segment is one segment of the image, as a symbolizer needs it to place
// addresses: name, unslid range and protection.
type Segment struct {
	Name       string
	Addr, Size uint64
	Prot       uint32 // VM_PROT_* bits; VM_PROT_EXECUTE (4) marks code
}

// Input is what Write stores for one image.
type Input struct {
	UUID       uuid.UUID
	CPUType    uint32
	CPUSubtype uint32
	FileType   uint32 // Mach-O filetype (MH_EXECUTE is 2); 0 when unknown
	// Name is the file the index was made from, kept for messages.
	Name     string
	Segments []Segment
	// Symbols are the image's symbol tables in order of preference (the
	// binary's before its dSYM's). A lookup answers as
	// symbolize.Entry.Symbol does: a symbol table name beats an export,
	// which beats a bare function start; among equals the closest wins.
	Symbols []*symtab.Table
	// Debug are the DWARF indexes in order: a lookup answers from the
	// first that knows the address.
	Debug []*debuginfo.Index
}

// Write writes the index file for one image to w. The work is linear in
// the number of symbols and DWARF ranges (plus a sort of the range
// boundaries); it looks up every boundary in Debug once.
func Write(w io.Writer, in Input) error {
	if len(in.Symbols) > maxTables {
		return fmt.Errorf("symindex: %d symbol tables, at most %d fit a file", len(in.Symbols), maxTables)
	}
	b := &builder{strs: map[string]uint32{}, nodeIDs: map[nodeKey]int32{}, fileIDs: map[string]uint32{}, langIDs: map[debuginfo.Lang]uint8{}}
	var secs []section
	add := func(kind, table uint32, data []byte) {
		secs = append(secs, section{kind: kind, table: table, data: data})
	}
	add(kindImageName, 0, le.AppendUint32(nil, b.str(in.Name)))
	var segs []byte
	for _, s := range in.Segments {
		segs = le.AppendUint32(segs, b.str(s.Name))
		segs = le.AppendUint32(segs, s.Prot)
		segs = le.AppendUint64(segs, s.Addr)
		segs = le.AppendUint64(segs, s.Size)
	}
	add(kindSegments, 0, segs)
	for ti, t := range in.Symbols {
		n := t.Len()
		var ranges []byte
		for _, r := range t.Sections() {
			ranges = le.AppendUint64(ranges, r.Start)
			ranges = le.AppendUint64(ranges, r.End)
			ranges = append(ranges, r.Index, 0, 0, 0, 0, 0, 0, 0)
		}
		addrs := make([]byte, 0, 8*n)
		var top []byte
		names := make([]byte, 0, 4*n)
		info := make([]byte, 0, 2*n)
		for i := 0; i < n; i++ {
			e := t.Entry(i)
			if i%blockSize == 0 {
				top = le.AppendUint64(top, e.Addr)
			}
			addrs = le.AppendUint64(addrs, e.Addr)
			ref := noString
			if e.Source != symtab.SourceFunctionStarts {
				ref = b.str(e.RawName)
			}
			names = le.AppendUint32(names, ref)
			info = append(info, e.Section, uint8(e.Source))
		}
		for _, s := range []section{{kind: kindSymRanges, data: ranges}, {kind: kindSymAddrs, data: addrs},
			{kind: kindSymTop, data: top}, {kind: kindSymNames, data: names}, {kind: kindSymInfo, data: info}} {
			add(s.kind, uint32(ti), s.data)
		}
	}
	blocks, stream := b.lines(in.Debug)
	add(kindNodes, 0, b.nodes)
	var files []byte
	for _, ref := range b.files {
		files = le.AppendUint32(files, ref)
	}
	add(kindFiles, 0, files)
	var langs []byte
	for _, ref := range b.langs {
		langs = le.AppendUint32(langs, ref)
	}
	add(kindLangs, 0, langs)
	add(kindLineBlocks, 0, blocks)
	add(kindLineStream, 0, stream)
	add(kindStrings, 0, b.blob)
	if uint64(len(b.blob)) >= math.MaxUint32 {
		return fmt.Errorf("symindex: string table of %d bytes is too large", len(b.blob))
	}
	return writeFile(w, in, secs)
}

// section is one section before it is laid out.
type section struct {
	kind, table uint32
	data        []byte
}

// writeFile lays the sections out after the header and directory, each
// 8-byte aligned, and writes header, directory and sections.
func writeFile(w io.Writer, in Input, secs []section) error {
	dirEnd := uint64(headerSize + dirEntrySize*len(secs))
	off := dirEnd
	offs := make([]uint64, len(secs))
	for i, s := range secs {
		off = (off + 7) &^ 7
		offs[i] = off
		off += uint64(len(s.data))
	}
	size := off
	dir := make([]byte, 0, dirEntrySize*len(secs))
	for i, s := range secs {
		dir = le.AppendUint32(dir, s.kind)
		dir = le.AppendUint32(dir, s.table)
		dir = le.AppendUint64(dir, offs[i])
		dir = le.AppendUint64(dir, uint64(len(s.data)))
	}
	// The checksum covers the directory, the padding and the sections.
	crc := crc32.Update(0, castagnoli(), dir)
	pos := dirEnd
	var zeros [8]byte
	for i, s := range secs {
		crc = crc32.Update(crc, castagnoli(), zeros[:offs[i]-pos])
		crc = crc32.Update(crc, castagnoli(), s.data)
		pos = offs[i] + uint64(len(s.data))
	}
	hdr := make([]byte, headerSize)
	copy(hdr[offMagic:], Magic)
	le.PutUint32(hdr[offVersion:], Version)
	le.PutUint32(hdr[offSections:], uint32(len(secs)))
	copy(hdr[offUUID:], in.UUID[:])
	le.PutUint32(hdr[offCPUType:], in.CPUType)
	le.PutUint32(hdr[offCPUSubtype:], in.CPUSubtype)
	le.PutUint64(hdr[offFileSize:], size)
	le.PutUint32(hdr[offChecksum:], crc)
	le.PutUint32(hdr[offFileType:], in.FileType)

	bw := bufio.NewWriterSize(w, 1<<16)
	bw.Write(hdr)
	bw.Write(dir)
	pos = dirEnd
	for i, s := range secs {
		bw.Write(zeros[:offs[i]-pos])
		bw.Write(s.data)
		pos = offs[i] + uint64(len(s.data))
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("symindex: writing: %w", err)
	}
	return nil
}

// builder collects the strings, nodes and files while the sections are
// made.
type builder struct {
	blob []byte
	strs map[string]uint32

	nodes   []byte // nodeSize records
	nodeIDs map[nodeKey]int32
	files   []uint32 // string refs
	fileIDs map[string]uint32
	langs   []uint32 // string refs
	langIDs map[debuginfo.Lang]uint8
}

// lang returns the language table index of l plus one; 0 for none, and
// for languages beyond the first maxLangs (there are six).
func (b *builder) lang(l debuginfo.Lang) uint8 {
	if l == "" {
		return 0
	}
	if id, ok := b.langIDs[l]; ok {
		return id
	}
	if len(b.langs) >= maxLangs {
		return 0
	}
	b.langs = append(b.langs, b.str(string(l)))
	id := uint8(len(b.langs))
	b.langIDs[l] = id
	return id
}

// str returns the reference of s in the string blob, adding it once.
func (b *builder) str(s string) uint32 {
	if ref, ok := b.strs[s]; ok {
		return ref
	}
	ref := uint32(len(b.blob))
	b.blob = binary.AppendUvarint(b.blob, uint64(len(s)))
	b.blob = append(b.blob, s...)
	b.strs[s] = ref
	return ref
}

// file returns the file table index of path plus one; 0 for no file.
func (b *builder) file(path string) uint32 {
	if path == "" {
		return 0
	}
	if id, ok := b.fileIDs[path]; ok {
		return id
	}
	b.files = append(b.files, b.str(path))
	id := uint32(len(b.files))
	b.fileIDs[path] = id
	return id
}

// nodeKey identifies one node of the inline tree: a function under its
// parent, called from a given position of the parent (for the outermost
// function, no position).
type nodeKey struct {
	parent            int32
	function, linkage string
	lang              debuginfo.Lang
	inlined           bool
	callFile          string
	callLine, callCol int
}

// node returns the node for k, adding it once. A node record (nodeSize
// bytes) is: parent u32 (^0 for none; always below the node's own
// index), function and linkage name string refs, call file (file table
// index plus one, 0 for none), call line u32, call column u16 (at most
// maxColumn), language (table index plus one) u8, flags u8 (bit 0:
// inlined).
func (b *builder) node(k nodeKey) int32 {
	if id, ok := b.nodeIDs[k]; ok {
		return id
	}
	id := int32(len(b.nodes) / nodeSize)
	b.nodes = le.AppendUint32(b.nodes, uint32(k.parent))
	b.nodes = le.AppendUint32(b.nodes, b.optStr(k.function))
	b.nodes = le.AppendUint32(b.nodes, b.optStr(k.linkage))
	b.nodes = le.AppendUint32(b.nodes, b.file(k.callFile))
	b.nodes = le.AppendUint32(b.nodes, clampU32(k.callLine))
	b.nodes = le.AppendUint16(b.nodes, uint16(min(clampU32(k.callCol), maxColumn)))
	flags := byte(0)
	if k.inlined {
		flags = 1
	}
	b.nodes = append(b.nodes, b.lang(k.lang), flags)
	b.nodeIDs[k] = id
	return id
}

func (b *builder) optStr(s string) uint32 {
	if s == "" {
		return noString
	}
	return b.str(s)
}

func clampU32(v int) uint32 {
	return uint32(max(0, min(v, math.MaxUint32)))
}

// lineRange is the answer of the DWARF indexes from addr up to the next
// range: found or not, the innermost node (plus one; 0 for none) and the
// innermost frame's position.
type lineRange struct {
	addr      uint64
	ok        bool
	leaf      uint32
	file      uint32
	line, col uint32
}

// lines looks every boundary of the DWARF indexes up and returns the line
// block index and the encoded ranges. Consecutive ranges with the same
// answer are merged.
func (b *builder) lines(debug []*debuginfo.Index) (blocks, stream []byte) {
	var bounds []uint64
	for _, ix := range debug {
		bounds = append(bounds, ix.Boundaries()...)
	}
	bounds = sortUnique(bounds)
	var ranges []lineRange
	for _, addr := range bounds {
		r := lineRange{addr: addr}
		for _, ix := range debug {
			frames, err := ix.Lookup(addr)
			if err != nil {
				continue
			}
			r.ok = true
			r.leaf = b.chain(frames)
			r.file = b.file(frames[0].File)
			r.line, r.col = clampU32(frames[0].Line), clampU32(frames[0].Column)
			break
		}
		if n := len(ranges); n > 0 && sameAnswer(ranges[n-1], r) {
			continue
		}
		if len(ranges) == 0 && !r.ok {
			continue // nothing below the first range is found either
		}
		ranges = appendRange(ranges, r)
	}
	for i := 0; i < len(ranges); i += blockSize {
		blk := ranges[i:min(i+blockSize, len(ranges))]
		blocks = le.AppendUint64(blocks, blk[0].addr)
		blocks = le.AppendUint32(blocks, uint32(len(stream)))
		blocks = le.AppendUint32(blocks, uint32(len(blk)))
		prev := lineRange{addr: blk[0].addr}
		for _, r := range blk {
			stream = encodeRange(stream, prev, r)
			prev = r
		}
	}
	return blocks, stream
}

// appendRange appends r to ranges. A gap too wide for the stream's
// address step is bridged by repeating the answer before it.
func appendRange(ranges []lineRange, r lineRange) []lineRange {
	for n := len(ranges); n > 0 && r.addr-ranges[n-1].addr > maxAddrDelta; n++ {
		bridge := ranges[n-1]
		bridge.addr += maxAddrDelta
		ranges = append(ranges, bridge)
	}
	return append(ranges, r)
}

// encodeRange appends one range: a uvarint holding the address step from
// the previous range and the flag bits, then the leaf node and file as
// zigzag deltas from the previous range's when they differ, the line as a
// zigzag delta, and the column when it is not 0.
func encodeRange(out []byte, prev, r lineRange) []byte {
	flags := uint64(0)
	if r.ok {
		flags |= flagFound
	}
	if r.leaf != prev.leaf {
		flags |= flagLeaf
	}
	if r.file != prev.file {
		flags |= flagFile
	}
	if r.col != 0 {
		flags |= flagColumn
	}
	out = binary.AppendUvarint(out, (r.addr-prev.addr)<<lineFlagBits|flags)
	if flags&flagLeaf != 0 {
		out = binary.AppendVarint(out, int64(r.leaf)-int64(prev.leaf))
	}
	if flags&flagFile != 0 {
		out = binary.AppendVarint(out, int64(r.file)-int64(prev.file))
	}
	out = binary.AppendVarint(out, int64(r.line)-int64(prev.line))
	if flags&flagColumn != 0 {
		out = binary.AppendUvarint(out, uint64(r.col))
	}
	return out
}

func sameAnswer(a, b lineRange) bool {
	a.addr = b.addr
	return a == b
}

// chain adds the nodes of frames (innermost first) and returns the
// innermost node plus one, or 0 when the frames name no function (a line
// without a function).
func (b *builder) chain(frames []debuginfo.Frame) uint32 {
	if len(frames) == 1 && frames[0].Function == "" && frames[0].LinkageName == "" && frames[0].Lang == "" && !frames[0].Inlined {
		return 0
	}
	parent := int32(-1)
	for k := len(frames) - 1; k >= 0; k-- {
		f := frames[k]
		key := nodeKey{parent: parent, function: f.Function, linkage: f.LinkageName, lang: f.Lang, inlined: f.Inlined}
		if k < len(frames)-1 {
			// The frame outside this one stands at this one's call site.
			out := frames[k+1]
			key.callFile, key.callLine, key.callCol = out.File, out.Line, out.Column
		}
		parent = b.node(key)
	}
	return uint32(parent) + 1
}

// sortUnique sorts a and drops repeats.
func sortUnique(a []uint64) []uint64 {
	slices.Sort(a)
	return slices.Compact(a)
}
