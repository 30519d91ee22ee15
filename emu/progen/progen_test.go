package progen

import (
	"strings"
	"testing"
)

func TestGenerateIsDeterministic(t *testing.T) {
	for seed := int64(0); seed < 50; seed++ {
		a, b := Generate(seed), Generate(seed)
		if a.Source != b.Source {
			t.Fatalf("Generate(%d) gave two different programs", seed)
		}
		if !strings.Contains(a.Source, "unsigned start(void) {") {
			t.Fatalf("Generate(%d) has no entry start", seed)
		}
		if a.Functions[0] != "start" || len(a.Functions) < minFunctions+1 || len(a.Functions) > maxFunctions+1 {
			t.Fatalf("Generate(%d).Functions = %v", seed, a.Functions)
		}
		for _, f := range a.Functions {
			if !strings.Contains(a.Source, " "+f+"(") {
				t.Errorf("Generate(%d): function %s is not defined", seed, f)
			}
		}
	}
	if Generate(1).Source == Generate(2).Source {
		t.Error("seeds 1 and 2 gave the same program")
	}
}

// TestGenerateCoversConstructs checks that a few dozen seeds draw every
// construct the sweep is meant to meet.
func TestGenerateCoversConstructs(t *testing.T) {
	want := map[string]string{
		"indirect call":     "OPAQUE(p",
		"call in a loop":    "for (unsigned k",
		"conditional call":  "if (x & ",
		"early return":      "if ((x & 7u) ==",
		"local array":       "ESCAPE(a)",
		"alloca":            "__builtin_alloca",
		"callee-saved load": "OPAQUE(v5)",
		"loop":              "for (unsigned i",
		"maybe inlined":     "\nstatic unsigned",
		"switch":            "switch ((x >> 2)",
		"recursion":         "if (a0 & 3u)",
		"stack arguments":   "unsigned a9",
	}
	var all strings.Builder
	for seed := int64(100); seed < 140; seed++ {
		all.WriteString(Generate(seed).Source)
	}
	for what, s := range want {
		if !strings.Contains(all.String(), s) {
			t.Errorf("no %s (%q) in 40 programs", what, s)
		}
	}
	tail := false
	for seed := int64(100); seed < 140 && !tail; seed++ {
		for _, line := range strings.Split(Generate(seed).Source, "\n") {
			if strings.HasPrefix(line, "\treturn f") {
				tail = true
			}
		}
	}
	if !tail {
		t.Error("no tail call (return f...) in 40 programs")
	}
}

func TestBuildCommands(t *testing.T) {
	cmds, err := Build{Arch: "x86_64", Opt: "O1", Tables: true}.Commands("cc", "ld", "p.c", "out")
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(cmds[0], " ")
	for _, f := range []string{"-O1", "-fomit-frame-pointer", "-fasynchronous-unwind-tables", "-ffreestanding", "x86_64-apple-macos10.15"} {
		if !strings.Contains(got, f) {
			t.Errorf("compile command %q lacks %s", got, f)
		}
	}
	cmds, _ = Build{Arch: "arm64", Opt: "O2"}.Commands("cc", "ld", "p.c", "out")
	if got := strings.Join(cmds[0], " "); strings.Contains(got, "unwind-tables") {
		t.Errorf("a build without tables asks for them: %q", got)
	}
	if _, err := (Build{Arch: "armv7", Opt: "O0"}).Commands("cc", "ld", "p.c", "out"); err == nil {
		t.Error("armv7 build: no error")
	}
}
