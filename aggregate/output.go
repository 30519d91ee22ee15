package aggregate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/pprof/profile"
	"github.com/klauspost/compress/gzip"
)

// mappingSpan separates the images in a profile's address space: image i
// is placed at (i+1)·mappingSpan, so that one profile holds images from
// many processes, each loaded elsewhere, without overlaps. Offsets in a
// Mach-O image are far below it.
const mappingSpan = 1 << 36

// Profile returns the aggregate as a pprof profile: one mapping per image
// with the UUID as its build ID, one location per unique address with its
// inlined functions and lines, one sample per unique stack and set of
// attributes (devices apart), valued in records and weight and labelled
// with the thread, the versions and the records' own labels. The images of
// GroupOptions are not needed: a profile has no groups. The samples of
// one stack share one Location slice: change a sample's locations by
// giving it a new slice.
func (r *Result) Profile() *profile.Profile {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "stacks", Unit: "count"}, {Type: "weight", Unit: "count"}},
		PeriodType: &profile.ValueType{Type: "stacks", Unit: "count"},
		Period:     1,
	}
	// Merging the samples needs neither the functions nor the locations:
	// it runs on a core of its own while they are made.
	var merged mergedSamples
	mergeDone := make(chan struct{})
	go func() {
		defer close(mergeDone)
		merged = r.mergeSamples()
	}()
	for i, im := range r.Images {
		file := im.Path
		if file == "" {
			file = im.Name
		}
		start := uint64(i+1) * mappingSpan
		p.Mapping = append(p.Mapping, &profile.Mapping{
			ID: uint64(i + 1), Start: start, Limit: start + mappingSpan, File: file, BuildID: im.UUID.String(),
			HasFunctions: im.Symbolicated, HasFilenames: im.Symbolicated, HasLineNumbers: im.Symbolicated, HasInlineFrames: im.Symbolicated,
		})
	}
	type funcKey struct{ name, mangled, file string }
	funcs := map[funcKey]*profile.Function{}
	function := func(name, mangled, file string) *profile.Function {
		k := funcKey{name, mangled, file}
		if f, ok := funcs[k]; ok {
			return f
		}
		system := mangled
		if system == "" {
			system = name
		}
		f := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: system, Filename: file}
		p.Function = append(p.Function, f)
		funcs[k] = f
		return f
	}
	locs := make([]*profile.Location, len(r.Locations))
	for i := range r.Locations {
		l := &r.Locations[i]
		loc := &profile.Location{ID: uint64(i + 1), Address: l.Offset}
		if l.Image >= 0 {
			loc.Mapping = p.Mapping[l.Image]
			loc.Address = loc.Mapping.Start + l.Offset
		}
		for _, line := range l.Lines {
			var f *profile.Function
			if line.Function == "" && l.Image >= 0 {
				// A frame no symbol names is a function of its own, its
				// name unique to its location: no need to look it up.
				name := r.FunctionName(l, line)
				f = &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: name}
				p.Function = append(p.Function, f)
			} else {
				f = function(r.FunctionName(l, line), line.Mangled, line.File)
			}
			loc.Line = append(loc.Line, profile.Line{Function: f, Line: int64(line.Line)})
		}
		locs[i] = loc
	}
	p.Location = locs
	<-mergeDone
	// The samples of one stack share its locations: a million-stack
	// profile has ten samples of a stack for every stack.
	stackLocs := make([][]*profile.Location, len(r.Stacks))
	values := make([]int64, 2*len(merged.samples)) // one allocation for every sample's values
	p.Sample = make([]*profile.Sample, len(merged.samples))
	all := make([]profile.Sample, len(merged.samples))
	for i, m := range merged.samples {
		if stackLocs[m.stack] == nil {
			stack := r.Stacks[m.stack]
			stackLocs[m.stack] = make([]*profile.Location, len(stack))
			for j, id := range stack {
				stackLocs[m.stack][j] = locs[id]
			}
		}
		v := values[2*i : 2*i+2 : 2*i+2]
		v[0], v[1] = m.count, m.weight
		all[i] = profile.Sample{Value: v, Location: stackLocs[m.stack], Label: merged.labelMaps[m.labels]}
		p.Sample[i] = &all[i]
	}
	return p
}

