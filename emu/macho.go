//go:build unicorn

package emu

import (
	"encoding/binary"
	"fmt"
)

// loadFacts are the few load-command facts the loader needs that the image
// package does not expose: whether anything would have to be fixed up by
// dyld or a linker, and the LC_MAIN entry point.
type loadFacts struct {
	fileType           uint32
	rebaseSize         uint32 // LC_DYLD_INFO(_ONLY) rebase opcodes
	bindSize           uint32 // bind + weak bind + lazy bind opcodes
	chainedFixups      bool   // LC_DYLD_CHAINED_FIXUPS present
	hasMain            bool
	entryOff           uint64 // LC_MAIN entryoff: file offset of the entry
	relocs             []relocInfo
	relocSectionsTotal int
}

// relocInfo is one relocation entry of an object file's section.
type relocInfo struct {
	section   string
	addr      uint32 // r_address or, scattered, its 24-bit address
	scattered bool
	pcrel     bool
	extern    bool
	length    uint32 // log2 of the width
	typ       uint32
}

// Load command numbers, from <mach-o/loader.h>.
const (
	lcSegment        = 0x1
	lcSegment64      = 0x19
	lcDyldInfo       = 0x22
	lcDyldInfoOnly   = 0x80000022
	lcMain           = 0x80000028
	lcChainedFixups  = 0x80000034
	machMagic32      = 0xfeedface
	machMagic64      = 0xfeedfacf
	maxRelocsPerFile = 1 << 20 // bounds the relocation scan of a hostile file
)

// scanLoadCommands reads a thin little-endian Mach-O file's header and load
// commands. Every offset and count is checked against the data.
func scanLoadCommands(data []byte) (*loadFacts, error) {
	le := binary.LittleEndian
	if len(data) < 28 {
		return nil, fmt.Errorf("emu: mach header: file is %d bytes, shorter than a header", len(data))
	}
	var hdrSize uint64
	switch magic := le.Uint32(data); magic {
	case machMagic32:
		hdrSize = 28
	case machMagic64:
		hdrSize = 32
	default:
		return nil, fmt.Errorf("emu: mach header: magic %#x is not a thin little-endian Mach-O", magic)
	}
	f := &loadFacts{fileType: le.Uint32(data[12:])}
	ncmds, sizeofcmds := uint64(le.Uint32(data[16:])), uint64(le.Uint32(data[20:]))
	if hdrSize+sizeofcmds > uint64(len(data)) {
		return nil, fmt.Errorf("emu: mach header: sizeofcmds %d runs past the end of the %d-byte file", sizeofcmds, len(data))
	}
	cmds := data[hdrSize : hdrSize+sizeofcmds]
	off := uint64(0)
	for i := uint64(0); i < ncmds; i++ {
		if off+8 > uint64(len(cmds)) {
			return nil, fmt.Errorf("emu: load command %d at offset %#x: past sizeofcmds", i, hdrSize+off)
		}
		cmd, size := le.Uint32(cmds[off:]), uint64(le.Uint32(cmds[off+4:]))
		if size < 8 || off+size > uint64(len(cmds)) {
			return nil, fmt.Errorf("emu: load command %d (%#x) at offset %#x: size %d out of bounds", i, cmd, hdrSize+off, size)
		}
		body := cmds[off : off+size]
		switch cmd {
		case lcDyldInfo, lcDyldInfoOnly:
			if len(body) < 48 {
				return nil, fmt.Errorf("emu: LC_DYLD_INFO at offset %#x: %d bytes, want 48", hdrSize+off, len(body))
			}
			f.rebaseSize = le.Uint32(body[12:])
			f.bindSize = le.Uint32(body[20:]) + le.Uint32(body[28:]) + le.Uint32(body[36:])
		case lcChainedFixups:
			f.chainedFixups = true
		case lcMain:
			if len(body) < 24 {
				return nil, fmt.Errorf("emu: LC_MAIN at offset %#x: %d bytes, want 24", hdrSize+off, len(body))
			}
			f.hasMain, f.entryOff = true, le.Uint64(body[8:])
		case lcSegment:
			if err := f.scanSections(data, body, 56, 68, hdrSize+off); err != nil {
				return nil, err
			}
		case lcSegment64:
			if err := f.scanSections(data, body, 72, 80, hdrSize+off); err != nil {
				return nil, err
			}
		}
		off += size
	}
	return f, nil
}

