//go:build unicorn

package emu

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"sort"

	"github.com/stackimage/stackimage/image"
)

// ObjectBase is where an object file's vmaddr 0 lands at slide 0. Object
// files start at address 0; loading them there would put code in the page
// every walker treats as a null pointer.
const ObjectBase = 0x10000

// maxImageFile bounds the file LoadFile reads into memory.
const maxImageFile = 256 << 20

// Loaded is an image mapped into a Machine.
type Loaded struct {
	Image *image.Image
	// Slide is what was added to every vmaddr of the image (for an object
	// file, ObjectBase plus the slide asked for).
	Slide uint64
	// LoadAddress is where __TEXT's vmaddr landed: the mach header's
	// address for an executable; for an object file, where vmaddr 0 landed.
	LoadAddress uint64
	// Size is the extent of the mapped segments from LoadAddress.
	Size uint64
	// Entry is the slid entry point from LC_MAIN; zero when the image has
	// none (object files: find _start with SymbolAddress).
	Entry uint64
}

// Contains reports whether the address lies in one of the image's mapped
// segments.
func (l *Loaded) Contains(addr uint64) bool {
	for _, s := range l.Image.Segments {
		if s.Name == "__PAGEZERO" {
			continue
		}
		if addr-l.Slide >= s.Addr && addr-l.Slide < s.Addr+s.Size {
			return true
		}
	}
	return false
}

// LoadFile loads the Mach-O file at path into the machine, the slice for
// the machine's architecture when the file is fat. Executables
// (MH_EXECUTE) are mapped as the kernel would, at vmaddr + slide; an i386
// object file (MH_OBJECT) at vmaddr + ObjectBase + slide, provided its
// relocations are all position-independent. Anything that would need dyld
// or a linker to run faithfully is refused: dylibs and bundles, binds,
// rebases (at a nonzero slide) and chained fixups. The slide must be a
// multiple of PageSize.
func (m *Machine) LoadFile(path string, slide uint64) (*Loaded, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("emu: %w", err)
	}
	if st.Size() > maxImageFile {
		return nil, fmt.Errorf("emu: %s: %d bytes, more than the %d this loader reads", path, st.Size(), maxImageFile)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("emu: %w", err)
	}
	return m.LoadBytes(data, path, slide)
}

// LoadBytes is LoadFile for a file's contents; name is used in errors and
// as the image's name.
func (m *Machine) LoadBytes(data []byte, name string, slide uint64) (*Loaded, error) {
	f, err := image.NewFile(bytes.NewReader(data), name)
	if err != nil {
		return nil, fmt.Errorf("emu: %w", err)
	}
	if f.Fat {
		// Relocations are read from data, a thin file's bytes.
		return nil, fmt.Errorf("emu: %s is a fat file: extract the %s slice (lipo -thin) to load it", name, m.Arch.Name)
	}
	if len(f.Images) != 1 {
		return nil, fmt.Errorf("emu: %s: %d images in a thin file", name, len(f.Images))
	}
	facts, err := scanLoadCommands(f.Images[0], data)
	if err != nil {
		return nil, fmt.Errorf("emu: %s: %w", name, err)
	}
	return m.load(f.Images[0], facts, slide)
}

