package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path"
	"strings"

	"github.com/stackimage/stackimage/debuginfo"
	"github.com/stackimage/stackimage/image"
)

// dwarfComparison compares source-level answers (function, file and line
// of every frame, inlined ones included) at random addresses within the
// DWARF line tables: "stackimage atos -i" against "llvm-symbolizer
// --inlines", both reading the file's DWARF.
func dwarfComparison(bin, arch string, n int, ours []string) (comparison, error) {
	addrs, err := dwarfAddresses(bin, arch, n)
	if err != nil {
		return comparison{}, err
	}
	c := comparison{what: "functions, files and lines with inline chains", addrs: addrs,
		ours: append(ours, "-i", "--no-demangle", "-fullPath", "-o", bin),
		llvm: []string{"--obj=" + bin, "--inlines", "--functions=linkage", "--no-demangle", "--output-style=JSON"},
		// Neither output marks where one address's frames end in a form
		// both share, so both are flattened to one line per frame: equal
		// sequences mean equal answers at every address.
		parseOurs: parseAtosFrames, parseLLVM: parseSymbolizerJSON}
	if arch != "" {
		c.ours = append(c.ours, "-arch", arch)
		c.llvm = append(c.llvm, "--default-arch="+arch)
	}
	return c, nil
}

// dwarfAddresses returns n random addresses between the lowest and highest
// address the DWARF line tables cover (fixed seed).
func dwarfAddresses(bin, arch string, n int) ([]uint64, error) {
	f, err := image.Open(bin)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	im := f.Images[0]
	if arch != "" {
		if im, err = f.ByArch(arch); err != nil {
			return nil, err
		}
	}
	secs, err := im.DWARFSectionsNamed(debuginfo.SectionNames...)
	if err != nil {
		return nil, err
	}
	ix, err := debuginfo.New(secs)
	if err != nil {
		return nil, err
	}
	lo, hi, ok := ix.Bounds()
	if !ok {
		return nil, fmt.Errorf("%s: no line tables", bin)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	addrs := make([]uint64, n)
	for i := range addrs {
		addrs[i] = lo + rng.Uint64N(hi-lo)
	}
	return addrs, nil
}

// parseAtosFrames reads "atos -i -fullPath" lines, one per frame, as
// "NAME FILE:LINE", "NAME" (no source position, or line 0) or "??"
// (nothing).
func parseAtosFrames(out []byte) ([]string, error) {
	var frames []string
	for _, line := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		i := strings.LastIndex(line, " (in ")
		if i < 0 {
			frames = append(frames, "??")
			continue
		}
		name, rest := line[:i], line[i:]
		if j := strings.Index(rest, ") ("); j >= 0 && strings.HasSuffix(rest, ")") {
			// Line 0 (code the compiler attributes to no line) is a
			// frame without a position, as parseSymbolizerJSON reads it.
			if pos := rest[j+3 : len(rest)-1]; !strings.HasSuffix(pos, ":0") {
				frames = append(frames, name+" "+pos)
				continue
			}
		}
		frames = append(frames, name)
	}
	return frames, nil
}

// parseSymbolizerJSON reads llvm-symbolizer's JSON output (one object per
// address) into the same per-frame form.
func parseSymbolizerJSON(out []byte) ([]string, error) {
	var frames []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	type answer struct{ Symbol []symbolizerFrame }
	for sc.Scan() {
		// Addresses read from stdin give an object per line; addresses
		// given as arguments, one array of them.
		var answers []answer
		var err error
		if line := sc.Bytes(); len(line) > 0 && line[0] == '[' {
			err = json.Unmarshal(line, &answers)
		} else {
			answers = make([]answer, 1)
			err = json.Unmarshal(line, &answers[0])
		}
		if err != nil {
			return nil, fmt.Errorf("llvm-symbolizer output %q: %w", sc.Text(), err)
		}
		for _, j := range answers {
			frames = appendFrames(frames, j.Symbol)
		}
	}
	return frames, sc.Err()
}

// symbolizerFrame is one frame of llvm-symbolizer's JSON output.
type symbolizerFrame struct {
	FunctionName, FileName string
	Line                   int
}

// appendFrames appends one llvm-symbolizer answer's frames in the form
// parseAtosFrames gives.
func appendFrames(frames []string, symbols []symbolizerFrame) []string {
	for _, s := range symbols {
		name := s.FunctionName
		if name == "" {
			name = "??"
		}
		if s.FileName == "" || s.Line == 0 {
			frames = append(frames, name)
			continue
		}
		// debug/dwarf cleans the paths it joins; llvm-symbolizer does not.
		frames = append(frames, fmt.Sprintf("%s %s:%d", name, path.Clean(s.FileName), s.Line))
	}
	return frames
}
