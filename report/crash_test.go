package report_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/minidump"
	"github.com/stackimage/stackimage/open"
	"github.com/stackimage/stackimage/report"
	"github.com/stackimage/stackimage/snapshot"
	"github.com/stackimage/stackimage/symbolize"
	"github.com/stackimage/stackimage/symstore"
)

// TestCrashLayoutOfWalkedDump: a dump whose threads we walk (here an
// emulator snapshot) is written in Apple's .crash layout from our walk,
// and reads back as a .crash report with the walk's frames.
func TestCrashLayoutOfWalkedDump(t *testing.T) {
	z := fixtureSymbols(t)
	in, err := open.File(context.Background(), "../fixtures/snapshots/chain-x86_64-O1-deepest.json")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if !report.CanWriteCrash(in.Format.Format) {
		t.Fatalf("CanWriteCrash(%s) = false", in.Format.Format)
	}
	var out bytes.Buffer
	if err := report.Write(context.Background(), z, in, report.NewCrash(&out)); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	chain := readChain(t, "chain-x86_64-O1-deepest")
	for _, want := range []string{"Code Type:       X86-64\n", "Thread 0 Crashed:\n0   chain-x86_64-O1 ", " deepest + ", "Thread 0 crashed with X86-64 Thread State:\n", "\nBinary Images:\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in:\n%s", want, text)
		}
	}
	back, err := open.Bytes(out.Bytes())
	if err != nil || back.Format.Format != dump.FormatCrash {
		t.Fatalf("the .crash text does not read back as one: %v\n%s", err, text)
	}
	// The names as the text gives them, one per machine frame.
	var names []string
	for _, f := range back.Dump().Threads[0].Frames {
		if !f.Inlined {
			names = append(names, f.Symbol)
		}
	}
	for k, want := range chain {
		if k >= len(names) || names[k] != want {
			t.Errorf("read back frame %d = %q, want %q (all: %q)", k, names[min(k, len(names)-1)], want, names)
		}
	}
}

// TestCrashLayoutRefusesCallGraphs: a sample's call graph has no .crash
// layout.
func TestCrashLayoutRefusesCallGraphs(t *testing.T) {
	if report.CanWriteCrash(dump.FormatSample) {
		t.Error("CanWriteCrash(sample) = true")
	}
	for _, f := range []dump.Format{dump.FormatPLCrash, dump.FormatIPS, dump.FormatCrash, dump.FormatKSCrash, dump.FormatMinidump, dump.FormatCore, dump.FormatSnapshot} {
		if !report.CanWriteCrash(f) {
			t.Errorf("CanWriteCrash(%s) = false", f)
		}
	}
}

// TestCrashLayoutOfMinidump: a minidump, whose threads we walk, is
// written in Apple's .crash layout from our walk: the emulator snapshot's
// registers and memory written as a minidump give the true chain.
func TestCrashLayoutOfMinidump(t *testing.T) {
	const name = "chain-arm64-O1-deepest"
	data, err := os.ReadFile("../fixtures/snapshots/" + name + ".json")
	if err != nil {
		t.Fatal(err)
	}
	snap, err := snapshot.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	in := &minidump.WriterInput{Arch: snap.Arch, Platform: minidump.PlatformMacOS, MajorVersion: 14, MinorVersion: 5,
		Exception: &minidump.WriterException{ThreadID: 1, Code: 1, Flags: 1, Address: 0x10}}
	for _, th := range snap.Threads {
		in.Threads = append(in.Threads, minidump.WriterThread{ID: uint32(th.ID), Registers: th.Registers})
	}
	for _, im := range snap.Images {
		in.Modules = append(in.Modules, minidump.WriterModule{Base: im.LoadAddress, Size: uint32(im.Size), Path: im.Name, UUID: im.UUID})
	}
	for _, r := range snap.Memory.All() {
		in.Memory = append(in.Memory, minidump.WriterMemory{Addr: r.Address, Data: r.Data})
	}
	var md bytes.Buffer
	if err := minidump.Write(&md, in); err != nil {
		t.Fatal(err)
	}
	opened, err := open.Bytes(md.Bytes())
	if err != nil || opened.Format.Format != dump.FormatMinidump {
		t.Fatalf("open: %v", err)
	}
	var out bytes.Buffer
	if err := report.Write(context.Background(), fixtureSymbols(t), opened, report.NewCrash(&out)); err != nil {
		t.Fatal(err)
	}
	back, err := open.Bytes(out.Bytes())
	if err != nil || back.Format.Format != dump.FormatCrash {
		t.Fatalf("the .crash text does not read back as one: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "Exception Type:  EXC_BAD_ACCESS") || !strings.Contains(out.String(), "Code Type:       ARM-64") {
		t.Errorf("header:\n%s", out.String())
	}
	var names []string
	for _, f := range back.Dump().Threads[0].Frames {
		if !f.Inlined {
			names = append(names, f.Symbol)
		}
	}
	chain := readChain(t, name)
	if len(names) == len(chain)-1 && chain[len(chain)-1] == "???" {
		// The entry sentinel lies in no module of the minidump: the walk
		// may end before it, as a walk ends at an address in no image.
		chain = chain[:len(chain)-1]
	}
	if len(names) != len(chain) {
		t.Fatalf("read back %q, want %q", names, chain)
	}
	for k := range chain {
		if names[k] != chain[k] {
			t.Errorf("frame %d: %q, want %q", k, names[k], chain[k])
		}
	}
}

// FuzzCrashLayout: any input the door opens is written in Apple's .crash
// layout without a panic, and nothing in the input reaches the output as
// a control character.
func FuzzCrashLayout(f *testing.F) {
	for _, name := range []string{"../plcrash/testdata/chain-arm64-O1-deepest.plcrash", "../crashreport/testdata/arm64.crash", "../crashreport/testdata/x86_64-kscrash.json"} {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	z := &symbolize.Symbolizer{Symbols: symstore.NewSymbols()}
	f.Fuzz(func(t *testing.T, data []byte) {
		in, _ := open.Bytes(data)
		if in == nil || !report.CanWriteCrash(in.Format.Format) {
			return
		}
		var out bytes.Buffer
		if err := report.Write(context.Background(), z, in, report.NewCrash(&out)); err != nil {
			return
		}
		for i, c := range out.Bytes() {
			if c < 0x20 && c != '\n' || c == 0x7f {
				t.Fatalf("control byte %#x at %d of the output", c, i)
			}
		}
	})
}
