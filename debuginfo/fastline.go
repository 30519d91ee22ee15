package debuginfo

import (
	"debug/dwarf"
	"encoding/binary"

	"github.com/stackimage/stackimage/internal/leb128"
)

// fastLines runs the line program at off in debug_line, whose header
// debug/dwarf has read (files is its file table, LineReader.Files before
// any row), and appends its rows to rows as the debug/dwarf walk makes
// them from LineReader.Next: the file as an index into names, in order of
// first use, sequences covering nothing dropped. seqStart is the length
// of rows after the last complete sequence. It gives up (ok false, and
// the caller reads the program with debug/dwarf) at anything debug/dwarf
// would report as an error or that it does not handle as debug/dwarf
// does: a truncated program, a DW_LNE_define_file (which grows the file
// table), an unknown address size.
//
// It exists because LineReader.Next copies a whole LineEntry per row and
// the walk then looks each row's *LineFile up in a map: most of a line
// table's cost for a state machine of a few registers.
func fastLines(sec []byte, off int64, addrSize int, files []*dwarf.LineFile, rows []row) (_ []row, names []string, seqStart int, ok bool) {
	h, ok := readLineHeader(sec, off, addrSize)
	if !ok {
		return rows, nil, 0, false
	}
	prog := sec[h.program:h.end]
	// nameOf maps a file table index to its index in names plus one.
	nameOf := make([]int32, len(files))
	fileRow := func(i int) int32 {
		if i < 0 || i >= len(files) || files[i] == nil {
			return -1
		}
		if nameOf[i] == 0 {
			names = append(names, files[i].Name)
			nameOf[i] = int32(len(names))
		}
		return nameOf[i] - 1
	}
	// The state machine's registers, reset as LineReader.resetState does;
	// file is the file table index, mapped to names when a row uses it.
	var (
		addr    uint64
		opIndex int
		line    int
		col     int
		file    int
	)
	reset := func() {
		addr, opIndex, line, col, file = 0, 0, 1, 0, 1
	}
	reset()
	advance := func(n int) {
		opIndex += n
		addr += uint64(h.minInst * (opIndex / h.maxOps))
		opIndex %= h.maxOps
	}
	p := 0
	// A number past 64 bits keeps its low bits, as debug/dwarf reads it.
	uleb := func() (v uint64, ok bool) {
		var err error
		v, p, err = leb128.Uint(prog, p)
		return v, err != leb128.ErrTruncated
	}
	sleb := func() (v int64, ok bool) {
		var err error
		v, p, err = leb128.Int(prog, p)
		return v, err != leb128.ErrTruncated
	}
	emit := func(endSeq bool) {
		rows = append(rows, row{addr: addr, file: fileRow(file), line: uint32(line), col: uint32(col), endSeq: endSeq})
		if endSeq {
			if seq := rows[seqStart:]; len(seq) < 2 || seq[0].addr >= seq[len(seq)-1].addr {
				rows = rows[:seqStart]
			}
			seqStart = len(rows)
		}
	}
	// A special opcode's steps, worked out once per opcode rather than
	// by two divisions per row, when each instruction is one operation
	// (maxOps 1: VLIW aside, always).
	var special [256]struct {
		addr uint64
		line int
	}
	if h.maxOps == 1 {
		for op := h.opcodeBase; op < len(special); op++ {
			adj := op - h.opcodeBase
			special[op].addr = uint64(h.minInst * (adj / h.lineRange))
			special[op].line = h.lineBase + adj%h.lineRange
		}
	}
	for p < len(prog) {
		op := int(prog[p])
		p++
		if op >= h.opcodeBase {
			if h.maxOps == 1 {
				addr += special[op].addr
				line += special[op].line
			} else {
				adj := op - h.opcodeBase
				advance(adj / h.lineRange)
				line += h.lineBase + adj%h.lineRange
			}
			emit(false)
			continue
		}
		switch op {
		case 0: // extended
			length, ok := uleb()
			if !ok || p >= len(prog) || length > uint64(len(prog)-p) {
				return rows, nil, 0, false
			}
			start := p
			ext := prog[p]
			p++
			switch ext {
			case 1: // DW_LNE_end_sequence
				emit(true)
				reset()
			case 2: // DW_LNE_set_address
				if addrSize > len(prog)-p {
					return rows, nil, 0, false
				}
				switch addrSize {
				case 1:
					addr = uint64(prog[p])
				case 2:
					addr = uint64(binary.LittleEndian.Uint16(prog[p:]))
				case 4:
					addr = uint64(binary.LittleEndian.Uint32(prog[p:]))
				case 8:
					addr = binary.LittleEndian.Uint64(prog[p:])
				default:
					return rows, nil, 0, false
				}
				p += addrSize
			case 3: // DW_LNE_define_file: grows the file table
				return rows, nil, 0, false
			case 4: // DW_LNE_set_discriminator
				if _, ok := uleb(); !ok {
					return rows, nil, 0, false
				}
			}
			// The operation's length says where the next one starts.
			if next := start + int(length); next >= p && next <= len(prog) {
				p = next
			} else {
				return rows, nil, 0, false
			}
		case 1: // DW_LNS_copy
			emit(false)
		case 2: // DW_LNS_advance_pc
			n, ok := uleb()
			if !ok {
				return rows, nil, 0, false
			}
			advance(int(n))
		case 3: // DW_LNS_advance_line
			n, ok := sleb()
			if !ok {
				return rows, nil, 0, false
			}
			line += int(n)
		case 4: // DW_LNS_set_file
			n, ok := uleb()
			if !ok || int(n) < 0 {
				return rows, nil, 0, false
			}
			file = int(n)
		case 5: // DW_LNS_set_column
			n, ok := uleb()
			if !ok {
				return rows, nil, 0, false
			}
			col = int(n)
		case 6, 7, 10, 11: // negate_stmt, set_basic_block, set_prologue_end, set_epilogue_begin
		case 8: // DW_LNS_const_add_pc
			advance((255 - h.opcodeBase) / h.lineRange)
		case 9: // DW_LNS_fixed_advance_pc
			if len(prog)-p < 2 {
				return rows, nil, 0, false
			}
			addr += uint64(binary.LittleEndian.Uint16(prog[p:]))
			p += 2
		case 12: // DW_LNS_set_isa
			if _, ok := uleb(); !ok {
				return rows, nil, 0, false
			}
		default: // an opcode the header gives the argument count of
			for range h.opcodeLengths[op] {
				if _, ok := uleb(); !ok {
					return rows, nil, 0, false
				}
			}
		}
	}
	return rows, names, seqStart, true
}

