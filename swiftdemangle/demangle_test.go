package swiftdemangle

import (
	"errors"
	"strings"
	"testing"
)

// doublingDictionaries nests Dictionary<T, T> levels deep, each level
// naming the one below twice through a substitution, so its printed form
// doubles with every 7 mangled bytes.
func doublingDictionaries(levels int) string {
	var b strings.Builder
	b.WriteString("$sSDyS2iG")
	for i := 0; i < levels; i++ {
		b.WriteString("SDyA2" + string(rune('A'+i)) + "G")
	}
	return b.String()
}

// Names from real iOS binaries and the forms Apple's tools print for them.
func TestDemangleAppSymbols(t *testing.T) {
	tests := []struct {
		name, mangled string
		style         Style
		want          string
	}{
		{"specialized static", "$s15iOSCrashingTest10CrashClassC06pleaseC0yyFZTf4d_n", Simplified, "specialized static CrashClass.pleaseCrash()"},
		{"specialized static full", "$s15iOSCrashingTest10CrashClassC06pleaseC0yyFZTf4d_n", Full,
			"function signature specialization <Arg[0] = Dead> of static iOSCrashingTest.CrashClass.pleaseCrash() -> ()"},
		{"@objc thunk", "_$s5MyApp14ViewControllerC11viewDidLoadyyFTo", Simplified, "@objc ViewController.viewDidLoad()"},
		{"closure", "_$s5MyApp14ViewControllerC11viewDidLoadyyFyycfU_", Simplified, "closure #1 in ViewController.viewDidLoad()"},
		{"partial apply", "_$s5MyApp14ViewControllerC11viewDidLoadyyFyycfU_TA", Simplified, "partial apply for closure #1 in ViewController.viewDidLoad()"},
		{"argument labels", "_$s5MyApp14ViewControllerC3foo3barySi_tF", Simplified, "ViewController.foo(bar:)"},
		{"argument labels full", "_$s5MyApp14ViewControllerC3foo3barySi_tF", Full, "MyApp.ViewController.foo(bar: Swift.Int) -> ()"},
		{"cold split suffix", "_$s5MyApp14ViewControllerC3foo3barySi_tF.cold.1", Simplified, "ViewController.foo(bar:)"},
		{"cold split suffix full", "_$s5MyApp14ViewControllerC3foo3barySi_tF.cold.1", Full, `MyApp.ViewController.foo(bar: Swift.Int) -> () with unmangled suffix ".cold.1"`},
		{"Mach-O underscore", "_$s15iOSCrashingTest10CrashClassC06pleaseC0yyFZTf4d_n", Simplified, "specialized static CrashClass.pleaseCrash()"},
		{"labels only", "$s8mangling14varargsVsArray3arr1nySaySiGd_SStF", Simplified, "varargsVsArray(arr:n:)"},
		{"name only", "$s8mangling14varargsVsArray3arr1nySaySiGd_SStF", NameOnly, "varargsVsArray"},
		{"with types", "$s8mangling14varargsVsArray3arr1nySaySiGd_SStF", SimplifiedTypes, "varargsVsArray(arr: [Int]..., n: String)"},
		{"punycode", "$s8mangling0030Proprostnemluvesky_uybCEdmaEBayyF", Full, "mangling.Pročprostěnemluvíčesky() -> ()"},
		{"Swift 4.0", "__T08mangling3ZimC4zangyx_qd__tlF", Full, "mangling.Zim.zang<A>(A, A1) -> ()"},
		{"Swift 3", "__TFC3foo3bar3basfT3zimCS_3zim_T_", Simplified, "bar.bas(zim:)"},
		{"ObjC class name", "_TtC10attributes10SwiftClass", Full, "attributes.SwiftClass"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Demangle(tt.mangled, tt.style)
			if err != nil || got != tt.want {
				t.Errorf("Demangle(%q, %d) = %q, %v; want %q", tt.mangled, tt.style, got, err, tt.want)
			}
		})
	}
}

func TestDemangleErrors(t *testing.T) {
	tests := []struct {
		name, mangled string
		want          error
	}{
		{"C", "main", ErrNotMangled},
		{"C++", "_ZN3foo3barEv", ErrNotMangled},
		{"old mangling, truncated", "_TF3foog3bar", ErrMalformed},
		{"identifier past the end", "$s8mangling3Zi", ErrMalformed},
		{"unknown operator", "$s8mangling3ZimC4zangyy$F", ErrMalformed},
		{"repetition counts", "$s" + strings.Repeat("S2048i", 40), ErrTooComplex},
		{"doubling substitutions", doublingDictionaries(24), ErrTooComplex},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Demangle(tt.mangled, Full)
			if !errors.Is(err, tt.want) {
				if len(got) > 200 {
					got = got[:200] + "..."
				}
				t.Errorf("Demangle(%q) = %q, %v; want error %v", tt.mangled, got, err, tt.want)
			}
		})
	}
}

// Demangle reuses pooled buffers; concurrent callers must not see each
// other's output.
func TestDemangleConcurrent(t *testing.T) {
	want := make([]string, len(appSymbols))
	for i, s := range appSymbols {
		var err error
		if want[i], err = Demangle(s, Full); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan struct{})
	for g := 0; g < 4; g++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for n := 0; n < 200; n++ {
				i := (n + g) % len(appSymbols)
				if got, err := Demangle(appSymbols[i], Full); err != nil || got != want[i] {
					t.Errorf("Demangle(%q) = %q, %v; want %q", appSymbols[i], got, err, want[i])
					return
				}
			}
		}()
	}
	for g := 0; g < 4; g++ {
		<-done
	}
}

