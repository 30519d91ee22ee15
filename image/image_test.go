package image

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// sliceFacts are what llvm-objdump-16 --macho (--private-headers,
// --function-starts, --exports-trie) reports for a slice of a corpus file,
// copied here once by hand.
type sliceFacts struct {
	Arch           string
	UUID           string
	Type           FileType
	NSyms          int
	StrSize        int
	FunctionStarts []uint64
	Exports        []Export
}

func TestOpenCorpusFacts(t *testing.T) {
	tests := []struct {
		name   string
		path   string
		fat    bool
		slices []sliceFacts
	}{
		{
			name: "dylib with chained fixups and exports trie",
			path: "object-testfiles/macho/libexports.dylib",
			slices: []sliceFacts{{
				Arch: "arm64", UUID: "9C742D58-DBB2-3301-BD99-783093D2EF76", Type: TypeDylib,
				NSyms: 10, StrSize: 136, FunctionStarts: []uint64{0x460, 0x464, 0x468},
				// _abs (absolute) and the two re-exports are left out; _foo
				// is a stub-and-resolver export at its stub.
				Exports: []Export{{"_foo_resolver", 0x464}, {"_weak", 0x468}, {"_foo", 0x46c}, {"_tls", 0x4008}},
			}},
		},
		{
			name: "arm64e dylib",
			path: "object-testfiles/macho/fixup-chains-arm64e.dylib",
			slices: []sliceFacts{{
				Arch: "arm64e", UUID: "56D739F7-3B1E-3BE7-8530-5408500A225A", Type: TypeDylib,
				NSyms: 6, StrSize: 48, FunctionStarts: []uint64{0x3c8}, Exports: []Export{{"_h", 0x4000}},
			}},
		},
		{
			name: "armv7k dylib, Thumb function start",
			path: "object-testfiles/macho/fixup-chains-armv7k.dylib",
			slices: []sliceFacts{{
				Arch: "armv7k", UUID: "5029D594-88F3-3883-8BAD-CF4A91716A30", Type: TypeDylib,
				NSyms: 6, StrSize: 44, FunctionStarts: []uint64{0x7fb7}, Exports: []Export{{"_h", 0x8000}},
			}},
		},
		{
			name: "x86_64 executable with dyld info",
			path: "object-testfiles/macho/base-x86_64",
			slices: []sliceFacts{{
				Arch: "x86_64", UUID: "ABA4A990-5C28-30B4-84B3-898E5D6704BE", Type: TypeExecute,
				NSyms: 5, StrSize: 72, FunctionStarts: []uint64{0x100003f60},
				Exports: []Export{{"__mh_execute_header", 0x100000000}, {"_main", 0x100003f60}},
			}},
		},
		{
			name: "x86_64 bundle",
			path: "object-testfiles/macho/imports-dyldinfo.bundle",
			slices: []sliceFacts{{
				Arch: "x86_64", UUID: "8F22C878-082E-3ACB-A102-ED5352F5812A", Type: TypeBundle,
				NSyms: 9, StrSize: 120, FunctionStarts: []uint64{0x480, 0x490, 0x4a0},
				Exports: []Export{{"_interposable", 0x480}, {"_weak_lookup", 0x490}, {"_use_imports", 0x4a0}},
			}},
		},
		{
			name: "static i386 executable",
			path: "object-testfiles/macho/static-x86",
			slices: []sliceFacts{{
				Arch: "i386", UUID: "4F71AC77-9230-35F1-A203-63A37BF1AF96", Type: TypeExecute, NSyms: 2, StrSize: 28,
			}},
		},
		{
			name: "Go executable without LC_UUID",
			path: "object-testfiles/macho/go-aarch64",
			slices: []sliceFacts{{
				Arch: "arm64", UUID: "00000000-0000-0000-0000-000000000000", Type: TypeExecute, NSyms: 2168, StrSize: 51936,
			}},
		},
		{
			name: "object file",
			path: "object-testfiles/macho/base-aarch64-debug.o",
			slices: []sliceFacts{{
				Arch: "arm64", UUID: "00000000-0000-0000-0000-000000000000", Type: TypeObject, NSyms: 6, StrSize: 40,
			}},
		},
		{
			name: "dSYM",
			path: "pprof/internal/binutils/testdata/lib_mac_64.dSYM/Contents/Resources/DWARF/lib_mac_64",
			slices: []sliceFacts{{
				Arch: "x86_64", UUID: "92CB1C47-2D70-3604-B9E6-EF3F92DFB720", Type: TypeDSYM, NSyms: 2, StrSize: 12,
			}},
		},
		{
			name: "fat executable",
			path: "macsymbolicator/MacSymbolicatorTests/Binaries/CrashingTest",
			fat:  true,
			slices: []sliceFacts{
				{Arch: "x86_64", UUID: "01D2A9D5-1F8A-35C8-9228-7C7CCA13C5FC", Type: TypeExecute, NSyms: 13, StrSize: 264,
					FunctionStarts: []uint64{0x100003e14, 0x100003e41, 0x100003e52},
					Exports:        []Export{{"__mh_execute_header", 0x100000000}}},
				{Arch: "arm64", UUID: "562DB6C8-8D3C-3B67-9511-F3C108BDEAB2", Type: TypeExecute, NSyms: 13, StrSize: 264,
					FunctionStarts: []uint64{0x100003d90, 0x100003dc4, 0x100003dd0},
					Exports:        []Export{{"__mh_execute_header", 0x100000000}}},
			},
		},
		{
			name: "fat dylib with armv7s",
			path: "plcrashreporter/Resources/Tests/PLCrashAsyncCompactUnwindEncodingTests/test.ios",
			fat:  true,
			slices: []sliceFacts{
				{Arch: "armv7", UUID: "4C956A4F-9518-3815-BAFB-837DC47C448C", Type: TypeDylib},
				{Arch: "armv7s", UUID: "CDEA555A-9BEC-363E-8B35-60B352144256", Type: TypeDylib},
				{Arch: "arm64", UUID: "5CA74214-F344-3EC8-813C-43345265EE2B", Type: TypeDylib},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Open(corpusFile(t, tt.path))
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer f.Close()
			if f.Fat != tt.fat {
				t.Errorf("Fat = %v, want %v", f.Fat, tt.fat)
			}
			var got []sliceFacts
			for _, im := range f.Images {
				sf := sliceFacts{Arch: im.ArchName(), UUID: im.UUID.String(), Type: im.Type}
				raw, ok, err := im.Symtab()
				if err != nil || !ok {
					t.Fatalf("%s: Symtab() = ok %v, err %v", sf.Arch, ok, err)
				}
				sf.NSyms, sf.StrSize = raw.NSyms, len(raw.Strings)
				if want := raw.NSyms * map[bool]int{true: 16, false: 12}[raw.Is64]; len(raw.Syms) != want {
					t.Errorf("%s: len(Syms) = %d, want %d", sf.Arch, len(raw.Syms), want)
				}
				if sf.FunctionStarts, err = im.FunctionStarts(); err != nil {
					t.Errorf("%s: FunctionStarts: %v", sf.Arch, err)
				}
				if sf.Exports, err = im.Exports(); err != nil {
					t.Errorf("%s: Exports: %v", sf.Arch, err)
				}
				got = append(got, sf)
			}
			if tt.slices[0].NSyms == 0 { // facts for the fat dylib are UUIDs only
				for i := range got {
					got[i].NSyms, got[i].StrSize, got[i].FunctionStarts, got[i].Exports = 0, 0, nil, nil
				}
			}
			if diff := cmp.Diff(tt.slices, got); diff != "" {
				t.Errorf("slices of %s (-want +got):\n%s", tt.path, diff)
			}
		})
	}
}

