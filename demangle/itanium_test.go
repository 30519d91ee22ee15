package demangle

import (
	"debug/dwarf"
	"debug/elf"
	"debug/macho"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	libdemangle "github.com/ianlancetaylor/demangle"

	"github.com/stackimage/stackimage/internal/testcorpus"
)

// libraryDemangle is what Demangle printed before the fast path: the
// library's output, or the name itself when the library fails.
func libraryDemangle(m string) string {
	s, err := libdemangle.ToString(m, maxDemangled, libdemangle.LLVMStyle)
	if err != nil {
		return m
	}
	return s
}

// checkItanium fails t when the fast path accepts m with another output
// than the library's, and reports whether it accepted m.
func checkItanium(t testing.TB, m string) bool {
	t.Helper()
	got, ok := demangleItanium(m)
	if !ok {
		return false
	}
	if want := libraryDemangle(m); got != want {
		t.Errorf("demangleItanium(%q) = %q, library %q", m, got, want)
	}
	return true
}

// TestItaniumTable checks hand-picked manglings that exercise the grammar's
// corners against the library, each of which the fast path must accept, and
// a few against llvm-cxxfilt-16's output, written down, so that a
// misunderstanding the fast path shared with the library would show.
func TestItaniumTable(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mangled string
		cxxfilt string // llvm-cxxfilt-16's output, when checked
	}{
		{"template function return type and T_ substitution", "_ZN7bigdsym9module046L5step3IjLi74EEET_S2_", "unsigned int bigdsym::module046::step3<unsigned int, 74>(unsigned int)"},
		{"const member function of a class template", "_ZNK7bigdsym9module0013AccImLi5EE3sumEv", "bigdsym::module001::Acc<unsigned long, 5>::sum() const"},
		{"substitution of a prefix inside a pointer to const", "_ZN7bigdsym9module0015visitEPKNS0_7Record3Em", "bigdsym::module001::visit(bigdsym::module001::Record3 const*, unsigned long)"},
		{"libc++ vector, S_ for std::__1", "_ZNSt3__16vectorIiNS_9allocatorIiEEE9push_backERKi", "std::__1::vector<int, std::__1::allocator<int>>::push_back(int const&)"},
		{"anonymous namespace", "_ZN12_GLOBAL__N_13fooEv", "(anonymous namespace)::foo()"},
		{"reference to const pointer", "_Z3fooRKPc", "foo(char* const&)"},
		{"function pointers", "_Z1fPFivEPFPciE", "f(int (*)(), char* (*)(int))"},
		{"integer literals of every suffix", "_Z3fooILb1ELj5ELm7ELc65ELin3EEvv", "void foo<true, 5u, 7ul, (char)65, -3>()"},
		{"clone suffixes", "_Z3foov.isra.0", "foo() (.isra.0)"},
		{"operator template gets a space", "_ZStlsISt11char_traitsIcEERSt13basic_ostreamIcT_ES5_PKc", ""},
		{"verbose std::string before a destructor", "_ZNSsD1Ev", ""},
		{"std::string as a type", "_ZNKSs4sizeEv", ""},
		{"qualifiers in reverse order", "_Z1fPrVKi", ""},
		{"ref-qualified member functions", "_ZNVKR1A1fEv", ""},
		{"reference collapse through T_", "_Z1fIRiEvOT_", ""},
		{"substitution numbering past S9_", "_Z1fN1a1b1c1d1e1f1g1h1i1j1kEPS9_PSA_", ""},
		{"T0_ after a pointer to T_", "_Z1fIP1AiEvT_S0_S1_T0_", ""},
		{"nested template arguments", "_ZNSt3__112basic_stringIcNS_11char_traitsIcEENS_9allocatorIcEEE6assignEPKcm", ""},
		{"argument packs, empty and not", "_Z1fIiJEJdcEEvv", ""},
		{"constructor of a template, from a substitution", "_ZNSt3__14pairIKiiEC2ERKS2_", ""},
		{"destructor", "_ZN1AIiED0Ev", ""},
		{"conversion operator", "_ZN1AcvPKcEv", ""},
		{"template data symbol", "_ZN1aIiEE", ""},
		{"internal linkage with a discriminator", "_ZL5count_0v", "count()"},
		{"vtable", "_ZTVN10__cxxabiv117__class_type_infoE", "vtable for __cxxabiv1::__class_type_info"},
		{"typeinfo name", "_ZTSPKc", ""},
		{"variadic", "_Z6printfPKcz", "printf(char const*, ...)"},
		{"void as a template argument is printed", "_Z1fIvEvT_", ""},
		{"std:: unscoped template", "_ZSt4moveIRiEONSt16remove_referenceIT_E4typeEOS2_", ""},
		{"operator new[]", "_Znam", "operator new[](unsigned long)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := demangleItanium(tc.mangled)
			if !ok {
				t.Fatalf("demangleItanium(%q) declined", tc.mangled)
			}
			if want := libraryDemangle(tc.mangled); got != want {
				t.Errorf("demangleItanium(%q) = %q, library %q", tc.mangled, got, want)
			}
			if tc.cxxfilt != "" && got != tc.cxxfilt {
				t.Errorf("demangleItanium(%q) = %q, llvm-cxxfilt-16 %q", tc.mangled, got, tc.cxxfilt)
			}
		})
	}
}

