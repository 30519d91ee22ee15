package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/breakpadsym"
	"github.com/stackimage/stackimage/crashreport"
	"github.com/stackimage/stackimage/debuginfo"
	"github.com/stackimage/stackimage/demangle"
	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/hangreport"
	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/internal/testcorpus"
	"github.com/stackimage/stackimage/machocore"
	"github.com/stackimage/stackimage/minidump"
	"github.com/stackimage/stackimage/snapshot"
	"github.com/stackimage/stackimage/swiftdemangle"
	"github.com/stackimage/stackimage/symbolize"
	"github.com/stackimage/stackimage/symindex"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/symtab"
	"github.com/stackimage/stackimage/unwind/compactunwind"
	"github.com/stackimage/stackimage/unwind/dwarfcfi"
	"github.com/stackimage/stackimage/uuid"
	"github.com/stackimage/stackimage/walker"
)

// entryCall is one call of an exported entry point. wantErr says the
// input is nil or empty, so that the call must return an error; calls of
// functions without an error result only must not panic.
type entryCall struct {
	name    string
	wantErr bool
	f       func() error
}

// runEntryCalls runs each call, failing the test on a panic (with the
// stack) and on a nil error where one is wanted.
func runEntryCalls(t *testing.T, calls []entryCall) {
	t.Helper()
	for _, c := range calls {
		err, panicked := callRecover(c.f)
		switch {
		case panicked != "":
			t.Errorf("%s panics: %s", c.name, panicked)
		case c.wantErr && err == nil:
			t.Errorf("%s: no error for nil or empty input", c.name)
		}
	}
}

func callRecover(f func() error) (err error, panicked string) {
	defer func() {
		if r := recover(); r != nil {
			panicked = fmt.Sprintf("%v\n%s", r, debug.Stack())
		}
	}()
	return f(), ""
}

// noErr wraps a call without an error result.
func noErr(f func()) func() error { return func() error { f(); return nil } }

// errIfNil makes a nil result an error, for constructors whose only
// failure is a nil result.
func errIfNil[T any](v *T, err error) error {
	if err == nil && v == nil {
		return fmt.Errorf("nil result")
	}
	return err
}

