package symstore

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/breakpadsym"
	"github.com/stackimage/stackimage/unwind"
	"github.com/stackimage/stackimage/uuid"
)

// Symbols take Breakpad .sym files (see docs/breakpad.md) besides Mach-O
// files. A .sym file is indexed by the UUID its MODULE line names, reading
// that line alone; the whole file is parsed when its UUID is first looked
// up. A Mach-O binary or dSYM with the same UUID answers first: the .sym
// names what the Mach-O files cannot (no file, or only a synthetic
// function-start name) and unwinds where their tables have no rule.
//
// Every address in a .sym file is relative to the module's base, which for
// Mach-O is the __TEXT segment (the mach_header): a loaded address minus
// the image's load address, or an unslid address minus __TEXT's vmaddr.

// isSymPath reports whether a file's name says it is a Breakpad symbol
// file. Only those are opened to read a MODULE line.
func isSymPath(path string) bool {
	return strings.EqualFold(filepath.Ext(path), ".sym")
}

// addSymFile indexes a .sym file by the UUID of its MODULE line. A file
// whose first line is not a MODULE record, or whose debug id is not a
// Mach-O one (age 0), is listed in Skipped.
func (s *Symbols) addSymFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return &SymbolFileError{Path: path, Err: err}
	}
	id, err := breakpadUUID(f)
	f.Close()
	if err != nil {
		s.skip(path, err)
		return nil
	}
	s.mu.Lock()
	if s.side.symFiles == nil {
		s.side.symFiles = map[uuid.UUID][]string{}
	}
	var stale *load
	if !contains(s.side.symFiles[id], path) {
		s.side.symFiles[id] = append(s.side.symFiles[id], path)
		stale = s.forgetLoad(id)
	}
	s.mu.Unlock()
	if stale != nil {
		stale.refs.release()
	}
	return nil
}

// breakpadSource is an entry's .sym file, parsed on first use.
type breakpadSource struct {
	paths []string // the .sym files with the entry's UUID, in path order
	once  sync.Once
	file  *breakpadsym.File // nil when no file could be read
	errs  []error
	done  atomic.Bool // set once file and errs are written
}

// BreakpadFiles returns the paths of the Breakpad .sym files with the
// entry's UUID, in path order; nil when it has none.
func (e *Entry) BreakpadFiles() []string {
	if e == nil {
		return nil
	}
	return append([]string(nil), e.sym.paths...)
}

// attachSymFiles gives the load's entry the .sym files with its UUID,
// making an entry without images when no Mach-O file could be read. Such
// an entry's .sym file is parsed now, and the entry dropped when none can
// be; with a Mach-O file beside it, a .sym file is parsed only when needed.
func (s *Symbols) attachSymFiles(ld *load, u uuid.UUID, paths []string) {
	machO := ld.entry != nil
	if !machO {
		ld.entry = &Entry{UUID: u, refs: ld.refs}
	}
	ld.entry.sym.paths = slices.Sorted(slices.Values(paths))
	if machO {
		return
	}
	if ld.entry.breakpad() == nil {
		for _, err := range ld.entry.sym.errs {
			ld.errs = append(ld.errs, err)
			s.addWarnings(err.Error())
		}
		ld.entry = nil
	}
}

// warnings says what the .sym file could not give, once it is parsed.
func (b *breakpadSource) warnings() []string {
	if !b.done.Load() {
		return nil
	}
	var out []string
	for _, err := range b.errs {
		out = append(out, err.Error())
	}
	if b.file != nil && len(b.file.Warnings) > 0 {
		if n := b.file.Stats().Skipped; n > 0 {
			out = append(out, fmt.Sprintf("%s: %d malformed records skipped; the first: %v", b.file.Module.Name, n, b.file.Warnings[0]))
		}
	}
	return out
}

// breakpad returns the entry's parsed .sym file, parsing it on first use:
// the first of its paths that can be read and has a MODULE line. It
// returns nil when the entry has none.
func (e *Entry) breakpad() *breakpadsym.File {
	b := &e.sym
	if len(b.paths) == 0 {
		return nil
	}
	b.once.Do(func() {
		for _, path := range b.paths {
			data, err := os.ReadFile(path)
			if err == nil {
				var f *breakpadsym.File
				if f, err = breakpadsym.Parse(data); err == nil {
					b.file = f
					break
				}
			}
			b.errs = append(b.errs, &SymbolFileError{Path: path, UUID: e.UUID, Err: err})
		}
	})
	b.done.Store(true)
	return b.file
}

// resolveBreakpad names f from the entry's .sym file at the module-relative
// address rel: the frame, preceded by the functions inlined there,
// innermost first. It reports false when the file has no symbol there.
func (e *Entry) resolveBreakpad(f Frame, rel uint64, noDemangle bool) ([]Frame, bool) {
	bf := e.breakpad()
	if bf == nil {
		return nil, false
	}
	sym, err := bf.Lookup(rel)
	if err != nil || len(sym.Frames) == 0 {
		return nil, false
	}
	f.MangledSymbol, f.File, f.Line, f.Column = "", "", 0, 0
	e.setName(&f, sym.Name, sym.Name, noDemangle)
	f.SymbolSource = SourceBreakpad
	// The offset counts from the address itself, as for symbol tables;
	// the lookup address lies in the same function.
	f.SymbolOffset = f.Address - f.LookupAddress + (rel - sym.Address)
	f.HasOffset = true
	frames := make([]Frame, 0, len(sym.Frames))
	for _, sf := range sym.Frames[:len(sym.Frames)-1] {
		in := f
		in.HasOffset, in.SymbolOffset, in.Inlined = false, 0, true
		in.MangledSymbol = ""
		e.setName(&in, sf.Function, sf.Function, noDemangle)
		in.File, in.Line = sf.File, int(sf.Line)
		frames = append(frames, in)
	}
	outer := sym.Frames[len(sym.Frames)-1]
	f.File, f.Line = outer.File, int(outer.Line)
	return append(frames, f), true
}

