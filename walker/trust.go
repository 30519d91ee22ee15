package walker

import "fmt"

// Trust says how far a frame can be trusted, by the check its return
// address passed, highest first, as rust-minidump's FrameTrust does.
// FoundBy says which strategy found the frame; Trust says what evidence
// backs it, which for a scanned frame depends on what the image's files
// could show (docs/walker.md, "Strategies and trust").
type Trust int

const (
	// TrustNone: no walk found the frame (a reporter's backtrace); the
	// zero value.
	TrustNone Trust = iota
	// TrustContext: frame 0, the thread's registers.
	TrustContext
	// TrustCFI: an unwind table's rule (compact unwind, DWARF CFI,
	// Breakpad STACK CFI).
	TrustCFI
	// TrustCode: where frame 0's code or registers put the caller: the
	// link register, or the return slot near SP, or a rule decoded from
	// its prologue or epilogue.
	TrustCode
	// TrustFramePointer: a frame record, or a Swift async context.
	TrustFramePointer
	// TrustCFIScan: a stack word found by scanning for the caller of a
	// frame whose unwind table has a row for it that could not be applied
	// (a register it reads is unknown, or its slot unreadable), and that
	// the image's code or symbols confirm as scan_code or scan_symbols
	// would: the table says a caller is there, the scan found where.
	// rust-minidump's FrameTrust::CfiScan. A word only the image's range
	// checks stays TrustScan.
	TrustCFIScan
	// TrustScanCode: a stack word the image's code confirms: the
	// instruction before it is a call (docs/walker.md, "The caller scan").
	TrustScanCode
	// TrustScanSymbols: a stack word in an image whose code cannot be
	// read, which its symbols place inside a known function and not at
	// the function's first instruction.
	TrustScanSymbols
	// TrustScan: a stack word in the code of an image with neither code
	// bytes nor symbols (a system library): only its range is checked.
	TrustScan
)

var trustNames = [...]string{
	TrustNone:         "",
	TrustContext:      "context",
	TrustCFI:          "cfi",
	TrustCode:         "code",
	TrustFramePointer: "frame_pointer",
	TrustCFIScan:      "cfi_scan",
	TrustScanCode:     "scan_code",
	TrustScanSymbols:  "scan_symbols",
	TrustScan:         "scan",
}

// String returns a stable name: "context", "cfi", "code",
// "frame_pointer", "cfi_scan", "scan_code", "scan_symbols", "scan", or ""
// for TrustNone.
func (t Trust) String() string {
	if t >= 0 && int(t) < len(trustNames) {
		return trustNames[t]
	}
	return fmt.Sprintf("Trust(%d)", int(t))
}

// MarshalText returns String's text.
func (t Trust) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText reads what MarshalText writes.
func (t *Trust) UnmarshalText(text []byte) error {
	for i, name := range trustNames {
		if name == string(text) {
			*t = Trust(i)
			return nil
		}
	}
	return fmt.Errorf("walker: unknown trust %q", text)
}

// trustOf is the trust of a frame found by f when the strategy does not
// say more (a scan does: its check). A new FoundBy needs its case here
// (TestTrustOfEveryFoundBy).
func trustOf(f FoundBy) Trust {
	switch f {
	case FoundByContext:
		return TrustContext
	case FoundByCompactUnwind, FoundByCFI:
		return TrustCFI
	case FoundByLinkRegister, FoundByStackPointer, FoundByCode:
		return TrustCode
	case FoundByFramePointer, FoundByAsync:
		return TrustFramePointer
	case FoundByScan:
		return TrustScanCode
	}
	return TrustNone
}
