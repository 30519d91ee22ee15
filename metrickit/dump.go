package metrickit

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/dump"
)

// pageSize is the smallest page an Apple image is loaded on: a load
// address is a multiple of it (16 KiB pages on arm64 are multiples too).
const pageSize = 0x1000

// Placement is where a diagnostic's frames are in their images: each
// frame's image (an index in the diagnostic's Images, -1 for a frame
// naming none), its offset in the image and its absolute address.
type Placement struct {
	// Images are the binaries the diagnostic's frames name, in the order
	// first named, each with its load address as the frames give it.
	Images []dump.Image
	// Binaries maps each of Images to its index in Input.Binaries.
	Binaries []int32
	// Quirk says, by image, that the frames' offsetIntoBinaryTextSegment
	// held the image's load address (iOS 14 and 15 crash diagnostics).
	Quirk []bool
	// Warnings says what did not agree.
	Warnings []string

	byBinary map[int32]int
}

// Place finds where diagnostic d's frames are. MetricKit lists no
// binary images: each image's load address is a frame's address less its
// offset. iOS 14 and 15 wrote, in crash diagnostics, the load address
// itself in offsetIntoBinaryTextSegment; such an image's frames all hold
// the one page-aligned value there, below the address by less than the
// value, and the offset is then address minus that value. An image is
// taken as written that way when more of its frames say so than say
// otherwise (a frame whose address less its offset is page-aligned, the
// offset not being so, is a normal one).
func (in *Input) Place(d *Diagnostic) *Placement {
	pl := &Placement{byBinary: map[int32]int{}}
	type votes struct{ quirk, normal int }
	var vs []votes
	for si := range d.Tree.Stacks {
		for _, f := range d.Tree.Stacks[si].Frames {
			if f.Binary < 0 {
				continue
			}
			i, ok := pl.byBinary[f.Binary]
			if !ok {
				i = len(pl.Images)
				pl.byBinary[f.Binary] = i
				b := in.Binaries[f.Binary]
				name := b.Name
				if name == "" {
					name = b.UUID.String() // a frame naming its UUID alone
				}
				pl.Images = append(pl.Images, dump.Image{Name: name, UUID: b.UUID})
				pl.Binaries = append(pl.Binaries, f.Binary)
				vs = append(vs, votes{})
			}
			if f.Has&(HasOffset|HasAddress) != HasOffset|HasAddress {
				continue
			}
			switch {
			case looksLikeLoadAddress(f.Offset, f.Address):
				vs[i].quirk++
			case f.Offset <= f.Address && (f.Address-f.Offset)%pageSize == 0 && f.Offset%pageSize != 0:
				vs[i].normal++
			}
		}
	}
	pl.Quirk = make([]bool, len(pl.Images))
	known := make([]bool, len(pl.Images))
	disagree := make([]bool, len(pl.Images))
	for si := range d.Tree.Stacks {
		for _, f := range d.Tree.Stacks[si].Frames {
			if f.Binary < 0 || f.Has&(HasOffset|HasAddress) != HasOffset|HasAddress {
				continue
			}
			i := pl.byBinary[f.Binary]
			quirk := vs[i].quirk > vs[i].normal
			pl.Quirk[i] = quirk
			load := f.Address - f.Offset
			if quirk {
				load = f.Offset
			}
			if f.Offset > f.Address {
				continue // no load address: the frame says nothing of where
			}
			im := &pl.Images[i]
			switch {
			case !known[i]:
				im.LoadAddress, known[i] = load, true
			case im.LoadAddress != load && !disagree[i]:
				disagree[i] = true // said once per image
				pl.Warnings = append(pl.Warnings, fmt.Sprintf("%s: frames give load addresses %#x and %#x; the first is kept (each frame keeps its own offset)", im.Name, im.LoadAddress, load))
			}
		}
	}
	for i, q := range pl.Quirk {
		if q {
			pl.Warnings = append(pl.Warnings, fmt.Sprintf("%s: offsetIntoBinaryTextSegment holds the load address %#x (as iOS 14 and 15 wrote it); offsets are the addresses less it", pl.Images[i].Name, pl.Images[i].LoadAddress))
		}
	}
	return pl
}

// looksLikeLoadAddress reports whether value, a frame's
// offsetIntoBinaryTextSegment, reads as its image's load address rather
// than an offset: non-zero, page-aligned, not above the address, the
// address less it (the offset) smaller than it and not page-aligned.
func looksLikeLoadAddress(value, address uint64) bool {
	if value == 0 || value%pageSize != 0 || value > address {
		return false
	}
	off := address - value
	return off < value && off%pageSize != 0
}