// lineHeader is what fastLines needs of a line program header.
type lineHeader struct {
	program, end  int // the opcodes: sec[program:end]
	minInst       int
	maxOps        int
	lineBase      int
	lineRange     int
	opcodeBase    int
	opcodeLengths []uint8 // by opcode, for those below opcodeBase
}

// readLineHeader reads the fields of the header at off that the state
// machine uses, as debug/dwarf's LineReader reads them; ok is false for
// a header it would reject or a little-endian reading could misread.
func readLineHeader(sec []byte, off int64, unitAddrSize int) (h lineHeader, ok bool) {
	if off < 0 || off >= int64(len(sec)) {
		return h, false
	}
	c := cursor{b: sec, off: int(off)}
	length := uint64(c.u32())
	offSize := 4
	if length == 0xffffffff {
		length, offSize = c.u64(), 8
	} else if length >= 0xfffffff0 {
		return h, false // reserved lengths
	}
	if c.err || length > uint64(len(sec)-c.off) {
		return h, false
	}
	h.end = c.off + int(length)
	version := c.u16()
	if version < 2 || version > 5 {
		return h, false
	}
	addrSize := unitAddrSize
	if version >= 5 {
		addrSize = int(c.u8())
		c.u8() // segment selector size
	}
	if addrSize != unitAddrSize {
		return h, false // fastLines sets addresses of the unit's size
	}
	headerLength := c.offset(offSize == 8)
	if c.err || headerLength > uint64(h.end-c.off) {
		return h, false
	}
	h.program = c.off + int(headerLength)
	h.minInst = int(c.u8())
	h.maxOps = 1
	if version >= 4 {
		h.maxOps = int(c.u8())
	}
	c.u8() // default_is_stmt
	h.lineBase = int(int8(c.u8()))
	h.lineRange = int(c.u8())
	h.opcodeBase = int(c.u8())
	if h.opcodeBase > 0 {
		h.opcodeLengths = c.take(h.opcodeBase - 1)
		h.opcodeLengths = append([]uint8{0}, h.opcodeLengths...)
	}
	if c.err || h.maxOps == 0 || h.lineRange == 0 || h.opcodeBase == 0 {
		return h, false
	}
	// The standard opcodes' argument counts, as debug/dwarf checks them
	// (-1: not checked); the state machine reads them as it knows them.
	known := [...]int{1: 0, 2: 1, 3: 1, 4: 1, 5: -1, 6: 0, 7: 0, 8: 0, 9: -1, 10: 0, 11: 0, 12: 1}
	for op := 1; op < min(h.opcodeBase, len(known)); op++ {
		if known[op] >= 0 && int(h.opcodeLengths[op]) != known[op] {
			return h, false
		}
	}
	return h, true
}