// mergedSamples are a result's samples with those differing only in their
// device merged, in the order of their first sample: devices may be
// thousands, and the groups list them.
type mergedSamples struct {
	samples   []mergedSample
	labelMaps []map[string][]string // by label set; samples of one set share its map
}

type mergedSample struct {
	stack, labels int32
	count, weight int64
}

func (r *Result) mergeSamples() mergedSamples {
	labelSets := map[string]int32{}
	attrLabels := make([]int32, len(r.attrs))
	var out mergedSamples
	var key strings.Builder
	for i, a := range r.attrs {
		labels := map[string][]string{}
		key.Reset()
		for _, kv := range [...][2]string{{"thread", a.Thread}, {"os_version", a.OSVersion}, {"app_version", a.AppVersion}} {
			if kv[1] != "" {
				labels[kv[0]] = []string{kv[1]}
			}
			key.WriteString(kv[1])
			key.WriteByte(0)
		}
		for _, l := range a.Labels {
			labels[l.Key] = []string{l.Value}
			key.WriteString(l.Key)
			key.WriteByte(0)
			key.WriteString(l.Value)
			key.WriteByte(0)
		}
		id, ok := labelSets[key.String()]
		if !ok {
			id = int32(len(out.labelMaps))
			if len(labels) == 0 {
				labels = nil
			}
			out.labelMaps = append(out.labelMaps, labels)
			labelSets[key.String()] = id
		}
		attrLabels[i] = id
	}
	// The merged samples are found with the counting's hash table: a
	// map took twice the time. Stacks and label sets are numbered here,
	// not read, so no input can make their hashes collide.
	var index idTable
	out.samples = make([]mergedSample, 0, len(r.Samples))
	for _, s := range r.Samples {
		stack, labels := s.Stack, attrLabels[s.Attrs]
		h := mix(mix(0x243f6a8885a308d3, uint64(uint32(stack))), uint64(uint32(labels)))
		if i, ok := index.lookup(h, func(id int32) bool {
			return out.samples[id].stack == stack && out.samples[id].labels == labels
		}); ok {
			out.samples[i].count += s.Count
			out.samples[i].weight += s.Weight
			continue
		}
		index.insert(h, int32(len(out.samples)))
		out.samples = append(out.samples, mergedSample{stack: stack, labels: labels, count: s.Count, weight: s.Weight})
	}
	return out
}

// WriteProfile writes Profile gzip-compressed at the fastest level, on
// every core: pprof reads any gzip, and profile.Profile.Write's default
// level took most of the time of writing a profile of a million stacks.
// The profile is serialized in pieces (profilePieces), each compressed
// by the core that made it, as soon as it is made.
func (r *Result) WriteProfile(w io.Writer) error {
	return writeGzipPieces(w, profilePieces(r.Profile()))
}

// minGzipPiece is the least data compressed on a core of its own.
const minGzipPiece = 1 << 20

// writeGzipParallel writes data gzip-compressed at the fastest level,
// cut into one piece per core (writeGzipPieces).
func writeGzipParallel(w io.Writer, data []byte) error {
	n := max(1, min(runtime.GOMAXPROCS(0), len(data)/minGzipPiece))
	size := (len(data) + n - 1) / n
	pieces := make([]func([]byte) []byte, n)
	for i := range pieces {
		piece := data[min(len(data), i*size):min(len(data), (i+1)*size)]
		pieces[i] = func(dst []byte) []byte { return append(dst, piece...) }
	}
	return writeGzipPieces(w, pieces)
}