// Frame places frame f: its image's index in Images (-1 for none), its
// absolute address and its offset in the image.
func (pl *Placement) Frame(f *Frame) (image int, address, offset uint64) {
	image = -1
	if f.Binary >= 0 {
		image = pl.byBinary[f.Binary]
	}
	address, offset = f.Address, f.Offset
	if image < 0 {
		return image, address, 0
	}
	load := pl.Images[image].LoadAddress
	switch {
	case pl.Quirk[image] && f.Has&HasAddress != 0:
		offset = f.Address - load
	case f.Has&HasAddress == 0 && f.Has&HasOffset != 0:
		address = load + f.Offset // only the offset given
	case f.Has&HasAddress != 0 && f.Has&HasOffset == 0:
		offset = f.Address - load
	}
	return image, address, offset
}

// Dumps returns every diagnostic of the input in the common dump model,
// in order: the first payload's diagnostics, then the next payload's.
func (in *Input) Dumps() []*dump.Dump {
	var out []*dump.Dump
	for pi := range in.Payloads {
		p := &in.Payloads[pi]
		for di := range p.Diagnostics {
			out = append(out, in.Dump(p, &p.Diagnostics[di]))
		}
	}
	return out
}

// Dump returns diagnostic d of payload p in the common dump model.
//
// A crash diagnostic's call stacks are its threads, innermost frame
// first, the thread-attributed one crashed; the metadata fills the header
// (exception, signal, termination reason, OS, device, app version, the
// architecture). Any other diagnostic (a hang, CPU, disk-write or launch
// diagnostic, a bare tree) is a call graph, as a sample report is:
// each call stack is a thread whose Frames are every frame in the tree's
// order (each before its subFrames), and CallGraph is set; the sample
// counts are in the Input. A crash call stack that branches (it should
// not) is listed that way too. Every metadata field, the diagnostic's
// kind and version and the payload's timestamps are the dump's
// Annotations, in that order.
func (in *Input) Dump(p *Payload, d *Diagnostic) *dump.Dump {
	dd := &dump.Dump{Format: dump.FormatMetricKit, CallerAddresses: dump.ReturnAddresses}
	meta := d.MetadataValue
	dd.System.OS = meta("osVersion")
	dd.System.Hardware = meta("deviceType")
	dd.Process.Identifier = meta("bundleIdentifier")
	dd.Process.Version = d.AppVersion()
	dd.Process.Time = p.TimeStampEnd
	if arch := meta("platformArchitecture"); arch != "" {
		if a, err := archregs.ByName(strings.ToLower(arch)); err == nil {
			dd.Arch = a
		} else {
			dd.Warnings = append(dd.Warnings, "platformArchitecture "+arch+" is not one this package knows")
		}
	}
	dd.Annotations = append(dd.Annotations, dump.Annotation{Key: "diagnostic", Value: string(d.Kind)})
	if d.Version != "" {
		dd.Annotations = append(dd.Annotations, dump.Annotation{Key: "version", Value: d.Version})
	}
	if p.TimeStampBegin != "" {
		dd.Annotations = append(dd.Annotations, dump.Annotation{Key: "timeStampBegin", Value: p.TimeStampBegin})
	}
	if p.TimeStampEnd != "" {
		dd.Annotations = append(dd.Annotations, dump.Annotation{Key: "timeStampEnd", Value: p.TimeStampEnd})
	}
	for _, f := range d.Metadata {
		dd.Annotations = append(dd.Annotations, dump.Annotation{Key: f.Key, Value: f.Value})
	}
	if d.Kind == KindCrash {
		dd.Crash = crashOf(d)
	}
	pl := in.Place(d)
	dd.Images = pl.Images
	dd.Warnings = append(dd.Warnings, pl.Warnings...)
	dd.CallGraph = d.Kind != KindCrash
	if d.Kind != KindCrash {
		dd.Counting = dump.CountAllThreads // every thread was sampled
	}
	if !dd.CallGraph {
		for si := range d.Tree.Stacks {
			if !isChain(d.Tree.Stacks[si].Frames) {
				dd.CallGraph = true
			}
		}
	}
	for si := range d.Tree.Stacks {
		st := &d.Tree.Stacks[si]
		t := dump.Thread{Index: si, Crashed: d.Kind == KindCrash && st.ThreadAttributed}
		if !d.Tree.PerThread && len(d.Tree.Stacks) == 1 && d.Kind != KindCrash {
			t.Name = "all threads" // one tree merging every thread's samples
		}
		t.Frames = make([]dump.Frame, 0, len(st.Frames))
		for fi := range st.Frames {
			f := &st.Frames[fi]
			if f.Has&(HasAddress|HasOffset) == 0 {
				continue // nowhere: nothing to name
			}
			image, address, offset := pl.Frame(f)
			df := dump.Frame{Address: address, ImageIndex: image}
			if image >= 0 {
				im := &pl.Images[image]
				df.ImageName, df.ImageOffset, df.ImageLoadAddress = im.Name, offset, im.LoadAddress
			}
			t.Frames = append(t.Frames, df)
		}
		if !dd.CallGraph {
			// A chain is listed outermost first: a stack is innermost first.
			for i, j := 0, len(t.Frames)-1; i < j; i, j = i+1, j-1 {
				t.Frames[i], t.Frames[j] = t.Frames[j], t.Frames[i]
			}
		}
		dd.Threads = append(dd.Threads, t)
	}
	return dd
}

