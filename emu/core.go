//go:build unicorn

package emu

import (
	"bytes"
	"fmt"
	"io"

	"github.com/stackimage/stackimage/fixtures"
	"github.com/stackimage/stackimage/machocore"
	"github.com/stackimage/stackimage/snapshot"
	"github.com/stackimage/stackimage/symbolize"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/walker"
)

// CoreInput describes the machine's current state as a Mach-O core for
// machocore.Write: the thread's registers, taken as Capture takes them
// (thread_get_state's bytes decoded by archregs); the stack from SP less
// the red zone to its top, as Capture copies it; every loaded image's
// segments (all but __PAGEZERO) as the emulator's memory now holds them;
// and the images, with UUIDs, load addresses and segment addresses, for
// the "all image infos" note.
func (m *Machine) CoreInput() (*machocore.WriteInput, error) {
	snap, err := m.Capture()
	if err != nil {
		return nil, err
	}
	th := snap.Threads[0]
	in := &machocore.WriteInput{
		Arch:    m.Arch,
		Threads: []machocore.WriteThread{{Registers: th.Registers}},
	}
	for _, r := range snap.Memory.All() {
		in.Regions = append(in.Regions, machocore.WriteRegion{Name: "stack", Addr: r.Address, Data: r.Data})
	}
	for _, l := range m.Images {
		im := machocore.Image{Name: l.Image.Name, UUID: l.Image.UUID, LoadAddress: l.LoadAddress}
		for _, s := range l.Image.Segments {
			if s.Name == "__PAGEZERO" || s.Size == 0 {
				continue
			}
			data := make([]byte, s.Size)
			if _, err := m.ReadMemory(data, s.Addr+l.Slide); err != nil {
				return nil, fmt.Errorf("emu: read %s segment %s: %w", l.Image.Name, s.Name, err)
			}
			in.Regions = append(in.Regions, machocore.WriteRegion{
				Name: s.Name, Addr: s.Addr + l.Slide, Data: data, Prot: s.Prot, MaxProt: s.MaxProt,
			})
			im.Segments = append(im.Segments, machocore.ImageSegment{Name: s.Name, Addr: s.Addr + l.Slide})
		}
		in.Images = append(in.Images, im)
	}
	return in, nil
}

// WriteCore writes the machine's current state (CoreInput) as a Mach-O
// core file.
func (m *Machine) WriteCore(w io.Writer) error {
	in, err := m.CoreInput()
	if err != nil {
		return err
	}
	return machocore.Write(w, in)
}

// PointCore is the state at a SnapshotPoint in the two forms a dump takes:
// the snapshot Capture gives and the Mach-O core WriteCore writes, with our
// walk of the snapshot.
type PointCore struct {
	Snapshot *snapshot.Snapshot
	Core     []byte
	// Frames is symbolize.Process.Walk over the snapshot, as CapturePoint
	// walks it; Truth is the emulator's true chain, innermost first.
	Frames []symstore.Frame
	Truth  []string
	// Process is the symbolized process Frames were walked with, for
	// walking the core's memory the same way.
	Process *symbolize.Process
}

// CapturePointCore runs a point's fixture to the point, as CapturePoint
// does, and captures it both as a snapshot and as a Mach-O core. Images
// are named by their path in the fixtures directory ("bin/chain-arm64-O1")
// in both.
func CapturePointCore(dir string, pt SnapshotPoint) (*PointCore, error) {
	s, out, target, err := pointSweeper(dir, pt)
	if err != nil {
		return nil, err
	}
	defer s.m.Close()
	n := 0
	reason, err := s.m.Run(RunOptions{StopAt: func(uint64) bool { n++; return n == target }})
	if err != nil {
		return nil, fmt.Errorf("emu: core %s: %w", pt.Name, err)
	}
	if reason != StopAtPC {
		return nil, fmt.Errorf("emu: core %s: run ended (%v) before boundary %d", pt.Name, reason, target)
	}
	pc, err := s.m.PC()
	if err != nil {
		return nil, err
	}
	snap, err := s.m.Capture()
	if err != nil {
		return nil, err
	}
	in, err := s.m.CoreInput()
	if err != nil {
		return nil, err
	}
	for i := range snap.Images {
		snap.Images[i].Name = out.Path
	}
	for i := range in.Images {
		in.Images[i].Name = out.Path
	}
	var core bytes.Buffer
	if err := machocore.Write(&core, in); err != nil {
		return nil, err
	}
	th := snap.Threads[0]
	frames, _ := s.proc.Walk(th.Registers, snap.Memory, walker.Options{StackLow: th.StackLow, StackHigh: th.StackHigh})
	return &PointCore{Snapshot: snap, Core: core.Bytes(), Frames: frames, Truth: s.truthNames(pc), Process: s.proc}, nil
}

// pointSweeper finds a point's fixture output, counts the boundaries to the
// point in a first run, and returns a fresh sweeper for the second run that
// stops there, the output, and the 1-based boundary to stop at.
func pointSweeper(dir string, pt SnapshotPoint) (*sweeper, fixtures.Output, int, error) {
	man, err := fixtures.Load()
	if err != nil {
		return nil, fixtures.Output{}, 0, err
	}
	var out fixtures.Output
	for _, o := range man.Outputs {
		if o.Name() == pt.Output {
			out = o
		}
	}
	if out.Path == "" {
		return nil, out, 0, fmt.Errorf("emu: core %s: no fixture output %s", pt.Name, pt.Output)
	}
	prog, _ := man.Program(out.Program)
	target, err := pointStep(dir, prog, out, pt)
	if err != nil {
		return nil, out, 0, fmt.Errorf("emu: core %s: %w", pt.Name, err)
	}
	s, err := newSweeper(dir, prog, out, SnapshotSlide)
	if err != nil {
		return nil, out, 0, err
	}
	return s, out, target, nil
}