// TestItaniumDeclines checks names outside the subset are declined rather
// than guessed at, and that Demangle still prints them as the library does
// (names over maxLibraryMangled bytes as they are).
func TestItaniumDeclines(t *testing.T) {
	for _, m := range []string{
		"_ZZ4mainENKUlvE_clEv",                   // lambda in a local name
		"_ZN1A1fB5cxx11Ev",                       // ABI tag
		"_Z1fRA10_i",                             // array
		"_Z1fIJidEEvDpT_",                        // pack expansion
		"_ZN3foo17h0123456789abcdefE",            // legacy Rust
		"_Z1fIiEvT0_",                            // template index out of range
		"_ZNK1aE",                                // qualified data: the library prints "a const"
		"_Z3foo.cold",                            // the library fails
		"_Z1fSt",                                 // truncated
		"_ZN1AIiE1fERKS1_",                       // substitution out of range
		"_Z1fILe5EEvv",                           // floating literal
		"_ZThn8_N1A1fEv",                         // thunk
		"_Z1fKS_",                                // qualifiers merged through a substitution (none here: out of range)
		"_Z1fIKiEvKT_",                           // qualifiers the library merges
		"_Z1fIOiEvRT_",                           // && & collapses to a shorter text
		"_ZN1AaSEv" + strings.Repeat("z", 70000), // output over MaxLength
	} {
		if s, ok := demangleItanium(m); ok {
			t.Errorf("demangleItanium(%.60q) = %.60q, want a decline", m, s)
		}
		want := libraryDemangle(m)
		if len(m) > maxLibraryMangled {
			want = m // too long for the library: kept as it is
		}
		if got, _ := Demangle(m); got != want {
			t.Errorf("Demangle(%.60q) = %.60q, want %.60q", m, got, want)
		}
	}
}

// TestItaniumHostile feeds names built to cost: deep nesting, substitutions
// that double the text, long digit runs. The fast path must decline or
// agree with the library, without panicking, and its scratch text must stay
// within the library's output limit.
func TestItaniumHostile(t *testing.T) {
	// Each template argument list repeats the previous type twice.
	var doubling strings.Builder
	doubling.WriteString("_Z1fI1A")
	for i := 0; i < 40; i++ {
		doubling.WriteString("I")
	}
	names := []string{
		"_Z1f" + strings.Repeat("P", 100000) + "i",
		"_Z1f" + strings.Repeat("N1a", 50000) + "E",
		"_Z1f" + strings.Repeat("1aI", 10000) + "i" + strings.Repeat("E", 10000),
		"_Z" + strings.Repeat("9", 100000) + "a",
		"_Z1fILi" + strings.Repeat("1", 100000) + "EEvv",
		"_Z1fS" + strings.Repeat("Z", 100000) + "_",
		doubling.String(),
	}
	// A chain where every type is the previous one twice: 2^30 bytes
	// if written out.
	var chain strings.Builder
	chain.WriteString("_Z1f1A")
	for i := 0; i < 30; i++ {
		chain.WriteString("P1BIS")
		if i == 0 {
			chain.WriteString("_")
		} else {
			chain.WriteString(seqID(3*i - 1))
		}
		chain.WriteString("S")
		chain.WriteString(seqID(3*i - 1))
		chain.WriteString("E")
	}
	names = append(names, chain.String())
	for i, m := range names {
		p := &itanium{}
		p.in, p.pos = m, 2
		s, ok := p.encoding()
		if len(p.buf) > itaniumMaxOutput {
			t.Errorf("%.40q...: scratch text %d bytes, over %d", m, len(p.buf), itaniumMaxOutput)
		}
		if ok {
			if want := libraryDemangle(m); s != want {
				t.Errorf("demangleItanium(%.40q...) = %.60q, library %.60q", m, s, want)
			}
		}
		if i == len(names)-1 && ok {
			t.Errorf("the doubling chain was accepted: %d bytes", len(s))
		}
	}
}

