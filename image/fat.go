package image

import (
	"encoding/binary"
	"fmt"
)

// maxFatArch bounds nfat_arch: real universal files hold a handful of slices.
const maxFatArch = 64

// readFat returns the slices of a fat file, or nil when src is not one. A
// fat_arch entry that cannot be right (a slice past the end of the file)
// is left out and reported in bad; err is for a file whose slice table
// cannot be read at all.
func readFat(src source) (slices []FatArch, bad []error, err error) {
	var hb [8]byte
	if err := readFull(src.r, hb[:], 0); err != nil {
		// Too short to be fat; let the thin parser say what is wrong.
		return nil, nil, nil
	}
	magic := binary.BigEndian.Uint32(hb[:])
	if magic != fatMagic && magic != fatMagic6 {
		return nil, nil, nil
	}
	n := binary.BigEndian.Uint32(hb[4:])
	if n == 0 {
		return nil, nil, &FormatError{4, "fat file holds no slices", nil}
	}
	if n > maxFatArch {
		return nil, nil, &FormatError{4, "nfat_arch too large", n}
	}
	entSize := uint64(20) // sizeof(struct fat_arch)
	if magic == fatMagic6 {
		entSize = 32 // sizeof(struct fat_arch_64)
	}
	tab, err := src.read(8, uint64(n)*entSize, "fat_arch table", 4)
	if err != nil {
		return nil, nil, err
	}
	slices = make([]FatArch, 0, n)
	for i := 0; i < int(n); i++ {
		e := tab[uint64(i)*entSize:]
		s := FatArch{CPUType: binary.BigEndian.Uint32(e), CPUSubtype: binary.BigEndian.Uint32(e[4:])}
		if magic == fatMagic6 {
			s.Offset, s.Size = binary.BigEndian.Uint64(e[8:]), binary.BigEndian.Uint64(e[16:])
		} else {
			s.Offset, s.Size = uint64(binary.BigEndian.Uint32(e[8:])), uint64(binary.BigEndian.Uint32(e[12:]))
		}
		at := 8 + int64(i)*int64(entSize)
		end := s.Offset + s.Size
		if end < s.Offset || end > 1<<62 || (src.size >= 0 && end > uint64(src.size)) {
			bad = append(bad, &FormatError{at + 8, fmt.Sprintf("fat slice %d [%#x, +%#x) extends past the end of the file", i, s.Offset, s.Size), nil})
			continue
		}
		s.Index = i
		slices = append(slices, s)
	}
	return slices, bad, nil
}
