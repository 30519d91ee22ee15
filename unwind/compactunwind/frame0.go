package compactunwind

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/unwind"
)

// Frame 0, the interrupted frame, can stop at any instruction: inside the
// prologue, before the registers the encoding describes are saved, or in
// an epilogue, after some were restored and the stack pointer moved. The
// compact encoding holds only between the two. Frame0Row decodes the
// instructions clang emits there (a closed set of shapes) and gives the
// row that holds at exactly one instruction.

// Bounds of the straight-line scans: Apple prologues push at most the
// callee-saved registers (six on x86_64, twelve plus eight vector
// registers in pairs on arm64) and move SP once or twice; these leave
// room and keep a scan out of a function's body.
const (
	maxPrologueBytes = 128 // decoded from the function start
	maxEpilogueBytes = 64  // decoded from the PC to the return
)

// Frame0Row returns the row that holds at pc (image-relative) inside e's
// function, for the interrupted frame, by decoding the function's code:
// the prologue from e.FuncStart up to pc, and the instructions from pc to
// the function's next return when they are only epilogue instructions.
//
//   - In the prologue it gives the partial frame built so far (at the first
//     instruction, the call-site state: CFA = SP + the return address).
//   - In an epilogue it gives the frame as the remaining instructions will
//     unwind it, the CFA computed from SP.
//   - In the body it gives RowFor's row when the encoding has one, else the
//     row the prologue built.
//
// The prologue is decoded from e.FuncStart: narrow e to the function's own
// bounds first when they are known (Entry.Narrow), as linkers fold
// adjacent functions that share an encoding into one entry. Unnarrowed,
// the prologue rows of the second and later functions of such an entry
// are the body's.
//
// On armv7 the instruction set is ARM unless bit 0 of pc is set, which
// says Thumb (set it from CPSR.T, as a return address's bit 0 says it for
// callers).
//
// It returns ok=false, and the caller should rely on RowFor or other
// strategies, when the code cannot be read, pc is outside e, the prologue
// has a shape it does not know and the encoding gives no row, or the
// architecture has no decoder. Errors are RowFor's, returned only when the
// body row is needed and the code does not give one either. Safe for
// concurrent use; it reads at most 128 bytes from the function start and
// 64 from pc.
func Frame0Row(arch *archregs.Arch, e Entry, pc uint32, code CodeReader) (unwind.Row, bool, error) {
	row, _, ok, err := Frame0(arch, e, pc, code)
	return row, ok, err
}

// Phase says where in its function the interrupted frame stopped.
type Phase int

// The phases Frame0 tells apart.
const (
	PhaseBody     Phase = iota // between prologue and epilogue: the encoding's row holds
	PhasePrologue              // in the prologue, decoded up to pc
	PhaseEpilogue              // in an epilogue, decoded from pc to the return
)

// String names the phase: "body", "prologue" or "epilogue".
func (p Phase) String() string {
	switch p {
	case PhaseBody:
		return "body"
	case PhasePrologue:
		return "prologue"
	case PhaseEpilogue:
		return "epilogue"
	}
	return fmt.Sprintf("Phase(%d)", int(p))
}

