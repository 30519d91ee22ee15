package report_test

import (
	"bytes"
	"context"
	"debug/dwarf"
	"debug/macho"
	"flag"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/internal/plcrashgen"
	"github.com/stackimage/stackimage/open"
	"github.com/stackimage/stackimage/plcrash"
	"github.com/stackimage/stackimage/report"
	"github.com/stackimage/stackimage/symbolize"
	"github.com/stackimage/stackimage/symstore"
)

var update = flag.Bool("update", false, "rewrite the .plcrash fixtures in ../plcrash/testdata")

// plcrashFixtures are the emulator snapshots whose walks become .plcrash
// fixtures: the thread a PLCrashReporter would have written at the same
// stop, in the fixtures' own binaries.
var plcrashFixtures = []string{"chain-arm64-O1-deepest", "chain-x86_64-O1-deepest", "dwarf-x86_64-O1-deepest", "noreturn-arm64-O1-halt"}

func fixtureSymbols(t *testing.T) *symbolize.Symbolizer {
	t.Helper()
	syms := symstore.NewSymbols()
	t.Cleanup(func() { syms.Close() })
	if err := syms.AddDir(context.Background(), "../fixtures/bin"); err != nil {
		t.Fatal(err)
	}
	return &symbolize.Symbolizer{Symbols: syms}
}

// readChain reads a snapshot's true call chain (the emulator's shadow
// stack), innermost first; "???" is the address the run was entered with.
func readChain(t *testing.T, name string) []string {
	data, err := os.ReadFile("../fixtures/snapshots/" + name + ".chain")
	if err != nil {
		t.Fatal(err)
	}
	var chain []string
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			chain = append(chain, l)
		}
	}
	return chain
}

