package hostile_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stackimage/stackimage/crashreport"
	"github.com/stackimage/stackimage/debuginfo"
	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/internal/hostile"
	"github.com/stackimage/stackimage/snapshot"
	"github.com/stackimage/stackimage/symtab"
)

// TestCorpusThroughLibrary runs every hostile case through the library's
// entry points for its kind, within the allocation budget, CaseTime and
// CaseAlloc, and checks that it ends in a clear error or a result with the
// warnings the case names.
func TestCorpusThroughLibrary(t *testing.T) {
	for _, c := range hostile.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			data := c.Build()
			var errs, warnings []string
			var symbol string
			var allocated uint64
			var took time.Duration
			hostile.Returns(t, 30*time.Second, nil, func() {
				allocated, took = hostile.CaseBudget(t, int64(len(data)), func() {
					switch c.Kind {
					case hostile.KindMachO:
						errs, warnings, symbol = readMachO(data)
					case hostile.KindDump:
						errs = readDump(data)
					}
				})
			})
			t.Logf("%d bytes of input: %v, %d bytes allocated", len(data), took.Round(time.Millisecond), allocated)
			checkOutcome(t, c, errs, warnings, symbol)
		})
	}
}

// readMachO opens data and reads everything a symbolicating run reads:
// every table, the symbol table and DWARF of every slice. It returns the
// errors that made a whole file or slice unusable, the warnings about
// parts left out, and the name symtab gives hostile.CodeAddr in the
// first slice.
func readMachO(data []byte) (errs, warnings []string, symbol string) {
	f, err := image.NewFile(bytes.NewReader(data), "input")
	if err != nil {
		return []string{err.Error()}, nil, ""
	}
	for _, err := range f.SliceErrors {
		warnings = append(warnings, err.Error())
	}
	for i, im := range f.Images {
		tab, err := symtab.New(im)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		for _, w := range tab.Warnings() {
			warnings = append(warnings, w.Error())
		}
		if sym, err := tab.Lookup(hostile.CodeAddr); err == nil && i == 0 {
			symbol = sym.Name
		}
		secs, err := im.DWARFSections()
		if err != nil {
			warnings = append(warnings, err.Error())
			continue
		}
		if len(secs) > 0 {
			ix, err := debuginfo.New(secs)
			if err != nil {
				warnings = append(warnings, err.Error())
				continue
			}
			ix.Lookup(hostile.CodeAddr)
			warnings = append(warnings, ix.Warnings()...)
		}
	}
	return errs, warnings, symbol
}

// readDump parses data as the command would: a snapshot if it says so,
// else a crash report.
func readDump(data []byte) (errs []string) {
	if bytes.Contains(data[:min(len(data), 256)], []byte("stackimage.snapshot/")) {
		if _, err := snapshot.Parse(data); err != nil {
			return []string{err.Error()}
		}
		return nil
	}
	if _, err := crashreport.Parse(data); err != nil {
		return []string{err.Error()}
	}
	return nil
}

func checkOutcome(t *testing.T, c hostile.Case, errs, warnings []string, symbol string) {
	t.Helper()
	switch {
	case c.WantErr == "" && len(errs) > 0:
		t.Errorf("errors %q; want a result", errs)
	case c.WantErr != "" && !strings.Contains(strings.Join(errs, "\n"), c.WantErr):
		t.Errorf("errors %q; want one saying %q", errs, c.WantErr)
	}
	all := strings.Join(warnings, "\n")
	for _, w := range c.WantWarnings {
		if !strings.Contains(all, w) {
			t.Errorf("warnings %q; want one saying %q", warnings, w)
		}
	}
	if c.WantSymbol != "" && symbol != c.WantSymbol {
		t.Errorf("symbol at %#x = %q, want %q", hostile.CodeAddr, symbol, c.WantSymbol)
	}
}
