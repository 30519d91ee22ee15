package hangreport

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/stackimage/stackimage/internal/pathbase"
)

// Name is what a symbolizer found for one address.
type Name struct {
	Symbol string
	// Offset is the address minus the function's start; HasOffset says
	// it is known.
	Offset    uint64
	HasOffset bool
	// File and Line are the source position; File empty when unknown.
	File string
	Line int
}

// Namer names the address of a frame in process number process (an index
// into Report.Processes: each process of a spindump has its own address
// space). It returns false when it knows no name.
type Namer func(process int, addr uint64) (Name, bool)

// Style says how Write spells a filled-in frame.
type Style int

const (
	// StyleReport writes a name the way the report writes the frames it
	// named itself: sample's "main  (in App) + 32  [0x...]  main.m:30",
	// spindump's "main + 32 (main.m:30 in App + 16048) [0x...]".
	StyleReport Style = iota
	// StyleAtos writes atos's answer followed by the address, as
	// MacSymbolicator does: "main (in App) (main.m:30) [0x...]", or
	// "main (in App) + 32 [0x...]" when no line is known.
	StyleAtos
)

// String names the style as the package's constants do.
func (s Style) String() string {
	switch s {
	case StyleReport:
		return "StyleReport"
	case StyleAtos:
		return "StyleAtos"
	}
	return fmt.Sprintf("Style(%d)", int(s))
}

// edit replaces the input's bytes [start, end) with text.
type edit struct {
	start, end int
	text       string
}

// Write prints the report as it was read, byte for byte, except that each
// frame the report left as "???" and names can name is written with its
// name in the given style. Frames of the call graphs and of sample's
// summary sections are filled. Write returns the first error of w.
func (r *Report) Write(w io.Writer, names Namer, style Style) error {
	if w == nil {
		return errors.New("hangreport: Write: nil writer")
	}
	var edits []edit
	fill := func(proc int, s Span) {
		f := r.Frame(s)
		if f.Named() || !f.HasAddress || names == nil {
			return
		}
		n, ok := names(proc, f.Address)
		if !ok || n.Symbol == "" {
			return
		}
		edits = append(edits, edit{f.Start, f.End, r.spell(&f, n, style)})
	}
	for pi, pr := range r.Processes {
		for ti := range pr.Threads {
			th := &pr.Threads[ti]
			for ni := range th.Nodes {
				fill(pi, th.Nodes[ni].Text)
			}
		}
		for i := range pr.TotalInStack {
			fill(pi, pr.TotalInStack[i].Text)
		}
		for i := range pr.TopOfStack {
			fill(pi, pr.TopOfStack[i].Text)
		}
	}
	if th := r.Heaviest; th != nil {
		target := r.Target()
		for ni := range th.Nodes {
			fill(target, th.Nodes[ni].Text)
		}
	}
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].start < edits[j].start })
	pos := 0
	for _, e := range edits {
		if e.start < pos || e.end > len(r.text) {
			continue // overlapping spans cannot come from Parse; keep the input
		}
		if _, err := io.WriteString(w, r.text[pos:e.start]); err != nil {
			return err
		}
		if _, err := io.WriteString(w, e.text); err != nil {
			return err
		}
		pos = e.end
	}
	_, err := io.WriteString(w, r.text[pos:])
	return err
}

// spell writes a frame with its name filled in.
func (r *Report) spell(f *Frame, n Name, style Style) string {
	var b strings.Builder
	file := ""
	if n.File != "" && n.Line > 0 {
		file = pathbase.Base(n.File) + ":" + strconv.Itoa(n.Line)
	}
	offset := func() {
		if n.HasOffset {
			b.WriteString(" + ")
			b.WriteString(strconv.FormatUint(n.Offset, 10))
		}
	}
	addr := "[" + f.AddressText + "]"
	switch {
	case style == StyleAtos:
		b.WriteString(n.Symbol)
		if f.Image != "" {
			b.WriteString(" (in " + f.Image + ")")
		}
		if file != "" {
			b.WriteString(" (" + file + ")")
		} else {
			offset()
		}
		b.WriteString(" " + addr)
	case r.Kind == KindSpindump || r.Kind == KindMicrostackshot:
		b.WriteString(n.Symbol)
		offset()
		b.WriteString(" (")
		if file != "" {
			b.WriteString(file + " in ")
		}
		b.WriteString(f.ImageText + ") " + addr)
	default:
		b.WriteString(n.Symbol)
		if f.Image != "" {
			b.WriteString("  (in " + f.Image + ")")
		}
		offset()
		b.WriteString("  " + addr)
		if file != "" {
			b.WriteString("  " + file)
		}
	}
	return b.String()
}