func (m *Machine) load(im *image.Image, facts *loadFacts, slide uint64) (*Loaded, error) {
	if im.Arch == nil || im.Arch.Name != m.Arch.Name {
		return nil, fmt.Errorf("emu: %s is %s, the machine runs %s", im.Name, archNameOf(im), m.Arch.Name)
	}
	if slide%PageSize != 0 {
		return nil, fmt.Errorf("emu: %s: slide %#x is not a multiple of the %#x-byte page", im.Name, slide, PageSize)
	}
	switch im.Type {
	case image.TypeExecute:
		if facts.chainedFixups {
			return nil, fmt.Errorf("emu: %s uses chained fixups, which only dyld applies", im.Name)
		}
		if facts.bindSize != 0 {
			return nil, fmt.Errorf("emu: %s binds symbols from other images (%d bytes of bind opcodes): it needs dyld", im.Name, facts.bindSize)
		}
		if facts.rebaseSize != 0 && slide != 0 {
			return nil, fmt.Errorf("emu: %s has pointers dyld would rebase (%d bytes of rebase opcodes): only slide 0 runs faithfully", im.Name, facts.rebaseSize)
		}
	case image.TypeObject:
		if !m.info.objects {
			return nil, fmt.Errorf("emu: %s is a %s object file: only i386 objects are loaded (link the others)", im.Name, im.Arch.Name)
		}
		if err := checkObjectRelocs(facts); err != nil {
			return nil, fmt.Errorf("%w (in %s)", err, im.Name)
		}
		slide += ObjectBase
	default:
		return nil, fmt.Errorf("emu: %s has file type %d: only executables and i386 objects can run without dyld", im.Name, im.Type)
	}

	l := &Loaded{Image: im, Slide: slide}
	type pageRange struct {
		start, end uint64
		prot       int
	}
	var ranges []pageRange
	lowest, highest := ^uint64(0), uint64(0)
	for _, s := range im.Segments {
		if s.Name == "__PAGEZERO" || s.Size == 0 {
			continue
		}
		start, end := s.Addr+slide, s.Addr+slide+s.Size
		if start < s.Addr || end < start {
			return nil, fmt.Errorf("emu: %s: segment %s [%#x, +%#x) at slide %#x wraps the address space", im.Name, s.Name, s.Addr, s.Size, slide)
		}
		if s.FileSize > s.Size {
			return nil, fmt.Errorf("emu: %s: segment %s has filesize %#x above its vmsize %#x", im.Name, s.Name, s.FileSize, s.Size)
		}
		lowest, highest = min(lowest, start), max(highest, end)
		ranges = append(ranges, pageRange{start &^ (PageSize - 1), (end + PageSize - 1) &^ (PageSize - 1), int(s.Prot & 7)})
	}
	if len(ranges) == 0 {
		return nil, fmt.Errorf("emu: %s has no segment to map", im.Name)
	}
	// Segments that share a page (sizes need not be page multiples) are
	// mapped once with the union of their protections.
	sort.Slice(ranges, func(i, j int) bool { return ranges[i].start < ranges[j].start })
	merged := ranges[:1]
	for _, r := range ranges[1:] {
		last := &merged[len(merged)-1]
		if r.start < last.end {
			last.end, last.prot = max(last.end, r.end), last.prot|r.prot
			continue
		}
		merged = append(merged, r)
	}
	for _, r := range merged {
		if err := m.Engine.MapMemory(r.start, r.end-r.start, r.prot); err != nil {
			return nil, fmt.Errorf("emu: %s: %w", im.Name, err)
		}
	}
	for _, s := range im.Segments {
		if s.Name == "__PAGEZERO" || s.FileSize == 0 {
			continue
		}
		data, err := im.ReadSegment(s)
		if err != nil {
			return nil, fmt.Errorf("emu: %s: segment %s: %w", im.Name, s.Name, err)
		}
		if err := m.Engine.WriteMemory(s.Addr+slide, data); err != nil {
			return nil, fmt.Errorf("emu: %s: segment %s: %w", im.Name, s.Name, err)
		}
	}
	l.LoadAddress, l.Size = lowest, highest-lowest
	if text, ok := im.TextSegment(); ok {
		l.LoadAddress = text.Addr + slide
		l.Size = highest - l.LoadAddress
		if facts.hasMain {
			// entryoff is a file offset; __TEXT maps the file from offset 0.
			l.Entry = text.Addr + slide + facts.entryOff
		}
	}
	m.Images = append(m.Images, l)
	return l, nil
}

func archNameOf(im *image.Image) string {
	if im.Arch == nil {
		return fmt.Sprintf("cputype %#x", im.CPUType)
	}
	return im.Arch.Name
}

// SymbolAddress returns the unslid address of a symbol defined in the
// image's LC_SYMTAB, by its name as C spells it (no leading underscore).
// For an ARM Thumb function the address has bit 0 set, as a BX to it needs.
func SymbolAddress(im *image.Image, name string) (uint64, error) {
	raw, ok, err := im.Symtab()
	if err != nil {
		return 0, fmt.Errorf("emu: %s: %w", im.Name, err)
	}
	if !ok {
		return 0, fmt.Errorf("emu: %s has no symbol table", im.Name)
	}
	var thumbBit uint64 // armv7: N_ARM_THUMB_DEF functions get it
	if im.Arch != nil {
		thumbBit = im.Arch.ThumbBit
	}
	return findSymbol(raw, "_"+name, im.Name, thumbBit)
}

// findSymbol scans nlist entries for a defined (N_SECT) symbol.
func findSymbol(raw image.RawSymtab, want, imName string, thumbBit uint64) (uint64, error) {
	entSize := 12
	if raw.Is64 {
		entSize = 16
	}
	bo := raw.ByteOrder
	if bo == nil {
		bo = binary.LittleEndian
	}
	n := min(raw.NSyms, len(raw.Syms)/entSize)
	for i := 0; i < n; i++ {
		e := raw.Syms[i*entSize : (i+1)*entSize]
		strx := uint64(bo.Uint32(e))
		typ, desc := e[4], bo.Uint16(e[6:])
		const nStab, nType, nSect = 0xe0, 0x0e, 0x0e
		if typ&nStab != 0 || typ&nType != nSect {
			continue
		}
		if strx >= uint64(len(raw.Strings)) {
			continue
		}
		s := raw.Strings[strx:]
		if end := bytes.IndexByte(s, 0); end >= 0 {
			s = s[:end]
		}
		if string(s) != want {
			continue
		}
		var v uint64
		if raw.Is64 {
			v = bo.Uint64(e[8:])
		} else {
			v = uint64(bo.Uint32(e[8:]))
		}
		const nArmThumbDef = 0x0008
		if desc&nArmThumbDef != 0 {
			v |= thumbBit
		}
		return v, nil
	}
	return 0, fmt.Errorf("emu: %s defines no symbol %s", imName, want)
}
