//go:build unicorn

package emu

import (
	"fmt"

	"github.com/stackimage/stackimage/fixtures"
)

// StaleStack says what the stack holds below the entry's SP before a sweep
// runs a fixture. The emulator's stack starts zeroed, so the only stale
// words a walk can meet are those the run itself leaves; a thread on a
// device has done other work before, and the slots its frames leave
// unwritten (padding, locals set late) hold what earlier calls left there.
type StaleStack int

const (
	// StaleNone: the stack starts zeroed (the accuracy table).
	StaleNone StaleStack = iota
	// StaleReplay: the stack as a first, complete run of the same program
	// left it: the stale words of a thread that did the same work before.
	StaleReplay
	// StaleFill: every word of the stack below the entry holds one of the
	// return addresses the program's calls push, in turn: a worst case, in
	// which every slot a frame leaves unwritten looks like a caller, and
	// of every function some word is a return address after a call of it.
	StaleFill
)

// staleBytes is how much of the stack below the entry a StaleStack fills:
// more than the fixtures use.
const staleBytes = 64 << 10

// staleGap is left unwritten at the top of the stack, above the entry's SP
// (and the sentinel return address x86 pushes there).
const staleGap = 64

// ParseStaleStack parses "none", "replay" or "fill".
func ParseStaleStack(s string) (StaleStack, error) {
	switch s {
	case "", "none":
		return StaleNone, nil
	case "replay":
		return StaleReplay, nil
	case "fill":
		return StaleFill, nil
	}
	return 0, fmt.Errorf("emu: stale stack %q: want none, replay or fill", s)
}

// dirtyStack writes the stale words of kind into s's stack, from a first
// run of the fixture on a machine of its own.
func dirtyStack(dir string, prog fixtures.Program, out fixtures.Output, s *sweeper, kind StaleStack) error {
	if kind == StaleNone {
		return nil
	}
	pre, err := newSweeper(dir, prog, out, 0)
	if err != nil {
		return err
	}
	defer pre.m.Close()
	seen := map[uint64]bool{}
	var ras []uint64
	opts := RunOptions{OnStep: func(uint64) error {
		for _, c := range pre.m.Shadow.Calls[1:] { // [0] is the sentinel
			if !seen[c.ReturnAddress] {
				seen[c.ReturnAddress] = true
				ras = append(ras, c.ReturnAddress)
			}
		}
		return nil
	}}
	if prog.End == fixtures.EndHalt {
		halt, err := SymbolAddress(pre.loaded.Image, fixtures.HaltFunction)
		if err != nil {
			return err
		}
		halt = pre.m.Arch.CodeAddress(halt + pre.loaded.Slide)
		opts.StopAt = func(pc uint64) bool { return pc == halt }
	}
	if _, err := pre.m.Run(opts); err != nil {
		return fmt.Errorf("emu: the first run of %s: %w", out.Name(), err)
	}
	at := s.m.StackHigh - staleGap - staleBytes
	buf := make([]byte, staleBytes)
	switch kind {
	case StaleReplay:
		if _, err := pre.m.ReadMemory(buf, at); err != nil {
			return err
		}
	case StaleFill:
		if len(ras) == 0 {
			return nil
		}
		p := int(s.ptrSize)
		for i := 0; i+p <= len(buf); i += p {
			v := ras[(i/p)%len(ras)]
			for k := range p {
				buf[i+k] = byte(v >> (8 * k))
			}
		}
	}
	return s.m.Engine.WriteMemory(at, buf)
}