// seqID is the <seq-id> of substitution i (S_ is -1, S0_ is 0).
func seqID(i int) string {
	if i < 0 {
		return "_"
	}
	const digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	var b []byte
	for {
		b = append([]byte{digits[i%36]}, b...)
		i /= 36
		if i == 0 {
			break
		}
	}
	return string(b) + "_"
}

// cppNames returns the Itanium names ("_Z...", Mach-O's extra underscore
// removed) of a Mach-O (thin or fat) or ELF file's symbol tables and its
// DWARF's linkage names; functionNames are those of the DWARF's
// subprograms. Files of other kinds give none.
func cppNames(path string) (names, functionNames []string) {
	add := func(list *[]string, s string) {
		if strings.HasPrefix(s, "__Z") {
			s = s[1:]
		}
		if strings.HasPrefix(s, "_Z") {
			*list = append(*list, s)
		}
	}
	fromDWARF := func(d *dwarf.Data, err error) {
		if err != nil {
			return
		}
		r := d.Reader()
		for {
			e, err := r.Next()
			if err != nil || e == nil {
				return
			}
			for _, a := range []dwarf.Attr{dwarf.AttrLinkageName, 0x2007 /* DW_AT_MIPS_linkage_name */} {
				if s, ok := e.Val(a).(string); ok {
					add(&names, s)
					if e.Tag == dwarf.TagSubprogram {
						add(&functionNames, s)
					}
				}
			}
		}
	}
	fromMacho := func(f *macho.File) {
		if f.Symtab != nil {
			for _, s := range f.Symtab.Syms {
				add(&names, s.Name)
			}
		}
		fromDWARF(f.DWARF())
	}
	if ff, err := macho.OpenFat(path); err == nil {
		defer ff.Close()
		for _, a := range ff.Arches {
			fromMacho(a.File)
		}
	} else if f, err := macho.Open(path); err == nil {
		defer f.Close()
		fromMacho(f)
	} else if f, err := elf.Open(path); err == nil {
		defer f.Close()
		for _, get := range []func() ([]elf.Symbol, error){f.Symbols, f.DynamicSymbols} {
			syms, _ := get()
			for _, s := range syms {
				add(&names, s.Name)
			}
		}
		fromDWARF(f.DWARF())
	}
	return names, functionNames
}

