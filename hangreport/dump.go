package hangreport

import (
	"strings"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/internal/addrspan"
)

// Target returns the index in Processes of the process the report is
// about: for a spindump, the process the header's "Command:" or "PID:"
// names, else the first; -1 when there is none.
func (r *Report) Target() int {
	if len(r.Processes) == 0 {
		return -1
	}
	var command string
	var pid int
	for _, f := range r.Header {
		switch f.Key {
		case "Command":
			command = f.Value
		case "PID":
			pid, _ = atoi(f.Value)
		}
	}
	for i, pr := range r.Processes {
		if pid != 0 && pr.PID == pid || pid == 0 && command != "" && pr.Name == command {
			return i
		}
	}
	return 0
}

func atoi(s string) (int, bool) {
	v, ok := parseNumber(s)
	if !ok || v > 1<<31 {
		return 0, false
	}
	return int(v), true
}

// Dump returns the target process (see Target) in the common dump model;
// Dumps returns every process.
func (r *Report) Dump() *dump.Dump { return r.processDump(r.Target()) }

// Dumps returns every process of the report in the common dump model, in
// the report's order: Dumps()[i] is Processes[i].
func (r *Report) Dumps() []*dump.Dump {
	out := make([]*dump.Dump, len(r.Processes))
	for i := range r.Processes {
		out[i] = r.processDump(i)
	}
	return out
}

// processDump returns process i of the report in the common dump model.
//
// A call graph is a tree, not a stack; the model's threads hold stacks.
// Each call-graph thread becomes one dump.Thread whose Frames are every
// node that has an address, in the report's order (each node before its
// children, siblings in order). Frames[0] is the first root, not a PC,
// and a node's caller is its parent, not the frame before it in Frames:
// the list is there so that every address of the graph is symbolicated.
// To print names back into the graph use Write. A spindump's Heaviest
// stack is left out: its addresses are in the threads.
func (r *Report) processDump(i int) *dump.Dump {
	d := &dump.Dump{Format: dump.FormatSample, Warnings: append([]string(nil), r.Warnings...),
		Counting: dump.CountAllThreads} // every thread was sampled
	if r.Kind == KindMicrostackshot {
		d.Format = dump.FormatMicrostackshot
		d.Annotations = r.eventAnnotations()
	}
	header := map[string]string{}
	for _, f := range r.Header {
		if _, ok := header[f.Key]; !ok {
			header[f.Key] = f.Value
		}
	}
	d.System.OS = header["OS Version"]
	d.System.Hardware = header["Hardware model"]
	d.Process.Time = header["Date/Time"]
	if i < 0 || i >= len(r.Processes) {
		d.Arch = archFor(header["Architecture"])
		return d
	}
	pr := r.Processes[i]
	d.Process.Name, d.Process.PID, d.Process.Path = pr.Name, pr.PID, pr.Path
	d.Process.Identifier, d.Process.Version = pr.Identifier, pr.Version
	arch := pr.Arch
	if arch == "" {
		arch = header["Architecture"]
	}
	d.Arch = archFor(arch)
	if d.Arch == nil && arch != "" {
		d.Warnings = append(d.Warnings, "architecture "+arch+" is not one this package knows")
	}
	for _, im := range pr.Images {
		di := dump.Image{Name: im.shortName(), Path: im.Path, UUID: im.UUID, LoadAddress: im.Start, Version: im.Version}
		if im.Path == "???" {
			di.Path = ""
		}
		if im.HasEnd && im.End >= im.Start {
			di.Size = im.End - im.Start + 1
		}
		d.Images = append(d.Images, di)
	}
	spans := addrspan.Images(len(d.Images), func(j int) (uint64, uint64) { return d.Images[j].LoadAddress, d.Images[j].Size })
	imageOf := func(addr uint64) int { return addrspan.Index(spans, addr) }
	for ti := range pr.Threads {
		th := &pr.Threads[ti]
		if th.Heaviest {
			continue
		}
		dt := dump.Thread{Index: len(d.Threads), ID: th.ID, Name: threadName(th.Heading)}
		for ni := range th.Nodes {
			f := r.Frame(th.Nodes[ni].Text)
			if f.Address, f.HasAddress = r.FrameAddress(i, f); !f.HasAddress {
				continue
			}
			df := dump.Frame{Address: f.Address, ImageIndex: imageOf(f.Address), ImageName: f.Image,
				Symbol: f.Symbol, SymbolOffset: f.SymbolOffset, HasSymbolOffset: f.HasOffset, File: f.File, Line: f.Line}
			if strings.HasPrefix(df.ImageName, "<") {
				df.ImageName = "" // sample's "<unknown binary>"
			}
			if df.ImageIndex >= 0 {
				df.ImageOffset = f.Address - d.Images[df.ImageIndex].LoadAddress
			}
			dt.Frames = append(dt.Frames, df)
		}
		d.Threads = append(d.Threads, dt)
	}
	return d
}

