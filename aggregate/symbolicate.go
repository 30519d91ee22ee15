package aggregate

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/uuid"
)

// SymbolLookup finds the symbols of an image by UUID; *symstore.Symbols
// is one. A nil entry with a nil error means the symbols are not known.
// One that has LookupImage too, as *symstore.Symbols has, is asked
// through it, with the image's file name.
type SymbolLookup interface {
	LookupContext(ctx context.Context, id uuid.UUID) (*symstore.Entry, error)
}

// imageLookup is a SymbolLookup that can be told the image's name too
// (*symstore.Symbols.LookupImage): a symbol store whose paths hold the
// image's name (a Breakpad symbol server's) is found through it.
type imageLookup interface {
	LookupImage(ctx context.Context, id uuid.UUID, name string) (*symstore.Entry, error)
}

// lookupImage looks an image up through syms, with its file name (its
// path's base, else its name) when syms takes one.
func lookupImage(ctx context.Context, syms SymbolLookup, info *ImageInfo) (*symstore.Entry, error) {
	if il, ok := syms.(imageLookup); ok {
		name := info.Path
		if name == "" {
			name = info.Name
		}
		return il.LookupImage(ctx, info.UUID, name)
	}
	return syms.LookupContext(ctx, info.UUID)
}

// Result is an aggregate with every unique address symbolicated: what the
// groups and the output formats are made from. It is not modified after
// Symbolicate returns; readers may share it.
type Result struct {
	// Images are the images the stacks pass through.
	Images []ImageInfo
	// Locations are the unique (image, address) pairs, each with the
	// functions found there.
	Locations []Location
	// Stacks are the unique stacks, as indexes into Locations, innermost
	// first.
	Stacks [][]int32
	// Samples are the unique stacks with their attributes and counts.
	Samples []Sample
	// Records is how many records were added.
	Records int64
	// Warnings says what could not be symbolicated and why.
	Warnings []string

	attrs []Attributes
}

// ImageInfo is one image of an aggregate, told apart by UUID (by name
// when it has none), and of a result.
type ImageInfo struct {
	UUID  uuid.UUID
	Name  string
	Path  string
	Main  bool // a record named it its main executable
	InApp bool // set by Groups' options (Result.MarkInApp)
	// Symbolicated says a symbol file with the UUID was found.
	Symbolicated bool
}

// Location is one unique address: an offset in an image, and the
// functions there, innermost (inlined) first.
type Location struct {
	Image int32 // index in Result.Images; -1 for an address in no known image
	// Caller says the location was first reached as a caller: Offset is
	// then the return address's offset less one.
	Caller bool
	// Offset is the lookup address's offset from the image's load address
	// (the absolute address when Image is -1): the PC for a stack's first
	// frame, a return address minus one for its callers.
	Offset uint64
	// Lines are the functions at the address, innermost first; the last
	// is the function the machine frame is in. One line with an empty
	// Function when nothing was found.
	Lines []Line
}

// Line is one function at a location.
type Line struct {
	Function string
	// Mangled is the name as the binary spells it, when it differs.
	Mangled string
	File    string
	Line    int
	Column  int
	Inlined bool
	// Source says which data named the function (symstore.SourceNone
	// when none did).
	Source symstore.SymbolSource
}

// Sample is one unique stack with one set of attributes.
type Sample struct {
	Stack       int32     // index in Result.Stacks
	Attrs       int32     // see Result.Attributes
	Count       int64     // records
	Weight      int64     // their weights summed
	First, Last time.Time // zero when the records gave no timestamp
}

// Attributes returns the attributes of a sample.
func (r *Result) Attributes(s Sample) Attributes { return r.attrs[s.Attrs] }