// treeCPPNames returns the distinct Itanium names of every file under dir.
func treeCPPNames(t testing.TB, dir string) []string {
	t.Helper()
	seen := make(map[string]bool)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return err
		}
		names, _ := cppNames(path)
		for _, n := range names {
			seen[n] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// checkAll checks every name against the library and logs the share of
// C++ names the fast path accepted.
func checkAll(t *testing.T, what string, names []string) {
	t.Helper()
	cpp, accepted := 0, 0
	for _, m := range names {
		if Language(m) != LangCPP {
			continue
		}
		cpp++
		if checkItanium(t, m) {
			accepted++
		}
	}
	if cpp == 0 {
		t.Fatalf("%s: no C++ names", what)
	}
	t.Logf("%s: the fast path accepted %d of %d C++ names (%.1f%%)", what, accepted, cpp, 100*float64(accepted)/float64(cpp))
}

// TestItaniumCorpus checks the fast path against the library on every
// Itanium name of the shared corpus: symbol tables and DWARF linkage names.
// (The repository's own fixtures are C, Swift and Go: they hold none.)
func TestItaniumCorpus(t *testing.T) {
	checkAll(t, "corpus", treeCPPNames(t, testcorpus.Dir(t)))
}

// TestItaniumBigDSYM checks the fast path against the library on every
// linkage name of the dSYM bench/bigdsym generates (set STACKIMAGE_BIGDSYM
// to the DWARF file `go run ./bench/bigdsym` prints), and that it accepts
// all its function names but a handful.
func TestItaniumBigDSYM(t *testing.T) {
	path := os.Getenv("STACKIMAGE_BIGDSYM")
	if path == "" {
		t.Skip("set STACKIMAGE_BIGDSYM to the DWARF file `go run ./bench/bigdsym` prints")
	}
	names, functions := cppNames(path)
	checkAll(t, "all linkage names", names)
	seen := make(map[string]bool)
	total, accepted := 0, 0
	for _, m := range functions {
		if seen[m] {
			continue
		}
		seen[m] = true
		total++
		if _, ok := demangleItanium(m); ok {
			accepted++
		}
	}
	t.Logf("function names: %d of %d accepted", accepted, total)
	if total == 0 || accepted < total*999/1000 {
		t.Errorf("the fast path accepted %d of %d function names, want at least 99.9%%", accepted, total)
	}
}

// FuzzItanium checks on any input that the fast path does not panic, keeps
// its scratch text within the library's output limit, and, when it accepts
// a name, prints it as the library does. Seeds are names of the kinds the
// corpus and the generated dSYM hold.
func FuzzItanium(f *testing.F) {
	for _, m := range []string{
		"_ZN7bigdsym9module046L5step3IjLi74EEET_S2_",
		"_ZNK7bigdsym9module0013AccImLi5EE3sumEv",
		"_ZN7bigdsym9module0015visitEPKNS0_7Record3Em",
		"_ZNSt3__16vectorIiNS_9allocatorIiEEE9push_backERKi",
		"_ZNSt3__112basic_stringIcNS_11char_traitsIcEENS_9allocatorIcEEE6assignEPKcm",
		"_ZStlsISt11char_traitsIcEERSt13basic_ostreamIcT_ES5_PKc",
		"_ZN12_GLOBAL__N_13fooEv",
		"_Z1fPFivEPFPciE",
		"_Z3fooILb1ELj5ELm7ELc65ELin3EEvv",
		"_ZNSsD1Ev",
		"_ZNVKR1A1fEv",
		"_Z1fIRiEvOT_",
		"_Z1fIiJEJdcEEvv",
		"_ZNSt3__14pairIKiiEC2ERKS2_",
		"_ZN1AcvPKcEv",
		"_ZTVN10__cxxabiv117__class_type_infoE",
		"_Z3foov.isra.0",
		"_ZZ4mainENKUlvE_clEv",
		"_ZN1A1fB5cxx11Ev",
		"_ZN1AD0C1E",
		"_ZN1AIiEC1IiEC2Ev",
	} {
		f.Add(m)
	}
	f.Fuzz(func(t *testing.T, m string) {
		p := &itanium{}
		p.in, p.pos = m, 2
		if !strings.HasPrefix(m, "_Z") {
			if _, ok := demangleItanium(m); ok {
				t.Fatalf("demangleItanium(%q) accepted a name without _Z", m)
			}
			return
		}
		s, ok := p.encoding()
		if len(p.buf) > itaniumMaxOutput {
			t.Fatalf("%q: scratch text %d bytes, over %d", m, len(p.buf), itaniumMaxOutput)
		}
		if got, ok2 := demangleItanium(m); ok2 != ok && !mayBeLegacyRust(m) || ok2 && got != s {
			t.Fatalf("demangleItanium(%q) = %q, %v; the parser alone %q, %v", m, got, ok2, s, ok)
		}
		if ok && !mayBeLegacyRust(m) {
			if want := libraryDemangle(m); s != want {
				t.Fatalf("demangleItanium(%q) = %q, library %q", m, s, want)
			}
		}
	})
}