// scanSections reads the relocation entries of the sections of one segment
// command whose header is segSize bytes and whose section headers are
// sectSize bytes each (reloff and nreloc are the 7th and 8th words from the
// end of the name, address and size fields).
func (f *loadFacts) scanSections(data, body []byte, segSize, sectSize int, at uint64) error {
	le := binary.LittleEndian
	if len(body) < segSize {
		return fmt.Errorf("emu: segment command at offset %#x: %d bytes, want %d", at, len(body), segSize)
	}
	nsects := uint64(le.Uint32(body[segSize-8:]))
	if uint64(segSize)+nsects*uint64(sectSize) > uint64(len(body)) {
		return fmt.Errorf("emu: segment command at offset %#x: %d sections do not fit in %d bytes", at, nsects, len(body))
	}
	// reloff and nreloc follow sectname[16], segname[16], addr, size (4 or
	// 8 bytes each), offset and align.
	relOff := 16 + 16 + 2*4 + 8
	if sectSize == 80 {
		relOff = 16 + 16 + 2*8 + 8
	}
	for s := uint64(0); s < nsects; s++ {
		sh := body[uint64(segSize)+s*uint64(sectSize):]
		name := cstr(sh[:16])
		reloff, nreloc := uint64(le.Uint32(sh[relOff:])), uint64(le.Uint32(sh[relOff+4:]))
		flags := le.Uint32(sh[relOff+8:])
		// Debug sections (DWARF) are mapped but never read by the code:
		// their relocations do not change how it runs.
		const sAttrDebug = 0x02000000
		if nreloc == 0 || flags&sAttrDebug != 0 {
			continue
		}
		if f.relocSectionsTotal+int(min(nreloc, maxRelocsPerFile+1)) > maxRelocsPerFile {
			return fmt.Errorf("emu: section %s: more than %d relocations in the file", name, maxRelocsPerFile)
		}
		if reloff+nreloc*8 > uint64(len(data)) {
			return fmt.Errorf("emu: section %s: %d relocations at offset %#x run past the end of the %d-byte file", name, nreloc, reloff, len(data))
		}
		f.relocSectionsTotal += int(nreloc)
		for r := uint64(0); r < nreloc; r++ {
			w0, w1 := le.Uint32(data[reloff+8*r:]), le.Uint32(data[reloff+8*r+4:])
			var ri relocInfo
			if w0&0x80000000 != 0 { // R_SCATTERED
				ri = relocInfo{section: name, scattered: true, addr: w0 & 0xFFFFFF,
					pcrel: w0>>30&1 == 1, length: w0 >> 28 & 3, typ: w0 >> 24 & 0xF}
			} else {
				ri = relocInfo{section: name, addr: w0,
					pcrel: w1>>24&1 == 1, length: w1 >> 25 & 3, extern: w1>>27&1 == 1, typ: w1 >> 28}
			}
			f.relocs = append(f.relocs, ri)
		}
	}
	return nil
}

func cstr(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// i386 (generic) relocation types, from <mach-o/reloc.h>.
const (
	genericRelocVanilla      = 0
	genericRelocPair         = 1
	genericRelocSectDiff     = 2
	genericRelocLocalSectDif = 4
)

// checkObjectRelocs refuses an i386 object whose relocations would change
// its bytes when it is loaded as a whole at any address. Those that would
// not: PC-relative references to a local section (the assembler already
// wrote the displacement for the object's own layout, which is kept), and
// section differences (a difference of two addresses that move together).
// Anything else — an external symbol, an absolute address — needs a linker.
func checkObjectRelocs(f *loadFacts) error {
	for _, r := range f.relocs {
		ok := false
		switch {
		case r.scattered:
			ok = r.typ == genericRelocSectDiff || r.typ == genericRelocLocalSectDif || r.typ == genericRelocPair
		case r.extern:
			ok = false
		default:
			ok = r.typ == genericRelocVanilla && r.pcrel
		}
		if !ok {
			return fmt.Errorf("emu: object needs a linker: relocation at %s+%#x (type %d, pcrel %v, extern %v, scattered %v) is not position-independent",
				r.section, r.addr, r.typ, r.pcrel, r.extern, r.scattered)
		}
	}
	return nil
}
