package compactunwind

import (
	"encoding/binary"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/unwind"
)

// x86 register numbers as instructions encode them (ModRM and the low
// bits of push/pop opcodes), mapped to DWARF numbers.
var (
	x86_64InsnReg = [16]unwind.Reg{0, 2, 1, 3, 7, 6, 4, 5, 8, 9, 10, 11, 12, 13, 14, 15} // rax rcx rdx rbx rsp rbp rsi rdi r8-r15
	i386InsnReg   = [8]unwind.Reg{0, 1, 2, 3, 5, 4, 6, 7}                                // eax ecx edx ebx esp ebp esi edi (Darwin: ebp 4, esp 5)
)

const (
	x86RegSP = 4 // instruction encoding of rsp/esp
	x86RegBP = 5 // rbp/ebp
)

// The instructions a Swift async function's prologue and epilogue add
// around the frame record: set, and clear again, bit 60 of the caller's
// frame pointer, which marks an extended frame record.
var (
	x86TagAsyncFrame   = [5]byte{0x48, 0x0F, 0xBA, 0xED, 0x3C} // btsq $0x3c, %rbp
	x86UntagAsyncFrame = [5]byte{0x48, 0x0F, 0xBA, 0xF5, 0x3C} // btrq $0x3c, %rbp
)

