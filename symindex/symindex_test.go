package symindex_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stackimage/stackimage/debuginfo"
	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/internal/testcorpus"
	"github.com/stackimage/stackimage/symindex"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/uuid"
)

// fixtureDir returns the repository's fixtures/bin.
func fixtureDir(t testing.TB) string {
	root, err := testcorpus.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "fixtures", "bin")
}

// dsymFile returns the DWARF file inside bundle, or "" when there is none.
func dsymFile(bundle string) string {
	files, _ := filepath.Glob(filepath.Join(bundle, "Contents", "Resources", "DWARF", "*"))
	if len(files) == 0 {
		return ""
	}
	return files[0]
}

// openImages opens the files and returns their slices by UUID, in file
// order (the binary before its dSYM).
func openImages(t testing.TB, paths ...string) map[uuid.UUID][]*image.Image {
	out := map[uuid.UUID][]*image.Image{}
	for _, p := range paths {
		f, err := image.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		for _, im := range f.Images {
			out[im.UUID] = append(out[im.UUID], im)
		}
	}
	return out
}

// roundTrip writes the entry's index and parses it back.
func roundTrip(t testing.TB, e *symstore.Entry) (*symindex.Index, []byte) {
	var buf bytes.Buffer
	if err := e.WriteIndex(&buf); err != nil {
		t.Fatalf("WriteIndex: %v", err)
	}
	ix, err := symindex.Parse(buf.Bytes())
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return ix, buf.Bytes()
}

// compareAt checks that the index answers as the entry does at addr.
func compareAt(t *testing.T, e *symstore.Entry, ix *symindex.Index, addr uint64) bool {
	t.Helper()
	wantSym, wantOK := e.Symbol(addr)
	gotSym, gotOK := ix.Symbol(addr)
	if gotOK != wantOK || gotSym != wantSym {
		t.Errorf("Symbol(%#x) = %+v, %v; want %+v, %v", addr, gotSym, gotOK, wantSym, wantOK)
		return false
	}
	// The blocks kept decoded answer as the blocks read entry by entry.
	if sym, ok := ix.SymbolUncached(addr); ok != gotOK || sym != gotSym {
		t.Errorf("SymbolUncached(%#x) = %+v, %v; Symbol gave %+v, %v", addr, sym, ok, gotSym, gotOK)
		return false
	}
	// The section's flags survive: a symbol in a data section names no
	// function.
	wantData := false
	for _, tb := range e.Tables {
		wantData = wantData || tb.InDataSection(addr)
	}
	if got := ix.InDataSection(addr); got != wantData {
		t.Errorf("InDataSection(%#x) = %v; the symbol tables say %v", addr, got, wantData)
		return false
	}
	want := e.Source(addr)
	got, sourceOK := ix.Source(addr)
	if !slices.Equal(want, got) || (want == nil) != (got == nil) {
		// cmp.Diff is slow: only to show a difference.
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Source(%#x) mismatch (-symbol file +index):\n%s", addr, diff)
			return false
		}
	}
	// AppendSource appends the same frames after what dst holds.
	prefix := []debuginfo.Frame{{Function: "caller's"}}
	appended, ok := ix.AppendSource(prefix, addr)
	if ok != sourceOK || !slices.Equal(appended[:1], prefix) || !slices.Equal(appended[1:], got) {
		t.Errorf("AppendSource(%v, %#x) = %v, %v; want the prefix and %v", prefix, addr, appended, ok, got)
		return false
	}
	return true
}

// TestFixtures compares the index with the binary and dSYM at every
// address of every fixture's segments.
func TestFixtures(t *testing.T) {
	dir := fixtureDir(t)
	names, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	tested, inData := 0, 0
	for _, n := range names {
		if n.IsDir() || !(strings.HasSuffix(n.Name(), ".o") || !strings.Contains(n.Name(), ".")) {
			continue
		}
		t.Run(n.Name(), func(t *testing.T) {
			paths := []string{filepath.Join(dir, n.Name())}
			if d := dsymFile(filepath.Join(dir, n.Name()+".dSYM")); d != "" {
				paths = append(paths, d)
			}
			for u, images := range openImages(t, paths...) {
				e, _ := symstore.NewEntry(images...)
				ix, data := roundTrip(t, e)
				checkReference(t, e, data)
				if ix.UUID() != u {
					t.Errorf("UUID() = %s, want %s", ix.UUID(), u)
				}
				if diff := cmp.Diff(images[0].Segments, segmentsOf(ix, images[0].Segments)); diff != "" {
					t.Errorf("segments differ (-image +index):\n%s", diff)
				}
				for _, seg := range images[0].Segments {
					if seg.Name == "__PAGEZERO" || seg.Size > 1<<20 {
						continue
					}
					for a := seg.Addr; a < seg.Addr+seg.Size; a++ {
						if !compareAt(t, e, ix, a) {
							return
						}
						if ix.InDataSection(a) {
							inData++
						}
					}
				}
				tested++
			}
		})
	}
	if tested < 20 {
		t.Errorf("compared %d fixture images, want at least 20", tested)
	}
	if inData == 0 {
		t.Errorf("no address of the fixtures lies in a data section (__unwind_info, __eh_frame): the flag was not compared where it is set")
	}
}

