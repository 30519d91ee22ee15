package machocore

import (
	"encoding/binary"
	"fmt"
	"sort"
	"strings"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/image"
)

// exceptionFormat is one architecture's exception state flavor, as the
// thread_status.h headers define it, and how to read its fields.
type exceptionFormat struct {
	flavor uint32
	name   string
	count  uint32 // in 32-bit words
	decode func(d []byte) ExceptionState
}

// exceptionFormats maps a CPU type to its exception state flavor.
var exceptionFormats = map[uint32]exceptionFormat{
	// _STRUCT_ARM_EXCEPTION_STATE64 {__far u64; __esr u32; __exception u32}
	archregs.CPUTypeARM64: {7, "ARM_EXCEPTION_STATE64", 4, func(d []byte) ExceptionState {
		le := binary.LittleEndian
		return ExceptionState{FaultAddress: le.Uint64(d), Syndrome: le.Uint32(d[8:]), Exception: le.Uint32(d[12:])}
	}},
	// _STRUCT_ARM_EXCEPTION_STATE {__exception u32; __fsr u32; __far u32}
	archregs.CPUTypeARM: {3, "ARM_EXCEPTION_STATE", 3, func(d []byte) ExceptionState {
		le := binary.LittleEndian
		return ExceptionState{Exception: le.Uint32(d), Syndrome: le.Uint32(d[4:]), FaultAddress: uint64(le.Uint32(d[8:]))}
	}},
	// _STRUCT_X86_EXCEPTION_STATE64 {__trapno u16; __cpu u16; __err u32; __faultvaddr u64}
	archregs.CPUTypeX86_64: {6, "x86_EXCEPTION_STATE64", 4, func(d []byte) ExceptionState {
		le := binary.LittleEndian
		return ExceptionState{Exception: uint32(le.Uint16(d)), Syndrome: le.Uint32(d[4:]), FaultAddress: le.Uint64(d[8:])}
	}},
	// _STRUCT_X86_EXCEPTION_STATE32 {__trapno u16; __cpu u16; __err u32; __faultvaddr u32}
	archregs.CPUTypeX86: {3, "x86_EXCEPTION_STATE32", 3, func(d []byte) ExceptionState {
		le := binary.LittleEndian
		return ExceptionState{Exception: uint32(le.Uint16(d)), Syndrome: le.Uint32(d[4:]), FaultAddress: uint64(le.Uint32(d[8:]))}
	}},
}

// thread reads an LC_THREAD's {flavor, count, state} list. Each iteration
// consumes at least 8 bytes of the command, which bounds the loop; a count
// running past the command ends it with a warning, keeping the states
// before it.
func (p *parser) thread(lc image.LoadCommand) {
	c := p.c
	th := Thread{Index: len(c.Threads), Command: lc.Index}
	d := lc.Data[8:]
	off := lc.Offset + 8
	var exc exceptionFormat
	if c.Arch != nil {
		exc = exceptionFormats[c.Arch.CPUType]
	}
	for len(d) >= 8 {
		flavor, count := p.bo.Uint32(d), p.bo.Uint32(d[4:])
		if flavor == 0 && count == 0 {
			break // a terminator some writers leave
		}
		if uint64(count)*4 > uint64(len(d)-8) {
			p.warn(lc.Index, lc.Offset, fmt.Sprintf("thread %d: flavor %d count %d (%d bytes) at offset %#x runs past the command (%d bytes left)", th.Index, flavor, count, uint64(count)*4, off, len(d)-8), nil)
			break
		}
		data := d[8 : 8+4*int(count)]
		st := State{Flavor: flavor, Count: count, Offset: off + 8, Kind: "skipped"}
		switch {
		case c.Arch == nil:
		case th.Registers == nil && isGeneral(c.Arch, flavor):
			regs, err := archregs.Decode(c.Arch, flavor, data)
			if err != nil {
				p.warn(lc.Index, lc.Offset, fmt.Sprintf("thread %d: state at offset %#x", th.Index, off), err)
				break
			}
			th.Registers, st.Kind = regs, "general"
		case th.Exception == nil && flavor == exc.flavor && exc.decode != nil:
			if count != exc.count {
				p.warn(lc.Index, lc.Offset, fmt.Sprintf("thread %d: %s at offset %#x has count %d, want %d", th.Index, exc.name, off, count, exc.count), nil)
				break
			}
			e := exc.decode(data)
			e.Flavor = flavor
			th.Exception, st.Kind = &e, "exception"
		}
		th.States = append(th.States, st)
		d = d[8+4*int(count):]
		off += 8 + 4*int64(count)
	}
	if th.Registers == nil && c.Arch != nil {
		p.warn(lc.Index, lc.Offset, fmt.Sprintf("thread %d: no general register state (want flavor %s)", th.Index, archregs.FlavorName(c.Arch, archregs.NativeFlavor(c.Arch))), nil)
	}
	c.Threads = append(c.Threads, th)
}

// isGeneral reports whether flavor is one of arch's general register
// flavors, which archregs decodes.
func isGeneral(arch *archregs.Arch, flavor uint32) bool {
	return !strings.HasPrefix(archregs.FlavorName(arch, flavor), "flavor ")
}

// stackBounds sets each thread's stack bounds to the region holding SP.
func (p *parser) stackBounds() {
	rs := p.c.Regions
	for i := range p.c.Threads {
		th := &p.c.Threads[i]
		if th.Registers == nil {
			continue
		}
		sp, ok := th.Registers.SP()
		if !ok {
			continue
		}
		j := sort.Search(len(rs), func(j int) bool { return rs[j].End() > sp })
		if j < len(rs) && rs[j].Addr <= sp {
			th.StackLow, th.StackHigh = rs[j].Addr, rs[j].End()
		}
	}
}
