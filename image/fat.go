package image

import (
	"encoding/binary"
	"fmt"
)

// fatSlice is one fat_arch entry.
type fatSlice struct {
	cpuType, cpuSubtype uint32
	off, size           uint64
}

// maxFatArch bounds nfat_arch: real universal files hold a handful of slices.
const maxFatArch = 64

// readFat returns the slices of a fat file, or nil when src is not one.
func readFat(src source) ([]fatSlice, error) {
	var hb [8]byte
	if err := readFull(src.r, hb[:], 0); err != nil {
		// Too short to be fat; let the thin parser say what is wrong.
		return nil, nil
	}
	magic := binary.BigEndian.Uint32(hb[:])
	if magic != fatMagic && magic != fatMagic6 {
		return nil, nil
	}
	n := binary.BigEndian.Uint32(hb[4:])
	if n == 0 {
		return nil, &FormatError{4, "fat file holds no slices", nil}
	}
	if n > maxFatArch {
		return nil, &FormatError{4, "nfat_arch too large", n}
	}
	entSize := uint64(20) // sizeof(struct fat_arch)
	if magic == fatMagic6 {
		entSize = 32 // sizeof(struct fat_arch_64)
	}
	tab, err := src.read(8, uint64(n)*entSize, "fat_arch table", 4)
	if err != nil {
		return nil, err
	}
	slices := make([]fatSlice, n)
	for i := range slices {
		e := tab[uint64(i)*entSize:]
		s := fatSlice{cpuType: binary.BigEndian.Uint32(e), cpuSubtype: binary.BigEndian.Uint32(e[4:])}
		if magic == fatMagic6 {
			s.off, s.size = binary.BigEndian.Uint64(e[8:]), binary.BigEndian.Uint64(e[16:])
		} else {
			s.off, s.size = uint64(binary.BigEndian.Uint32(e[8:])), uint64(binary.BigEndian.Uint32(e[12:]))
		}
		at := 8 + int64(i)*int64(entSize)
		end := s.off + s.size
		if end < s.off || end > 1<<62 || (src.size >= 0 && end > uint64(src.size)) {
			return nil, &FormatError{at + 8, fmt.Sprintf("fat slice %d [%#x, +%#x) extends past the end of the file", i, s.off, s.size), nil}
		}
		slices[i] = s
	}
	return slices, nil
}
