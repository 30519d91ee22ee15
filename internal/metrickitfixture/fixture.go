// Package metrickitfixture writes MetricKit payloads whose frames are in
// the fixture binaries (fixtures/bin), from a seed, and keeps the truth
// of what it wrote: each frame's binary and offset, each call tree's
// sample counts. The tests read the payloads through the library and
// check the names, files and lines the symbolicator gives against
// llvm-symbolizer on the same binaries, and the weights aggregate gives
// against the truth; testdata/metrickit holds payloads it wrote
// (TestMetricKitFixtures in cmd/stackimage rewrites them with -update).
package metrickitfixture

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/uuid"
)

// Binary is an image frames may be in.
type Binary struct {
	Name string
	UUID uuid.UUID
	// Functions are [start, end) ranges of the image's functions, as
	// offsets from the image's load address (its __TEXT vmaddr); empty for
	// a system library the fixtures have no file of.
	Functions [][2]uint64
	// Path is the binary's file, empty for a system library.
	Path string
}

// LoadBinary reads a fixture binary's UUID and function ranges
// (LC_FUNCTION_STARTS, the last function ending with __text).
func LoadBinary(path, name string) (Binary, error) {
	f, err := image.Open(path)
	if err != nil {
		return Binary{}, err
	}
	defer f.Close()
	im := f.Images[0]
	starts, err := im.FunctionStarts()
	if err != nil {
		return Binary{}, err
	}
	text, _ := im.TextSegment()
	sect, ok := im.Section("__TEXT", "__text")
	if !ok || len(starts) == 0 {
		return Binary{}, fmt.Errorf("%s: no __text or no function starts", path)
	}
	b := Binary{Name: name, UUID: im.UUID, Path: path}
	for i, s := range starts {
		end := sect.Addr + sect.Size
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		if end-s >= 8 { // room for an address past the first instruction
			b.Functions = append(b.Functions, [2]uint64{s - text.Addr, end - text.Addr})
		}
	}
	return b, nil
}

// SystemLibrary is a binary the fixtures have no file of: its frames stay
// unnamed, as a system library's in a real payload.
func SystemLibrary(name string, id uuid.UUID) Binary { return Binary{Name: name, UUID: id} }

// Frame is one frame of a generated tree.
type Frame struct {
	Binary  int // index in Payload.Binaries; -1 for a frame naming no binary
	Offset  uint64
	Address uint64
	// Count is the frame's sampleCount: its own samples plus its
	// children's.
	Count    uint64
	Self     uint64 // the samples with this frame on top
	Children []*Frame
}

// Stack is one call stack of a diagnostic.
type Stack struct {
	ThreadAttributed bool
	Roots            []*Frame
}

// Diagnostic is one generated diagnostic.
type Diagnostic struct {
	Key       string // the payload's array: "crashDiagnostics"
	PerThread bool
	Stacks    []Stack
	Metadata  map[string]any
}

// Payload is what Generate wrote.
type Payload struct {
	Binaries    []Binary
	LoadAddress []uint64 // by binary
	Diagnostics []Diagnostic
	// Quirk says the crash diagnostics' offsetIntoBinaryTextSegment holds
	// the load address (as iOS 14 and 15 wrote it).
	Quirk bool
	JSON  []byte
}

