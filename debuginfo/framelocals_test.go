package debuginfo

import (
	"debug/macho"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/emu/progen"
	"github.com/stackimage/stackimage/internal/testtool"
)

// TestFrameLocalsMatchesDwarfdump builds a program generated from a fresh
// seed at -O0 without frame pointers for arm64 and x86_64, and checks that
// FrameLocals gives, at the first and last address of every function whose
// frame base is a register, that register and how far above it its
// variables reach (the highest DW_OP_fbreg offset plus the variable's
// size, arrays whole), as llvm-dwarfdump lists them.
func TestFrameLocalsMatchesDwarfdump(t *testing.T) {
	seed := testtool.FreshSeed(t)
	checkFrameLocals(t, progen.Generate(seed).Source)
}

// TestFrameLocalsOfTypes holds FrameLocals to llvm-dwarfdump on variables
// of every shape whose size the type gives: arrays of arrays, a typedef of
// an array, a const struct, and an empty array, which reaches no further
// than its first byte (not the 64 KiB bound).
func TestFrameLocalsOfTypes(t *testing.T) {
	checkFrameLocals(t, `
typedef unsigned row[12];
struct pair { unsigned a, b; long c; };
extern void use(void *);
unsigned grid(unsigned x) { unsigned g[5][7]; use(g); return g[x % 5][x % 7]; }
unsigned rows(unsigned x) { row r; use(r); return r[x % 12]; }
unsigned pairs(unsigned x) { const struct pair p = {x, x, 0}; use((void *)&p); return p.b; }
unsigned empty(unsigned x) { unsigned z[0]; unsigned y = x; use(z); use(&y); return y; }
`)
}