// segmentsOf returns the index's segments in the image's form, with the
// fields the index does not keep copied from want.
func segmentsOf(ix *symindex.Index, want []image.Segment) []image.Segment {
	var out []image.Segment
	for i, s := range ix.Segments() {
		seg := image.Segment{Name: s.Name, Addr: s.Addr, Size: s.Size, Prot: s.Prot}
		if i < len(want) {
			seg.Offset, seg.FileSize, seg.MaxProt = want[i].Offset, want[i].FileSize, want[i].MaxProt
		}
		out = append(out, seg)
	}
	return out
}

// TestCorpusDSYMs compares the index with real dSYMs at every DWARF
// boundary, one byte either side, and every 4th address of __text.
func TestCorpusDSYMs(t *testing.T) {
	corpus := testcorpus.Dir(t)
	bundles := []string{
		"macsymbolicator/MacSymbolicatorTests/Resources/dSYMs/CrashingTest.dSYM",
		"macsymbolicator/MacSymbolicatorTests/Resources/dSYMs/SingleThreadHangingTest.dSYM",
		"symbolic/symbolic-testutils/fixtures/macos/overlapping_funcs.dSYM",
		"symbolic/symbolic-testutils/fixtures/macos/Example.framework.dSYM",
		"symbolic/symbolic-testutils/fixtures/macos/crash.dSYM",
		"pprof/internal/binutils/testdata/lib_mac_64.dSYM",
		"pprof/internal/binutils/testdata/exe_mac_64.dSYM",
	}
	for _, b := range bundles {
		t.Run(filepath.Base(b), func(t *testing.T) {
			file := dsymFile(filepath.Join(corpus, b))
			if file == "" {
				t.Fatalf("%s: no DWARF file", b)
			}
			for _, images := range openImages(t, file) {
				e, _ := symstore.NewEntry(images...)
				ix, data := roundTrip(t, e)
				checkReference(t, e, data)
				var addrs []uint64
				for _, d := range e.Debug() {
					for _, a := range d.Boundaries() {
						addrs = append(addrs, a-1, a, a+1)
					}
				}
				if s, ok := images[0].Section("__TEXT", "__text"); ok {
					for a := s.Addr; a < s.Addr+s.Size; a += 4 {
						addrs = append(addrs, a)
					}
				}
				for _, a := range addrs {
					if !compareAt(t, e, ix, a) {
						return
					}
				}
				t.Logf("%s: %d addresses compared, index %d bytes", images[0].ArchName(), len(addrs), len(data))
			}
		})
	}
}