func TestSegmentsAndSections(t *testing.T) {
	f, err := Open(corpusFile(t, "object-testfiles/macho/libexports.dylib"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	im := f.Images[0]
	// From llvm-objdump-16 --macho --private-headers.
	wantSegs := []Segment{
		{Name: "__TEXT", Addr: 0, Size: 0x4000, Offset: 0, FileSize: 16384, MaxProt: 5, Prot: 5},
		{Name: "__DATA", Addr: 0x4000, Size: 0x4000, Offset: 16384, FileSize: 16384, MaxProt: 3, Prot: 3},
		{Name: "__LINKEDIT", Addr: 0x8000, Size: 0x4000, Offset: 32768, FileSize: 976, MaxProt: 1, Prot: 1},
	}
	if diff := cmp.Diff(wantSegs, im.Segments); diff != "" {
		t.Errorf("Segments (-want +got):\n%s", diff)
	}
	var names []string
	for i, s := range im.Sections {
		if s.Index != i+1 {
			t.Errorf("Sections[%d].Index = %d, want %d", i, s.Index, i+1)
		}
		names = append(names, s.Segment+","+s.Name)
	}
	wantNames := []string{"__TEXT,__text", "__TEXT,__stubs", "__TEXT,__resolver_help",
		"__DATA,__la_symbol_ptr", "__DATA,__thread_vars", "__DATA,__thread_data"}
	if diff := cmp.Diff(wantNames, names); diff != "" {
		t.Errorf("Sections (-want +got):\n%s", diff)
	}
	text, ok := im.TextSegment()
	if !ok || text.Name != "__TEXT" {
		t.Errorf("TextSegment() = %q, %v, want __TEXT, true", text.Name, ok)
	}
	if got := im.Slide(0x104cc8000); got != 0x104cc8000 {
		t.Errorf("Slide(0x104cc8000) = %#x, want 0x104cc8000", got)
	}
	if im.Arch == nil || im.Arch.Name != "arm64" {
		t.Errorf("Arch = %v, want arm64", im.Arch)
	}
	if im.CPUType != 0x0100000c || im.CPUSubtype != 0 {
		t.Errorf("CPUType, CPUSubtype = %#x, %#x, want 0x100000c, 0", im.CPUType, im.CPUSubtype)
	}
}

func TestSectionFor(t *testing.T) {
	f, err := Open(corpusFile(t, "object-testfiles/macho/libexports.dylib"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	im := f.Images[0]
	tests := []struct {
		name string
		addr uint64
		want string // "" for none
	}{
		{"before first section", 0x45f, ""},
		{"first byte of __text", 0x460, "__text"},
		{"last byte of __text", 0x46b, "__text"},
		{"first byte of __stubs", 0x46c, "__stubs"},
		{"last byte of __resolver_help", 0x478 + 99, "__resolver_help"},
		{"just past __resolver_help", 0x478 + 100, ""},
		{"__thread_vars", 0x4010, "__thread_vars"},
		{"end of __thread_data", 0x4024, ""},
		{"far away", 0xffffffffffffffff, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, ok := im.SectionFor(tt.addr)
			if ok != (tt.want != "") || s.Name != tt.want {
				t.Errorf("SectionFor(%#x) = %q, %v, want %q", tt.addr, s.Name, ok, tt.want)
			}
		})
	}
}

func TestObjectFile(t *testing.T) {
	f, err := Open(corpusFile(t, "object-testfiles/macho/base-aarch64-debug.o"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	im := f.Images[0]
	if len(im.Segments) != 1 || im.Segments[0].Name != "" {
		t.Fatalf("Segments = %+v, want one unnamed segment", im.Segments)
	}
	text, ok := im.TextSegment()
	if !ok || text != im.Segments[0] {
		t.Errorf("TextSegment() = %+v, %v, want the unnamed segment", text, ok)
	}
	dw, err := im.DWARFSections()
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range dw {
		keys = append(keys, k)
	}
	// Section sizes from llvm-objdump-16 --macho --section-headers.
	wantSizes := map[string]int{"debug_abbrev": 0x3a, "debug_info": 0x53, "debug_str": 0xcb,
		"apple_names": 0x3c, "apple_objc": 0x24, "apple_namespace": 0x24, "apple_types": 0x47, "debug_line": 0x42}
	gotSizes := map[string]int{}
	for k, v := range dw {
		gotSizes[k] = len(v)
	}
	if diff := cmp.Diff(wantSizes, gotSizes); diff != "" {
		t.Errorf("DWARFSections sizes (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(string(dw["debug_str"]), "Apple clang") && !strings.Contains(string(dw["debug_str"]), "clang") {
		t.Errorf("debug_str = %q..., want the producer string", dw["debug_str"][:20])
	}
}