func TestIsMangled(t *testing.T) {
	for _, tt := range []struct {
		name string
		want bool
	}{
		{"$s4main3fooyyF", true}, {"_$s4main3fooyyF", true}, {"$S4main3fooyyF", true},
		{"_T04main3fooyyF", true}, {"__T04main3fooyyF", true}, {"_TtC3foo3bar", true},
		{"$e4main3fooyyF", true}, {"main", false}, {"_ZN3foo3barEv", false}, {"", false},
	} {
		if got := IsMangled(tt.name); got != tt.want {
			t.Errorf("IsMangled(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestManglingPrefixLength(t *testing.T) {
	for _, tt := range []struct {
		name string
		want int
	}{
		{"$s4main", 2}, {"$S4main", 2}, {"$e4main", 2}, {"_$s4main", 3}, {"_$S4main", 3},
		{"_$e4main", 3}, {"_T04main", 3}, {"@__swiftmacro_4main", 14},
		{"", 0}, {"$", 0}, {"$x", 0}, {"_$", 0}, {"_$x", 0}, {"_T", 0}, {"_T1", 0},
		{"@__swiftmacro", 0}, {"s4main", 0},
	} {
		if got := manglingPrefixLength(tt.name); got != tt.want {
			t.Errorf("manglingPrefixLength(%q) = %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestParseTree(t *testing.T) {
	root, err := Parse("$s4main3fooyyF")
	if err != nil {
		t.Fatal(err)
	}
	fn := root.Children[0]
	if root.Kind != KindGlobal || fn.Kind != KindFunction || fn.Kind.String() != "Function" {
		t.Fatalf("Parse: root %v, first child %v; want Global, Function", root.Kind, fn.Kind)
	}
	if mod, name := fn.Children[0], fn.Children[1]; !mod.HasText() || mod.Text != "main" || name.Text != "foo" || name.HasIndex() {
		t.Errorf("Parse: context %q, name %q; want main, foo", mod.Text, name.Text)
	}
	if got := root.String(Simplified); got != "foo()" {
		t.Errorf("String(Simplified) = %q, want %q", got, "foo()")
	}
}

// TestPooledDemangler checks that a demangler reused after a huge name
// gives the same answers as a fresh one, and that what it keeps for the
// pool stays within the pool's limits.
func TestPooledDemangler(t *testing.T) {
	huge := "$s4main3fooyySi_" + strings.Repeat("Si", 5000) + "tF" // a 5001-tuple: 25k nodes
	d := new(demangler)
	for i, name := range append([]string{huge}, appSymbols...) {
		d.reset()
		root, err := parseWith(d, name)
		if err != nil {
			t.Fatalf("parse %q: %v", name, err)
		}
		if i == 0 && (d.count() <= maxPooledNodes || cap(d.stack) <= maxPooledSlots) {
			t.Fatalf("the huge name made %d nodes and a stack of %d; the test needs more than the pool keeps", d.count(), cap(d.stack))
		}
		got, _ := root.format(Full)
		d.release()
		if i > 0 {
			want, err := Parse(name)
			if err != nil {
				t.Fatal(err)
			}
			if w := want.String(Full); got != w {
				t.Errorf("reused demangler: %q printed %q, want %q", name, got, w)
			}
		}
		if cap(d.nodes) > maxPooledNodes || cap(d.kids) > maxPooledSlots || cap(d.stack) > maxPooledSlots ||
			cap(d.subst) > maxPooledSlots || cap(d.wordSources) > maxPooledSlots ||
			cap(d.out) > maxPooledBytes || cap(d.scratch) > maxPooledBytes || d.text != "" {
			t.Errorf("after %.40q the pooled demangler keeps %d nodes, %d kids, %d stack, %d subst, %d word sources, %d+%d bytes, text %q",
				name, cap(d.nodes), cap(d.kids), cap(d.stack), cap(d.subst), cap(d.wordSources), cap(d.out), cap(d.scratch), d.text)
		}
	}
}

// TestPooledSlabIsKept checks that a name of a size the pool keeps slabs
// for is demangled, once the slabs have grown, without new ones.
func TestPooledSlabIsKept(t *testing.T) {
	name := "$s4main3fooyySi_" + strings.Repeat("Si", 190) + "tF" // about 960 nodes
	d := new(demangler)
	var slab *nodeBox
	for i := 0; i < 3; i++ {
		d.reset()
		if _, err := parseWith(d, name); err != nil {
			t.Fatal(err)
		}
		if n := d.count(); n > maxPooledNodes || n < maxPooledNodes*3/4 {
			t.Fatalf("the name made %d nodes; the test needs a few less than %d", n, maxPooledNodes)
		}
		d.release()
		if i == 1 {
			slab = &d.nodes[:1][0]
		}
	}
	if slab == nil || cap(d.nodes) == 0 || &d.nodes[:1][0] != slab {
		t.Errorf("the third demangling of a %d-node name got a new node slab", d.count())
	}
}