func TestBadFiles(t *testing.T) {
	dir := fixtureDir(t)
	images := openImages(t, filepath.Join(dir, "chain-arm64-O1"), dsymFile(filepath.Join(dir, "chain-arm64-O1.dSYM")))
	var u uuid.UUID
	var e *symstore.Entry
	for k, ims := range images {
		u = k
		e, _ = symstore.NewEntry(ims...)
	}
	_, good := roundTrip(t, e)
	mutate := func(f func(b []byte) []byte) []byte {
		return f(bytes.Clone(good))
	}
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "shorter than the 64-byte header"},
		{"truncated header", good[:40], "shorter than the 64-byte header"},
		{"truncated", good[:len(good)-1], "truncated or extended"},
		{"extended", append(bytes.Clone(good), 0), "truncated or extended"},
		{"bad magic", mutate(func(b []byte) []byte { b[0] = 'X'; return b }), "bad magic"},
		{"version 3", mutate(func(b []byte) []byte { b[8] = 3; return b }), "unsupported format version: file has version 3, this reader reads 4"},
		{"version 5", mutate(func(b []byte) []byte { b[8] = 5; return b }), "unsupported format version: file has version 5, this reader reads 4"},
		{"flipped directory byte", mutate(func(b []byte) []byte { b[64+8] ^= 0x40; return b }), "checksum"},
		{"flipped chunk checksum", mutate(func(b []byte) []byte { b[len(b)-1] ^= 0x40; return b }), "checksum"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := symindex.Parse(tc.data)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse = %v, want an error containing %q", err, tc.want)
			}
		})
	}
	for _, v := range []byte{1, 2, 3, symindex.Version + 1} {
		if _, err := symindex.Parse(mutate(func(b []byte) []byte { b[8] = v; return b })); !errors.Is(err, symindex.ErrVersion) {
			t.Errorf("Parse(version %d) = %v, want ErrVersion", v, err)
		}
	}

	path := filepath.Join(t.TempDir(), "x.symindex")
	if err := os.WriteFile(path, good, 0o644); err != nil {
		t.Fatal(err)
	}
	ix, err := symindex.OpenUUID(path, u)
	if err != nil {
		t.Fatalf("OpenUUID(right UUID) = %v", err)
	}
	ix.Close()
	other := u
	other[0] ^= 1
	if _, err := symindex.OpenUUID(path, other); !errors.Is(err, symindex.ErrUUID) {
		t.Errorf("OpenUUID(other UUID) = %v, want ErrUUID", err)
	}
	if err := os.WriteFile(path, good[:100], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := symindex.Open(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("Open(truncated) = %v, want an error naming the file", err)
	}
}

// TestDamagedChunk flips one byte of each section in turn: the file still
// opens (sections are checked as lookups read them), but no lookup
// answers from the damaged chunk, Err says where it is, and Verify finds
// it without a lookup.
func TestDamagedChunk(t *testing.T) {
	dir := fixtureDir(t)
	images := openImages(t, filepath.Join(dir, "chain-arm64-O1"), dsymFile(filepath.Join(dir, "chain-arm64-O1.dSYM")))
	for _, ims := range images {
		e, _ := symstore.NewEntry(ims...)
		good, data := roundTrip(t, e)
		seg := ims[0].Segments[1] // __TEXT
		count := binary.LittleEndian.Uint32(data[12:])
		for i := uint32(0); i+1 < count; i++ {
			ent := data[64+24*i:]
			off, size := binary.LittleEndian.Uint64(ent[8:]), binary.LittleEndian.Uint64(ent[16:])
			if size == 0 {
				continue
			}
			bad := bytes.Clone(data)
			bad[off+size/2] ^= 0x55
			ix, err := symindex.Parse(bad)
			if err != nil {
				// The segments and the image name are read at open.
				if !strings.Contains(err.Error(), "does not match its checksum") {
					t.Errorf("section %d: Parse = %v, want a checksum error", i, err)
				}
				continue
			}
			if err := ix.Verify(); err == nil || !strings.Contains(err.Error(), "does not match its checksum") {
				t.Errorf("section %d: Verify = %v, want a checksum error", i, err)
			}
			ix, _ = symindex.Parse(bad)
			for a := seg.Addr; a < seg.Addr+seg.Size; a++ {
				got, _ := ix.Lookup(a)
				want, _ := good.Lookup(a)
				if ix.Err() == nil {
					if got.HasSymbol != want.HasSymbol || got.Symbol != want.Symbol || len(got.Frames) != len(want.Frames) {
						t.Fatalf("section %d: Lookup(%#x) = %+v before the damage was met, want %+v", i, a, got, want)
					}
					continue
				}
				// Once the damage is met, answers are the good file's or none.
				if got.HasSymbol && got.Symbol != want.Symbol {
					t.Fatalf("section %d: Lookup(%#x) symbol %+v from a damaged file, want %+v or none", i, a, got.Symbol, want.Symbol)
				}
				if got.Frames != nil && !cmp.Equal(got.Frames, want.Frames) {
					t.Fatalf("section %d: Lookup(%#x) frames %+v from a damaged file, want %+v or none", i, a, got.Frames, want.Frames)
				}
			}
		}
	}
}

func ExampleIndex_Lookup() {
	ix, err := symindex.Open("store/UUID/arm64.symindex")
	if err != nil {
		fmt.Println(err) // the caller falls back to the symbol file
		return
	}
	defer ix.Close()
	a, _ := ix.Lookup(0x100003f60)
	fmt.Println(a.Symbol.Name, a.Frames)
}

func TestOpenNotRegular(t *testing.T) {
	if _, err := symindex.Open(t.TempDir()); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("Open(a directory) = %v, want an error saying it is not a regular file", err)
	}
}

