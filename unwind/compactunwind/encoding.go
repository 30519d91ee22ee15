package compactunwind

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/unwind"
)

// CodeReader reads a function's instructions: ReadAt with io.ReaderAt
// semantics, off being an image-relative address (the same offsets as
// Entry.FuncStart). A nil CodeReader reads nothing.
type CodeReader = io.ReaderAt

// Compact unwind modes (bits 24-27 of an encoding) of each architecture.
const (
	x86ModeBPFrame   = 0x01000000 // UNWIND_X86_MODE_EBP_FRAME, UNWIND_X86_64_MODE_RBP_FRAME
	x86ModeStackImmd = 0x02000000 // UNWIND_X86(_64)_MODE_STACK_IMMD
	x86ModeStackInd  = 0x03000000 // UNWIND_X86(_64)_MODE_STACK_IND
	x86ModeDWARF     = 0x04000000 // UNWIND_X86(_64)_MODE_DWARF

	arm64ModeFrameless = 0x02000000 // UNWIND_ARM64_MODE_FRAMELESS
	arm64ModeDWARF     = 0x03000000 // UNWIND_ARM64_MODE_DWARF
	arm64ModeFrame     = 0x04000000 // UNWIND_ARM64_MODE_FRAME

	armModeFrame  = 0x01000000 // UNWIND_ARM_MODE_FRAME
	armModeFrameD = 0x02000000 // UNWIND_ARM_MODE_FRAME_D
	armModeDWARF  = 0x04000000 // UNWIND_ARM_MODE_DWARF
)

// An encoding is one of the compact unwind encodings
// <mach-o/compact_unwind_encoding.h> defines, and the instruction decoders
// Frame0 uses for the code it describes.
type encoding struct {
	dwarfMode uint32 // the mode that defers to DWARF (UNWIND_*_MODE_DWARF)
	// row decodes an entry's encoding (RowFor).
	row func(arch *archregs.Arch, e Entry, code CodeReader) (unwind.Row, error)
	// decoder and thumb build the prologue and epilogue decoders for the
	// architecture's code, and for its Thumb code (nil without Thumb).
	decoder, thumb func(arch *archregs.Arch) *decoder
}

// encodings holds the encoding of each CPU type. This is the format's own
// table: the header defines one encoding per CPU type (i386's and
// x86_64's share their layout, scaled by the pointer size), so a new
// architecture adds its encoding here.
var encodings = map[uint32]*encoding{ // archcheck: the format's encodings, keyed by the CPU type the header defines each for
	archregs.CPUTypeX86_64: {dwarfMode: x86ModeDWARF, row: x86Row, decoder: x86Decoder},
	archregs.CPUTypeX86:    {dwarfMode: x86ModeDWARF, row: x86Row, decoder: x86Decoder},
	archregs.CPUTypeARM64: {dwarfMode: arm64ModeDWARF, decoder: arm64Decoder,
		row: func(arch *archregs.Arch, e Entry, _ CodeReader) (unwind.Row, error) { return arm64Row(arch, e) }},
	archregs.CPUTypeARM: {dwarfMode: armModeDWARF, decoder: armDecoder, thumb: thumbDecoder,
		row: func(arch *archregs.Arch, e Entry, _ CodeReader) (unwind.Row, error) { return armRow(arch, e) }},
}

// dwarfMode returns arch's mode that defers to DWARF.
func dwarfMode(arch *archregs.Arch) (uint32, bool) {
	if arch == nil {
		return 0, false
	}
	enc := encodings[arch.CPUType]
	if enc == nil {
		return 0, false
	}
	return enc.dwarfMode, true
}

