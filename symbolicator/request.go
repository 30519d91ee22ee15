package symbolicator

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/internal/addrspan"
	"github.com/stackimage/stackimage/internal/pathbase"
	"github.com/stackimage/stackimage/uuid"
)

// Input is a request as a dump: each module an image, each stack trace a
// thread whose frames are a reporter's backtrace, without registers or
// memory, so that symbolize names the frames and walks nothing. The
// answer echoes the request's modules and frames as given.
type Input struct {
	Request *Request
	// Dump holds every module, in the request's order, and every stack
	// trace.
	Dump *dump.Dump
	// Fetch holds the images of the modules some frame lies in, with a
	// debug ID that is a UUID: only their symbols need looking up. The
	// others' modules say "unused" (or "malformed").
	Fetch *dump.Dump
	// IDs are the modules' UUIDs, IDErrors why a module's debug ID is
	// none, Used whether a frame lies in the module.
	IDs      []uuid.UUID
	IDErrors []error
	Used     []bool
}

// NewInput makes a request a dump. Stack traces given under the older
// name "threads" count when "stacktraces" is empty. A frame's address is
// placed in a module as symbolize places it (internal/addrspan), or, with
// addr_mode "rel:N", in module N; its adjust_instruction_addr, when
// given, says whether it is looked up one instruction back.
func NewInput(req *Request) *Input {
	if len(req.Stacktraces) == 0 {
		req.Stacktraces = req.Threads
	}
	n := len(req.Modules)
	in := &Input{Request: req, IDs: make([]uuid.UUID, n), IDErrors: make([]error, n), Used: make([]bool, n)}
	d := &dump.Dump{Format: dump.FormatSymbolicator, Images: make([]dump.Image, n), Threads: make([]dump.Thread, len(req.Stacktraces))}
	for i, m := range req.Modules {
		id := m.DebugID
		if id == "" {
			id = m.CodeID
		}
		in.IDs[i], in.IDErrors[i] = ParseDebugID(id)
		im := dump.Image{Name: moduleName(m), Path: m.CodeFile, LoadAddress: uint64(m.ImageAddr)}
		if in.IDErrors[i] == nil {
			im.UUID = in.IDs[i]
		}
		if m.ImageSize != nil {
			im.Size = uint64(*m.ImageSize)
		}
		d.Images[i] = im
	}
	spans := addrspan.Images(n, func(i int) (uint64, uint64) { return d.Images[i].LoadAddress, d.Images[i].Size })
	// One slab for every thread's frames.
	total := 0
	for _, st := range req.Stacktraces {
		total += len(st.Frames)
	}
	slab := make([]dump.Frame, total)
	for i, st := range req.Stacktraces {
		frames := slab[:len(st.Frames):len(st.Frames)]
		slab = slab[len(st.Frames):]
		for j, f := range st.Frames {
			addr := uint64(f.InstructionAddr)
			mod := -1
			if k, ok := relativeTo(f.AddrMode, n); ok {
				mod = k
				addr += d.Images[k].LoadAddress
			} else if !strings.HasPrefix(f.AddrMode, "rel:") {
				mod = addrspan.Index(spans, addr)
			}
			if mod >= 0 {
				in.Used[mod] = true
			}
			frames[j] = dump.Frame{Address: addr, ImageIndex: mod}
			if f.AdjustInstructionAddr != nil {
				frames[j].Lookup = dump.LookupAsGiven
				if *f.AdjustInstructionAddr {
					frames[j].Lookup = dump.LookupCaller
				}
			}
		}
		d.Threads[i] = dump.Thread{Index: i, Frames: frames}
	}
	in.Dump = d
	in.Fetch = &dump.Dump{Format: dump.FormatSymbolicator}
	for i, im := range d.Images {
		if in.Used[i] && in.IDErrors[i] == nil {
			in.Fetch.Images = append(in.Fetch.Images, im)
		}
	}
	return in
}

// Frames counts the request's frames.
func (in *Input) Frames() int {
	n := 0
	for _, st := range in.Request.Stacktraces {
		n += len(st.Frames)
	}
	return n
}

// Modules returns the request's modules as the answer gives them: a
// malformed debug ID's and an unused module's as such, the others as
// found says (called with the module's index and UUID).
func (in *Input) Modules(found func(m Module, id uuid.UUID) CompleteModule) []CompleteModule {
	out := make([]CompleteModule, len(in.Request.Modules))
	for i, m := range in.Request.Modules {
		switch {
		case in.IDErrors[i] != nil:
			out[i] = CompleteModule{Module: m, DebugStatus: StatusMalformed, Arch: "unknown", Error: in.IDErrors[i].Error()}
		case !in.Used[i]:
			out[i] = CompleteModule{Module: m, DebugStatus: StatusUnused, Arch: "unknown"}
		default:
			out[i] = found(m, in.IDs[i])
		}
	}
	return out
}

// relativeTo reads an addr_mode of "rel:N": the index of the module the
// address is relative to, when it is one of n.
func relativeTo(mode string, n int) (int, bool) {
	rel, ok := strings.CutPrefix(mode, "rel:")
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(rel)
	return i, err == nil && i >= 0 && i < n
}

// moduleName is the image's file name, which some symbol stores' layouts
// need.
func moduleName(m Module) string {
	name := m.CodeFile
	if name == "" {
		name = m.DebugFile
	}
	return pathbase.Base(name)
}

// ParseDebugID reads a module's debug ID as a Mach-O UUID: 32 hex digits,
// with or without dashes, and the Breakpad age "0" symbolicator may add.
func ParseDebugID(s string) (uuid.UUID, error) {
	t := s
	if len(t) == 38 && strings.HasSuffix(t, "-0") {
		t = t[:36]
	}
	if len(t) == 33 && t[32] == '0' && !strings.Contains(t, "-") {
		t = t[:32]
	}
	u, err := uuid.Parse(t)
	if err != nil {
		return uuid.UUID{}, fmt.Errorf("debug id %q: want a Mach-O UUID (32 hex digits, with or without dashes)", s)
	}
	return u, nil
}

// SourceIDs reads a request's "sources" as the names of sources the
// service has: each an object of "id" (and "type") alone, never a
// source's own settings (a URL, a path, credentials), which are the
// service's. nil means every source.
func SourceIDs(raw []json.RawMessage) ([]string, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	ids := make([]string, len(raw))
	for i, m := range raw {
		var ref map[string]any
		if err := json.Unmarshal(m, &ref); err != nil {
			return nil, fmt.Errorf("sources[%d]: %v", i, err)
		}
		ids[i], _ = ref["id"].(string)
		for k := range ref {
			if k != "id" && k != "type" {
				return nil, fmt.Errorf("sources[%d] (%s): only \"id\" (and \"type\") may be given; the source's settings are the service's", i, ids[i])
			}
		}
	}
	return ids, nil
}