// Frame0 is Frame0Row, and also says which phase pc is in. A caller with
// another source of rows for the body (DWARF CFI, which compilers do not
// make asynchronous in epilogues) takes Frame0's row only in the prologue
// and the epilogue.
func Frame0(arch *archregs.Arch, e Entry, pc uint32, code CodeReader) (unwind.Row, Phase, bool, error) {
	if arch == nil {
		return unwind.Row{}, 0, false, errNoArch
	}
	thumb := arch.Thumb(uint64(pc))
	if thumb {
		// Bit 0 of pc says Thumb, as it does in a return address; the
		// function's addresses are those of its halfwords.
		pc = uint32(arch.CodeAddress(uint64(pc)))
		e.FuncStart = uint32(arch.CodeAddress(uint64(e.FuncStart)))
	}
	d := decoderFor(arch, thumb)
	if d == nil {
		return unwind.Row{}, PhaseBody, false, nil
	}
	if code == nil || pc < e.FuncStart || pc >= e.FuncEnd {
		return unwind.Row{}, PhaseBody, false, nil
	}
	pro, ok := readCode(code, e.FuncStart, min(e.FuncEnd, e.FuncStart+maxPrologueBytes))
	if !ok {
		return unwind.Row{}, PhaseBody, false, nil
	}
	// The prologue, from the function start up to pc or to the first
	// instruction that is not a prologue's.
	s := d.entryState()
	at := uint32(0)
	// An entry that continues a function (UNWIND_IS_NOT_FUNCTION_START)
	// has no prologue at its start.
	for e.Encoding&EncodingIsNotFunctionStart == 0 && e.FuncStart+at < pc {
		n, ok := d.prologue(&s, pro[at:])
		if !ok {
			break
		}
		at += uint32(n)
	}
	// A shrink-wrapped function returns early before building its frame,
	// and its prologue starts after that return: decode from there.
	if at == 0 && pc > e.FuncStart && d.wrapped != nil && pc-e.FuncStart < uint32(len(pro)) {
		if start, ok := d.wrapped(pro, int(pc-e.FuncStart)); ok {
			s, at = d.entryState(), uint32(start)
			for e.FuncStart+at < pc {
				n, ok := d.prologue(&s, pro[at:])
				if !ok {
					break
				}
				at += uint32(n)
			}
			if e.FuncStart+at != pc {
				s, at = d.entryState(), 0
			}
		}
	}
	inPrologue := e.Encoding&EncodingIsNotFunctionStart == 0 && e.FuncStart+at == pc
	// An epilogue from pc to a return or tail call. In a prologue the
	// instruction at pc is a prologue's and the scan fails at once, unless
	// the epilogue follows the prologue directly.
	if epi, ok := readCode(code, pc, min(e.FuncEnd, pc+maxEpilogueBytes)); ok {
		// When SP is restored from FP ahead, the body's FP-based row holds
		// until then, whether or not the prologue was decoded: a
		// shrink-wrapped function's is not at its start, and SP may sit
		// anywhere below FP (an alloca) until the restore.
		if row, ok, restoresSP := d.epilogue(epi, pc, e); ok && !restoresSP {
			return row, PhaseEpilogue, true, nil
		}
	}
	if inPrologue {
		return s.row(d), PhasePrologue, true, nil
	}
	row, err := RowFor(d.arch, e, code)
	switch {
	case err == nil:
	case at == 0:
		return unwind.Row{}, PhaseBody, false, nil // no prologue shape known
	case errors.Is(err, ErrDWARF) || errors.Is(err, ErrNoInfo):
		row = s.row(d)
	default:
		return unwind.Row{}, PhaseBody, false, err
	}
	if d.body != nil {
		d.body(&row, pc, code)
	}
	return row, PhaseBody, true, nil
}

// decoders holds the decoder of each architecture (and Thumb), built on
// first use: a decoder holds no state of its own.
var decoders sync.Map // decoderKey → *decoder

type decoderKey struct {
	arch  *archregs.Arch
	thumb bool
}

// decoderFor returns the instruction decoder for arch, nil when there is
// none.
func decoderFor(arch *archregs.Arch, thumb bool) *decoder {
	key := decoderKey{arch, thumb}
	if d, ok := decoders.Load(key); ok {
		return d.(*decoder)
	}
	enc := encodings[arch.CPUType]
	if enc == nil {
		return nil
	}
	build := enc.decoder
	if thumb {
		build = enc.thumb
	}
	if build == nil {
		return nil
	}
	d := build(arch)
	actual, _ := decoders.LoadOrStore(key, d)
	return actual.(*decoder)
}

// readCode reads [from, to) and returns what could be read, false when
// nothing could.
func readCode(code CodeReader, from, to uint32) ([]byte, bool) {
	if to <= from {
		return nil, false
	}
	buf := make([]byte, to-from)
	// A short read (the end of the mapped code) is what there is: the
	// decoders stop where the bytes do.
	n, _ := code.ReadAt(buf, int64(from))
	if n <= 0 {
		return nil, false
	}
	return buf[:min(n, len(buf))], true
}

