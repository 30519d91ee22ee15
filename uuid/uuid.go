// Package uuid is the identity of a Mach-O image: its LC_UUID, which
// binaries, dSYMs, crash reports and dumps all carry and by which symbol
// files are matched. It is a leaf, so that report and dump parsers name
// images without reading Mach-O.
package uuid

import (
	"encoding/hex"
	"fmt"
)

// UUID is an image's LC_UUID, in the byte order the load command stores.
type UUID [16]byte

// String formats the UUID as Apple does: upper-case hex in 8-4-4-4-12 groups.
func (u UUID) String() string {
	const digits = "0123456789ABCDEF"
	var b [36]byte
	j := 0
	for i, c := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b[j] = '-'
			j++
		}
		b[j], b[j+1] = digits[c>>4], digits[c&0xf]
		j += 2
	}
	return string(b[:])
}

// Hex formats the UUID as 32 lower-case hex digits without dashes: the
// code_id symbolicator's modules carry and the form symbol stores' keys
// (symbolicator's layouts, the shared index cache) are made of.
func (u UUID) Hex() string { return hex.EncodeToString(u[:]) }

// IsZero reports whether the UUID is all zero (an image without LC_UUID).
func (u UUID) IsZero() bool { return u == UUID{} }

// Parse reads a UUID with or without dashes, in either case. Dashes, when
// present, must be where String puts them.
func Parse(s string) (UUID, error) {
	var u UUID
	digits := s
	if len(s) == 36 {
		for _, i := range []int{8, 13, 18, 23} {
			if s[i] != '-' {
				return UUID{}, fmt.Errorf("bad UUID %q: want 8-4-4-4-12 hex digits", s)
			}
		}
		digits = s[0:8] + s[9:13] + s[14:18] + s[19:23] + s[24:]
	}
	if len(digits) != 32 {
		return UUID{}, fmt.Errorf("bad UUID %q: want 32 hex digits, with or without dashes", s)
	}
	if _, err := hex.Decode(u[:], []byte(digits)); err != nil {
		return UUID{}, fmt.Errorf("bad UUID %q: %v", s, err)
	}
	return u, nil
}
