package compactunwind

import (
	"bufio"
	"debug/macho"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/unwind"
)

// The fixtures in testdata are built by testdata/build.sh; the oracle is
// llvm-dwarfdump-16's table of each object file's __eh_frame, which clang
// emits for every function, and the disassembly llvm-objdump-16 printed.

type fixture struct {
	name  string
	arch  *archregs.Arch
	thumb bool // Frame0Row is told by bit 0 of the PC
}

// compactObject is the object file whose __compact_unwind the fixture's
// image was linked from: for arm64 the same code built with synchronous
// unwind tables (see build.sh).
func (fx fixture) compactObject(t testing.TB) (*macho.File, []byte) {
	name := fx.name + ".o"
	if fx.arch.CPUType == archregs.CPUTypeARM64 {
		name = fx.name + ".sync.o"
	}
	f, err := macho.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	_, cu := section(t, f, "__LD", "__compact_unwind")
	return f, cu
}

var fixtures = []fixture{
	{"x86_64-fp", archregs.X86_64, false}, {"x86_64-nofp", archregs.X86_64, false},
	{"i386-fp", archregs.I386, false}, {"i386-nofp", archregs.I386, false},
	{"arm64-fp", archregs.ARM64, false}, {"arm64-nofp", archregs.ARM64, false},
	{"armv7k-fp", archregs.ARMV7, false}, {"armv7k-thumb", archregs.ARMV7, true},
}

// function is one function of a fixture's object file.
type function struct {
	name       string
	start, end uint32
	insns      []insn      // from the disassembly
	rows       []oracleRow // from the __eh_frame table, addresses absolute
	fdeEnd     uint32      // end of the FDE's range
}

type insn struct {
	addr uint32
	text string // mnemonic and operands
}

type oracleRow struct {
	addr uint32
	row  unwind.Row
}

// section returns the named section's bytes.
func section(t testing.TB, f *macho.File, seg, name string) (*macho.Section, []byte) {
	t.Helper()
	s := f.Section(name)
	if s == nil || s.Seg != seg {
		t.Fatalf("no section %s,%s", seg, name)
	}
	b, err := s.Data()
	if err != nil {
		t.Fatalf("reading %s,%s: %v", seg, name, err)
	}
	return s, b
}

// sectionReader reads a section's bytes at its addresses.
type sectionReader struct {
	addr uint64
	data []byte
}

func (r sectionReader) ReadAt(p []byte, off int64) (int, error) {
	if off < int64(r.addr) || off-int64(r.addr) >= int64(len(r.data)) {
		return 0, fmt.Errorf("address %#x outside the section", off)
	}
	n := copy(p, r.data[off-int64(r.addr):])
	if n < len(p) {
		return n, fmt.Errorf("short read at %#x", off)
	}
	return n, nil
}

// functions returns the functions of f's __text by their symbols.
func functions(t testing.TB, f *macho.File, text *macho.Section) []function {
	var fns []function
	for _, s := range f.Symtab.Syms {
		// Assembler-local labels (ltmp0) are not functions.
		if s.Type&0x0e == 0x0e && s.Sect > 0 && f.Sections[s.Sect-1] == text && strings.HasPrefix(s.Name, "_") {
			fns = append(fns, function{name: s.Name, start: uint32(s.Value)})
		}
	}
	sort.Slice(fns, func(i, j int) bool { return fns[i].start < fns[j].start })
	for i := range fns {
		fns[i].end = uint32(text.Addr + text.Size)
		if i+1 < len(fns) {
			fns[i].end = fns[i+1].start
		}
	}
	return fns
}

var (
	fdeLine  = regexp.MustCompile(`^[0-9a-f]+ [0-9a-f]+ [0-9a-f]+ FDE cie=[0-9a-f]+ pc=([0-9a-f]+)\.\.\.([0-9a-f]+)$`)
	rowLine  = regexp.MustCompile(`^  0x([0-9a-f]+): CFA=([A-Z0-9]+)([+-]\d+)?(?:: (.*))?$`)
	ruleItem = regexp.MustCompile(`^([A-Z0-9]+)=\[CFA([+-]\d+)\]$`)
	insnLine = regexp.MustCompile(`^\s+([0-9a-f]+):\s+(.*)$`)
	symLine  = regexp.MustCompile(`^[0-9a-f]+ <(\S+)>:$`)
)

