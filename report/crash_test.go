package report_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/open"
	"github.com/stackimage/stackimage/report"
)

// TestCrashLayoutOfWalkedDump: a dump whose threads we walk (here an
// emulator snapshot) is written in Apple's .crash layout from our walk,
// and reads back as a .crash report with the walk's frames.
func TestCrashLayoutOfWalkedDump(t *testing.T) {
	z := fixtureSymbols(t)
	in, err := open.File("../fixtures/snapshots/chain-x86_64-O1-deepest.json")
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
	for _, want := range []string{"Code Type:       X86-64\n", "Thread 1 Crashed:\n0   chain-x86_64-O1 ", " deepest + ", "Thread 1 crashed with X86-64 Thread State:\n", "\nBinary Images:\n"} {
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
