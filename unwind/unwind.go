// Package unwind is the vocabulary shared by the unwind-table parsers and
// the stack walker: a Row tells how to recover the caller's registers from
// the registers and memory of the frame that is executing.
//
// Registers are named by their DWARF numbers (archregs.Arch.DWARF gives the
// mapping for each architecture), the numbering DWARF CFI uses and the one
// compact unwind and Breakpad rules are translated into. The parsers
// (unwind/compactunwind, unwind/dwarfcfi, breakpadsym) produce Rows; the
// walker applies them. The walker knows nothing of the formats, and the
// parsers know nothing of the walk.
package unwind

import "fmt"

// Memory reads target memory: the one memory interface of the project
// (walker.Memory, dump.Memory, image.Memory and breakpadsym.Memory are
// this type). It has io.ReaderAt semantics with a uint64 address: it
// returns the number of bytes read and an error when fewer than len(p)
// could be read. A snapshot's regions, a core file, an emulator and an
// image in memory all satisfy it.
type Memory interface {
	ReadMemory(p []byte, addr uint64) (int, error)
}

// Reg is a register's DWARF number on the architecture of the Row.
type Reg uint16

// RuleKind says how a caller's register is recovered.
type RuleKind uint8

// The rule kinds, as DWARF CFI defines them. Unspecified is the zero value:
// the table says nothing of the register, and the walker applies the
// architecture's default (a callee-saved register keeps its value, any
// other is lost).
const (
	Unspecified   RuleKind = iota
	Undefined              // the caller's value is lost (DW_CFA_undefined)
	SameValue              // the caller's value is the callee's (DW_CFA_same_value)
	Offset                 // saved in memory at CFA + Offset
	ValOffset              // the value is CFA + Offset
	Register               // the value is in the callee's register Reg
	Expression             // saved in memory at the address Expr computes (the CFA pushed first)
	ValExpression          // the value is what Expr computes (the CFA pushed first)
)

var ruleKindNames = [...]string{"unspecified", "undefined", "same_value", "offset", "val_offset", "register", "expression", "val_expression"}

func (k RuleKind) String() string {
	if int(k) < len(ruleKindNames) {
		return ruleKindNames[k]
	}
	return fmt.Sprintf("RuleKind(%d)", k)
}

// Rule recovers one register of the caller.
type Rule struct {
	Kind   RuleKind
	Offset int64 // Offset, ValOffset
	Reg    Reg   // Register
	Expr   Expr  // Expression, ValExpression
}

// CFA is the rule for the Canonical Frame Address: the value of the stack
// pointer in the caller just before the call instruction (the callee's SP on
// entry, plus the return address on x86). It is Reg + Offset, or, when Expr
// is not nil, the value Expr computes (nothing pushed first).
type CFA struct {
	Reg    Reg
	Offset int64
	Expr   Expr
}

// RegRule is the rule for one register.
type RegRule struct {
	Reg  Reg
	Rule Rule
}

// Row is the unwind rule in force at one address: how to find the CFA and
// each of the caller's registers. The caller's SP is the CFA unless a rule
// for the SP register says otherwise.
type Row struct {
	CFA CFA
	// RA is the register (column) whose recovered value is the return
	// address: the caller's PC.
	RA Reg
	// Regs holds a rule for each register the table mentions, in no
	// particular order, each register at most once.
	Regs []RegRule
	// ArgsSize is DW_CFA_GNU_args_size: bytes of outgoing arguments pushed
	// at this address, which the caller's SP must not include. Only x86
	// uses it.
	ArgsSize uint64
	// RASigned is AArch64's RA_SIGN_STATE (DW_CFA_AARCH64_negate_ra_state):
	// the return address carries a pointer-authentication signature.
	RASigned bool
}

// Rule returns the rule for reg, Unspecified when the row has none.
func (r *Row) Rule(reg Reg) Rule {
	for _, rr := range r.Regs {
		if rr.Reg == reg {
			return rr.Rule
		}
	}
	return Rule{}
}

// SetRule sets the rule for reg, replacing any earlier one.
func (r *Row) SetRule(reg Reg, rule Rule) {
	for i := range r.Regs {
		if r.Regs[i].Reg == reg {
			r.Regs[i].Rule = rule
			return
		}
	}
	r.Regs = append(r.Regs, RegRule{Reg: reg, Rule: rule})
}

// Expr is an expression in a rule: a DWARF expression, or a Breakpad
// postfix program. Evaluation must be bounded in time and memory whatever
// the expression holds; an expression that does not terminate within the
// evaluator's own step limit returns an error.
type Expr interface {
	// Eval evaluates the expression. For a register rule the CFA has been
	// computed and ctx.CFA returns it; for the CFA rule it does not.
	Eval(ctx Context) (uint64, error)
}

// Context is what an expression may read: the registers of the frame being
// unwound (the callee), its CFA once known, and memory.
type Context interface {
	// Reg returns the callee's value of register r, and false when unknown.
	Reg(r Reg) (uint64, bool)
	// CFA returns the frame's CFA, and false while it is being computed.
	CFA() (uint64, bool)
	// ReadMemory has io.ReaderAt semantics with a uint64 address.
	ReadMemory(p []byte, addr uint64) (int, error)
	// PtrSize is the size of a pointer in bytes: 4 or 8.
	PtrSize() int
}

// Source says which table a Row came from.
type Source uint8

// The sources of unwind rows.
const (
	SourceNone          Source = iota
	SourceCompactUnwind        // __TEXT,__unwind_info
	SourceEHFrame              // __TEXT,__eh_frame
	SourceDebugFrame           // a dSYM's __DWARF,__debug_frame
	SourceBreakpad             // a Breakpad .sym file's STACK CFI records
	SourceCode                 // the function's instructions, decoded
)

var sourceNames = [...]string{"none", "compact_unwind", "eh_frame", "debug_frame", "breakpad_cfi", "code"}

func (s Source) String() string {
	if int(s) < len(sourceNames) {
		return sourceNames[s]
	}
	return fmt.Sprintf("Source(%d)", s)
}

// Error is bad unwind data: the table, the byte offset in it, and what is
// wrong. Walkers stop the frame with it (bad_unwind_info) and keep the
// frames found before.
type Error struct {
	Source Source
	Off    uint64 // byte offset in the table's section
	Msg    string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s at offset %#x: %s", e.Source, e.Off, e.Msg)
}
