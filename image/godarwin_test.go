package image

import (
	"bytes"
	"debug/dwarf"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// buildDarwinGo cross-compiles a small Go program for darwin/arm64: a real
// Mach-O made by a real linker, with a symbol table and compressed DWARF.
func buildDarwinGo(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build a darwin binary with")
	}
	dir := t.TempDir()
	src := "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n"
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module hello\n\ngo 1.21\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "hello")
	cmd := exec.Command(goBin, "build", "-o", out, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS=darwin", "GOARCH=arm64", "CGO_ENABLED=0", "GOFLAGS=")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, msg)
	}
	return out
}

func TestGoDarwinBinary(t *testing.T) {
	path := buildDarwinGo(t)
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	im := f.Images[0]
	if im.ArchName() != "arm64" || im.Type != TypeExecute || im.UUID.IsZero() {
		t.Errorf("arch %s, type %d, UUID %s; want arm64, MH_EXECUTE, a UUID", im.ArchName(), im.Type, im.UUID)
	}

	// Find main.main in the raw symbol table.
	raw, ok, err := im.Symtab()
	if err != nil || !ok {
		t.Fatalf("Symtab() = %v, %v", ok, err)
	}
	var mainAddr uint64
	var mainSect int
	for i := 0; i < raw.NSyms; i++ {
		e := raw.Syms[16*i:]
		strx := raw.ByteOrder.Uint32(e)
		if int(strx) >= len(raw.Strings) {
			t.Fatalf("symbol %d: n_strx %d past the string table (%d bytes)", i, strx, len(raw.Strings))
		}
		name := raw.Strings[strx:]
		name = name[:bytes.IndexByte(name, 0)]
		if string(name) == "_main.main" && e[4]&0x0e == 0x0e { // N_SECT
			mainAddr, mainSect = raw.ByteOrder.Uint64(e[8:]), int(e[5])
		}
	}
	if mainAddr == 0 {
		t.Fatalf("no _main.main among %d symbols", raw.NSyms)
	}
	// Each call reads the tables afresh: symtab keeps them without a copy.
	again, _, _ := im.Symtab()
	if &again.Strings[0] == &raw.Strings[0] || &again.Syms[0] == &raw.Syms[0] {
		t.Errorf("two calls of Symtab share their bytes")
	}
	sec, ok := im.SectionFor(mainAddr)
	if !ok || sec.Index != mainSect || sec.Name != "__text" {
		t.Errorf("SectionFor(%#x) = %s (index %d), %v; want __text, the symbol's n_sect %d", mainAddr, sec.Name, sec.Index, ok, mainSect)
	}
	if text, _ := im.TextSegment(); text.Prot&vmProtExecute == 0 || mainAddr < text.Addr || mainAddr >= text.Addr+text.Size {
		t.Errorf("main.main %#x is not in an executable __TEXT %+v", mainAddr, text)
	}

	// The compressed DWARF must decompress into something debug/dwarf reads,
	// and agree with the symbol table on where main.main is.
	dw, err := im.DWARFSections()
	if err != nil {
		t.Fatal(err)
	}
	d, err := dwarf.New(dw["debug_abbrev"], nil, nil, dw["debug_info"], dw["debug_line"], nil, dw["debug_ranges"], dw["debug_str"])
	if err != nil {
		t.Fatalf("dwarf.New: %v (sections %v)", err, keys(dw))
	}
	var lowpc uint64
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if e == nil {
			break
		}
		if e.Tag == dwarf.TagSubprogram && e.Val(dwarf.AttrName) == "main.main" {
			lowpc, _ = e.Val(dwarf.AttrLowpc).(uint64)
			break
		}
	}
	if lowpc != mainAddr {
		t.Errorf("DWARF main.main low_pc = %#x, want the symbol's %#x", lowpc, mainAddr)
	}

	// And the same image loaded at a slide reads back the same.
	mem := &testMemory{}
	loadInto(t, mem, im, 0x102a4c000)
	got, err := FromMemory(mem, 0x102a4c000, im.Name)
	if err != nil {
		t.Fatal(err)
	}
	want := factsOf(t, im)
	gotFacts := factsOf(t, got)
	gotFacts.Symtab.ByteOrder = want.Symtab.ByteOrder
	if !bytes.Equal(want.Symtab.Syms, gotFacts.Symtab.Syms) || !bytes.Equal(want.Symtab.Strings, gotFacts.Symtab.Strings) ||
		len(want.Segments) != len(gotFacts.Segments) || want.UUID != gotFacts.UUID {
		t.Errorf("FromMemory differs from the file: UUID %s vs %s, %d vs %d segments", gotFacts.UUID, want.UUID, len(gotFacts.Segments), len(want.Segments))
	}
}

func keys(m map[string][]byte) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	return k
}
