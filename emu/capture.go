//go:build unicorn

package emu

import (
	"fmt"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/snapshot"
)

// Registers reads the emulator's registers into an archregs register set,
// every register of the architecture's thread state known. It costs one
// cgo call, so a sweep can afford it at every instruction.
//
// The status register is written as a user thread's would be: on arm64
// only NZCV (EL0t, the rest zero), on armv7 the emulator's CPSR.
func (m *Machine) Registers() (*archregs.Registers, error) {
	in := m.info
	if err := m.Engine.RegReadBatch(in.regIDs, m.regs); err != nil {
		return nil, err
	}
	regs := archregs.NewRegisters(in.arch)
	for i, name := range in.arch.RegNames {
		v := m.regs[i]
		if in.ptrSize == 4 {
			v &= 0xffffffff
		}
		if err := regs.Set(name, v); err != nil {
			return nil, err
		}
	}
	return regs, nil
}

// ThreadState returns the registers as the raw bytes thread_get_state
// returns for the architecture's native flavor, and that flavor.
func (m *Machine) ThreadState() (flavor uint32, data []byte, err error) {
	regs, err := m.Registers()
	if err != nil {
		return 0, nil, err
	}
	flavor = archregs.NativeFlavor(m.Arch)
	data, err = regs.Encode(flavor)
	if err != nil {
		return 0, nil, fmt.Errorf("emu: encode %s thread state: %w", m.Arch.Name, err)
	}
	return flavor, data, nil
}

// RedZone returns the bytes below SP that the architecture's ABI lets a
// function use without moving SP, and so that a capture includes.
func (m *Machine) RedZone() uint64 { return m.info.redZone }

// Capture takes a snapshot of the thread as a crash reporter would: the
// registers as thread_get_state's raw bytes, decoded back through
// archregs.Decode (so a capture exercises the same path as a real dump);
// the stack from SP less the red zone up to the top of the stack; and the
// loaded images.
func (m *Machine) Capture() (*snapshot.Snapshot, error) {
	flavor, state, err := m.ThreadState()
	if err != nil {
		return nil, err
	}
	regs, err := archregs.Decode(m.Arch, flavor, state)
	if err != nil {
		return nil, fmt.Errorf("emu: decode the captured %s thread state: %w", m.Arch.Name, err)
	}
	sp, err := m.SP()
	if err != nil {
		return nil, err
	}
	low := m.StackLow
	if sp >= m.StackLow+m.info.redZone && sp <= m.StackHigh {
		low = sp - m.info.redZone
	} else if sp > m.StackHigh {
		return nil, fmt.Errorf("emu: SP %#x is above the stack [%#x, %#x)", sp, m.StackLow, m.StackHigh)
	}
	stack := make([]byte, m.StackHigh-low)
	if _, err := m.ReadMemory(stack, low); err != nil {
		return nil, fmt.Errorf("emu: read the stack: %w", err)
	}
	var regions []snapshot.Region
	// At an ARM entry point SP is the top of the stack and there is no red
	// zone: nothing of the stack is live, and a region may not be empty.
	if len(stack) > 0 {
		regions = append(regions, snapshot.Region{Address: low, Data: stack})
	}
	mem, err := snapshot.NewRegions(regions)
	if err != nil {
		return nil, err
	}
	s := &snapshot.Snapshot{
		Arch: m.Arch,
		Threads: []snapshot.Thread{{
			ID: 1, Name: "emu", Crashed: true, Registers: regs,
			StackLow: m.StackLow, StackHigh: m.StackHigh,
		}},
		Memory: mem,
	}
	for _, l := range m.Images {
		s.Images = append(s.Images, snapshot.Image{
			Name: l.Image.Name, UUID: l.Image.UUID, LoadAddress: l.LoadAddress, Size: l.Size,
		})
	}
	return s, nil
}