// Symbolicate looks every unique (image, address) of the aggregate up
// once, image by image, through the entry's batch lookup, and reads
// inlined functions and source lines from DWARF where the symbol file has
// it. syms may be nil: the result then names no functions. An image
// whose symbols cannot be found is listed in the result's warnings; the
// error is for a context ended early.
func (a *Aggregator) Symbolicate(ctx context.Context, syms SymbolLookup) (*Result, error) {
	res := &Result{Records: a.records, attrs: a.attrs}
	res.Images = slices.Clone(a.images) // the aggregator's own, with InApp and Symbolicated unset
	// Unique lookup offsets per image; frame 0 is looked up at its PC,
	// callers at their return address minus one, inside the call.
	// The locations are found with the counting's hash table, not a
	// map: a million-stack input has 1.5 million frames to look up here,
	// and the map's hashing and probing took most of this function's time.
	var locByKey idTable
	locSeed := a.stackSeed
	reporterName := map[int32]string{} // by location, for addresses no symbol file names
	perImage := make([][]int32, len(a.images))
	res.Stacks = make([][]int32, len(a.stacks))
	stackLocs := make([]int32, 0, totalFrames(a.stacks)) // one allocation for every stack's locations
	for si, frames := range a.stacks {
		start := len(stackLocs)
		for k, f := range frames {
			var name string
			if len(a.reporterNames) > 0 {
				name = a.reporterNames[f]
			}
			if k > 0 && f.offset > 0 {
				f.offset--
			}
			h := hashRef(locSeed, f)
			id, ok := locByKey.lookup(h, func(id int32) bool {
				l := &res.Locations[id]
				return l.Image == f.image && l.Offset == f.offset
			})
			if !ok {
				id = int32(len(res.Locations))
				res.Locations = append(res.Locations, Location{Image: f.image, Offset: f.offset, Caller: k > 0 && f.offset != frames[k].offset})
				locByKey.insert(h, id)
				if f.image >= 0 {
					perImage[f.image] = append(perImage[f.image], id)
				}
			}
			stackLocs = append(stackLocs, id)
			if name != "" {
				reporterName[id] = name
			}
		}
		res.Stacks[si] = stackLocs[start:len(stackLocs):len(stackLocs)]
	}
	for img, ids := range perImage {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if len(ids) == 0 {
			continue
		}
		info := &res.Images[img]
		if syms == nil || info.UUID.IsZero() {
			continue
		}
		e, err := lookupImage(ctx, syms, info)
		if err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s (%s): %v", info.Name, info.UUID, err))
			continue
		}
		if e == nil {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s (%s): no symbol file with the UUID", info.Name, info.UUID))
			continue
		}
		info.Symbolicated = true
		resolveImage(e, res.Locations, ids)
		_ = e.Release()
	}
	for i := range res.Locations {
		l := &res.Locations[i]
		if l.Lines == nil {
			l.Lines = []Line{{}}
		}
		if len(l.Lines) == 1 && l.Lines[0].Function == "" {
			l.Lines[0].Function = reporterName[int32(i)] // the report's own name, if it gave one
		}
	}
	res.Samples = make([]Sample, len(a.samples))
	for i, s := range a.samples {
		res.Samples[i] = Sample{Stack: s.stack, Attrs: s.attrs, Count: s.count, Weight: s.weight}
		if s.hasFirst {
			res.Samples[i].First, res.Samples[i].Last = s.first, s.last
		}
	}
	return res, nil
}

// writtenOffset is the offset the input gave: a caller's return
// address, not the byte before it that was looked up.
func (l *Location) writtenOffset() uint64 {
	if l.Caller {
		return l.Offset + 1
	}
	return l.Offset
}

// unknownName names a frame no symbol names by its image and offset,
// "UIKitCore+0x4d2a0", as crash reports print such frames.
func unknownName(image string, offset uint64) string {
	b := make([]byte, 0, len(image)+19)
	b = append(b, image...)
	b = append(b, "+0x"...)
	return string(strconv.AppendUint(b, offset, 16))
}

// totalFrames is the number of frames of all stacks.
func totalFrames(stacks [][]frameRef) int {
	n := 0
	for _, s := range stacks {
		n += len(s)
	}
	return n
}

// resolveImage names the locations ids of one image as symbolize names
// frames (symstore's Entry.ResolveBatch): symbol tables searched in one
// batch sorted by address, BCSymbolMap names unhidden, DWARF's inlined
// functions, lines and columns, a Breakpad .sym file for what the Mach-O
// files do not name.
func resolveImage(e *symstore.Entry, locs []Location, ids []int32) {
	var textAddr uint64 // 0 for a Breakpad .sym file alone, which answers module offsets
	if im := e.Image(); im != nil {
		if text, ok := im.TextSegment(); ok {
			textAddr = text.Addr
		}
	}
	ids = slices.Clone(ids)
	slices.SortFunc(ids, func(x, y int32) int { return cmp.Compare(locs[x].Offset, locs[y].Offset) })
	addrs := make([]uint64, len(ids))
	for k, id := range ids {
		addrs[k] = locs[id].Offset + textAddr // unslid: the image's own vmaddr space
	}
	frame := func(k int) symstore.Frame {
		return symstore.Frame{Address: addrs[k], LookupAddress: addrs[k], ImageLoadAddress: textAddr}
	}
	// The locations' lines share one array (most have one line): an
	// allocation per location cost more than naming it.
	lines := make([]Line, 0, len(ids))
	e.ResolveBatch(addrs, frame, symstore.ResolveOptions{}, func(k int, named []symstore.Frame) {
		start := len(lines)
		lines = appendLines(lines, named)
		locs[ids[k]].Lines = lines[start:len(lines):len(lines)]
	})
}

// appendLines appends symbolized frames (innermost first) as lines.
func appendLines(lines []Line, frames []symstore.Frame) []Line {
	for _, f := range frames {
		lines = append(lines, Line{Function: f.Symbol, Mangled: f.MangledSymbol, File: f.File, Line: f.Line,
			Column: f.Column, Inlined: f.Inlined, Source: f.SymbolSource})
	}
	return lines
}
