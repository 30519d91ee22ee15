package dwarfcfi

import (
	"encoding/binary"

	"github.com/stackimage/stackimage/internal/leb128"
)

// This file assembles CFI sections by hand for the synthetic tests, the
// fuzz seeds and the benchmark.

func uleb(v uint64) []byte { return leb128.AppendUint(nil, v) }

func sleb(v int64) []byte { return leb128.AppendInt(nil, v) }

func le16(v uint16) []byte { return binary.LittleEndian.AppendUint16(nil, v) }
func le32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
func le64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

// section builds an __eh_frame (or, with debug, a __debug_frame) section.
type section struct {
	buf   []byte
	debug bool // __debug_frame: CIE id all ones, FDE CIE pointer = offset
	is64  bool // 64-bit DWARF lengths and ids
}

// record appends a record with the given id and body and returns its
// offset.
func (s *section) record(id uint64, body []byte) int {
	off := len(s.buf)
	if s.is64 {
		s.buf = append(s.buf, le32(0xffffffff)...)
		s.buf = append(s.buf, le64(uint64(8+len(body)))...)
		s.buf = append(s.buf, le64(id)...)
	} else {
		s.buf = append(s.buf, le32(uint32(4+len(body)))...)
		s.buf = append(s.buf, le32(uint32(id))...)
	}
	s.buf = append(s.buf, body...)
	return off
}

// idOffset returns where the id field of the next record will be.
func (s *section) idOffset() int {
	if s.is64 {
		return len(s.buf) + 12
	}
	return len(s.buf) + 4
}

// cie appends a CIE whose body (from the version byte on) is given.
func (s *section) cie(body []byte) int {
	id := uint64(0)
	if s.debug {
		id = cieID32
		if s.is64 {
			id = cieID64
		}
	}
	return s.record(id, body)
}

// fde appends an FDE for the CIE at cieOff; body is everything after the
// CIE pointer, given the offset its first byte will have.
func (s *section) fde(cieOff int, body func(bodyOff int) []byte) int {
	idOff := s.idOffset()
	bodyOff := idOff + 4
	if s.is64 {
		bodyOff = idOff + 8
	}
	id := uint64(cieOff)
	if !s.debug {
		id = uint64(idOff - cieOff)
	}
	return s.record(id, body(bodyOff))
}

// simpleCIE is a version 1 "zR" CIE with absptr FDE pointers (8 bytes), code
// alignment 1, data alignment -8, return address column 16: x86_64's.
func simpleCIE(instrs ...byte) []byte {
	return cat([]byte{1}, []byte("zR\x00"), uleb(1), sleb(-8), []byte{16}, uleb(1), []byte{pointerAbs}, instrs)
}

// absFDE is the body of an FDE for [begin, begin+length) with 8-byte absptr
// addresses and empty augmentation data.
func absFDE(begin, length uint64, instrs ...byte) func(int) []byte {
	return func(int) []byte { return cat(le64(begin), le64(length), uleb(0), instrs) }
}

// x86CIEInstrs is the x86_64 CIE's usual initial instructions: CFA = rsp+8,
// return address at CFA-8.
var x86CIEInstrs = []byte{cfaDefCFA, 7, 8, cfaOffset | 16, 1}
