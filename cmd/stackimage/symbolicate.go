package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/stackimage/stackimage/snapshot"
	"github.com/stackimage/stackimage/symbolize"
)

// maxDumpSize bounds what is read of a dump file; a snapshot's own limits
// are checked again by the parser.
const maxDumpSize = 1 << 30

func runSymbolicate(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("symbolicate", "symbolicate DUMP [--symbols DIR]... [--json]", stderr)
	var dirs stringList
	fs.Var(&dirs, "symbols", "a directory (searched recursively) or file of binaries and dSYMs, matched by UUID; repeatable")
	asJSON := fs.Bool("json", false, "print JSON instead of crash-report text")
	depth := fs.Int("max-depth", 0, "the most frames to walk per thread (default 512)")
	noDemangle := fs.Bool("no-demangle", false, "print C++ and Rust names as the binary spells them")
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(files) != 1 {
		return fmt.Errorf("%w: want one dump file, got %d", errUsage, len(files))
	}
	data, err := readLimited(files[0], maxDumpSize)
	if err != nil {
		return err
	}
	syms := symbolize.NewSymbols()
	for _, d := range dirs {
		if err := syms.AddDir(d); err != nil {
			return err
		}
	}
	z := &symbolize.Symbolizer{Symbols: syms, MaxDepth: *depth, NoDemangle: *noDemangle}
	snap, err := snapshot.Parse(data)
	if err != nil {
		return fmt.Errorf("%s: %w", files[0], err)
	}
	rep, err := z.Snapshot(snap)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, rep)
	}
	writeText(stdout, rep)
	return nil
}

func readLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, limit)
	}
	return data, nil
}

func writeText(w io.Writer, rep *symbolize.Report) {
	ptrSize := 8
	if rep.Arch != nil {
		ptrSize = rep.Arch.PtrSize
	}
	for i, th := range rep.Threads {
		if i > 0 {
			fmt.Fprintln(w)
		}
		head := fmt.Sprintf("Thread %d", th.ID)
		if th.Crashed {
			head += " Crashed"
		}
		if th.Name != "" {
			head += fmt.Sprintf(" (%s)", th.Name)
		}
		fmt.Fprintln(w, head+":")
		for _, f := range th.Frames {
			fmt.Fprintln(w, f.Format(ptrSize))
		}
		fmt.Fprintf(w, "Walk stopped: %s", th.StopReason)
		if th.StopDetail != "" {
			fmt.Fprintf(w, " (%s)", th.StopDetail)
		}
		fmt.Fprintln(w)
	}
	if len(rep.Missing) > 0 {
		fmt.Fprintln(w, "\nImages without symbols (no file with their UUID under --symbols):")
		for _, m := range rep.Missing {
			fmt.Fprintf(w, "  %s %s\n", m.UUID, m.Name)
		}
	}
}

// The JSON output's shape; addresses are hex strings because 64-bit values
// do not survive JSON numbers in most readers.
type jsonReport struct {
	Threads []jsonThread `json:"threads"`
}

type jsonThread struct {
	ID         uint64      `json:"id"`
	Name       string      `json:"name,omitempty"`
	Crashed    bool        `json:"crashed"`
	StopReason string      `json:"stop_reason"`
	StopDetail string      `json:"stop_detail,omitempty"`
	Frames     []jsonFrame `json:"frames"`
}

type jsonFrame struct {
	Index         int    `json:"index"`
	Address       string `json:"address"`
	LookupAddress string `json:"lookup_address"`
	Image         string `json:"image,omitempty"`
	ImageOffset   string `json:"image_offset,omitempty"`
	Symbol        string `json:"symbol,omitempty"`
	SymbolOffset  string `json:"symbol_offset,omitempty"`
	SymbolSource  string `json:"symbol_source,omitempty"`
	MangledSymbol string `json:"mangled_symbol,omitempty"`
	Lang          string `json:"lang,omitempty"`
	File          string `json:"file,omitempty"`
	Line          int    `json:"line,omitempty"`
	Column        int    `json:"column,omitempty"`
	Inlined       bool   `json:"inlined"`
	FoundBy       string `json:"found_by"`
}

func hex(v uint64) string { return fmt.Sprintf("%#x", v) }

func writeJSON(w io.Writer, rep *symbolize.Report) error {
	out := jsonReport{Threads: []jsonThread{}}
	for _, th := range rep.Threads {
		jt := jsonThread{ID: th.ID, Name: th.Name, Crashed: th.Crashed,
			StopReason: th.StopReason, StopDetail: th.StopDetail, Frames: []jsonFrame{}}
		for _, f := range th.Frames {
			jf := jsonFrame{Index: f.Index, Address: hex(f.Address), LookupAddress: hex(f.LookupAddress),
				Image: f.Image, FoundBy: f.FoundBy}
			if f.Image != "" {
				jf.ImageOffset = hex(f.ImageOffset)
			}
			if f.Symbol != "" {
				jf.Symbol, jf.SymbolSource = f.Symbol, f.SymbolSource
				jf.MangledSymbol, jf.Lang = f.MangledSymbol, f.Lang
			}
			if f.HasOffset {
				jf.SymbolOffset = hex(f.SymbolOffset)
			}
			jf.File, jf.Line, jf.Column, jf.Inlined = f.File, f.Line, f.Column, f.Inlined
			jt.Frames = append(jt.Frames, jf)
		}
		out.Threads = append(out.Threads, jt)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