// isChain reports whether frames (in pre-order) are one path: one root,
// each frame the parent of the next.
func isChain(frames []Frame) bool {
	for i := range frames {
		if frames[i].Parent != int32(i)-1 {
			return false
		}
	}
	return true
}

// AppVersion joins the metadata's appVersion and appBuildVersion as
// Apple's reports write them: "2.3 (41)".
func (d *Diagnostic) AppVersion() string {
	version, build := d.MetadataValue("appVersion"), d.MetadataValue("appBuildVersion")
	switch {
	case version == "":
		return build
	case build == "" || build == version:
		return version
	}
	return version + " (" + build + ")"
}

// crashOf reads a crash diagnostic's metadata: exceptionType is a Mach
// exception number, signal a signal number, exceptionCode the first
// exception code.
func crashOf(d *Diagnostic) *dump.Crash {
	c := &dump.Crash{Diagnosis: d.MetadataValue("terminationReason")}
	if v := d.MetadataValue("exceptionType"); v != "" {
		c.Type = nameOf(v, machExceptions)
	}
	if v := d.MetadataValue("signal"); v != "" {
		c.Signal = nameOf(v, signals)
	}
	if v := d.MetadataValue("exceptionCode"); v != "" {
		c.Codes = v
		if n, err := strconv.ParseUint(v, 10, 64); err == nil {
			c.Codes = fmt.Sprintf("%#x", n)
		}
	}
	return c
}

// nameOf names a number by table ("11" is SIGSEGV); a value that is
// not a number the table names is kept as it is.
func nameOf(v string, table []string) string {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n >= len(table) || table[n] == "" {
		return v
	}
	return table[n]
}

// machExceptions are <mach/exception_types.h>'s exception numbers.
var machExceptions = []string{1: "EXC_BAD_ACCESS", 2: "EXC_BAD_INSTRUCTION", 3: "EXC_ARITHMETIC", 4: "EXC_EMULATION",
	5: "EXC_SOFTWARE", 6: "EXC_BREAKPOINT", 7: "EXC_SYSCALL", 8: "EXC_MACH_SYSCALL", 9: "EXC_RPC_ALERT", 10: "EXC_CRASH",
	11: "EXC_RESOURCE", 12: "EXC_GUARD", 13: "EXC_CORPSE_NOTIFY"}

// signals are Darwin's signal numbers (<sys/signal.h>).
var signals = []string{1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT", 7: "SIGEMT",
	8: "SIGFPE", 9: "SIGKILL", 10: "SIGBUS", 11: "SIGSEGV", 12: "SIGSYS", 13: "SIGPIPE", 14: "SIGALRM", 15: "SIGTERM",
	16: "SIGURG", 17: "SIGSTOP", 18: "SIGTSTP", 19: "SIGCONT", 20: "SIGCHLD", 21: "SIGTTIN", 22: "SIGTTOU", 23: "SIGIO",
	24: "SIGXCPU", 25: "SIGXFSZ", 26: "SIGVTALRM", 27: "SIGPROF", 28: "SIGWINCH", 29: "SIGINFO", 30: "SIGUSR1", 31: "SIGUSR2"}