// frameState is the prologue's effect so far.
type frameState struct {
	depth  int64 // CFA - SP, bytes
	fpSet  bool  // the CFA is FP + fpOff
	fpOff  int64
	signed bool // arm64e: the return address was signed (pacibsp)
	saved  []unwind.RegRule
}

func (s *frameState) save(reg unwind.Reg, spOff int64) {
	for i := range s.saved {
		if s.saved[i].Reg == reg {
			return // the first save is the caller's value
		}
	}
	s.saved = append(s.saved, unwind.RegRule{Reg: reg, Rule: saved(spOff - s.depth)})
}

func (s *frameState) row(d *decoder) unwind.Row {
	row := unwind.Row{RA: d.arch.DWARFRA, RASigned: s.signed,
		CFA: unwind.CFA{Reg: d.arch.DWARFSP, Offset: s.depth}}
	if s.fpSet {
		row.CFA = unwind.CFA{Reg: d.arch.DWARFFP, Offset: s.fpOff}
	}
	if d.raOnStack {
		row.SetRule(d.arch.DWARFRA, saved(-int64(d.arch.PtrSize)))
	} else {
		// Until the prologue saves it, the return address is in LR, which
		// is not callee-saved: say it explicitly.
		row.SetRule(d.arch.DWARFRA, unwind.Rule{Kind: unwind.SameValue})
	}
	for _, r := range s.saved {
		row.SetRule(r.Reg, r.Rule)
	}
	return row
}

// decoder holds one architecture's instruction shapes.
type decoder struct {
	arch      *archregs.Arch
	raOnStack bool // x86: the call pushed the return address
	// prologue decodes one prologue instruction at the start of code and
	// applies it to s; it returns the instruction's length, or false.
	prologue func(s *frameState, code []byte) (int, bool)
	// epilogue decodes code, from pc on, as epilogue instructions up to a
	// return or tail call, and returns the row at pc, or false when code
	// is not that. restoresSP reports an instruction ahead that sets SP
	// from FP or releases the locals: in a function with a frame pointer
	// the body's FP-based row holds until then.
	epilogue func(code []byte, pc uint32, e Entry) (row unwind.Row, ok, restoresSP bool)
	// body, when set, corrects the body's row for an instruction at pc
	// that moves SP for a moment.
	body func(row *unwind.Row, pc uint32, code CodeReader)
	// wrapped, when set, finds a shrink-wrapped prologue: code is the
	// function from its start, off the PC's offset in it. It returns
	// where a prologue that begins right after a return starts, when off
	// is at or just past that prologue's first instruction.
	wrapped func(code []byte, off int) (start int, ok bool)
}

func (d *decoder) entryState() frameState {
	if d.raOnStack {
		return frameState{depth: int64(d.arch.PtrSize)}
	}
	return frameState{}
}

// epilogueState accumulates the instructions from pc to the return: how
// far SP will move, and which registers will be loaded from where.
type epilogueState struct {
	up     int64 // SP moves up by this much before the return
	loaded []unwind.RegRule
}

func (s *epilogueState) load(reg unwind.Reg, spOff int64) {
	s.loaded = append(s.loaded, unwind.RegRule{Reg: reg, Rule: unwind.Rule{Offset: s.up + spOff}})
}

// row returns the row at pc: the CFA is SP + all the SP moves ahead plus
// what the return itself pops (ret on x86).
func (s *epilogueState) row(d *decoder, retPop int64, signed bool) unwind.Row {
	cfa := s.up + retPop
	row := unwind.Row{RA: d.arch.DWARFRA, RASigned: signed, CFA: unwind.CFA{Reg: d.arch.DWARFSP, Offset: cfa}}
	if d.raOnStack {
		row.SetRule(d.arch.DWARFRA, saved(-int64(d.arch.PtrSize)))
	}
	for _, l := range s.loaded {
		if row.Rule(l.Reg).Kind == unwind.Unspecified {
			row.SetRule(l.Reg, saved(l.Rule.Offset-cfa))
		}
	}
	return row
}

func le32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }
