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
	if _, err := (Build{Arch: "ppc", Opt: "O0"}).Commands("cc", "ld", "p.c", "out"); err == nil {
		t.Error("ppc build: no error")
	}
	cmds, _ = Build{Arch: "i386", Opt: "O1"}.Commands("cc", "ld", "p.c", "out")
	if len(cmds) != 1 || !strings.Contains(strings.Join(cmds[0], " "), "-fno-jump-tables -ffreestanding") || cmds[0][len(cmds[0])-2] != "out" {
		t.Errorf("i386 build %q: want one compile to the object out, without jump tables", cmds)
	}
	cmds, _ = Build{Arch: "armv7", Opt: "O1", DSYM: "dsymutil"}.Commands("cc", "ld", "p.c", "out")
	if len(cmds) != 3 || !strings.Contains(strings.Join(cmds[0], " "), " -g ") || cmds[2][0] != "dsymutil" {
		t.Errorf("armv7 build with a dSYM %q: want -g, a link and dsymutil", cmds)
	}
}

// TestPortableSource: the portable text takes no function's address and
// divides by nothing, and keeps every other line of Source.
func TestPortableSource(t *testing.T) {
	indirect := 0
	for seed := int64(1); seed <= 40; seed++ {
		p := Generate(seed)
		if strings.Contains(p.PortableSource, "_t p") || strings.Contains(p.PortableSource, "%") {
			t.Fatalf("seed %d: portable source takes an address or divides:\n%s", seed, p.PortableSource)
		}
		indirect += strings.Count(p.Source, "_t p")
		if strings.Count(p.Source, "\treturn ") != strings.Count(p.PortableSource, "\treturn ") {
			t.Errorf("seed %d: the portable source has other returns", seed)
		}
	}
	if indirect == 0 {
		t.Error("no indirect call in 40 programs: the portable source is not tested")
	}
}
