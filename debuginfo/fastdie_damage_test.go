package debuginfo

import (
	"debug/macho"
	"fmt"
	"maps"
	"slices"
	"testing"
)

// TestFastWalkMatchesOnDamagedFixture: with one byte of a fixture's
// debug_info changed, both walks keep the same functions and give the
// same warnings. A changed byte often leaves a bad value in a DIE that
// fastWalk steps over but the debug/dwarf walk decodes in full (the first
// DIE after a function or after a run of null entries): a debug_str
// offset past the section's last string, as at 0x60 of the DWARF 4
// fixture, or in DWARF 5 a string or address index past its table. Every
// byte of every fixture's debug_info is changed in turn, to three values.
func TestFastWalkMatchesOnDamagedFixture(t *testing.T) {
	for _, path := range []string{
		"testdata/fixtures/inl-dwarf2.dwarf",
		"testdata/fixtures/inl-dwarf4.dwarf",
		"testdata/fixtures/inl-dwarf5.o",
		"testdata/fixtures/rnglist-dwarf5.o",
	} {
		secs := dwarfSections(t, path, macho.CpuArm64)
		info := secs["debug_info"]
		for off := range info {
			for _, val := range []byte{0x00, 0x7f, 0xfe} {
				if info[off] == val {
					continue
				}
				t.Run(fmt.Sprintf("%s/info[%#x]=%#x", path, off, val), func(t *testing.T) {
					damaged := maps.Clone(secs)
					damaged["debug_info"] = slices.Clone(info)
					damaged["debug_info"][off] = val
					compareWalks(t, damaged)
				})
			}
		}
	}
}