// breakpadRow is the unwind row at the module-relative address rel from the
// entry's .sym file's STACK CFI records; nil when none covers it.
func (e *Entry) breakpadRow(arch *archregs.Arch, rel uint64) *unwind.Row {
	bf := e.breakpad()
	if bf == nil {
		return nil
	}
	rules, ok := bf.CFIRules(rel)
	if !ok {
		return nil
	}
	return cfiRow(arch, rules)
}

// cfiRow turns STACK CFI rules into an unwind row whose CFA and register
// rules evaluate the postfix programs: ".cfa" is the CFA, ".ra" the
// return-address column, and each register is named by its DWARF number.
// It returns nil when the rules lack .cfa or .ra. A register the
// architecture does not know, or whose rule reads one it does not know,
// is left out: Breakpad's own evaluation would leave it out too.
func cfiRow(arch *archregs.Arch, rules *breakpadsym.CFIRules) *unwind.Row {
	names := breakpadRegisters(arch)
	cfaExpr, ok := rules.Rule(".cfa")
	if !ok || !readsKnownRegisters(cfaExpr, names) {
		return nil
	}
	raExpr, ok := rules.Rule(".ra")
	if !ok || !readsKnownRegisters(raExpr, names) {
		return nil
	}
	row := &unwind.Row{RA: arch.DWARFRA, CFA: unwind.CFA{Expr: &postfixExpr{expr: cfaExpr, regs: names}}}
	set := func(reg unwind.Reg, expr string) {
		if strings.TrimSpace(expr) == ".undef" {
			row.SetRule(reg, unwind.Rule{Kind: unwind.Undefined})
			return
		}
		row.SetRule(reg, unwind.Rule{Kind: unwind.ValExpression, Expr: &postfixExpr{expr: expr, regs: names}})
	}
	set(arch.DWARFRA, raExpr)
	for _, r := range rules.Rules {
		if r.Register == ".cfa" || r.Register == ".ra" {
			continue
		}
		reg, ok := names[r.Register]
		if !ok || reg == arch.DWARFRA || !readsKnownRegisters(r.Expr, names) {
			// .ra is the return-address column's rule; a rule for the
			// same register by name (x86's rip) would only repeat it.
			continue
		}
		set(reg, r.Expr)
	}
	return row
}

// readsKnownRegisters reports whether every name an expression reads is a
// register of names (or .cfa).
func readsKnownRegisters(expr string, names map[string]unwind.Reg) bool {
	for _, tok := range strings.Fields(expr) {
		c := tok[0]
		if len(tok) == 1 && strings.IndexByte("+-*/%@^=", c) >= 0 || c == '-' || c >= '0' && c <= '9' || tok == ".cfa" || tok == ".undef" {
			continue
		}
		if _, ok := names[strings.TrimPrefix(tok, "$")]; !ok {
			return false
		}
	}
	return true
}

// breakpadRegNames caches breakpadRegisters' maps, one per architecture.
var breakpadRegNames sync.Map // *archregs.Arch → map[string]unwind.Reg

// breakpadRegisters maps the register names Breakpad's STACK CFI records
// use on an architecture, without "$", to DWARF numbers: the thread
// state's names (rsp, rbp, rip, rbx, r12...r15 on x86_64; esp, ebp, eip,
// ebx, esi, edi on x86; x19...x28, fp, lr, sp, pc on arm64; r4...r11, sp,
// lr, pc on arm) and their aliases (x29 and x30 on arm64; r7's role name
// fp, r13...r15 on arm).
func breakpadRegisters(arch *archregs.Arch) map[string]unwind.Reg {
	if m, ok := breakpadRegNames.Load(arch); ok {
		return m.(map[string]unwind.Reg)
	}
	m := map[string]unwind.Reg{}
	names := append([]string{"pc", "sp", "fp", "lr", "x29", "x30", "r13", "r14", "r15"}, arch.RegNames...)
	for _, name := range names {
		if reg, ok := arch.DWARFNumber(name); ok {
			m[name] = reg
		}
	}
	breakpadRegNames.Store(arch, m)
	return m
}

// postfixExpr is a Breakpad postfix program as an unwind.Expr.
type postfixExpr struct {
	expr string
	regs map[string]unwind.Reg
}

// Eval evaluates the program with the callee's registers and memory from
// ctx. An expression that is .undef is an error here: cfiRow gives
// ".undef" rules the Undefined kind, so only one computed to it is left.
func (x *postfixExpr) Eval(ctx unwind.Context) (uint64, error) {
	regs := func(name string) (uint64, bool) {
		r, ok := x.regs[name]
		if !ok {
			return 0, false
		}
		return ctx.Reg(r)
	}
	cfa, haveCFA := ctx.CFA()
	v, undef, err := breakpadsym.EvalExpr(x.expr, breakpadsym.ExprEnv{
		Regs: regs, ReadMem: breakpadsym.MemoryFunc(ctx), PtrSize: ctx.PtrSize(), CFA: cfa, HasCFA: haveCFA,
	})
	switch {
	case err != nil:
		return 0, err
	case undef:
		return 0, fmt.Errorf("breakpadsym: %q is .undef", x.expr)
	}
	return v, nil
}