// dwarfdumpRegs names registers as llvm-dwarfdump prints them. For i386
// its names follow the DWARF standard's numbering (ESP 4, EBP 5) while the
// numbers in Darwin's __eh_frame are the other way around: the number is
// what the file holds, and what archregs.I386 uses.
func dwarfdumpRegs(arch *archregs.Arch) map[string]unwind.Reg {
	m := map[string]unwind.Reg{}
	switch arch {
	case archregs.X86_64:
		for i, n := range []string{"RAX", "RDX", "RCX", "RBX", "RSI", "RDI", "RBP", "RSP", "R8", "R9", "R10", "R11", "R12", "R13", "R14", "R15", "RIP"} {
			m[n] = unwind.Reg(i)
		}
	case archregs.I386:
		for i, n := range []string{"EAX", "ECX", "EDX", "EBX", "ESP", "EBP", "ESI", "EDI", "EIP"} {
			m[n] = unwind.Reg(i)
		}
	case archregs.ARMV7:
		for i := 0; i < 13; i++ {
			m["R"+strconv.Itoa(i)] = unwind.Reg(i)
		}
		m["SP"], m["LR"], m["PC"] = 13, 14, 15
		for i := 0; i < 32; i++ {
			m["D"+strconv.Itoa(i)] = armDReg + unwind.Reg(i)
		}
	default:
		for i := 0; i < 31; i++ {
			m["W"+strconv.Itoa(i)] = unwind.Reg(i)
		}
		m["WSP"] = 31
		for i := 0; i < 32; i++ {
			m["B"+strconv.Itoa(i)] = unwind.Reg(64 + i)
		}
	}
	return m
}

