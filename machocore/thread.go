package machocore

import (
	"fmt"
	"sort"
	"strings"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/image"
)

// thread reads an LC_THREAD's {flavor, count, state} list. Each iteration
// consumes at least 8 bytes of the command, which bounds the loop; a count
// running past the command ends it with a warning, keeping the states
// before it.
func (p *parser) thread(lc image.LoadCommand) {
	c := p.c
	th := Thread{Index: len(c.Threads), Command: lc.Index}
	d := lc.Data[8:]
	off := lc.Offset + 8
	var exc *archregs.ExceptionFormat // the architecture's exception state flavor
	if c.Arch != nil {
		exc = c.Arch.Exception
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
		case th.Exception == nil && exc != nil && flavor == exc.Flavor:
			if count != exc.Count {
				p.warn(lc.Index, lc.Offset, fmt.Sprintf("thread %d: %s at offset %#x has count %d, want %d", th.Index, exc.Name, off, count, exc.Count), nil)
				break
			}
			e := ExceptionState{Flavor: flavor}
			e.Exception, e.Syndrome, e.FaultAddress, _ = exc.Decode(data) // count checked: no error
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