// x86Decoder decodes the prologue and epilogue shapes clang emits for
// x86_64 and i386: push bp; mov bp, sp; push reg...; sub sp, imm; and
// add sp, imm / lea sp, [bp-n] / pop reg... / leave / pop bp; ret.
func x86Decoder(arch *archregs.Arch) *decoder {
	d := &decoder{arch: arch, raOnStack: true}
	is64 := arch.PtrSize == 8
	ptr := int64(arch.PtrSize)
	// reg decodes a push/pop register (opcode base+r, with REX.B on
	// x86_64): the register's DWARF number and the instruction length.
	reg := func(code []byte, base byte) (unwind.Reg, int, bool) {
		switch {
		case len(code) >= 1 && code[0]&^7 == base:
			if is64 {
				return x86_64InsnReg[code[0]&7], 1, true
			}
			return i386InsnReg[code[0]&7], 1, true
		case is64 && len(code) >= 2 && code[0] == 0x41 && code[1]&^7 == base:
			return x86_64InsnReg[8+code[1]&7], 2, true
		}
		return 0, 0, false
	}
	// rex skips the REX.W prefix of 64-bit stack-pointer arithmetic.
	rex := func(code []byte) ([]byte, int, bool) {
		if !is64 {
			return code, 0, true
		}
		if len(code) > 0 && code[0] == 0x48 {
			return code[1:], 1, true
		}
		return nil, 0, false
	}
	// spImm decodes `op sp, imm8/imm32` (83 /ext ib, 81 /ext id): ext 5 is
	// sub, 0 is add.
	spImm := func(code []byte, ext byte) (int64, int, bool) {
		c, p, ok := rex(code)
		if !ok || len(c) < 3 || c[1] != 0xC0|ext<<3|x86RegSP {
			return 0, 0, false
		}
		switch {
		case c[0] == 0x83:
			return int64(int8(c[2])), p + 3, true
		case c[0] == 0x81 && len(c) >= 6:
			return int64(int32(binary.LittleEndian.Uint32(c[2:]))), p + 6, true
		}
		return 0, 0, false
	}
	// movMem decodes `mov [bp/sp + disp], reg` (op 0x89, a store) or
	// `mov reg, [bp/sp + disp]` (op 0x8B, a load), disp 8 or 32 bits, the way hand-written
	// and older compilers' prologues save registers: the register, the
	// base (x86RegBP or x86RegSP), the displacement and the length.
	movMem := func(code []byte, op byte) (r unwind.Reg, base byte, disp int64, n int, ok bool) {
		c, p := code, 0
		var regHigh byte
		if is64 {
			if len(c) == 0 || c[0]&^4 != 0x48 { // REX.W, with or without REX.R
				return 0, 0, 0, 0, false
			}
			regHigh = (c[0] >> 2 & 1) << 3
			c, p = c[1:], 1
		}
		if len(c) < 2 || c[0] != op {
			return 0, 0, 0, 0, false
		}
		mod, reg := c[1]>>6, regHigh|c[1]>>3&7
		at := 2 // the displacement, after the SIB byte of [sp + disp]
		switch c[1] & 7 {
		case x86RegBP:
			base = x86RegBP
		case x86RegSP:
			if len(c) < 3 || c[2] != 0x24 {
				return 0, 0, 0, 0, false
			}
			base, at = x86RegSP, 3
		default:
			return 0, 0, 0, 0, false
		}
		switch {
		case mod == 1 && len(c) >= at+1: // disp8
			disp, n = int64(int8(c[at])), p+at+1
		case mod == 2 && len(c) >= at+4: // disp32
			disp, n = int64(int32(binary.LittleEndian.Uint32(c[at:]))), p+at+4
		default:
			return 0, 0, 0, 0, false
		}
		if is64 {
			r = x86_64InsnReg[reg]
		} else {
			r = i386InsnReg[reg]
		}
		return r, base, disp, n, true
	}
	d.prologue = func(s *frameState, code []byte) (int, bool) {
		if is64 && len(code) >= 5 && [5]byte(code[:5]) == x86TagAsyncFrame {
			return 5, true
		}
		// lea bp, [sp + disp8]: a Swift async frame points BP at its
		// record above the async context it pushed.
		if is64 && len(code) >= 5 && code[0] == 0x48 && code[1] == 0x8D && code[2] == 0x6C && code[3] == 0x24 {
			s.fpSet, s.fpOff = true, s.depth-int64(int8(code[4]))
			return 5, true
		}
		if r, base, disp, n, ok := movMem(code, 0x89); ok && arch.IsCalleeSaved(r) {
			switch {
			case base == x86RegSP:
				s.save(r, disp)
			case s.fpSet: // SP = CFA - depth, BP = CFA - fpOff
				s.save(r, s.depth-s.fpOff+disp)
			default:
				return 0, false
			}
			return n, true
		}
		if r, n, ok := reg(code, 0x50); ok { // push reg
			s.depth += ptr
			if arch.IsCalleeSaved(r) {
				s.save(r, 0)
			}
			return n, true
		}
		if imm, n, ok := spImm(code, 5); ok { // sub sp, imm
			s.depth += imm
			return n, true
		}
		// mov bp, sp: 89 /r (e5) or 8b /r (ec).
		if c, p, ok := rex(code); ok && len(c) >= 2 && (c[0] == 0x89 && c[1] == 0xE5 || c[0] == 0x8B && c[1] == 0xEC) {
			s.fpSet, s.fpOff = true, s.depth
			return p + 2, true
		}
		return 0, false
	}
	d.epilogue = func(code []byte, pc uint32, e Entry) (unwind.Row, bool, bool) {
		var s epilogueState
		restoresSP := false
		for at := 0; at < len(code); {
			c := code[at:]
			if r, n, ok := reg(c, 0x58); ok { // pop reg
				if arch.IsCalleeSaved(r) {
					s.load(r, 0)
				}
				s.up += ptr
				at += n
				continue
			}
			if imm, n, ok := spImm(c, 0); ok { // add sp, imm
				s.up += imm
				at += n
				continue
			}
			if r, base, disp, n, ok := movMem(c, 0x8B); ok && arch.IsCalleeSaved(r) {
				if base == x86RegSP {
					s.load(r, disp)
				} else {
					// Reloaded from the frame: until then BP still holds
					// the frame and the body's row is right.
					restoresSP = true
				}
				at += n
				continue
			}
			if is64 && len(c) >= 5 && [5]byte(c[:5]) == x86UntagAsyncFrame {
				at += 5
				continue
			}
			switch {
			case c[0] == 0xC3 || c[0] == 0xC2: // ret, ret imm16
				return s.row(d, ptr, false), true, restoresSP
			case c[0] == 0xC9: // leave: mov sp, bp; pop bp
				restoresSP = true
				at++
				continue
			case c[0] == 0xE9 && len(c) >= 5: // jmp rel32: a tail call when it leaves the function
				target := int64(pc) + int64(at) + 5 + int64(int32(binary.LittleEndian.Uint32(c[1:])))
				if target < int64(e.FuncStart) || target >= int64(e.FuncEnd) {
					return s.row(d, ptr, false), true, restoresSP
				}
				return unwind.Row{}, false, false
			}
			// lea sp, [bp+disp8/disp32]; mov sp, bp.
			if r, p, ok := rex(c); ok && len(r) >= 2 {
				switch {
				case r[0] == 0x8D && r[1] == 0x65 && len(r) >= 3:
					restoresSP = true
					at += p + 3
					continue
				case r[0] == 0x8D && r[1] == 0xA5 && len(r) >= 6:
					restoresSP = true
					at += p + 6
					continue
				case r[0] == 0x89 && r[1] == 0xEC, r[0] == 0x8B && r[1] == 0xE5:
					restoresSP = true
					at += p + 2
					continue
				}
			}
			return unwind.Row{}, false, false
		}
		return unwind.Row{}, false, false
	}
	// A shrink-wrapped prologue starts with a push right after a ret.
	d.wrapped = func(code []byte, off int) (int, bool) {
		for _, p := range []int{off, off - 1, off - 2} {
			if p < 1 || p >= len(code) || code[p-1] != 0xC3 {
				continue
			}
			if _, n, ok := reg(code[p:], 0x50); ok && p+n >= off {
				return p, true
			}
		}
		return 0, false
	}
	// i386 position-independent code reads its own address with `call
	// next; next: pop reg`: between the two, the return address the call
	// pushed is on the stack.
	d.body = func(row *unwind.Row, pc uint32, code CodeReader) {
		var b [6]byte
		if row.CFA.Reg != arch.DWARFSP || pc < 5 {
			return
		}
		if _, err := code.ReadAt(b[:], int64(pc)-5); err != nil {
			return
		}
		if b == [6]byte{0xE8, 0, 0, 0, 0, b[5]} && b[5]&^7 == 0x58 {
			row.CFA.Offset += ptr
		}
	}
	return d
}