// readOracle attaches the FDE rows and instructions of the fixture to its
// functions. llvm-dwarfdump-16 misreads the pc-relative FDE start of
// Mach-O object files, so FDEs are matched to functions in order, and row
// addresses taken relative to the FDE's start.
func readOracle(t *testing.T, fx fixture, fns []function) {
	byName := map[string]*function{}
	for i := range fns {
		byName[fns[i].name] = &fns[i]
	}
	dis, err := os.ReadFile(filepath.Join("testdata", fx.name+".disasm.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var cur *function
	for _, l := range strings.Split(string(dis), "\n") {
		if m := symLine.FindStringSubmatch(l); m != nil {
			cur = byName[m[1]]
		} else if m := insnLine.FindStringSubmatch(l); m != nil && cur != nil {
			a, _ := strconv.ParseUint(m[1], 16, 32)
			text, _, _ := strings.Cut(m[2], "##") // a comment
			cur.insns = append(cur.insns, insn{uint32(a), strings.TrimSpace(text)})
		}
	}
	eh, err := os.Open(filepath.Join("testdata", fx.name+".eh_frame.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer eh.Close()
	regs := dwarfdumpRegs(fx.arch)
	type fde struct {
		base, end uint64
		rows      []oracleRow // addresses relative to base
	}
	var fdes []fde
	// For 32-bit files llvm-dwarfdump prints addresses plus 1<<32.
	addrMask := uint64(1<<64 - 1)
	if fx.arch.PtrSize == 4 {
		addrMask = 1<<32 - 1
	}
	sc := bufio.NewScanner(eh)
	for sc.Scan() {
		l := sc.Text()
		if m := fdeLine.FindStringSubmatch(l); m != nil {
			base, _ := strconv.ParseUint(m[1], 16, 64)
			end, _ := strconv.ParseUint(m[2], 16, 64)
			fdes = append(fdes, fde{base: base & addrMask, end: end & addrMask})
			continue
		}
		m := rowLine.FindStringSubmatch(l)
		if m == nil || len(fdes) == 0 {
			continue
		}
		a, _ := strconv.ParseUint(m[1], 16, 64)
		a &= addrMask
		cfaReg, ok := regs[m[2]]
		if !ok {
			t.Fatalf("%s: unknown register in %q", fx.name, l)
		}
		off, _ := strconv.ParseInt(strings.TrimPrefix(m[3], "+"), 10, 64)
		row := unwind.Row{CFA: unwind.CFA{Reg: cfaReg, Offset: off}, RA: fx.arch.DWARFRA}
		if m[4] != "" {
			for _, item := range strings.Split(m[4], ", ") {
				r := ruleItem.FindStringSubmatch(item)
				if r == nil {
					t.Fatalf("%s: unknown rule %q in %q", fx.name, item, l)
				}
				o, _ := strconv.ParseInt(r[2], 10, 64)
				row.SetRule(regs[r[1]], saved(o))
			}
		}
		f := &fdes[len(fdes)-1]
		f.rows = append(f.rows, oracleRow{uint32(a - f.base), row})
	}
	// FDEs are in function order; functions without one are left
	// without rows. An FDE whose start llvm-dwarfdump read right (armv7k)
	// goes to the function there.
	next := 0
	for next < len(fdes) && byStart(fns, fdes[next].base) != nil {
		f := fdes[next]
		fn := byStart(fns, f.base)
		fn.fdeEnd = uint32(f.end)
		for _, r := range f.rows {
			fn.rows = append(fn.rows, oracleRow{fn.start + r.addr, r.row})
		}
		next++
	}
	for i := range fns {
		fn := &fns[i]
		size := uint64(fn.end - fn.start)
		if fn.rows != nil || fn.fdeEnd != 0 {
			continue
		}
		if next < len(fdes) && fdes[next].end-fdes[next].base <= size && size-(fdes[next].end-fdes[next].base) < 16 {
			f := fdes[next]
			next++
			fn.fdeEnd = fn.start + uint32(f.end-f.base)
			for _, r := range f.rows {
				fn.rows = append(fn.rows, oracleRow{fn.start + r.addr, r.row})
			}
			continue
		}
		fn.fdeEnd = fn.end
	}
	if next != len(fdes) {
		t.Fatalf("%s: only %d of %d FDEs matched functions", fx.name, next, len(fdes))
	}
}

func byStart(fns []function, start uint64) *function {
	for i := range fns {
		if uint64(fns[i].start) == start {
			return &fns[i]
		}
	}
	return nil
}

func (fn *function) oracleAt(pc uint32) unwind.Row {
	var row unwind.Row
	for _, r := range fn.rows {
		if r.addr <= pc {
			row = r.row
		}
	}
	return row
}

// bodyRow is the row at the function's first call, or, when it makes
// none, the row with the most saved registers, an FP-based one if there
// is: what the compact encoding describes.
func (fn *function) bodyRow(fp unwind.Reg) unwind.Row {
	for _, in := range fn.insns {
		if strings.HasPrefix(in.text, "call") || strings.HasPrefix(in.text, "bl\t") || strings.HasPrefix(in.text, "blx\t") {
			return fn.oracleAt(in.addr)
		}
	}
	best := fn.rows[0].row
	for _, r := range fn.rows {
		if len(r.row.Regs) > len(best.Regs) || len(r.row.Regs) == len(best.Regs) && r.row.CFA.Reg == fp {
			best = r.row
		}
	}
	return best
}

// x86Epilogue derives the row at the instruction i of fn from the
// disassembly when it starts a straight run of epilogue instructions to
// a return: LLVM 16 writes no CFI for x86 epilogues, so the __eh_frame
// rows there are those of the body. ok is false elsewhere, and where a
// leave restores SP from the frame pointer (the body's row holds).
var (
	x86Pop = regexp.MustCompile(`^pop[lq]\s+%(\w+)$`)
	x86Add = regexp.MustCompile(`^add[lq]\s+\$0x([0-9a-f]+), %[re]sp$`)
)

func x86Epilogue(fx fixture, fn *function, i int, regs map[string]unwind.Reg) (unwind.Row, bool) {
	ptr := int64(fx.arch.PtrSize)
	var up int64
	type pop struct {
		reg unwind.Reg
		at  int64
	}
	var pops []pop
	for _, in := range fn.insns[i:] {
		switch {
		case in.text == "retq" || in.text == "retl":
			cfa := up + ptr
			row := unwind.Row{CFA: unwind.CFA{Reg: fx.arch.DWARFSP, Offset: cfa}, RA: fx.arch.DWARFRA}
			row.SetRule(fx.arch.DWARFRA, saved(-ptr))
			for _, p := range pops {
				row.SetRule(p.reg, saved(p.at-cfa))
			}
			return row, true
		case x86Pop.MatchString(in.text):
			name := strings.ToUpper(x86Pop.FindStringSubmatch(in.text)[1])
			r, ok := regs[name]
			if fx.arch == archregs.I386 { // Darwin numbers: the names of 4 and 5 swap
				r, ok = map[string]unwind.Reg{"EAX": 0, "ECX": 1, "EDX": 2, "EBX": 3, "EBP": 4, "ESP": 5, "ESI": 6, "EDI": 7}[name]
			}
			if !ok {
				return unwind.Row{}, false
			}
			if fx.arch.IsCalleeSaved(r) {
				pops = append(pops, pop{r, up})
			}
			up += ptr
		case x86Add.MatchString(in.text):
			n, _ := strconv.ParseInt(x86Add.FindStringSubmatch(in.text)[1], 16, 64)
			up += n
		default:
			return unwind.Row{}, false
		}
	}
	return unwind.Row{}, false
}

// arm64Epilogue reports whether the instruction i of fn starts a straight
// run of epilogue instructions to a return.
func arm64Epilogue(fn *function, i int) bool {
	for _, in := range fn.insns[i:] {
		switch op, args, _ := strings.Cut(in.text, "\t"); {
		case op == "ret" || op == "retab":
			return true
		case op == "ldp" || op == "ldr" || op == "autibsp" || op == "add" && strings.HasPrefix(args, "sp, sp,"):
		default:
			return false
		}
	}
	return false
}

// armEpilogue reports whether the instruction i of fn starts a straight
// run of ARM epilogue instructions to a return.
func armEpilogue(fn *function, i int) bool {
	for _, in := range fn.insns[i:] {
		switch op, args, _ := strings.Cut(in.text, "\t"); {
		case op == "bx" && args == "lr" || op == "pop" && strings.Contains(args, "pc"):
			return true
		case op == "pop" || op == "pop.w" || op == "vpop" || op == "ldr" && strings.Contains(args, "[sp], #") ||
			args == "sp, r7" || (op == "add" || op == "sub" || op == "add.w" || op == "sub.w") &&
			(strings.HasPrefix(args, "sp, sp,") || strings.HasPrefix(args, "sp, r7,") || strings.HasPrefix(args, "sp, #")):
		default:
			return false
		}
	}
	return false
}

// sameRule compares two rules, a SameValue rule being the same as none.
func sameRule(a, b unwind.Rule) bool {
	if a.Kind == unwind.SameValue {
		a = unwind.Rule{}
	}
	if b.Kind == unwind.SameValue {
		b = unwind.Rule{}
	}
	return a.Kind == b.Kind && a.Offset == b.Offset
}

// diffRows describes how got differs from want. With loose, a register
// one row says is saved and the other leaves alone is no difference: in a
// prologue or epilogue the register still holds the value saved in (or
// just loaded from) its slot, and LLVM records the saves only once the
// frame is set up, and keeps them through the epilogue.
func diffRows(got, want unwind.Row, loose bool) string {
	var diffs []string
	if got.CFA.Reg != want.CFA.Reg || got.CFA.Offset != want.CFA.Offset || got.CFA.Expr != nil {
		diffs = append(diffs, fmt.Sprintf("CFA = r%d%+d, want r%d%+d", got.CFA.Reg, got.CFA.Offset, want.CFA.Reg, want.CFA.Offset))
	}
	if got.RA != want.RA {
		diffs = append(diffs, fmt.Sprintf("RA = %d, want %d", got.RA, want.RA))
	}
	seen := map[unwind.Reg]bool{}
	for _, rr := range append(append([]unwind.RegRule{}, got.Regs...), want.Regs...) {
		if seen[rr.Reg] {
			continue
		}
		seen[rr.Reg] = true
		g, w := got.Rule(rr.Reg), want.Rule(rr.Reg)
		if sameRule(g, w) {
			continue
		}
		if loose && (sameRule(g, unwind.Rule{}) && w.Kind == unwind.Offset || sameRule(w, unwind.Rule{}) && g.Kind == unwind.Offset) {
			continue
		}
		diffs = append(diffs, fmt.Sprintf("r%d: %v%+d, want %v%+d", rr.Reg, g.Kind, g.Offset, w.Kind, w.Offset))
	}
	return strings.Join(diffs, "; ")
}

func rowsEqual(a, b unwind.Row) bool { return diffRows(a, b, false) == "" }

// TestFrame0RowFixtures checks Frame0Row at every instruction of every
// function of the fixtures against the __eh_frame oracle, and RowFor
// against the oracle's row at the function's call sites.
func TestFrame0RowFixtures(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			f, err := macho.Open(filepath.Join("testdata", fx.name+".o"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			text, code := section(t, f, "__TEXT", "__text")
			cf, cu := fx.compactObject(t)
			defer cf.Close()
			table, err := ParseObject(cu, fx.arch.PtrSize)
			if err != nil {
				t.Fatalf("ParseObject: %v", err)
			}
			fns := functions(t, f, text)
			readOracle(t, fx, fns)
			reader := sectionReader{text.Addr, code}
			regs := dwarfdumpRegs(fx.arch)
			// Functions without an FDE: clang described them by a compact
			// encoding only. When that is the call-site state throughout
			// (an arm64 leaf that never moves SP), it is the oracle; others
			// have none.
			_, asyncCU := section(t, f, "__LD", "__compact_unwind")
			asyncTable, err := ParseObject(asyncCU, fx.arch.PtrSize)
			if err != nil {
				t.Fatal(err)
			}
			entryRow := unwind.Row{RA: fx.arch.DWARFRA, CFA: unwind.CFA{Reg: fx.arch.DWARFSP}}
			if fx.arch.CPUType != archregs.CPUTypeARM64 {
				entryRow.CFA.Offset = int64(fx.arch.PtrSize)
				entryRow.SetRule(fx.arch.DWARFRA, saved(-int64(fx.arch.PtrSize)))
			}
			for i := range fns {
				if fns[i].rows != nil {
					continue
				}
				e, err := asyncTable.Lookup(fns[i].start)
				if err != nil {
					t.Logf("%s: neither an FDE nor a compact entry: no oracle", fns[i].name)
					continue
				}
				if row, err := RowFor(fx.arch, e, reader); err == nil && rowsEqual(row, entryRow) {
					fns[i].rows = []oracleRow{{fns[i].start, entryRow}}
				} else {
					t.Logf("%s: no FDE, encoding %#08x: no oracle", fns[i].name, e.Encoding)
				}
			}
			var checked, unknown int
			for fi := range fns {
				fn := &fns[fi]
				if fn.rows == nil {
					continue
				}
				e, err := table.Lookup(fn.start)
				compact := err == nil
				if err == nil && (e.FuncStart != fn.start || e.FuncEnd != fn.fdeEnd) {
					t.Errorf("%s: Lookup(%#x) = [%#x, %#x), want [%#x, %#x)", fn.name, fn.start, e.FuncStart, e.FuncEnd, fn.start, fn.fdeEnd)
				}
				if !compact {
					// No compact entry (x86_64 leaves): decode with an
					// entry without encoding.
					e = Entry{FuncStart: fn.start, FuncEnd: fn.fdeEnd}
				}
				body := fn.bodyRow(fx.arch.DWARFFP)
				hasRow := false
				if row, err := RowFor(fx.arch, e, reader); err == nil {
					hasRow = true
					if d := diffRows(row, body, false); d != "" {
						t.Errorf("%s: RowFor(encoding %#08x): %s", fn.name, e.Encoding, d)
					}
				} else if compact && e.Encoding&encodingModeMask != 0 {
					if _, isDWARF := e.DWARFOffset(fx.arch); !isDWARF {
						t.Errorf("%s: RowFor(encoding %#08x): %v", fn.name, e.Encoding, err)
					}
				}
				for i, in := range fn.insns {
					if in.addr >= fn.fdeEnd {
						break
					}
					want := fn.oracleAt(in.addr)
					loose := !rowsEqual(want, body)
					if fx.arch.CPUType == archregs.CPUTypeX86_64 || fx.arch.CPUType == archregs.CPUTypeX86 {
						if row, ok := x86Epilogue(fx, fn, i, regs); ok {
							want, loose = row, true
						}
					} else if fx.arch.CPUType == archregs.CPUTypeARM64 && arm64Epilogue(fn, i) {
						loose = true
					} else if fx.arch.CPUType == archregs.CPUTypeARM && armEpilogue(fn, i) {
						// LLVM 16 writes no CFI for ARM epilogues, and the
						// rows there are the body's: TestFrame0RowARM
						// checks epilogues.
						continue
					}
					pc := in.addr
					if fx.thumb {
						pc |= 1
					}
					got, ok, err := Frame0Row(fx.arch, e, pc, reader)
					if err != nil {
						t.Errorf("%s: Frame0Row(%#x) error: %v", fn.name, in.addr, err)
						continue
					}
					if !ok {
						// Allowed only where the encoding cannot help either.
						unknown++
						if hasRow {
							t.Errorf("%s: Frame0Row(%#x) (%s) = unknown, though the encoding has a row", fn.name, in.addr, in.text)
						}
						continue
					}
					checked++
					if d := diffRows(got, want, loose); d != "" {
						t.Errorf("%s: Frame0Row(%#x) (%s): %s", fn.name, in.addr, in.text, d)
					}
				}
			}
			t.Logf("%d instructions checked, %d unknown (no prologue shape, no compact row)", checked, unknown)
			if checked == 0 {
				t.Error("no instruction checked")
			}
		})
	}
}

// TestUnwindInfoFixtures checks the linked images' __unwind_info against
// llvm-objdump-16's listing and the object files' __compact_unwind.
func TestUnwindInfoFixtures(t *testing.T) {
	entryLine := regexp.MustCompile(`^\s+\[\d+\]: function offset=0x([0-9a-f]+), encoding\[\d+\]=0x([0-9a-f]+)$`)
	for _, fx := range fixtures {
		if fx.arch == archregs.I386 || fx.arch == archregs.ARMV7 {
			continue // not linked (see build.sh)
		}
		t.Run(fx.name, func(t *testing.T) {
			f, err := macho.Open(filepath.Join("testdata", fx.name))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			_, ui := section(t, f, "__TEXT", "__unwind_info")
			table, err := Parse(ui)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			listing, err := os.ReadFile(filepath.Join("testdata", fx.name+".unwind_info.txt"))
			if err != nil {
				t.Fatal(err)
			}
			type want struct{ start, enc uint32 }
			var wants []want
			for _, l := range strings.Split(string(listing), "\n") {
				if m := entryLine.FindStringSubmatch(l); m != nil {
					s, _ := strconv.ParseUint(m[1], 16, 32)
					e, _ := strconv.ParseUint(m[2], 16, 32)
					wants = append(wants, want{uint32(s), uint32(e)})
				}
			}
			if len(wants) == 0 {
				t.Fatal("no entries in the llvm-objdump listing")
			}
			for i, w := range wants {
				for _, off := range []uint32{w.start, w.start + 1} {
					e, err := table.Lookup(off)
					if err != nil {
						t.Errorf("Lookup(%#x): %v", off, err)
						continue
					}
					if e.FuncStart != w.start || e.Encoding != w.enc {
						t.Errorf("Lookup(%#x) = start %#x encoding %#08x, want %#x %#08x", off, e.FuncStart, e.Encoding, w.start, w.enc)
					}
					if i+1 < len(wants) && e.FuncEnd != wants[i+1].start {
						t.Errorf("Lookup(%#x).FuncEnd = %#x, want %#x", off, e.FuncEnd, wants[i+1].start)
					}
				}
			}
			if _, err := table.Lookup(wants[0].start - 1); err != ErrNotFound {
				t.Errorf("Lookup(%#x) before the first function: err = %v, want ErrNotFound", wants[0].start-1, err)
			}
			// The linked encodings agree with the object's for each
			// function the object describes.
			obj, cu := fx.compactObject(t)
			defer obj.Close()
			ot, err := ParseObject(cu, fx.arch.PtrSize)
			if err != nil {
				t.Fatal(err)
			}
			objText := obj.Section("__text")
			linkedText := f.Section("__text")
			linked := map[string]uint32{}
			for _, fn := range functions(t, f, linkedText) {
				linked[fn.name] = fn.start
			}
			textSeg := f.Segment("__TEXT")
			_, objCode := section(t, obj, "__TEXT", "__text")
			_, linkedCode := section(t, f, "__TEXT", "__text")
			objReader := sectionReader{objText.Addr, objCode}
			linkedReader := sectionReader{linkedText.Addr - textSeg.Addr, linkedCode}
			objFns := functions(t, obj, objText)
			readOracle(t, fx, objFns) // for the instruction boundaries
			frame0, folded, nfuncs := 0, 0, 0
			for _, fn := range objFns {
				oe, err := ot.Lookup(fn.start)
				if err != nil {
					continue
				}
				addr, ok := linked[fn.name]
				if !ok {
					t.Fatalf("%s not in the linked image", fn.name)
				}
				le, err := table.Lookup(uint32(uint64(addr) - textSeg.Addr))
				if err != nil {
					t.Errorf("%s: Lookup: %v", fn.name, err)
					continue
				}
				// DWARF encodings hold the FDE's offset, which linking changes.
				_, lDWARF := le.DWARFOffset(fx.arch)
				_, oDWARF := oe.DWARFOffset(fx.arch)
				if le.Encoding != oe.Encoding && !(lDWARF && oDWARF) {
					t.Errorf("%s: linked encoding %#08x, object's %#08x", fn.name, le.Encoding, oe.Encoding)
				}
				// The image gives Frame0Row the same answers as the object
				// (which TestFrame0RowFixtures checks against the oracle),
				// the entry narrowed to the function: the linker folds
				// adjacent functions with the same encoding.
				start := uint32(uint64(addr) - textSeg.Addr)
				nfuncs++
				if le.FuncStart != start {
					folded++
				}
				le = le.Narrow(start, start+(fn.end-fn.start))
				for _, in := range fn.insns {
					if in.addr >= oe.FuncEnd {
						break
					}
					lpc := le.FuncStart + (in.addr - fn.start)
					want, wantOK, wantErr := Frame0Row(fx.arch, oe, in.addr, objReader)
					got, gotOK, gotErr := Frame0Row(fx.arch, le, lpc, linkedReader)
					if gotOK != wantOK || (gotErr == nil) != (wantErr == nil) || !rowsEqual(got, want) {
						t.Errorf("%s: Frame0Row(image %#x) = %+v, %v, %v; the object's (%#x) = %+v, %v, %v", fn.name, lpc, got, gotOK, gotErr, in.addr, want, wantOK, wantErr)
					}
					frame0++
				}
			}
			if frame0 == 0 {
				t.Error("no instruction compared")
			}
			t.Logf("%d instructions compared; %d of %d functions share an entry with the one before", frame0, folded, nfuncs)
		})
	}
}