// plcrashOf writes the report PLCrashReporter would have written for the
// snapshot's crashed thread, stopped where the emulator stopped: its walk
// as the frames (innermost first, callers as return addresses), its
// registers, the fixture binary as the one image with its Mach-O CPU type,
// and the same frames as an uncaught exception's backtrace. slide moves
// the image; on arm64 every caller's return address carries a
// pointer-authentication signature made from sig, as arm64e hardware
// signs them.
func plcrashOf(t *testing.T, z *symbolize.Symbolizer, name string, slide, sig uint64) []byte {
	t.Helper()
	in, err := open.File(context.Background(), "../fixtures/snapshots/"+name+".json")
	if in == nil {
		t.Fatal(err)
	}
	defer in.Close()
	d := in.Dump()
	rep, err := report.Symbolicate(context.Background(), z, d)
	if err != nil {
		t.Fatal(err)
	}
	im := d.Images[0]
	r := &plcrash.Report{
		Version:     plcrash.Version,
		System:      plcrash.SystemInfo{OS: plcrash.MacOSX, OSVersion: "14.5", Architecture: plcrash.ArchUnknown, Timestamp: 1767225600, OSBuild: "23F79"},
		Application: plcrash.ApplicationInfo{Identifier: "org.stackimage.fixture." + name, Version: "7", MarketingVersion: "1.0"},
		Process:     &plcrash.ProcessInfo{Name: path.Base(im.Name), PID: 4242, Path: "/Applications/Fixture.app/Contents/MacOS/" + path.Base(im.Name), ParentName: "launchd", ParentPID: 1, Native: true},
		Machine: &plcrash.MachineInfo{Model: "Mac14,2", ProcessorCount: 8, LogicalProcessorCount: 8,
			Processor: plcrash.Processor{Encoding: plcrash.TypeEncodingMach, Type: uint64(d.Arch.CPUType), Subtype: uint64(d.Arch.CPUSubtype)}},
		Images: []plcrash.BinaryImage{{Base: im.LoadAddress + slide, Size: im.Size, UUID: im.UUID, HasUUID: true,
			Name:     "/Applications/Fixture.app/Contents/MacOS/" + path.Base(im.Name),
			CodeType: &plcrash.Processor{Encoding: plcrash.TypeEncodingMach, Type: uint64(d.Arch.CPUType), Subtype: uint64(d.Arch.CPUSubtype)}}},
		Signal: plcrash.Signal{Name: "SIGSEGV", Code: "SEGV_MAPERR", Address: 0x10,
			Mach: &plcrash.MachException{Type: 1, Codes: []uint64{1, 0x10}}},
		Info: &plcrash.ReportInfo{HasUUID: true},
	}
	copy(r.Info.UUID[:], "fixture-"+name)
	var frames []plcrash.Frame
	for _, f := range rep.Threads[0].Frames {
		if f.Inlined {
			continue // a reporter writes machine frames
		}
		addr := f.Address
		if addr-im.LoadAddress < im.Size {
			addr += slide
			if f.Index > 0 && d.Arch.PAC {
				addr |= sig << 40
			}
		}
		frames = append(frames, plcrash.Frame{PC: addr})
	}
	th := plcrash.Thread{Number: 0, Crashed: true, Frames: frames}
	if regs := d.Threads[0].Registers; regs != nil {
		for _, n := range regs.Known() {
			v, _ := regs.Get(n)
			if (n == d.Arch.PC || n == d.Arch.LR) && v-im.LoadAddress < im.Size {
				v += slide // the registers where the image was loaded
			}
			th.Registers = append(th.Registers, plcrash.Register{Name: n, Value: v})
		}
	}
	idle := plcrash.Thread{Number: 1, Frames: frames[len(frames)-2:]}
	r.Threads = []plcrash.Thread{th, idle}
	r.Exception = &plcrash.Exception{Name: "NSRangeException", Reason: "index 3 beyond bounds [0 .. 2]", Frames: frames}
	data, err := plcrashgen.Encode(r)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// textAddress returns the unslid address of a fixture binary's __TEXT
// segment, where its Mach-O header is.
func textAddress(t *testing.T, image string) uint64 {
	t.Helper()
	f, err := macho.Open(filepath.Join("../fixtures/bin", image))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seg := f.Segment("__TEXT")
	if seg == nil {
		t.Fatalf("%s has no __TEXT", image)
	}
	return seg.Addr
}

// lineTruth returns the file and line the fixture's dSYM line table gives
// an unslid address, read with Go's debug/dwarf: the truth the
// symbolicated frames are held to.
func lineTruth(t *testing.T, image string, addr uint64) (string, int) {
	t.Helper()
	f, err := macho.Open(filepath.Join("../fixtures/bin", image+".dSYM", "Contents", "Resources", "DWARF", image))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dw, err := f.DWARF()
	if err != nil {
		t.Fatal(err)
	}
	rd := dw.Reader()
	for {
		cu, err := rd.Next()
		if err != nil || cu == nil {
			break
		}
		if cu.Tag != dwarf.TagCompileUnit {
			rd.SkipChildren()
			continue
		}
		ranges, _ := dw.Ranges(cu)
		for _, rg := range ranges {
			if addr >= rg[0] && addr < rg[1] {
				lr, err := dw.LineReader(cu)
				if err != nil || lr == nil {
					t.Fatalf("line table: %v", err)
				}
				var e dwarf.LineEntry
				if err := lr.SeekPC(addr, &e); err != nil {
					t.Fatalf("SeekPC(%#x): %v", addr, err)
				}
				return path.Base(e.File.Name), e.Line
			}
		}
		rd.SkipChildren()
	}
	t.Fatalf("%#x is in no unit of %s", addr, image)
	return "", 0
}

// checkPLCrash symbolicates a .plcrash written from a fixture snapshot and
// holds each frame to the truth: the function the emulator's shadow stack
// names, the image, and the file and line the dSYM's line table gives
// the frame's lookup address (the PC, or one instruction before a return
// address).
func checkPLCrash(t *testing.T, z *symbolize.Symbolizer, name string, data []byte) {
	t.Helper()
	in, err := open.Bytes(data)
	if err != nil {
		t.Fatal(err)
	}
	if in.Format.Format != dump.FormatPLCrash {
		t.Fatalf("opened as %s", in.Format.Name)
	}
	d := in.Dump()
	rep, err := report.Symbolicate(context.Background(), z, d)
	if err != nil {
		t.Fatal(err)
	}
	chain := readChain(t, name)
	image := name[:strings.LastIndex(name, "-")] // "chain-arm64-O1"
	text := textAddress(t, image)
	for _, th := range rep.Threads {
		if !th.Crashed && !th.LastException {
			continue
		}
		// Group the frames by reported frame: inlined functions first,
		// the machine frame last.
		var groups [][]int
		for i, f := range th.Frames {
			if i == 0 || f.Index != th.Frames[i-1].Index {
				groups = append(groups, nil)
			}
			groups[len(groups)-1] = append(groups[len(groups)-1], i)
		}
		if len(groups) != len(chain) {
			t.Fatalf("%s: %d frames, the true chain has %d", th.Name, len(groups), len(chain))
		}
		for k, g := range groups {
			outer, inner := th.Frames[g[len(g)-1]], th.Frames[g[0]]
			if chain[k] == "???" {
				if outer.Symbol != "" {
					t.Errorf("%s frame %d: %q, want no name (an address in no image)", th.Name, k, outer.Symbol)
				}
				continue
			}
			if outer.Symbol != chain[k] || outer.Image != image {
				t.Errorf("%s frame %d: %s in %s, want %s in %s", th.Name, k, outer.Symbol, outer.Image, chain[k], image)
			}
			file, line := lineTruth(t, image, inner.LookupAddress-d.Images[0].LoadAddress+text)
			if inner.File == "" || path.Base(inner.File) != file || inner.Line != line {
				t.Errorf("%s frame %d (%s at %#x): %s:%d, want %s:%d", th.Name, k, chain[k], inner.LookupAddress, inner.File, inner.Line, file, line)
			}
		}
	}
}

// TestPLCrashFixtures: the committed .plcrash fixtures are what the
// generator writes, and they symbolicate to the emulator's truth.
func TestPLCrashFixtures(t *testing.T) {
	z := fixtureSymbols(t)
	for _, name := range plcrashFixtures {
		t.Run(name, func(t *testing.T) {
			const slide, sig = 0x7ac000, 0x5a6b91
			data := plcrashOf(t, z, name, slide, sig)
			file := filepath.Join("../plcrash/testdata", name+".plcrash")
			if *update {
				if err := os.WriteFile(file, data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			committed, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (go test ./report -run PLCrashFixtures -update writes it)", err)
			}
			if !bytes.Equal(committed, data) {
				t.Errorf("%s differs from what the generator writes now; rerun with -update", file)
			}
			checkPLCrash(t, z, name, committed)
		})
	}
}

// TestPLCrashFreshSlides writes the fixtures' reports again at a slide and
// signature drawn for this run, not the committed ones.
func TestPLCrashFreshSlides(t *testing.T) {
	z := fixtureSymbols(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 2))
	for _, name := range plcrashFixtures {
		slide := rng.Uint64N(1<<20) << 14 // page-aligned, below the signature
		sig := 1 + rng.Uint64N(1<<23)
		checkPLCrash(t, z, name, plcrashOf(t, z, name, slide, sig))
	}
}

// TestCrashLayoutOfPLCrash writes a .plcrash fixture as Apple's .crash
// text (what --format same and --format crash print) and reads it back
// with the .crash parser: the header, the exception, every frame's
// address and name, the registers and the images survive.
func TestCrashLayoutOfPLCrash(t *testing.T) {
	z := fixtureSymbols(t)
	in, err := open.File(context.Background(), "../plcrash/testdata/chain-arm64-O1-deepest.plcrash")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var out bytes.Buffer
	if err := report.WriteSame(context.Background(), z, in, &out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{
		"Incident Identifier: 66697874-7572-652D-6368-61696E2D6172\n",
		"Hardware Model:      Mac14,2\n",
		"Process:         chain-arm64-O1 [4242]\n",
		"Identifier:      org.stackimage.fixture.chain-arm64-O1-deepest\n",
		"Version:         1.0 (7)\n",
		"Code Type:       ARM-64\n",
		"Parent Process:  launchd [1]\n",
		"Date/Time:       2026-01-01 00:00:00 +0000\n",
		"OS Version:      Mac OS X 14.5 (23F79)\n",
		"Exception Type:  EXC_BAD_ACCESS (SIGSEGV)\n",
		"Exception Codes: SEGV_MAPERR at 0x10\n",
		"Crashed Thread:  0\n",
		"*** Terminating app due to uncaught exception 'NSRangeException', reason: 'index 3 beyond bounds [0 .. 2]'\n",
		"\nLast Exception Backtrace:\n0   chain-arm64-O1                 0x00000001007b85dc deepest + 12 (chain.c:65)\n",
		"\nThread 0 Crashed:\n0   chain-arm64-O1                 0x00000001007b85dc deepest + 12 (chain.c:65)\n",
		"\nThread 0 crashed with ARM-64 Thread State:\n    x0: 0x",
		"\nBinary Images:\n       0x1007b8000 -        0x1007bc48f +chain-arm64-O1 arm64  <",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in:\n%s", want, text)
		}
	}
	back, err := open.Bytes(out.Bytes())
	if err != nil {
		t.Fatalf("the .crash text does not read back: %v\n%s", err, text)
	}
	if back.Format.Format != dump.FormatCrash {
		t.Fatalf("read back as %s", back.Format.Name)
	}
	orig, got := in.Dump(), back.Dump()
	if got.Arch != orig.Arch || len(got.Threads) != len(orig.Threads) || len(got.Images) != 1 || got.Images[0].UUID != orig.Images[0].UUID ||
		got.Images[0].LoadAddress != orig.Images[0].LoadAddress {
		t.Fatalf("read back: arch %v, %d threads, images %+v; want %v, %d threads, %+v", got.Arch, len(got.Threads), got.Images, orig.Arch, len(orig.Threads), orig.Images)
	}
	for ti := range orig.Threads {
		o, g := orig.Threads[ti], got.Threads[ti]
		if o.Crashed != g.Crashed || len(o.Frames) > len(g.Frames) {
			t.Fatalf("thread %d read back with %d frames (crashed %v), want %d (%v)", ti, len(g.Frames), g.Crashed, len(o.Frames), o.Crashed)
		}
	}
	pc, _ := got.Threads[0].Registers.PC()
	wantPC, _ := orig.Threads[0].Registers.PC()
	if pc != wantPC {
		t.Errorf("pc read back as %#x, want %#x", pc, wantPC)
	}
	if len(got.LastExceptionBacktrace) == 0 || got.LastExceptionBacktrace[0].Address != orig.LastExceptionBacktrace[0].Address {
		t.Errorf("Last Exception Backtrace read back as %+v", got.LastExceptionBacktrace)
	}
}