// TestEntryPointsNilAndEmpty calls every exported entry point of every
// package (parsers of bytes and readers, constructors, Symbolicate, Walk,
// Lookup, Resolve, writers) with nil and empty input, and methods on nil
// and zero receivers: each returns an error where it has one, and none
// panics.
func TestEntryPointsNilAndEmpty(t *testing.T) {
	arm64 := archregs.ARM64
	var u uuid.UUID
	empty := []byte{}
	var nilReader io.ReaderAt
	emptyReader := bytes.NewReader(nil)
	var nilEntry *symstore.Entry
	var nilZ *symbolize.Symbolizer
	z := &symbolize.Symbolizer{}
	zs := &symbolize.Symbolizer{Symbols: symstore.NewSymbols()}
	var nilImage *image.Image

	calls := []entryCall{
		// archregs
		{"archregs.ByName(\"\")", true, func() error { _, err := archregs.ByName(""); return err }},
		{"archregs.ByCPU(0, 0)", true, func() error { _, err := archregs.ByCPU(0, 0); return err }},
		{"archregs.Decode(nil arch)", true, func() error { _, err := archregs.Decode(nil, 0, nil); return err }},
		{"archregs.Decode(empty)", true, func() error { _, err := archregs.Decode(arm64, archregs.NativeFlavor(arm64), empty); return err }},
		{"archregs.NewRegisters(nil)", false, noErr(func() { archregs.NewRegisters(nil) })},
		{"archregs.NativeFlavor(nil)", false, noErr(func() { archregs.NativeFlavor(nil) })},
		{"archregs.FlavorName(nil)", false, noErr(func() { archregs.FlavorName(nil, 0) })},

		// uuid
		{"uuid.Parse(\"\")", true, func() error { _, err := uuid.Parse(""); return err }},
		// image
		{"image.NewFile(nil)", true, func() error { _, err := image.NewFile(nilReader, "x"); return err }},
		{"image.NewFile(empty)", true, func() error { _, err := image.NewFile(emptyReader, "x"); return err }},
		{"image.Open(\"\")", true, func() error { _, err := image.Open(""); return err }},
		{"image.FromMemory(nil)", true, func() error { _, err := image.FromMemory(nil, 0x1000, ""); return err }},
		{"image.ReadLoadCommands(nil)", true, func() error { _, _, err := image.ReadLoadCommands(nilReader, -1); return err }},
		{"image.ReadLoadCommands(empty)", true, func() error { _, _, err := image.ReadLoadCommands(emptyReader, 0); return err }},
		{"image.MemoryReaderAt(nil).ReadAt", true, func() error {
			_, err := image.MemoryReaderAt(nil, 0).ReadAt(make([]byte, 4), 0)
			return err
		}},
		{"image.NewList(nil)", false, noErr(func() {
			l := image.NewList(nil)
			l.Lookup(0x1000)
			l.IsCode(0x1000)
			l.Images()
		})},
		{"(&Image{}) methods", false, noErr(func() {
			im := &image.Image{}
			_ = im.ArchName()
			im.ReadSection(image.Section{Size: 1, Offset: 1})
			im.ReadSegment(image.Segment{FileSize: 1})
			im.DWARFSections()
			im.Exports()
			im.FunctionStarts()
			im.Symtab()
			im.SectionFor(0x1000)
			im.TextSegment()
		})},

		// symtab
		{"symtab.New(nil)", true, func() error { _, err := symtab.New(nil); return err }},
		{"symtab.New(&Image{})", false, noErr(func() { symtab.New(&image.Image{}) })},
		{"symtab.NewFromParts(empty)", false, noErr(func() { symtab.NewFromParts(image.RawSymtab{}, nil, nil, nil) })},
		{"symtab.SymbolAt(zero)", false, noErr(func() { symtab.SymbolAt(symtab.Entry{}, 0) })},

		// debuginfo
		{"debuginfo.New(nil)", true, func() error { _, err := debuginfo.New(nil); return err }},
		{"debuginfo.New(empty)", true, func() error { _, err := debuginfo.New(map[string][]byte{}); return err }},
		{"debuginfo.NewFromImage(nil)", true, func() error { _, err := debuginfo.NewFromImage(nil); return err }},
		{"debuginfo.NewFromImage(nil *Image)", true, func() error { _, err := debuginfo.NewFromImage(nilImage); return err }},
		{"demangle.Demangle(\"\")", false, noErr(func() { demangle.Demangle(""); demangle.Language("") })},

		// swiftdemangle
		{"swiftdemangle.Demangle(\"\")", true, func() error { _, err := swiftdemangle.Demangle("", 0); return err }},
		{"swiftdemangle.Parse(\"\")", true, func() error { _, err := swiftdemangle.Parse(""); return err }},

		// unwind tables
		{"compactunwind.Parse(nil)", true, func() error { _, err := compactunwind.Parse(nil); return err }},
		{"compactunwind.ParseObject(nil)", true, func() error { _, err := compactunwind.ParseObject(nil, 8); return err }},
		{"compactunwind.ParseObject(empty, 0)", true, func() error { _, err := compactunwind.ParseObject(empty, 0); return err }},
		{"compactunwind.RowFor(nil arch)", true, func() error { _, err := compactunwind.RowFor(nil, compactunwind.Entry{}, nil); return err }},
		{"compactunwind.Frame0(nil arch)", false, func() error {
			_, _, _, err := compactunwind.Frame0(nil, compactunwind.Entry{}, 0, nil)
			_ = err
			return nil
		}},
		{"compactunwind.Frame0Row(nil arch)", false, func() error {
			_, _, err := compactunwind.Frame0Row(nil, compactunwind.Entry{}, 0, nil)
			_ = err
			return nil
		}},
		{"compactunwind.Entry methods", false, noErr(func() {
			var e compactunwind.Entry
			e.DWARFOffset(nil)
			e.Narrow(0, 0)
		})},
		{"dwarfcfi.NewEHFrame(nil arch)", true, func() error { _, err := dwarfcfi.NewEHFrame([]byte{1, 2, 3, 4}, 0, nil); return err }},
		{"dwarfcfi.NewDebugFrame(nil arch)", true, func() error { _, err := dwarfcfi.NewDebugFrame([]byte{1, 2, 3, 4}, nil); return err }},
		{"dwarfcfi.NewEHFrame(nil)", false, noErr(func() { dwarfcfi.NewEHFrame(nil, 0, arm64) })},
		{"dwarfcfi.NewDebugFrame(nil)", false, noErr(func() { dwarfcfi.NewDebugFrame(nil, arm64) })},

		// breakpadsym
		{"breakpadsym.Parse(nil)", true, func() error { _, err := breakpadsym.Parse(nil); return err }},
		{"breakpadsym.ParseReader(nil)", true, func() error { _, err := breakpadsym.ParseReader(nil); return err }},
		{"breakpadsym.ParseReader(empty)", true, func() error { _, err := breakpadsym.ParseReader(strings.NewReader("")); return err }},
		{"breakpadsym.ReadModuleLine(nil)", true, func() error { _, err := breakpadsym.ReadModuleLine(nil); return err }},
		{"breakpadsym.ReadModuleLine(empty)", true, func() error { _, err := breakpadsym.ReadModuleLine(strings.NewReader("")); return err }},
		{"breakpadsym.ParseDebugID(\"\")", true, func() error { _, _, err := breakpadsym.ParseDebugID(""); return err }},
		{"breakpadsym.EvalExpr(\"\", nil, nil)", true, func() error { _, _, err := breakpadsym.EvalExpr("", breakpadsym.ExprEnv{PtrSize: 8}); return err }},
		{"breakpadsym.EvalExpr(nil funcs)", true, func() error {
			_, _, err := breakpadsym.EvalExpr("$sp 8 + ^", breakpadsym.ExprEnv{PtrSize: 8})
			return err
		}},
		{"breakpadsym.FindInStore(\"\")", false, noErr(func() { breakpadsym.FindInStore("", "", "") })},
		{"breakpadsym.MemoryFunc(nil)", true, func() error { _, err := breakpadsym.MemoryFunc(nil)(0x1000, 8); return err }},
		{"breakpadsym.MapRegisters(nil)", false, noErr(func() { breakpadsym.MapRegisters(nil)("sp") })},

		// symindex
		{"symindex.Parse(nil)", true, func() error { _, err := symindex.Parse(nil); return err }},
		{"symindex.Open(\"\")", true, func() error { _, err := symindex.Open(""); return err }},
		{"symindex.OpenUUID(\"\")", true, func() error { _, err := symindex.OpenUUID("", u); return err }},
		{"symindex.Write(nil writer)", true, func() error { return symindex.Write(nil, symindex.Input{}) }},

		// walker
		{"walker.Walk(nil, nil, zero)", false, func() error {
			r := walker.Walk(nil, nil, walker.Options{})
			if r.Stop != walker.StopNoRegisters {
				return fmt.Errorf("stop %v, want no_registers", r.Stop)
			}
			return nil
		}},
		{"walker.Walk(empty registers)", false, func() error {
			r := walker.Walk(archregs.NewRegisters(arm64), nil, walker.Options{})
			if r.Stop != walker.StopNoRegisters {
				return fmt.Errorf("stop %v, want no_registers", r.Stop)
			}
			return nil
		}},
		{"walker.CallerLookupAddress(nil)", false, noErr(func() { walker.CallerLookupAddress(nil, 0x1000) })},

		// dump, snapshot, reports
		{"snapshot.Parse(nil)", true, func() error { _, err := snapshot.Parse(nil); return err }},
		{"snapshot.Read(nil)", true, func() error { _, err := snapshot.Read(nil); return err }},
		{"snapshot.Read(empty)", true, func() error { _, err := snapshot.Read(strings.NewReader("")); return err }},
		{"snapshot.Marshal(nil)", true, func() error { _, err := snapshot.Marshal(nil); return err }},
		{"snapshot.NewRegions(nil)", false, noErr(func() { snapshot.NewRegions(nil) })},
		{"crashreport.Parse(nil)", true, func() error { _, err := crashreport.Parse(nil); return err }},
		{"crashreport.ParseCrash(nil)", true, func() error { _, err := crashreport.ParseCrash(nil); return err }},
		{"crashreport.ParseIPS(nil)", true, func() error { _, err := crashreport.ParseIPS(nil); return err }},
		{"crashreport.ParseKSCrash(nil)", true, func() error { _, err := crashreport.ParseKSCrash(nil); return err }},
		{"crashreport.ReadFile(\"\")", true, func() error { _, err := crashreport.ReadFile(""); return err }},
		{"crashreport.Detect(nil)", false, noErr(func() { crashreport.Detect(nil) })},
		{"crashreport.WriteSymbolicated(nil writer)", true, func() error {
			return crashreport.WriteSymbolicated(nil, []byte("Incident Identifier: x\n"), crashreport.FormatCrash, nil)
		}},
		{"crashreport.WriteSymbolicated(nil data)", true, func() error {
			return crashreport.WriteSymbolicated(io.Discard, nil, "", nil)
		}},
		{"crashreport.WriteSymbolicated(nil lookup)", false, noErr(func() {
			crashreport.WriteSymbolicated(io.Discard, []byte("Thread 0 Crashed:\n0   App   0x0000000100001000 0x100000000 + 4096\n"), crashreport.FormatCrash, nil)
		})},
		{"hangreport.Parse(nil)", true, func() error { _, err := hangreport.Parse(nil); return err }},
		{"hangreport.Detect(nil)", false, noErr(func() { hangreport.Detect(nil) })},
		{"minidump.Open(nil)", true, func() error { _, err := minidump.Open(nilReader, 0); return err }},
		{"minidump.Open(empty)", true, func() error { _, err := minidump.Open(emptyReader, 0); return err }},
		{"minidump.Parse(nil)", true, func() error { _, err := minidump.Parse(nilReader, 0); return err }},
		{"minidump.Parse(empty)", true, func() error { _, err := minidump.Parse(emptyReader, 0); return err }},
		{"minidump.Write(nil writer)", true, func() error { return minidump.Write(nil, &minidump.WriterInput{Arch: arm64}) }},
		{"minidump.Write(nil input)", true, func() error { return minidump.Write(io.Discard, nil) }},
		{"minidump.Write(empty input)", true, func() error { return minidump.Write(io.Discard, &minidump.WriterInput{}) }},
		{"machocore.Open(nil)", true, func() error { _, err := machocore.Open(nilReader, 0); return err }},
		{"machocore.Open(empty)", true, func() error { _, err := machocore.Open(emptyReader, 0); return err }},
		{"machocore.Write(nil writer)", true, func() error { return machocore.Write(nil, &machocore.WriteInput{Arch: arm64}) }},
		{"machocore.Write(nil input)", true, func() error { return machocore.Write(io.Discard, nil) }},
		{"machocore.Write(empty input)", true, func() error { return machocore.Write(io.Discard, &machocore.WriteInput{}) }},

		// symbolize
		{"Symbolizer.Symbolicate(nil)", true, func() error { _, err := zs.Symbolicate(nil); return err }},
		{"Symbolizer{}.Symbolicate(nil)", true, func() error { _, err := z.Symbolicate(nil); return err }},
		{"Symbolizer.Symbolicate(&Dump{})", true, func() error { _, err := zs.Symbolicate(&dump.Dump{}); return err }},
		{"(*Symbolizer)(nil).Symbolicate", true, func() error { _, err := nilZ.Symbolicate(&dump.Dump{Arch: arm64}); return err }},
		{"Symbolizer.SymbolicateEach(nil)", true, func() error { _, err := zs.SymbolicateEach(nil, nil); return err }},
		{"Symbolizer.NewDumpProcess(nil)", true, func() error { _, err := zs.NewDumpProcess(nil); return err }},
		{"(*Symbolizer)(nil).NewProcess", true, func() error { _, err := nilZ.NewProcess(arm64, nil); return err }},
		{"Symbolizer.NewProcess(nil arch)", false, func() error { _, err := zs.NewProcess(nil, nil); return err }},
		{"Symbolizer.NewProcess(nil loaded image)", false, func() error {
			p, err := zs.NewProcess(arm64, []*image.Loaded{nil})
			if err == nil {
				p.Close()
			}
			return nil
		}},
		{"symstore.NewEntry()", true, func() error { return errIfNil(symstore.NewEntry()) }},
		{"symstore.NewEntry(nil)", true, func() error { return errIfNil(symstore.NewEntry(nil)) }},
		{"symstore.NewEntry(&Image{})", false, noErr(func() { symstore.NewEntry(&image.Image{}) })},
		{"symstore.NewIndexEntry(\"\")", true, func() error { return errIfNil(symstore.NewIndexEntry("")) }},
		{"symstore.IsIndexFile(\"\")", false, noErr(func() { symstore.IsIndexFile("") })},
		{"symstore.ParseSymbolMap(nil)", true, func() error { _, err := symstore.ParseSymbolMap(nil); return err }},
		{"Symbols.AddDir(context.Background(), \"\")", true, func() error { return symstore.NewSymbols().AddDir(context.Background(), "") }},
		{"Symbols.AddFile(context.Background(), \"\")", true, func() error { return symstore.NewSymbols().AddFile(context.Background(), "") }},
		{"Symbols.Lookup(zero UUID)", false, noErr(func() { symstore.NewSymbols().Lookup(u) })},
		{"Symbols.LookupNoUUID(\"\", nil)", false, noErr(func() { symstore.NewSymbols().LookupNoUUID("", nil) })},
		{"Symbols.Resolve(zero UUID, nil arch)", true, func() error { _, err := symstore.NewSymbols().Resolve(u, nil, 0x1000); return err }},
		{"(*Entry)(nil).WriteIndex", true, func() error { return nilEntry.WriteIndex(io.Discard) }},
		{"Entry{}.WriteIndex", true, func() error { return (&symstore.Entry{}).WriteIndex(io.Discard) }},
		{"Entry{} methods", false, noErr(func() {
			e := &symstore.Entry{}
			e.Resolve(symstore.Frame{}, 0x1000, symstore.ResolveOptions{})
			e.Symbol(0x1000)
			e.SymbolBatch([]uint64{1}, make([]symtab.Symbol, 1), make([]bool, 1))
			e.Source(0x1000)
			e.Debug()
			e.HasDebugInfo()
			e.SymbolNamesPrintable()
			e.Warnings()
			e.Release()
		})},
	}
	runEntryCalls(t, calls)
}