// writeGzipPieces writes the pieces made by the functions of pieces, in
// order, gzip-compressed at the fastest level: each piece is made and
// compressed on any core, as its own gzip member. A gzip file may hold
// several members, read as one stream (RFC 1952, 2.2), as Go's
// gzip.Reader and pprof do.
//
// A core's piece buffer and compressor serve its next piece too: made
// anew for each piece, they grew from nothing each time, in fresh pages
// (on the benchmark's profile of a million stacks, 17,000 more page
// faults and 70 MB more peak memory).
func writeGzipPieces(w io.Writer, pieces []func(dst []byte) []byte) error {
	out := make([]bytes.Buffer, len(pieces))
	type pieceWriter struct {
		data []byte
		zw   *gzip.Writer
	}
	var writers sync.Pool
	err := runPieces(len(pieces), func(i int) error {
		pw, _ := writers.Get().(*pieceWriter)
		if pw == nil {
			zw, err := gzip.NewWriterLevel(&out[i], gzip.BestSpeed)
			if err != nil {
				return err
			}
			pw = &pieceWriter{zw: zw}
		} else {
			pw.zw.Reset(&out[i])
		}
		defer writers.Put(pw)
		pw.data = pieces[i](pw.data[:0])
		out[i].Grow(len(pw.data) / 2) // the profile compresses to about 60 %
		if _, err := pw.zw.Write(pw.data); err != nil {
			return err
		}
		return pw.zw.Close()
	})
	if err != nil {
		return err
	}
	for i := range out {
		if _, err := w.Write(out[i].Bytes()); err != nil {
			return err
		}
	}
	return nil
}

// stackNames returns a stack's function names root first, inlined
// functions in call order, for the flame graph formats.
func (r *Result) stackNames(stack []int32) []string {
	var names []string
	for k := len(stack) - 1; k >= 0; k-- {
		loc := &r.Locations[stack[k]]
		for j := len(loc.Lines) - 1; j >= 0; j-- {
			names = append(names, r.FunctionName(loc, loc.Lines[j]))
		}
	}
	return names
}

// stackWeights sums the samples' weights per unique stack.
func (r *Result) stackWeights() []int64 {
	w := make([]int64, len(r.Stacks))
	for _, s := range r.Samples {
		w[s.Stack] += s.Weight
	}
	return w
}

