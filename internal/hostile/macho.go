package hostile

import (
	"encoding/binary"

	"github.com/stackimage/stackimage/internal/leb128"
)

// Layout of the files MachO builds. __TEXT maps the first textSize bytes
// of the file at TextAddr; its __text section is the second page, filled
// with arm64 NOPs; the tables follow in __LINKEDIT.
const (
	// TextAddr is __TEXT's vmaddr in every file MachO builds.
	TextAddr = 0x100000000
	// CodeAddr is the start of the __text section: TextAddr + CodeOffset.
	CodeAddr   = TextAddr + CodeOffset
	CodeOffset = 0x1000
	// CodeSize is the __text section's size.
	CodeSize = 0x1000
	textSize = CodeOffset + CodeSize
)

// Symbol is one nlist_64 entry of a built file: a defined external symbol
// of the __text section (n_type N_SECT|N_EXT, n_sect 1).
type Symbol struct {
	// Name is the symbol's raw name ("_main"); MachO.Bytes adds it to the
	// string table unless MachO.Strings is set.
	Name string
	// Strx is the name's offset in MachO.Strings, used when that is set:
	// hostile tables point several names into one string, or past the end.
	Strx uint32
	Addr uint64
}

// MachO describes a small arm64 MH_EXECUTE with LC_UUID, LC_SYMTAB and,
// when given, LC_FUNCTION_STARTS and LC_DYLD_EXPORTS_TRIE. The tables are
// written as given, however malformed: that is the point.
type MachO struct {
	UUID    [16]byte
	Symbols []Symbol
	// Strings, when not nil, is the string table verbatim, and Symbols
	// name their strings by Strx.
	Strings []byte
	// FunctionStarts is LC_FUNCTION_STARTS's ULEB128 data; nil for none.
	FunctionStarts []byte
	// ExportTrie is LC_DYLD_EXPORTS_TRIE's data; nil for none.
	ExportTrie []byte
	// DWARF holds sections of a __DWARF segment ("__debug_info", ...),
	// written after the tables, in order.
	DWARF []Section
}

// Section is a section of the __DWARF segment: its name (at most 16
// bytes, as Mach-O cuts them) and contents.
type Section struct {
	Name string
	Data []byte
}

// Mach-O constants, as <mach-o/loader.h> defines them.
const (
	mhMagic64         = 0xfeedfacf
	cpuTypeARM64      = 0x0100000c
	mhExecute         = 2
	lcSegment64       = 0x19
	lcSymtab          = 0x2
	lcUUID            = 0x1b
	lcFunctionStarts  = 0x26
	lcDyldExportsTrie = 0x80000033
	segCmdSize        = 72
	sectSize          = 80
	nlist64Size       = 16
	arm64NOP          = 0xd503201f
)