// RowFor translates e's encoding into the row that holds once the
// function's prologue has run and until its epilogue starts: at every call
// site, and so for every frame but the interrupted one (see Frame0Row).
//
// It returns ErrNoInfo for encoding 0, ErrDWARF when the encoding defers to
// an FDE in __eh_frame (Entry.DWARFOffset gives its offset), and an
// *unwind.Error for an encoding that cannot be right (a register number or
// permutation that does not exist, saved registers that do not fit in the
// frame, an x86 stack-size immediate outside the function). code is read
// only for x86 frameless functions with a large stack ("indirect" stack
// size), whose size is the immediate of the `sub` in their prologue.
//
// Registers are DWARF numbers of arch. The return address is arch.DWARFRA:
// on x86 saved at CFA-PtrSize; on arm64 and armv7 with a frame, in the
// frame record; on arm64 frameless functions, still in LR (SameValue).
func RowFor(arch *archregs.Arch, e Entry, code CodeReader) (unwind.Row, error) {
	if arch == nil {
		return unwind.Row{}, errNoArch
	}
	if e.Encoding&encodingModeMask == 0 { // encoding 0, or only personality and LSDA bits
		return unwind.Row{}, ErrNoInfo
	}
	if enc := encodings[arch.CPUType]; enc != nil {
		return enc.row(arch, e, code)
	}
	return unwind.Row{}, fmt.Errorf("compactunwind: no compact unwind for architecture %s", arch.Name)
}

func encodingError(e Entry, format string, args ...any) *unwind.Error {
	return formatError(uint64(e.Off), "encoding %#08x of function %#x: %s", e.Encoding, e.FuncStart, fmt.Sprintf(format, args...))
}

func saved(off int64) unwind.Rule { return unwind.Rule{Kind: unwind.Offset, Offset: off} }

// x86Row decodes the x86_64 and i386 encodings, which share their layout;
// registers are scaled by the pointer size and named through
// arch.CompactRegs.
func x86Row(arch *archregs.Arch, e Entry, code CodeReader) (unwind.Row, error) {
	ptr := int64(arch.PtrSize)
	enc := e.Encoding
	row := unwind.Row{RA: arch.DWARFRA}
	switch enc & encodingModeMask {
	case x86ModeBPFrame:
		// push bp; mov bp, sp; then the registers saved at bp-offset*ptr,
		// up to five, one 3-bit register number each (0: slot unused).
		offset := int64(enc >> 16 & 0xFF)
		regs := enc & 0x7FFF
		row.CFA = unwind.CFA{Reg: arch.DWARFFP, Offset: 2 * ptr}
		row.SetRule(arch.DWARFFP, saved(-2*ptr))
		row.SetRule(arch.DWARFRA, saved(-ptr))
		for i := int64(0); i < 5; i++ {
			r := regs >> (3 * i) & 7
			if r == 0 {
				continue
			}
			if int(r) >= len(arch.CompactRegs) {
				return unwind.Row{}, encodingError(e, "frame register slot %d names register %d, which does not exist", i, r)
			}
			at := -2*ptr - offset*ptr + i*ptr
			if at > -3*ptr {
				return unwind.Row{}, encodingError(e, "frame register slot %d (offset %d) overlaps the saved frame pointer or return address", i, offset)
			}
			row.SetRule(arch.CompactRegs[r], saved(at))
		}
		return row, nil

	case x86ModeStackImmd, x86ModeStackInd:
		size := int64(enc >> 16 & 0xFF)
		adjust := int64(enc >> 13 & 7)
		count := int(enc >> 10 & 7)
		stack := size * ptr
		if enc&encodingModeMask == x86ModeStackInd {
			// size is the offset of the `sub sp, imm32` immediate from the
			// function start; adjust counts the words pushed before it.
			if uint64(e.FuncStart)+uint64(size)+4 > uint64(e.FuncEnd) {
				return unwind.Row{}, encodingError(e, "stack size immediate at function offset %#x is outside the function [%#x, %#x)", size, e.FuncStart, e.FuncEnd)
			}
			if code == nil {
				return unwind.Row{}, fmt.Errorf("compactunwind: function %#x: the stack size is in the code, and no code reader was given", e.FuncStart)
			}
			var b [4]byte
			if _, err := code.ReadAt(b[:], int64(e.FuncStart)+size); err != nil {
				return unwind.Row{}, fmt.Errorf("compactunwind: function %#x: reading the stack size immediate at %#x: %w", e.FuncStart, int64(e.FuncStart)+size, err)
			}
			stack = int64(binary.LittleEndian.Uint32(b[:])) + adjust*ptr
		}
		regs, err := permutedRegisters(count, enc&0x3FF)
		if err != nil {
			return unwind.Row{}, encodingError(e, "%v", err)
		}
		if stack < ptr*int64(count+1) {
			return unwind.Row{}, encodingError(e, "stack size %d cannot hold the return address and %d saved registers", stack, count)
		}
		row.CFA = unwind.CFA{Reg: arch.DWARFSP, Offset: stack}
		row.SetRule(arch.DWARFRA, saved(-ptr))
		// The registers were pushed right after the call; regs lists them
		// from the lowest address up, the last just below the return
		// address.
		for i, r := range regs {
			row.SetRule(arch.CompactRegs[r], saved(-ptr-ptr*int64(count)+ptr*int64(i)))
		}
		return row, nil

	case x86ModeDWARF:
		return unwind.Row{}, ErrDWARF
	}
	return unwind.Row{}, encodingError(e, "unknown mode %d", enc>>24&0xF)
}