// WriteFolded writes Brendan Gregg's folded stacks, the input of
// flamegraph.pl: one line per unique stack, functions root first joined
// by ";", then a space and the stacks' weight. Lines are sorted, as
// stackcollapse scripts write them.
func (r *Result) WriteFolded(w io.Writer) error {
	weights := r.stackWeights()
	lines := make([]string, 0, len(r.Stacks))
	for i, st := range r.Stacks {
		if weights[i] == 0 {
			continue
		}
		names := r.stackNames(st)
		for k, n := range names {
			names[k] = foldedName(n)
		}
		lines = append(lines, strings.Join(names, ";")+" "+strconv.FormatInt(weights[i], 10))
	}
	slices.Sort(lines)
	bw := bufio.NewWriter(w)
	for _, l := range lines {
		bw.WriteString(l)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// foldedName keeps a name from breaking the folded format: ";" separates
// frames and a newline records.
func foldedName(n string) string {
	if strings.ContainsAny(n, ";\n") {
		n = strings.NewReplacer(";", ":", "\n", " ").Replace(n)
	}
	return n
}

// speedscopeFile is speedscope's file format
// (https://www.speedscope.app/file-format-schema.json), sampled profiles.
type speedscopeFile struct {
	Schema   string              `json:"$schema"`
	Shared   speedscopeShared    `json:"shared"`
	Profiles []speedscopeProfile `json:"profiles"`
	Name     string              `json:"name,omitempty"`
	Exporter string              `json:"exporter,omitempty"`
}

type speedscopeShared struct {
	Frames []speedscopeFrame `json:"frames"`
}

type speedscopeFrame struct {
	Name string `json:"name"`
	File string `json:"file,omitempty"`
}

type speedscopeProfile struct {
	Type       string  `json:"type"`
	Name       string  `json:"name"`
	Unit       string  `json:"unit"`
	StartValue int64   `json:"startValue"`
	EndValue   int64   `json:"endValue"`
	Samples    [][]int `json:"samples"`
	Weights    []int64 `json:"weights"`
}

// WriteSpeedscope writes a speedscope file with one sampled profile: one
// sample per unique stack (root first), weighted by the stacks' weight.
// Frames are functions (with their file), so that a flame graph merges
// one function's lines.
func (r *Result) WriteSpeedscope(w io.Writer, name string) error {
	f := speedscopeFile{Schema: "https://www.speedscope.app/file-format-schema.json", Name: name, Exporter: "stackimage aggregate"}
	prof := speedscopeProfile{Type: "sampled", Name: name, Unit: "none", Samples: [][]int{}, Weights: []int64{}}
	type frameKey struct{ name, file string }
	frameIDs := map[frameKey]int{}
	weights := r.stackWeights()
	for i, st := range r.Stacks {
		if weights[i] == 0 {
			continue
		}
		var sample []int
		for k := len(st) - 1; k >= 0; k-- {
			loc := &r.Locations[st[k]]
			for j := len(loc.Lines) - 1; j >= 0; j-- {
				key := frameKey{r.FunctionName(loc, loc.Lines[j]), loc.Lines[j].File}
				id, ok := frameIDs[key]
				if !ok {
					id = len(f.Shared.Frames)
					f.Shared.Frames = append(f.Shared.Frames, speedscopeFrame{Name: key.name, File: key.file})
					frameIDs[key] = id
				}
				sample = append(sample, id)
			}
		}
		prof.Samples = append(prof.Samples, sample)
		prof.Weights = append(prof.Weights, weights[i])
		prof.EndValue += weights[i]
	}
	if f.Shared.Frames == nil {
		f.Shared.Frames = []speedscopeFrame{}
	}
	f.Profiles = []speedscopeProfile{prof}
	return json.NewEncoder(w).Encode(f)
}

// GroupsDocument is the JSON of groups (format "json").
type GroupsDocument struct {
	// SchemaVersion changes when a field changes meaning or goes away.
	SchemaVersion int      `json:"schema_version"`
	Records       int64    `json:"records"`
	UniqueStacks  int      `json:"unique_stacks"`
	Groups        []*Group `json:"groups"`
	Warnings      []string `json:"warnings,omitempty"`
}

// WriteGroupsJSON writes the groups as a GroupsDocument.
func (r *Result) WriteGroupsJSON(w io.Writer, groups []*Group) error {
	if groups == nil {
		groups = []*Group{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(GroupsDocument{SchemaVersion: 1, Records: r.Records, UniqueStacks: len(r.Stacks), Groups: groups, Warnings: r.Warnings})
}

// WriteSummary writes a one-screen text summary: totals and the top
// groups with their innermost functions.
func (r *Result) WriteSummary(w io.Writer, groups []*Group, top int) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%d stacks, %d unique, %d groups\n", r.Records, len(r.Stacks), len(groups))
	var total int64
	for _, g := range groups {
		total += g.Weight
	}
	for i, g := range groups {
		if i == top {
			fmt.Fprintf(bw, "… %d more groups\n", len(groups)-top)
			break
		}
		share := 0.0
		if total > 0 {
			share = 100 * float64(g.Weight) / float64(total)
		}
		fmt.Fprintf(bw, "\n#%d %s  weight %d (%.1f%%)  count %d  %d unique stacks", i+1, g.ID, g.Weight, share, g.Count, g.Stacks)
		if len(g.AppVersions) > 0 {
			fmt.Fprintf(bw, "  app %s", g.AppVersions[0].Value)
			if g.AppVersionsCount > 1 {
				fmt.Fprintf(bw, " +%d", g.AppVersionsCount-1)
			}
		}
		bw.WriteByte('\n')
		for _, name := range g.Fingerprint {
			fmt.Fprintf(bw, "    %s\n", name)
		}
	}
	for _, warn := range r.Warnings {
		fmt.Fprintf(bw, "warning: %s\n", warn)
	}
	return bw.Flush()
}
