//go:build unicorn

package emu

import (
	"encoding/binary"
	"fmt"

	"github.com/stackimage/stackimage/image"
)

// loadFacts are the few load-command facts the loader needs beyond the
// image's segments: whether anything would have to be fixed up by dyld or
// a linker, and the LC_MAIN entry point. image decodes the commands.
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

// maxRelocsPerFile bounds the relocation scan of a hostile file.
const maxRelocsPerFile = 1 << 20

// scanLoadCommands gathers the load facts of im, a thin file whose bytes
// are data: the load commands and sections come from image, and only the
// relocation entries the sections point at are read here, checked against
// the data.
func scanLoadCommands(im *image.Image, data []byte) (*loadFacts, error) {
	h := im.Header()
	f := &loadFacts{fileType: uint32(h.Type)}
	for _, lc := range im.LoadCommands() {
		switch lc.Cmd {
		case image.LoadCmdDyldInfo, image.LoadCmdDyldInfoOnly:
			di, err := lc.DyldInfo(h.ByteOrder)
			if err != nil {
				return nil, fmt.Errorf("emu: %w", err)
			}
			f.rebaseSize = di.RebaseSize
			f.bindSize = di.BindSize + di.WeakBindSize + di.LazyBindSize
		case image.LoadCmdDyldChainedFixups:
			f.chainedFixups = true
		case image.LoadCmdMain:
			off, _, err := lc.EntryPoint(h.ByteOrder)
			if err != nil {
				return nil, fmt.Errorf("emu: %w", err)
			}
			f.hasMain, f.entryOff = true, off
		}
	}
	if err := f.scanRelocs(im.Sections, data, h.ByteOrder); err != nil {
		return nil, err
	}
	return f, nil
}

// scanRelocs reads the relocation entries of the sections.
func (f *loadFacts) scanRelocs(sections []image.Section, data []byte, bo binary.ByteOrder) error {
	for _, s := range sections {
		reloff, nreloc := uint64(s.RelOff), uint64(s.NReloc)
		// Debug sections (DWARF) are mapped but never read by the code:
		// their relocations do not change how it runs.
		const sAttrDebug = 0x02000000
		if nreloc == 0 || s.Flags&sAttrDebug != 0 {
			continue
		}
		if f.relocSectionsTotal+int(min(nreloc, maxRelocsPerFile+1)) > maxRelocsPerFile {
			return fmt.Errorf("emu: section %s: more than %d relocations in the file", s.Name, maxRelocsPerFile)
		}
		if reloff+nreloc*8 > uint64(len(data)) {
			return fmt.Errorf("emu: section %s: %d relocations at offset %#x run past the end of the %d-byte file", s.Name, nreloc, reloff, len(data))
		}
		f.relocSectionsTotal += int(nreloc)
		for r := uint64(0); r < nreloc; r++ {
			w0, w1 := bo.Uint32(data[reloff+8*r:]), bo.Uint32(data[reloff+8*r+4:])
			var ri relocInfo
			if w0&0x80000000 != 0 { // R_SCATTERED
				ri = relocInfo{section: s.Name, scattered: true, addr: w0 & 0xFFFFFF,
					pcrel: w0>>30&1 == 1, length: w0 >> 28 & 3, typ: w0 >> 24 & 0xF}
			} else {
				ri = relocInfo{section: s.Name, addr: w0,
					pcrel: w1>>24&1 == 1, length: w1 >> 25 & 3, extern: w1>>27&1 == 1, typ: w1 >> 28}
			}
			f.relocs = append(f.relocs, ri)
		}
	}
	return nil
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