// Generate writes a payload of one crash, one hang, one CPU exception,
// one disk-write exception and one app-launch diagnostic whose frames are
// in bins, chosen by seed. The first binary is loaded lowest (the main
// executable), the others above it; system libraries (no functions)
// far above, as the shared cache is. With quirk, the crash diagnostic's
// frames hold their image's load address in offsetIntoBinaryTextSegment.
func Generate(bins []Binary, seed uint64, quirk bool) *Payload {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	p := &Payload{Binaries: bins, Quirk: quirk}
	next := uint64(0x100000000) + uint64(rng.IntN(64))<<14
	system := uint64(0x180000000) + uint64(rng.IntN(1024))<<14
	for _, b := range bins {
		if len(b.Functions) == 0 {
			p.LoadAddress = append(p.LoadAddress, system)
			system += 0x1000000
			continue
		}
		p.LoadAddress = append(p.LoadAddress, next)
		next += 0x100000 + uint64(rng.IntN(16))<<14
	}
	g := &gen{rng: rng, p: p}
	meta := func(extra map[string]any) map[string]any {
		m := map[string]any{"appBuildVersion": "41", "appVersion": "2.3", "osVersion": "iPhone OS 15.4 (19E241)",
			"deviceType": "iPhone14,2", "platformArchitecture": "arm64e", "regionFormat": "US", "bundleIdentifier": "com.example.Chain"}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	crash := Diagnostic{Key: "crashDiagnostics", PerThread: true, Metadata: meta(map[string]any{
		"exceptionType": 1, "exceptionCode": 0, "signal": 11, "terminationReason": "Namespace SIGNAL, Code 0xb",
		"virtualMemoryRegionInfo": "0 is not in any region."})}
	threads := 2 + rng.IntN(3)
	attributed := rng.IntN(threads)
	for t := 0; t < threads; t++ {
		crash.Stacks = append(crash.Stacks, Stack{ThreadAttributed: t == attributed, Roots: []*Frame{g.chain(3 + rng.IntN(6))}})
	}
	p.Diagnostics = append(p.Diagnostics, crash)
	p.Diagnostics = append(p.Diagnostics, Diagnostic{Key: "hangDiagnostics", PerThread: true, Metadata: meta(map[string]any{"hangDuration": "3.2 sec"}),
		Stacks: []Stack{{ThreadAttributed: true, Roots: []*Frame{g.tree(0, 5)}}, {Roots: []*Frame{g.tree(0, 3)}}}})
	p.Diagnostics = append(p.Diagnostics, Diagnostic{Key: "cpuExceptionDiagnostics", Metadata: meta(map[string]any{"totalCPUTime": "90 sec", "totalSampledTime": "180 sec"}),
		Stacks: []Stack{{Roots: []*Frame{g.tree(0, 5), g.tree(0, 4)}}}})
	p.Diagnostics = append(p.Diagnostics, Diagnostic{Key: "diskWriteExceptionDiagnostics", Metadata: meta(map[string]any{"writesCaused": "2,147 MB"}),
		Stacks: []Stack{{Roots: []*Frame{g.tree(0, 4)}}}})
	p.Diagnostics = append(p.Diagnostics, Diagnostic{Key: "appLaunchDiagnostics", PerThread: true, Metadata: meta(map[string]any{"launchDuration": "12 sec"}),
		Stacks: []Stack{{ThreadAttributed: true, Roots: []*Frame{g.tree(0, 4)}}}})
	p.JSON = p.write()
	return p
}

type gen struct {
	rng *rand.Rand
	p   *Payload
}

// frame makes a frame at a random address inside a random function of a
// random binary (a system library's at a random offset). Addresses are
// past a function's first instruction, so that the address less one, a
// caller's lookup address, is in the same function.
func (g *gen) frame() *Frame {
	bi := g.rng.IntN(len(g.p.Binaries))
	b := g.p.Binaries[bi]
	var off uint64
	if len(b.Functions) == 0 {
		off = 0x1000 + uint64(g.rng.IntN(1<<20))&^3
	} else {
		fn := b.Functions[g.rng.IntN(len(b.Functions))]
		steps := (fn[1] - fn[0]) / 4
		off = fn[0] + 4*(1+uint64(g.rng.IntN(int(steps-1))))
	}
	return &Frame{Binary: bi, Offset: off, Address: g.p.LoadAddress[bi] + off}
}

// chain makes a crash's call stack: depth frames, one sample on top.
func (g *gen) chain(depth int) *Frame {
	root := g.frame()
	root.Count = 1
	f := root
	for i := 1; i < depth; i++ {
		c := g.frame()
		c.Count = 1
		f.Children = []*Frame{c}
		f = c
	}
	f.Self = 1
	return root
}

// tree makes a call tree with sample counts, maxDepth deep at most.
func (g *gen) tree(depth, maxDepth int) *Frame {
	f := g.frame()
	if depth+1 < maxDepth {
		for n := g.rng.IntN(3); n > 0 || depth < 2 && len(f.Children) == 0; n-- {
			f.Children = append(f.Children, g.tree(depth+1, maxDepth))
		}
	}
	if len(f.Children) == 0 || g.rng.IntN(3) == 0 {
		f.Self = 1 + uint64(g.rng.IntN(40))
	}
	f.Count = f.Self
	for _, c := range f.Children {
		f.Count += c.Count
	}
	return f
}

// write spells the payload as MXDiagnosticPayload.jsonRepresentation()
// does.
func (p *Payload) write() []byte {
	doc := map[string]any{"timeStampBegin": "2026-11-28 00:00:00", "timeStampEnd": "2026-11-28 23:59:59"}
	for _, d := range p.Diagnostics {
		var stacks []any
		for _, s := range d.Stacks {
			var roots []any
			for _, r := range s.Roots {
				roots = append(roots, p.frameJSON(r, d.Key == "crashDiagnostics"))
			}
			st := map[string]any{"callStackRootFrames": roots}
			if d.PerThread {
				st["threadAttributed"] = s.ThreadAttributed
			}
			stacks = append(stacks, st)
		}
		entry := map[string]any{"version": "1.0.0", "diagnosticMetaData": d.Metadata,
			"callStackTree": map[string]any{"callStacks": stacks, "callStackPerThread": d.PerThread}}
		list, _ := doc[d.Key].([]any)
		doc[d.Key] = append(list, entry)
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		panic(err) // maps of strings, numbers and slices always encode
	}
	return append(out, '\n')
}

func (p *Payload) frameJSON(f *Frame, crash bool) map[string]any {
	b := p.Binaries[f.Binary]
	offset := f.Offset
	if crash && p.Quirk {
		offset = p.LoadAddress[f.Binary]
	}
	m := map[string]any{"binaryUUID": strings.ToUpper(b.UUID.String()), "binaryName": b.Name,
		"offsetIntoBinaryTextSegment": offset, "address": f.Address, "sampleCount": f.Count}
	if len(f.Children) > 0 {
		var subs []any
		for _, c := range f.Children {
			subs = append(subs, p.frameJSON(c, crash))
		}
		m["subFrames"] = subs
	}
	return m
}

// Walk calls fn for every frame of a stack, with the path from its root
// to it (the frame last).
func Walk(s Stack, fn func(path []*Frame)) {
	var walk func(path []*Frame)
	walk = func(path []*Frame) {
		fn(path)
		for _, c := range path[len(path)-1].Children {
			walk(append(path[:len(path):len(path)], c))
		}
	}
	for _, r := range s.Roots {
		walk([]*Frame{r})
	}
}
