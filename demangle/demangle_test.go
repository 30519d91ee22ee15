package demangle

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDemangle(t *testing.T) {
	tests := []struct {
		name, in, want string
		lang           Lang
	}{
		{"C++ from DWARF", "_ZN15google_breakpad18MinidumpFileWriterC2Ev", "google_breakpad::MinidumpFileWriter::MinidumpFileWriter()", LangCPP},
		{"C++ Mach-O underscore", "__ZN15google_breakpad18MinidumpFileWriterC2Ev", "google_breakpad::MinidumpFileWriter::MinidumpFileWriter()", LangCPP},
		{"C++ LLVM style", "_ZNKSt3__16vectorIhNS_9allocatorIhEEE4sizeEv", "std::__1::vector<unsigned char, std::__1::allocator<unsigned char>>::size() const", LangCPP},
		{"C++ malformed kept", "_ZN3foo", "_ZN3foo", LangCPP},
		{"Rust legacy", "_ZN4core3fmt5write17h0123456789abcdefE", "core::fmt::write", LangRust},
		{"Rust v0", "_RNvCs1234_7mycrate3foo", "mycrate::foo", LangRust},
		{"Swift 5", "$s4main3fooyyF", "foo()", LangSwift},
		{"Swift Mach-O", "_$s4main3fooyyF", "foo()", LangSwift},
		{"Swift 4.0", "__T04main3fooyyF", "foo()", LangSwift},
		{"Swift crash-report style", "_$s15iOSCrashingTest10CrashClassC06pleaseC0yyFZTf4d_n", "specialized static CrashClass.pleaseCrash()", LangSwift},
		{"Swift malformed kept", "$s4main9foo", "$s4main9foo", LangSwift},
		{"ObjC instance", "-[MyClass crashingMethod]", "-[MyClass crashingMethod]", LangObjC},
		{"ObjC class", "+[NSObject load]", "+[NSObject load]", LangObjC},
		{"C", "main", "main", LangC},
		{"C Mach-O", "_main", "_main", LangC},
		{"empty", "", "", LangC},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, lang := Demangle(tt.in)
			if diff := cmp.Diff(tt.want, got); diff != "" || lang != tt.lang {
				t.Errorf("Demangle(%q) = %q, %q, want %q, %q", tt.in, got, lang, tt.want, tt.lang)
			}
		})
	}
}

// FuzzDemangle checks that no name panics the demangler or grows without
// bound.
func FuzzDemangle(f *testing.F) {
	for _, s := range []string{"_ZN15google_breakpad18MinidumpFileWriterC2Ev", "__ZNKSt3__16vectorIhNS_9allocatorIhEEE4sizeEv",
		"_RNvCs1234_7mycrate3foo", "_ZN4core3fmt5write17h0123456789abcdefE", "$s4main3fooyyF", "-[A b]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		got, _ := Demangle(name)
		if len(got) > 1<<16+len(name) {
			t.Errorf("Demangle(%q) returned %d bytes", name, len(got))
		}
	})
}

// TestDemangleLongNamesKept: a name over maxLibraryMangled bytes that the
// one-pass demangler declines is returned unchanged instead of handed to
// the library (whose time grows with its square), and one just under the
// bound is still demangled by the library.
func TestDemangleLongNamesKept(t *testing.T) {
	long := "_Z1f" + strings.Repeat("P", 100_000) + "i"
	if s, lang := Demangle(long); s != long || lang != LangCPP {
		t.Errorf("Demangle(100,000 P's) = %.40q..., %s; want the name unchanged, C++", s, lang)
	}
	if _, ok := demangleItanium(long[:maxLibraryMangled-1] + "i"); ok {
		t.Fatal("the one-pass demangler accepts the long pointer chain: pick a name it declines")
	}
	// A lambda (declined by the one-pass demangler) in a name just under
	// the bound.
	pad := strings.Repeat("a", maxLibraryMangled-40)
	under := "_ZZ" + fmt.Sprint(len(pad)) + pad + "vENKUlvE_clEv"
	if len(under) > maxLibraryMangled {
		t.Fatalf("test name is %d bytes, over the bound", len(under))
	}
	if _, ok := demangleItanium(under); ok {
		t.Fatalf("the one-pass demangler accepts %.40q...: pick a name it declines", under)
	}
	got, _ := Demangle(under)
	if want := libraryDemangle(under); got != want || got == under {
		t.Errorf("Demangle(lambda name of %d bytes) = %.60q..., want the library's %.60q...", len(under), got, want)
	}
}