// FrameAddress returns the address of frame f of process pi: the one it
// wrote ("[0x1007f5050]"), else its image's load address in the
// process's Binary Images plus its offset ("(dyld + 82408)", as some
// microstackshot reports write frames). ok is false when neither is
// known.
func (r *Report) FrameAddress(pi int, f Frame) (addr uint64, ok bool) {
	if f.HasAddress {
		return f.Address, true
	}
	if !f.HasImageOffset || f.Image == "" || pi < 0 || pi >= len(r.Processes) {
		return 0, false
	}
	start, ok := r.Processes[pi].imageStarts[f.Image]
	return start + f.ImageOffset, ok
}

// indexImages maps each process's image names (the file name frames
// give, and the name the list gives) to their load addresses, the first
// image of a name winning, for FrameAddress.
func (r *Report) indexImages() {
	for _, pr := range r.Processes {
		if len(pr.Images) == 0 {
			continue
		}
		pr.imageStarts = make(map[string]uint64, len(pr.Images))
		for _, im := range pr.Images {
			for _, name := range []string{im.shortName(), im.Name} {
				if _, seen := pr.imageStarts[name]; !seen && name != "" {
					pr.imageStarts[name] = im.Start
				}
			}
		}
	}
}

// eventFields are the header fields of a microstackshot report that say
// what happened, kept as the dump's annotations: the event, what the
// system did, the measure that crossed its limit, and the sampling.
var eventFields = []string{"Event", "Action taken", "CPU", "Writes", "Wakeups", "Duration", "Duration Sampled", "Steps"}

// eventAnnotations returns a microstackshot report's event fields (and
// its .ips bug_type) as annotations, in eventFields' order.
func (r *Report) eventAnnotations() []dump.Annotation {
	var out []dump.Annotation
	if r.BugType != "" {
		out = append(out, dump.Annotation{Key: "bug_type", Value: r.BugType})
	}
	for _, key := range eventFields {
		for _, f := range r.Header {
			if f.Key == key {
				out = append(out, dump.Annotation{Key: key, Value: f.Value})
				break
			}
		}
	}
	return out
}

// Event returns a microstackshot report's "Event:" ("cpu usage", "disk
// writes", "wakeups"); empty for other reports.
func (r *Report) Event() string {
	if r.Kind != KindMicrostackshot {
		return ""
	}
	for _, f := range r.Header {
		if f.Key == "Event" {
			return f.Value
		}
	}
	return ""
}

// threadName picks a thread's name or queue from its heading: sample's
// "DispatchQueue_1: com.apple.main-thread  (serial)", spindump's
// `Thread name "x"` or `DispatchQueue "x"(1)`.
func threadName(heading string) string {
	for _, key := range []string{`Thread name "`, `DispatchQueue "`} {
		if i := strings.Index(heading, key); i >= 0 {
			rest := heading[i+len(key):]
			if j := strings.IndexByte(rest, '"'); j >= 0 {
				return rest[:j]
			}
		}
	}
	if i := strings.Index(heading, "DispatchQueue_"); i >= 0 {
		if _, rest, ok := strings.Cut(heading[i:], ": "); ok {
			if j := strings.Index(rest, "  "); j >= 0 {
				rest = rest[:j]
			}
			return strings.TrimSpace(rest)
		}
	}
	return ""
}

// archFor maps "X86-64", "ARM64", "arm64e", "x86_64h" to an Arch.
func archFor(name string) *archregs.Arch {
	n := strings.ToLower(strings.TrimSpace(name))
	if i := strings.IndexByte(n, ' '); i >= 0 {
		n = n[:i] // "x86-64 (native)"
	}
	switch n {
	case "x86-64", "x86_64h":
		n = "x86_64"
	case "arm-64":
		n = "arm64"
	case "arm-64e":
		n = "arm64e"
	case "x86":
		n = "i386"
	}
	a, err := archregs.ByName(n)
	if err != nil {
		return nil
	}
	return a
}