// Bytes builds the file.
func (m MachO) Bytes() []byte {
	le := binary.LittleEndian
	strs := m.Strings
	syms := make([]byte, 0, len(m.Symbols)*nlist64Size)
	if strs == nil {
		strs = []byte{' ', 0}
	}
	for _, s := range m.Symbols {
		strx := s.Strx
		if m.Strings == nil {
			strx = uint32(len(strs))
			strs = append(append(strs, s.Name...), 0)
		}
		var e [nlist64Size]byte
		le.PutUint32(e[0:], strx)
		e[4], e[5] = 0x0f, 1 // N_SECT|N_EXT, section 1 (__text)
		le.PutUint64(e[8:], s.Addr)
		syms = append(syms, e[:]...)
	}

	// The __LINKEDIT data, each table 8-aligned.
	var linkedit []byte
	place := func(b []byte) (off uint32) {
		for len(linkedit)%8 != 0 {
			linkedit = append(linkedit, 0)
		}
		off = uint32(textSize + len(linkedit))
		linkedit = append(linkedit, b...)
		return off
	}
	symoff := place(syms)
	stroff := place(strs)
	var fsOff, trieOff uint32
	if m.FunctionStarts != nil {
		fsOff = place(m.FunctionStarts)
	}
	if m.ExportTrie != nil {
		trieOff = place(m.ExportTrie)
	}
	linkeditSize := len(linkedit)
	dwarfOffs := make([]uint32, len(m.DWARF))
	for i, sec := range m.DWARF {
		dwarfOffs[i] = place(sec.Data)
	}

	var cmds []byte
	ncmds := 0
	cmd := func(b []byte) { cmds = append(cmds, b...); ncmds++ }
	seg := func(name string, addr, size, off, fileSize uint64, prot uint32, sects int) []byte {
		b := make([]byte, segCmdSize)
		le.PutUint32(b[0:], lcSegment64)
		le.PutUint32(b[4:], uint32(segCmdSize+sects*sectSize))
		copy(b[8:24], name)
		le.PutUint64(b[24:], addr)
		le.PutUint64(b[32:], size)
		le.PutUint64(b[40:], off)
		le.PutUint64(b[48:], fileSize)
		le.PutUint32(b[56:], prot)
		le.PutUint32(b[60:], prot)
		le.PutUint32(b[64:], uint32(sects))
		return b
	}
	text := seg("__TEXT", TextAddr, textSize, 0, textSize, 5, 1)
	sect := make([]byte, sectSize)
	copy(sect[0:16], "__text")
	copy(sect[16:32], "__TEXT")
	le.PutUint64(sect[32:], CodeAddr)
	le.PutUint64(sect[40:], CodeSize)
	le.PutUint32(sect[48:], CodeOffset)
	le.PutUint32(sect[52:], 2)          // align 2^2
	le.PutUint32(sect[64:], 0x80000400) // S_ATTR_PURE_INSTRUCTIONS|S_ATTR_SOME_INSTRUCTIONS
	cmd(append(text, sect...))
	linkSize := uint64(linkeditSize+0xfff) &^ 0xfff
	cmd(seg("__LINKEDIT", TextAddr+textSize, linkSize, textSize, uint64(linkeditSize), 1, 0))
	if len(m.DWARF) > 0 {
		start := uint64(dwarfOffs[0])
		end := uint64(textSize + len(linkedit))
		dw := seg("__DWARF", TextAddr+textSize+linkSize, end-start, start, end-start, 3, len(m.DWARF))
		for i, sec := range m.DWARF {
			b := make([]byte, sectSize)
			copy(b[0:16], sec.Name)
			copy(b[16:32], "__DWARF")
			le.PutUint64(b[32:], TextAddr+textSize+linkSize+uint64(dwarfOffs[i])-start)
			le.PutUint64(b[40:], uint64(len(sec.Data)))
			le.PutUint32(b[48:], dwarfOffs[i])
			dw = append(dw, b...)
		}
		cmd(dw)
	}
	uuid := make([]byte, 24)
	le.PutUint32(uuid[0:], lcUUID)
	le.PutUint32(uuid[4:], 24)
	copy(uuid[8:], m.UUID[:])
	cmd(uuid)
	st := make([]byte, 24)
	le.PutUint32(st[0:], lcSymtab)
	le.PutUint32(st[4:], 24)
	le.PutUint32(st[8:], symoff)
	le.PutUint32(st[12:], uint32(len(m.Symbols)))
	le.PutUint32(st[16:], stroff)
	le.PutUint32(st[20:], uint32(len(strs)))
	cmd(st)
	linkeditCmd := func(kind, off uint32, size int) {
		b := make([]byte, 16)
		le.PutUint32(b[0:], kind)
		le.PutUint32(b[4:], 16)
		le.PutUint32(b[8:], off)
		le.PutUint32(b[12:], uint32(size))
		cmd(b)
	}
	if m.FunctionStarts != nil {
		linkeditCmd(lcFunctionStarts, fsOff, len(m.FunctionStarts))
	}
	if m.ExportTrie != nil {
		linkeditCmd(lcDyldExportsTrie, trieOff, len(m.ExportTrie))
	}

	out := make([]byte, textSize, textSize+len(linkedit))
	le.PutUint32(out[0:], mhMagic64)
	le.PutUint32(out[4:], cpuTypeARM64)
	le.PutUint32(out[12:], mhExecute)
	le.PutUint32(out[16:], uint32(ncmds))
	le.PutUint32(out[20:], uint32(len(cmds)))
	if 32+len(cmds) > CodeOffset {
		panic("hostile: load commands overflow the first page")
	}
	copy(out[32:], cmds)
	for off := CodeOffset; off < textSize; off += 4 {
		le.PutUint32(out[off:], arm64NOP)
	}
	return append(out, linkedit...)
}

// Fat wraps thin arm64 files (from MachO.Bytes, or damaged copies) into one
// fat file, each slice 16 KiB aligned. The slices keep the CPU type their
// header names, with the subtypes given: two arm64 slices must differ in
// subtype for a reader to tell them apart.
func Fat(slices [][]byte, subtypes []uint32) []byte {
	const align = 1 << 14
	be := binary.BigEndian
	out := make([]byte, align)
	be.PutUint32(out[0:], 0xcafebabe)
	be.PutUint32(out[4:], uint32(len(slices)))
	for i, s := range slices {
		off := len(out)
		e := out[8+20*i:]
		be.PutUint32(e[0:], binary.LittleEndian.Uint32(s[4:]))
		be.PutUint32(e[4:], subtypes[i])
		be.PutUint32(e[8:], uint32(off))
		be.PutUint32(e[12:], uint32(len(s)))
		be.PutUint32(e[16:], 14)
		out = append(out, s...)
		for len(out)%align != 0 {
			out = append(out, 0)
		}
	}
	return out
}

// ULEB128 appends v's unsigned LEB128 encoding to b.
func ULEB128(b []byte, v uint64) []byte { return leb128.AppendUint(b, v) }

// ExportTrie returns a well-formed export trie exporting each name at
// CodeAddr + its offset (names must not be prefixes of one another). When
// loopBack is set the root gets one more edge, labelled "_loop", leading
// back to the root itself: a cycle a naive walker follows forever.
func ExportTrie(names []string, offsets []uint64, loopBack bool) []byte {
	// The root's size depends on the child offsets it holds; ULEB128 sizes
	// settle after a few rounds.
	var root []byte
	rootSize := 0
	for round := 0; round < 4; round++ {
		var nodes []byte
		root = []byte{0, byte(len(names))} // no terminal; child count
		if loopBack {
			root[1]++
		}
		for i, n := range names {
			child := uint64(rootSize + len(nodes))
			root = append(append(root, n...), 0)
			root = ULEB128(root, child)
			term := ULEB128(ULEB128(nil, 0), CodeOffset+offsets[i])
			nodes = append(ULEB128(nodes, uint64(len(term))), term...)
			nodes = append(nodes, 0)
		}
		if loopBack {
			root = append(append(root, "_loop"...), 0, 0)
		}
		if len(root) == rootSize {
			return append(root, nodes...)
		}
		rootSize = len(root)
	}
	panic("hostile: export trie layout did not settle")
}