// TestGoDarwin compares the index with the DWARF of a darwin build of
// cmd/go (built once per Go version by testcorpus): at every DWARF
// boundary, one byte either side, every 16th address of __text and every
// 64th of the data segments.
func TestGoDarwin(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the cmd/go comparison reads 18 MB of DWARF")
	}
	bin, err := testcorpus.GoDarwinBinary()
	if err != nil {
		t.Skipf("no darwin cmd/go build: %v", err)
	}
	for _, images := range openImages(t, bin) {
		e, _ := symstore.NewEntry(images...)
		ix, data := roundTrip(t, e)
		checkReference(t, e, data)
		var addrs []uint64
		for _, d := range e.Debug() {
			for _, a := range d.Boundaries() {
				addrs = append(addrs, a-1, a, a+1)
			}
		}
		if s, ok := images[0].Section("__TEXT", "__text"); ok {
			for a := s.Addr; a < s.Addr+s.Size; a += 16 {
				addrs = append(addrs, a)
			}
		}
		for _, seg := range images[0].Segments {
			if seg.Prot&4 == 0 && seg.Name != "__PAGEZERO" && seg.Name != "__LINKEDIT" {
				for a := seg.Addr; a < seg.Addr+seg.Size; a += 64 {
					addrs = append(addrs, a)
				}
			}
		}
		t.Logf("%d addresses", len(addrs))
		for _, a := range addrs {
			if !compareAt(t, e, ix, a) {
				return
			}
		}
		if err := ix.Verify(); err != nil {
			t.Errorf("Verify: %v", err)
		}
		t.Logf("%d addresses compared, index %d bytes", len(addrs), len(data))
	}
}

// TestConcurrentLookups looks addresses up from four goroutines on one
// fresh Index (chunk checks, the sweep of the rest, block buckets, string
// caches and chunks of demangled names filled concurrently) and compares
// each answer with a second Index's: every address of a fixture's
// __TEXT, and random __text addresses of the corpus's C++ crash.dSYM and
// of the darwin cmd/go build when they are there. Run with -race (go
// test -race -run TestConcurrentLookups ./symindex/) it checks that the
// lazy state is shared safely.
func TestConcurrentLookups(t *testing.T) {
	dir := fixtureDir(t)
	type input struct {
		name  string
		paths []string
		all   bool // every address of __TEXT, else random ones of __text
	}
	inputs := []input{{"chain-arm64-O1", []string{filepath.Join(dir, "chain-arm64-O1"), dsymFile(filepath.Join(dir, "chain-arm64-O1.dSYM"))}, true}}
	if corpus, err := testcorpus.Find(); err == nil {
		if f := dsymFile(filepath.Join(corpus, "symbolic/symbolic-testutils/fixtures/macos/crash.dSYM")); f != "" {
			inputs = append(inputs, input{"crash.dSYM", []string{f}, false})
		}
	}
	if bin, err := testcorpus.GoDarwinBinary(); err == nil && !testing.Short() {
		inputs = append(inputs, input{"cmd/go", []string{bin}, false})
	}
	for _, in := range inputs {
		for _, ims := range openImages(t, in.paths...) {
			e, _ := symstore.NewEntry(ims...)
			want, data := roundTrip(t, e)
			ix, err := symindex.Parse(data)
			if err != nil {
				t.Fatal(err)
			}
			var addrs []uint64
			if in.all {
				seg := ims[0].Segments[1]
				for a := seg.Addr; a < seg.Addr+seg.Size; a++ {
					addrs = append(addrs, a)
				}
			} else if text, ok := ims[0].Section("__TEXT", "__text"); ok {
				rng := rand.New(rand.NewPCG(5, 6))
				for range 4000 {
					addrs = append(addrs, text.Addr+rng.Uint64N(text.Size))
				}
			}
			errs := make(chan string, 4)
			for g := 0; g < 4; g++ {
				go func() {
					for k := range addrs {
						a := addrs[(k+g*len(addrs)/4)%len(addrs)] // each goroutine from elsewhere
						got, _ := ix.Lookup(a)
						w, _ := want.Lookup(a)
						if got.Symbol != w.Symbol || !slices.Equal(got.Frames, w.Frames) {
							errs <- fmt.Sprintf("%s: Lookup(%#x) = %+v, want %+v", in.name, a, got, w)
							return
						}
					}
					errs <- ""
				}()
			}
			for g := 0; g < 4; g++ {
				if msg := <-errs; msg != "" {
					t.Error(msg)
				}
			}
		}
	}
}
