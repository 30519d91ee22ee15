package machocore

import (
	"path"

	"github.com/stackimage/stackimage/dump"
)

// Dump returns the core in the common dump model, which every input
// becomes before it is walked and symbolicated. The model reads memory
// through the core's Memory, lazily. A core says nothing of which thread
// crashed; a thread whose exception state names a fault is marked crashed.
func (c *Core) Dump() *dump.Dump {
	m := &dump.Dump{Format: dump.FormatCore, Arch: c.Arch, Memory: c.Memory}
	if c.PACMask != 0 {
		// The model's mask keeps the address bits; the core's names the
		// bits above them.
		m.PACMask = ^c.PACMask
	}
	for _, im := range c.Images {
		m.Images = append(m.Images, dump.Image{Name: path.Base(im.Name), Path: im.Name, UUID: im.UUID,
			LoadAddress: im.LoadAddress, Size: im.Size})
	}
	for _, th := range c.Threads {
		t := dump.Thread{Index: th.Index, ID: uint64(th.Index), Registers: th.Registers,
			StackLow: th.StackLow, StackHigh: th.StackHigh}
		if ex := th.Exception; ex != nil && ex.FaultAddress != 0 && m.Crash == nil {
			t.Crashed = true
			m.Crash = &dump.Crash{Address: ex.FaultAddress, HasAddress: true, ThreadID: t.ID}
		}
		m.Threads = append(m.Threads, t)
	}
	for _, w := range c.Warnings {
		m.Warnings = append(m.Warnings, w.Error())
	}
	return m
}