// checkFrameLocals builds src at -O0 without frame pointers for arm64
// and x86_64, and checks that FrameLocals gives, at the first and last
// address of every function whose frame base is a register, that
// register and how far above it the variables reach as llvm-dwarfdump
// lists them.
func checkFrameLocals(t *testing.T, source string) {
	cc := testtool.Path(t, "clang-16", "clang-16", "compiles the program")
	dwarfdump := testtool.Path(t, "llvm-dwarfdump-16", "llvm-16", "lists the variables' locations")
	dir := t.TempDir()
	src := filepath.Join(dir, "p.c")
	if err := os.WriteFile(src, []byte(source), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tg := range []struct {
		arch, triple string
		cpu          macho.Cpu
		sp           int
	}{
		{"arm64", "arm64-apple-macos11", macho.CpuArm64, 31},
		{"x86_64", "x86_64-apple-macos10.15", macho.CpuAmd64, 7},
	} {
		t.Run(tg.arch, func(t *testing.T) {
			obj := filepath.Join(dir, tg.arch+".o")
			runTool(t, cc, "-target", tg.triple, "-O0", "-gdwarf-4", "-fomit-frame-pointer", "-ffreestanding", "-nostdlib",
				"-fno-stack-protector", "-fno-builtin", "-Wno-zero-length-array", "-c", "-o", obj, src)
			want := dwarfdumpFrameLocals(t, runTool(t, dwarfdump, "--debug-info", obj))
			ix, err := New(dwarfSections(t, obj, tg.cpu))
			if err != nil {
				t.Fatal(err)
			}
			withLocals := 0
			for _, f := range want {
				if f.reg == tg.sp && f.end > 0 {
					withLocals++
				}
				for _, pc := range []uint64{f.lo, f.hi - 1} {
					reg, end, known := ix.FrameLocals(pc)
					if known != (f.end > 0) || known && (reg != f.reg || end != f.end) {
						t.Errorf("%#x: FrameLocals = reg %d, end %d, known %v; llvm-dwarfdump: reg %d, end %d",
							pc, reg, end, known, f.reg, f.end)
					}
				}
			}
			if withLocals == 0 {
				t.Fatalf("no function has a variable placed from SP: %+v", want)
			}
			if _, _, known := ix.FrameLocals(1 << 62); known {
				t.Errorf("an address no unit covers is known")
			}
		})
	}
}

type dumpFrameLocals struct {
	lo, hi uint64
	reg    int
	end    int64
}

var (
	dumpRegister = regexp.MustCompile(`^DW_OP_reg(\d+)\b`)
	dumpFbreg    = regexp.MustCompile(`^DW_OP_fbreg ([+-]\d+)$`)
	dumpOffset   = regexp.MustCompile(`^(0x[0-9a-f]+):\s+(DW_TAG_\w+|NULL)`)
	dumpTypeRef  = regexp.MustCompile(`^(0x[0-9a-f]+)\b`)
)

// dumpType is what the oracle keeps of a type entry: its size, the type
// it refers to, and for an array the counts of its subranges.
type dumpType struct {
	tag    string
	size   int64
	ref    uint64
	counts []int64
}

// dumpSize returns the size of the type at off as llvm-dwarfdump lists
// it, following typedefs and qualifiers, arrays by element size times
// their counts; 1 where it does not say.
func dumpSize(types map[uint64]*dumpType, off uint64) int64 {
	for range 8 {
		ty := types[off]
		if ty == nil {
			return 1
		}
		if ty.size > 0 {
			return ty.size
		}
		if ty.tag == "DW_TAG_array_type" {
			n := dumpSize(types, ty.ref)
			for _, c := range ty.counts {
				n *= c
			}
			if n <= 0 {
				return 1
			}
			return n
		}
		off = ty.ref
	}
	return 1
}

// dwarfdumpFrameLocals reads llvm-dwarfdump --debug-info's text: each
// subprogram with a range and a frame base that is a register, and how
// far above it its variables reach: the highest DW_OP_fbreg offset plus
// the variable's size.
func dwarfdumpFrameLocals(t *testing.T, dump string) []dumpFrameLocals {
	var out []dumpFrameLocals
	types := map[uint64]*dumpType{}
	type variable struct {
		fn      int
		off     int64
		placed  bool // DW_OP_fbreg alone
		typeRef uint64
	}
	var vars []variable
	tag, cur := "", -1
	var lo, hi uint64
	var entry *dumpType // the entry being read
	var array *dumpType // the array whose subranges follow
	for line := range strings.SplitSeq(dump, "\n") {
		if m := dumpOffset.FindStringSubmatch(line); m != nil {
			tag = m[2]
			if tag == "NULL" {
				array = nil
				continue
			}
			entry = &dumpType{tag: tag}
			types[parseHex(t, m[1])] = entry
			switch tag {
			case "DW_TAG_subprogram":
				cur, lo, hi = -1, 0, 0
			case "DW_TAG_array_type":
				array = entry
			case "DW_TAG_variable":
				vars = append(vars, variable{fn: cur})
			}
			continue
		}
		m := dumpAttr.FindStringSubmatch(line)
		if m == nil || entry == nil {
			continue
		}
		switch m[1] {
		case "DW_AT_byte_size":
			entry.size = int64(parseHex(t, m[2]))
		case "DW_AT_type":
			if r := dumpTypeRef.FindStringSubmatch(m[2]); r != nil {
				entry.ref = parseHex(t, r[1])
			}
		case "DW_AT_count":
			if tag == "DW_TAG_subrange_type" && array != nil {
				array.counts = append(array.counts, int64(parseHex(t, m[2])))
			}
		}
		switch {
		case tag == "DW_TAG_subprogram" && m[1] == "DW_AT_low_pc":
			lo = parseHex(t, m[2])
		case tag == "DW_TAG_subprogram" && m[1] == "DW_AT_high_pc":
			hi = parseHex(t, m[2])
		case tag == "DW_TAG_subprogram" && m[1] == "DW_AT_frame_base":
			if r := dumpRegister.FindStringSubmatch(m[2]); r != nil && lo < hi {
				reg, _ := strconv.Atoi(r[1])
				out = append(out, dumpFrameLocals{lo: lo, hi: hi, reg: reg})
				cur = len(out) - 1
			}
		case tag == "DW_TAG_variable" && m[1] == "DW_AT_location":
			if f := dumpFbreg.FindStringSubmatch(m[2]); f != nil {
				v := &vars[len(vars)-1]
				v.off, _ = strconv.ParseInt(f[1], 10, 64)
				v.placed = true
			}
		case tag == "DW_TAG_variable" && m[1] == "DW_AT_type":
			vars[len(vars)-1].typeRef = entry.ref
		}
	}
	for _, v := range vars {
		if v.fn >= 0 && v.placed {
			out[v.fn].end = max(out[v.fn].end, v.off+dumpSize(types, v.typeRef))
		}
	}
	return out
}

func parseHex(t *testing.T, s string) uint64 {
	v, err := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 64)
	if err != nil {
		t.Fatalf("llvm-dwarfdump: address %q: %v", s, err)
	}
	return v
}