// permutedRegisters decodes the frameless register permutation: count
// (at most 6) distinct compact register numbers 1-6, encoded as a number
// whose mixed-radix digits pick, for each saved register in push order,
// its rank among the registers not chosen yet (libunwind's algorithm).
func permutedRegisters(count int, perm uint32) ([]int, error) {
	if count > 6 {
		return nil, fmt.Errorf("%d saved registers, at most 6 exist", count)
	}
	// Digit i ranges over the 6-i registers still free; the last digit is
	// the least significant.
	var digits [6]uint32
	rest := perm
	for i := count - 1; i >= 0; i-- {
		base := uint32(6 - i)
		digits[i] = rest % base
		rest /= base
	}
	if rest != 0 {
		return nil, fmt.Errorf("register permutation %d is out of range for %d registers", perm, count)
	}
	var used [7]bool
	regs := make([]int, count)
	for i := 0; i < count; i++ {
		rank := digits[i]
		for r := 1; r <= 6; r++ {
			if used[r] {
				continue
			}
			if rank == 0 {
				regs[i], used[r] = r, true
				break
			}
			rank--
		}
	}
	return regs, nil
}

// arm64 register pairs saved below the frame record (frame mode) or at the
// top of the frame (frameless), in the order of the bits: each pair's first
// register at the higher address.
var arm64Pairs = [...]struct {
	bit    uint32
	r1, r2 unwind.Reg
}{
	{0x001, 19, 20}, {0x002, 21, 22}, {0x004, 23, 24}, {0x008, 25, 26}, {0x010, 27, 28},
	{0x100, 72, 73}, {0x200, 74, 75}, {0x400, 76, 77}, {0x800, 78, 79}, // d8-d15: DWARF v8-v15
}

func arm64Row(arch *archregs.Arch, e Entry) (unwind.Row, error) {
	enc := e.Encoding
	row := unwind.Row{RA: arch.DWARFRA}
	var at int64 // CFA offset of the top of the saved pairs
	switch enc & encodingModeMask {
	case arm64ModeFrame:
		// stp x29, x30, [sp, #-16]!; mov x29, sp — the pairs were pushed
		// before, just above.
		row.CFA = unwind.CFA{Reg: arch.DWARFFP, Offset: 16}
		row.SetRule(arch.DWARFFP, saved(-16))
		row.SetRule(arch.DWARFRA, saved(-8))
		at = -16
	case arm64ModeFrameless:
		size := int64(enc>>12&0xFFF) * 16
		row.CFA = unwind.CFA{Reg: arch.DWARFSP, Offset: size}
		row.SetRule(arch.DWARFRA, unwind.Rule{Kind: unwind.SameValue})
		if n := int64(pairCount(enc)) * 16; n > size {
			return unwind.Row{}, encodingError(e, "stack size %d cannot hold %d bytes of saved registers", size, n)
		}
	case arm64ModeDWARF:
		return unwind.Row{}, ErrDWARF
	default:
		return unwind.Row{}, encodingError(e, "unknown mode %d", enc>>24&0xF)
	}
	for _, p := range arm64Pairs {
		if enc&p.bit != 0 {
			row.SetRule(p.r1, saved(at-8))
			row.SetRule(p.r2, saved(at-16))
			at -= 16
		}
	}
	return row, nil
}

