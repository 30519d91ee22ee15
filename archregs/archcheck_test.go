package archregs

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestNoArchSwitchOutsideArchregs keeps per-architecture behaviour in this
// package: it parses every non-test Go file of the module outside archregs
// and fails on code that picks behaviour by naming an architecture:
//
//   - a switch on an architecture: its tag is an Arch's CPUType, or a case
//     names an architecture (archregs.ARM64, archregs.CPUTypeARM, ...) or
//     is an architecture's name as a string ("arm64");
//   - an identity check: == or != against archregs.ARM64 (any Arch
//     variable or CPUType constant), or of an Arch's Name against an
//     architecture's name;
//   - a side table keyed by architecture: a map whose key is *archregs.Arch,
//     or a composite literal keyed by an Arch variable or CPUType constant.
//
// A site that must stay (a format's own vocabulary, a parser's encoding
// keyed by the CPU type its header defines it for) carries a comment
// containing "archcheck:" and the reason, on its line or ending on the line
// above.
// A line holds at most one site of each kind. Test files are not checked:
// a test names the architecture it tests. Run
// `go test ./archregs -run NoArchSwitch -v` to list what it sees.
func TestNoArchSwitchOutsideArchregs(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Skip("module root not found")
	}
	sites, justified := findArchSites(t, root)
	for _, s := range justified {
		t.Logf("justified: %s", s)
	}
	for _, s := range sites {
		t.Errorf("%s: per-architecture behaviour outside archregs: make it a field or method of archregs.Arch, or justify it with an `archcheck:` comment", s)
	}
	t.Logf("%d sites outside archregs, %d of them justified", len(sites)+len(justified), len(justified))
}

// findArchSites returns the sites the test rejects and the justified ones,
// as "file:line: kind".
func findArchSites(t *testing.T, root string) (sites, justified []string) {
	archVars := map[string]bool{}
	archNames := map[string]bool{}
	for _, a := range All {
		archNames[a.Name] = true
	}
	for _, n := range []string{"ARM64", "ARM64E", "ARMV7", "X86_64", "I386"} {
		archVars[n] = true
	}
	// isArch reports whether e names one architecture: archregs.ARM64 or a
	// CPUType constant.
	isArch := func(e ast.Expr) bool {
		sel, ok := e.(*ast.SelectorExpr)
		if !ok {
			return false
		}
		pkg, ok := sel.X.(*ast.Ident)
		if !ok || pkg.Name != "archregs" {
			return false
		}
		return archVars[sel.Sel.Name] || strings.HasPrefix(sel.Sel.Name, "CPUType")
	}
	isArchName := func(e ast.Expr) bool {
		lit, ok := e.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return false
		}
		s, err := strconv.Unquote(lit.Value)
		return err == nil && archNames[s]
	}
	isSelector := func(e ast.Expr, names ...string) bool {
		sel, ok := e.(*ast.SelectorExpr)
		if !ok {
			return false
		}
		for _, n := range names {
			if sel.Sel.Name == n {
				return true
			}
		}
		return false
	}

	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			base := d.Name()
			if rel == "archregs" || base == "testdata" || base == "vendor" || (strings.HasPrefix(base, ".") && rel != ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		// Lines holding an archcheck: justification.
		ok := map[int]bool{}
		for _, cg := range f.Comments {
			if strings.Contains(cg.Text(), "archcheck:") {
				for l := fset.Position(cg.Pos()).Line; l <= fset.Position(cg.End()).Line; l++ {
					ok[l] = true
				}
			}
		}
		seen := map[string]bool{}
		report := func(n ast.Node, kind string) {
			line := fset.Position(n.Pos()).Line
			s := fmt.Sprintf("%s:%d: %s", filepath.ToSlash(rel), line, kind)
			if seen[s] { // one site per line and kind: a map literal's type and keys, a || chain
				return
			}
			seen[s] = true
			if ok[line] || ok[line-1] {
				justified = append(justified, s)
			} else {
				sites = append(sites, s)
			}
		}
		// Comparisons inside a reported switch's cases are the switch's.
		inSwitch := map[ast.Node]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SwitchStmt:
				hit := n.Tag != nil && isSelector(n.Tag, "CPUType")
				for _, st := range n.Body.List {
					for _, e := range st.(*ast.CaseClause).List {
						ast.Inspect(e, func(m ast.Node) bool {
							if x, ok := m.(ast.Expr); ok && (isArch(x) || isArchName(x)) {
								hit = true
							}
							return true
						})
					}
				}
				if hit {
					report(n, "switch on architecture")
					for _, st := range n.Body.List {
						for _, e := range st.(*ast.CaseClause).List {
							ast.Inspect(e, func(m ast.Node) bool {
								inSwitch[m] = true
								return true
							})
						}
					}
				}
			case *ast.BinaryExpr:
				if inSwitch[n] || (n.Op != token.EQL && n.Op != token.NEQ) {
					break
				}
				if isArch(n.X) || isArch(n.Y) ||
					isArchName(n.Y) && isSelector(n.X, "Name", "Arch") ||
					isArchName(n.X) && isSelector(n.Y, "Name", "Arch") {
					report(n, "identity check on architecture")
				}
			case *ast.MapType:
				if star, ok := n.Key.(*ast.StarExpr); ok && isSelector(star.X, "Arch") {
					report(n, "table keyed by architecture")
				}
			case *ast.CompositeLit:
				for _, el := range n.Elts {
					if kv, ok := el.(*ast.KeyValueExpr); ok && isArch(kv.Key) {
						report(n, "table keyed by architecture")
						break
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(sites)
	sort.Strings(justified)
	return sites, justified
}
