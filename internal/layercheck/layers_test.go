package layercheck

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/stackimage/stackimage/"

// layers are docs/architecture.md's layers, by package path inside the
// module; a package in none of them (bench drivers, the emulator, the
// fixtures' tools) is not checked.
var layers = map[string]int{
	"dump": 1, "snapshot": 1, "crashreport": 1, "hangreport": 1, "minidump": 1, "machocore": 1,
	"image": 1, "debuginfo": 1, "symtab": 1, "symindex": 1, "breakpadsym": 1,
	"walker": 1, "unwind": 1, "unwind/compactunwind": 1, "unwind/dwarfcfi": 1,
	"archregs": 1, "uuid": 1, "lookup": 1, "demangle": 1, "swiftdemangle": 1,
	"plcrash":   1,
	"metrickit": 1,
	"symstore":  2, "symbolize": 2, "symstore/objstore": 2, "symstore/remote": 2, "symstore/indexcache": 2,
	"open": 3, "report": 3, "atos": 3, "aggregate": 3, "symbolicator": 3, "aggregate/chunkstore": 3,
	"serve": 4, "cmd/stackimage": 4,
}

// forbidden are the imports the doc rules out within a layer or by name.
var forbidden = map[string][]string{
	// symstore stands on none of its subpackages: the library's symbol
	// store needs no S3 client, Prometheus or the service's cache.
	"symstore": {"symbolize", "symstore/objstore", "symstore/remote", "symstore/indexcache"},
	// The object stores know keys and bytes, not symbol files.
	"symstore/objstore": {"symstore", "symstore/remote", "symstore/indexcache", "symbolize"},
	"symstore/remote":   {"symstore/indexcache", "symbolize"},
	"open":              {"report", "symbolize", "symstore"},
	"atos":              {"open", "report"},
	// symbolicator's wire format is a dump in and symbolize's threads out:
	// what reads files and writes reports stays out of it.
	// It writes modules from a neutral Found, not the service's cache.
	"symbolicator": {"open", "report", "aggregate", "symstore/indexcache"},
	"dump":         {"snapshot", "crashreport", "hangreport", "minidump", "machocore", "image"},
	"walker":       {"image", "symtab"},
	"snapshot":     {"crashreport", "hangreport", "minidump", "machocore"},
	"crashreport":  {"snapshot", "hangreport", "minidump", "machocore"},
	"hangreport":   {"snapshot", "crashreport", "minidump", "machocore"},
	"minidump":     {"snapshot", "crashreport", "hangreport", "machocore"},
	"machocore":    {"snapshot", "crashreport", "hangreport", "minidump"},
	"plcrash":      {"snapshot", "crashreport", "hangreport", "minidump", "machocore"},
	"metrickit":    {"snapshot", "crashreport", "hangreport", "minidump", "machocore", "image"},
	// Names come from demangle alone: it stands on swiftdemangle and on no
	// symbol-file reader, so that printing a name needs none of them.
	"demangle": {"image", "debuginfo", "symtab", "symindex", "breakpadsym"},
	// aggregate names frames as symbolize does, through symstore.
	"aggregate": {"debuginfo", "symtab"},
	// The chunk store stands on aggregate and an object store interface of
	// its own: it knows neither the service nor where the store's objects
	// live.
	"aggregate/chunkstore": {"symstore/objstore"},
}

// importsOf lists each package of the module with the module packages and
// the go-macho packages it imports (tests excluded: a test may reach up).
func importsOf(t *testing.T) map[string][]string {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the packages with")
	}
	out, err := exec.Command(goCmd, "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], module)
		pkgs[pkg] = nil
		for _, imp := range fields[1:] {
			switch {
			case strings.HasPrefix(imp, module):
				pkgs[pkg] = append(pkgs[pkg], strings.TrimPrefix(imp, module))
			case strings.HasPrefix(imp, "github.com/blacktop/go-macho"):
				pkgs[pkg] = append(pkgs[pkg], imp)
			}
		}
	}
	return pkgs
}

func TestLayers(t *testing.T) {
	pkgs := importsOf(t)
	for name := range layers {
		if _, ok := pkgs[name]; !ok {
			t.Errorf("docs/architecture.md's package %s is not in the module: update the table", name)
		}
	}
	for pkg, imports := range pkgs {
		for _, imp := range imports {
			switch {
			case strings.HasPrefix(imp, "github.com/blacktop/go-macho") && pkg != "image":
				t.Errorf("%s imports %s: only image reads Mach-O through go-macho", pkg, imp)
			case strings.HasPrefix(imp, "cmd/"):
				t.Errorf("%s imports %s: nothing imports a command", pkg, imp)
			case imp == "aggregate" && pkg != "serve" && pkg != "aggregate/chunkstore" && !strings.HasPrefix(pkg, "cmd/") && !strings.HasPrefix(pkg, "bench/"):
				t.Errorf("%s imports aggregate: only programs, serve and aggregate/chunkstore do", pkg)
			case imp == "symstore/indexcache" && pkg != "serve" && !strings.HasPrefix(pkg, "cmd/") && !strings.HasPrefix(pkg, "bench/"):
				t.Errorf("%s imports symstore/indexcache, the service's cache: only programs and serve do", pkg)
			}
			from, ok := layers[pkg]
			to, known := layers[imp]
			if ok && known && to > from {
				t.Errorf("%s (layer %d) imports %s (layer %d): a package imports only its own layer or those under it", pkg, from, imp, to)
			}
			if slices.Contains(forbidden[pkg], imp) {
				t.Errorf("%s imports %s, which docs/architecture.md rules out", pkg, imp)
			}
		}
	}
	for pkg, imports := range pkgs {
		if strings.HasPrefix(pkg, "internal/") && layers[pkg] == 0 {
			for _, imp := range imports {
				if layers[imp] > 1 {
					t.Errorf("%s imports %s (layer %d): internal helpers sit in layer 1", pkg, imp, layers[imp])
				}
			}
		}
	}
}