func pairCount(enc uint32) int {
	n := 0
	for _, p := range arm64Pairs {
		if enc&p.bit != 0 {
			n++
		}
	}
	return n
}

// armv7 registers of the first push (with r7 and lr) and the second, in
// the order they sit below r7, highest address first.
var armSavedBelowFP = [...]struct {
	bit uint32
	reg unwind.Reg
}{
	{0x04, 6}, {0x02, 5}, {0x01, 4}, // first push: r4-r6
	{0x80, 12}, {0x40, 11}, {0x20, 10}, {0x10, 9}, {0x08, 8}, // second push: r8-r12
}

// armDReg is the DWARF number of d0 (AAELF: d0-d31 are 256-287).
const armDReg = 256

func armRow(arch *archregs.Arch, e Entry) (unwind.Row, error) {
	enc := e.Encoding
	mode := enc & encodingModeMask
	switch mode {
	case armModeFrame, armModeFrameD:
	case armModeDWARF:
		return unwind.Row{}, ErrDWARF
	default:
		return unwind.Row{}, encodingError(e, "unknown mode %d", enc>>24&0xF)
	}
	// push {r4-r7, lr}; add r7, sp, #n: r7 points at the saved r7, lr
	// above it; stack adjust counts words the caller left above (varargs
	// spill), which the caller's SP excludes.
	adjust := int64(enc>>22&3) * 4
	fp := -8 - adjust // CFA offset of the saved r7
	row := unwind.Row{RA: arch.DWARFRA, CFA: unwind.CFA{Reg: arch.DWARFFP, Offset: -fp}}
	row.SetRule(arch.DWARFFP, saved(fp))
	row.SetRule(arch.DWARFRA, saved(fp+4))
	at := fp
	for _, s := range armSavedBelowFP {
		if enc&s.bit != 0 {
			at -= 4
			row.SetRule(s.reg, saved(at))
		}
	}
	if mode != armModeFrameD {
		return row, nil
	}
	// The d registers sit below, as libunwind's table says: up to four
	// pushed in pairs' first registers d8, d10, d12, d14; from five on,
	// some are stored at a 16-byte aligned address instead.
	n := enc >> 8 & 0x7
	d := func(reg int, off int64) { row.SetRule(armDReg+unwind.Reg(reg), saved(at+off)) }
	switch n {
	case 0, 1, 2, 3:
		for k := uint32(0); k <= n; k++ {
			d(8+2*int(k), -8*int64(n+1-k))
		}
	default:
		// n = 4..7: the top 7-n of d14, d12 pushed as above (4: d14, d12;
		// 5: d14), the others stored at (at - size) & ^15 upward.
		var pushed []int
		var aligned []int
		var below int64
		switch n {
		case 4:
			pushed, aligned, below = []int{12, 14}, []int{8, 9, 10}, 40
		case 5:
			pushed, aligned, below = []int{14}, []int{8, 9, 10, 11, 12}, 48
		case 6:
			aligned, below = []int{8, 9, 10, 11, 12, 13, 14}, 56
		case 7:
			aligned, below = []int{8, 9, 10, 11, 12, 13, 14, 15}, 64
		}
		for k, r := range pushed {
			d(r, -8*int64(len(pushed)-k))
		}
		for k, r := range aligned {
			row.SetRule(armDReg+unwind.Reg(r), unwind.Rule{Kind: unwind.Expression,
				Expr: alignedSlot{cfaOff: at - below, add: int64(8 * k)}})
		}
	}
	return row, nil
}

// alignedSlot is the address ((CFA + cfaOff) &^ 15) + add: where armv7
// frames with many d registers store them, 16-byte aligned below the
// pushed registers.
type alignedSlot struct{ cfaOff, add int64 }

// Eval computes the slot's address from the CFA.
func (a alignedSlot) Eval(ctx unwind.Context) (uint64, error) {
	cfa, ok := ctx.CFA()
	if !ok {
		return 0, fmt.Errorf("compactunwind: aligned d-register slot needs the CFA")
	}
	addr := (cfa+uint64(a.cfaOff))&^15 + uint64(a.add)
	if ctx.PtrSize() == 4 {
		addr &= 0xFFFFFFFF
	}
	return addr, nil
}