// sweepRoots are the committed inputs the sweep reads, relative to this
// package: the fixtures and every package's testdata.
var sweepRoots = []string{
	"../../fixtures", "../../archregs", "../../breakpadsym/testdata", "../../crashreport/testdata",
	"../../debuginfo/testdata", "../../hangreport/testdata", "../../image/testdata",
	"../../swiftdemangle/testdata", "../../symtab/testdata", "../../unwind/compactunwind/testdata",
	"../../unwind/dwarfcfi/testdata", "testdata",
}

// sweepFiles lists the regular files under the roots, and the
// directories named *.dSYM or *.app (bundles that atos and images take).
func sweepFiles(t *testing.T, roots ...string) (files, bundles []string) {
	t.Helper()
	for _, root := range roots {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			switch {
			case d.IsDir() && (strings.HasSuffix(path, ".dSYM") || strings.HasSuffix(path, ".app")):
				bundles = append(bundles, path)
			case d.Type().IsRegular() && !strings.HasSuffix(path, ".go"):
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return files, bundles
}

// TestEntryPointsOverFiles runs every parser of every package, what each
// parse gives (dumps symbolicated, reports written back, images' tables
// read and looked up, indexes written), and every subcommand of
// cmd/stackimage over each committed fixture and test file and over the
// real-world corpus (../shared/corpus, when present), and over an empty
// file: nothing panics, and the empty file is refused with an error.
func TestEntryPointsOverFiles(t *testing.T) {
	files, bundles := sweepFiles(t, sweepRoots...)
	if dir, err := testcorpus.Find(); err == nil {
		f, b := sweepFiles(t, dir)
		files, bundles = append(files, f...), append(bundles, b...)
	} else {
		t.Logf("corpus skipped: %v", err)
	}
	if len(files) < 100 {
		t.Fatalf("only %d files found", len(files))
	}
	emptyFile := writeFile(t, filepath.Join(t.TempDir(), "empty"), nil)

	syms := symstore.NewSymbols()
	defer syms.Close()
	if err := syms.AddDir(context.Background(), symbolsDir); err != nil {
		t.Fatal(err)
	}
	z := &symbolize.Symbolizer{Symbols: syms}
	store := t.TempDir()
	for _, path := range append(files, emptyFile) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		empty := len(data) == 0
		var calls []entryCall
		add := func(name string, f func() error) {
			calls = append(calls, entryCall{path + ": " + name, empty, f})
		}
		addAny := func(name string, f func() error) {
			calls = append(calls, entryCall{path + ": " + name, false, f})
		}
		symbolicate := func(d *dump.Dump) error {
			if d == nil {
				return nil
			}
			_, err := z.Symbolicate(d)
			return err
		}

		add("crashreport.Parse", func() error {
			r, err := crashreport.Parse(data)
			if err == nil {
				symbolicate(r.Dump())
			}
			return err
		})
		add("crashreport.ParseCrash", func() error { _, err := crashreport.ParseCrash(data); return err })
		add("crashreport.ParseIPS", func() error { _, err := crashreport.ParseIPS(data); return err })
		add("crashreport.ParseKSCrash", func() error { _, err := crashreport.ParseKSCrash(data); return err })
		addAny("crashreport.WriteSymbolicated", func() error {
			crashreport.WriteSymbolicated(io.Discard, data, "", func(crashreport.FrameRef) (crashreport.FrameName, bool) {
				return crashreport.FrameName{Symbol: "f", File: "f.c", Line: 1}, true
			})
			return nil
		})
		add("hangreport.Parse", func() error {
			hangreport.Detect(data)
			r, err := hangreport.Parse(data)
			if err == nil {
				symbolicate(r.Dump())
				for _, d := range r.Dumps() {
					symbolicate(d)
				}
				r.Write(io.Discard, func(int, uint64) (hangreport.Name, bool) { return hangreport.Name{Symbol: "f"}, true }, hangreport.StyleReport)
				r.Write(io.Discard, nil, hangreport.StyleReport)
				if r.Write(nil, nil, hangreport.StyleReport) == nil {
					t.Errorf("%s: hangreport Write(nil writer): no error", path)
				}
			}
			return err
		})
		add("snapshot.Parse", func() error {
			s, err := snapshot.Parse(data)
			if err == nil {
				symbolicate(s.Dump())
				snapshot.Marshal(s)
			}
			return err
		})
		add("snapshot.Read", func() error { _, err := snapshot.Read(bytes.NewReader(data)); return err })
		add("minidump.Parse", func() error {
			d, err := minidump.Parse(bytes.NewReader(data), int64(len(data)))
			if err == nil {
				symbolicate(d.Dump())
			}
			return err
		})
		add("minidump.Open", func() error {
			f, err := minidump.Open(bytes.NewReader(data), int64(len(data)))
			if err == nil {
				f.Threads()
				f.Modules()
				f.Memory()
				f.SystemInfo()
				f.Exception()
				f.MiscInfo()
				f.BreakpadInfo()
				f.CrashpadInfo()
				f.ThreadNames()
			}
			return err
		})
		add("machocore.Open", func() error {
			c, err := machocore.Open(bytes.NewReader(data), int64(len(data)))
			if err == nil {
				symbolicate(c.Dump())
			}
			return err
		})
		add("breakpadsym.Parse", func() error {
			f, err := breakpadsym.Parse(data)
			if f != nil {
				for _, a := range []uint64{0, 0x1000, 0x1ff0} {
					f.Lookup(a)
					if r, ok := f.CFIRules(a); ok {
						r.Eval(breakpadsym.MapRegisters(map[string]uint64{"sp": 0x1000, "rsp": 0x1000}), nil, 8)
					}
				}
			}
			return err
		})
		add("breakpadsym.ReadModuleLine", func() error { _, err := breakpadsym.ReadModuleLine(bytes.NewReader(data)); return err })
		add("symindex.Parse", func() error {
			ix, err := symindex.Parse(data)
			if err == nil {
				ix.Lookup(0x1000)
				ix.Source(0x1000)
			}
			return err
		})
		add("symstore.ParseSymbolMap", func() error { _, err := symstore.ParseSymbolMap(data); return err })
		add("compactunwind.Parse", func() error {
			tab, err := compactunwind.Parse(data)
			if err == nil {
				tab.Lookup(0x1000)
			}
			return err
		})
		add("compactunwind.ParseObject", func() error { _, err := compactunwind.ParseObject(data, 8); return err })
		addAny("dwarfcfi tables", func() error {
			if t, err := dwarfcfi.NewEHFrame(data, 0x1000, archregs.X86_64); err == nil {
				t.RowAt(0x1000)
			}
			if t, err := dwarfcfi.NewDebugFrame(data, archregs.ARM64); err == nil {
				t.RowAt(0x1000)
			}
			return nil
		})
		add("image.ReadLoadCommands", func() error { _, _, err := image.ReadLoadCommands(bytes.NewReader(data), int64(len(data))); return err })
		add("image.NewFile", func() error {
			f, err := image.NewFile(bytes.NewReader(data), path)
			if err == nil {
				for _, im := range f.Images {
					sweepImage(im)
				}
			}
			return err
		})
		runEntryCalls(t, calls)

		// The subcommands, in-process: an empty file is refused (status
		// 1 or 2); any status but a panic will do for the others. A file
		// that symbolicates is symbolicated again with the fixtures'
		// symbols, in JSON and in its own format.
		if runSubcommand(t, empty, "symbolicate", path) == 0 {
			runSubcommand(t, empty, "symbolicate", path, "--json", "--symbols", symbolsDir)
			runSubcommand(t, empty, "symbolicate", path, "--format", "same", "--symbols", symbolsDir)
		}
		runSubcommand(t, empty, "atos", "-o", path, "0x1000", "0x100000f00")
		runSubcommand(t, empty, "images", path)
		runSubcommand(t, empty, "index", "--symbols", path, "--out", store)
	}
	for _, b := range bundles {
		runSubcommand(t, false, "atos", "-o", b, "0x100000f00")
		runSubcommand(t, false, "images", b)
		runSubcommand(t, false, "index", "--symbols", b, "--out", store)
	}
	// No input at all.
	for _, args := range [][]string{{}, {"symbolicate"}, {"atos"}, {"images"}, {"index"}, {"symbolicate", ""}, {"atos", "-o", ""}, {"images", ""}, {"index", "--symbols", "", "--out", t.TempDir()}} {
		runSubcommand(t, true, args...)
	}
	// stdin, empty.
	if status, _, _ := runCmd(nil, "symbolicate", "-"); status == 0 {
		t.Error("symbolicate - with empty stdin: status 0, want an error")
	}
}

// runSubcommand runs the command in-process: it must not panic, and must
// fail when wantErr says its input is empty.
func runSubcommand(t *testing.T, wantErr bool, args ...string) int {
	t.Helper()
	var status int
	var errOut string
	_, panicked := callRecover(func() error {
		status, _, errOut = runCmd(nil, args...)
		return nil
	})
	switch {
	case panicked != "":
		t.Errorf("stackimage %q panics: %s", args, panicked)
	case wantErr && status == 0:
		t.Errorf("stackimage %q: status 0 for empty input, want an error", args)
	case status != 0 && strings.TrimSpace(errOut) == "":
		t.Errorf("stackimage %q: status %d and nothing on stderr", args, status)
	}
	return status
}

// sweepImage reads everything an image offers and looks a few addresses
// up through symtab, DWARF, an entry, its unwind tables and an index.
func sweepImage(im *image.Image) {
	_ = im.ArchName()
	for _, s := range im.Sections {
		im.ReadSection(s)
	}
	for _, s := range im.Segments {
		if s.FileSize < 1<<20 {
			im.ReadSegment(s)
		}
	}
	im.Exports()
	im.FunctionStarts()
	addrs := []uint64{0, 0x1000}
	if text, ok := im.TextSegment(); ok {
		addrs = append(addrs, text.Addr, text.Addr+text.Size/2, text.Addr+text.Size-1)
	}
	if t, err := symtab.New(im); err == nil {
		for _, a := range addrs {
			t.Lookup(a)
			t.End(a)
		}
	}
	if ix, err := debuginfo.NewFromImage(im); err == nil {
		for _, a := range addrs {
			ix.Lookup(a)
		}
	}
	if im.Arch != nil {
		if s, ok := im.Section("__TEXT", "__unwind_info"); ok {
			if b, err := im.ReadSection(s); err == nil {
				if tab, err := compactunwind.Parse(b); err == nil {
					for _, a := range addrs {
						if e, err := tab.Lookup(uint32(a)); err == nil {
							compactunwind.RowFor(im.Arch, e, nil)
							compactunwind.Frame0(im.Arch, e, uint32(a), nil)
						}
					}
				}
			}
		}
		if s, ok := im.Section("__TEXT", "__eh_frame"); ok {
			if b, err := im.ReadSection(s); err == nil {
				if tab, err := dwarfcfi.NewEHFrame(b, s.Addr, im.Arch); err == nil {
					for _, a := range addrs {
						tab.RowAt(a)
					}
				}
			}
		}
	}
	if e, err := symstore.NewEntry(im); err == nil {
		for _, a := range addrs {
			e.Symbol(a)
			e.Source(a)
			e.Resolve(symstore.Frame{Address: a, LookupAddress: a}, a, symstore.ResolveOptions{})
		}
		e.WriteIndex(io.Discard)
		e.Warnings()
	}
}
