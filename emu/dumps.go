package emu

import (
	"io"

	"github.com/stackimage/stackimage/machocore"
	"github.com/stackimage/stackimage/minidump"
	"github.com/stackimage/stackimage/snapshot"
)

// This file writes captured states in the dump formats crash reporters
// write, so that their readers are proven on real program states: a
// capture (a snapshot) becomes a minidump as Crashpad would write it for a
// macOS process, or a Mach-O core as lldb's process save-core writes one.
// It is pure Go and needs no emulator.

// WriteMinidump writes snap as a minidump: each thread with its registers
// and the snapshot memory holding its SP as its stack, the images as
// modules with their UUIDs, every memory region, and the first crashed
// thread as the exception's thread.
func WriteMinidump(w io.Writer, snap *snapshot.Snapshot) error {
	in := &minidump.WriterInput{Arch: snap.Arch, Platform: minidump.PlatformMacOS}
	var regions []snapshot.Region
	if snap.Memory != nil {
		regions = snap.Memory.All()
	}
	for _, r := range regions {
		in.Memory = append(in.Memory, minidump.WriterMemory{Addr: r.Address, Data: r.Data})
	}
	for _, th := range snap.Threads {
		wt := minidump.WriterThread{ID: uint32(th.ID), Name: th.Name, Registers: th.Registers}
		if sp, ok := th.Registers.SP(); ok {
			for _, r := range regions {
				if sp >= r.Address && sp-r.Address < uint64(len(r.Data)) {
					wt.StackAddr, wt.Stack = r.Address, r.Data
				}
			}
		}
		in.Threads = append(in.Threads, wt)
		if th.Crashed && in.Exception == nil {
			in.Exception = &minidump.WriterException{ThreadID: uint32(th.ID), Registers: th.Registers}
		}
	}
	for _, im := range snap.Images {
		in.Modules = append(in.Modules, minidump.WriterModule{Base: im.LoadAddress, Size: uint32(min(im.Size, 1<<32-1)),
			Path: im.Name, UUID: im.UUID})
	}
	return minidump.Write(w, in)
}

// WriteCore writes snap as a Mach-O core: a segment per memory region, a
// thread command per thread, and the images in an "all image infos" note.
// The crashed thread comes first, as the kernel writes the faulting one.
func WriteCore(w io.Writer, snap *snapshot.Snapshot) error {
	in := &machocore.WriteInput{Arch: snap.Arch}
	if snap.Memory != nil {
		for _, r := range snap.Memory.All() {
			in.Regions = append(in.Regions, machocore.WriteRegion{Name: "stack", Addr: r.Address, Data: r.Data})
		}
	}
	for _, th := range snap.Threads {
		in.Threads = append(in.Threads, machocore.WriteThread{Registers: th.Registers})
	}
	for _, im := range snap.Images {
		in.Images = append(in.Images, machocore.Image{Name: im.Name, UUID: im.UUID, LoadAddress: im.LoadAddress})
	}
	return machocore.Write(w, in)
}
