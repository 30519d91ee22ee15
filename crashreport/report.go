// Package crashreport parses crash reports written by other tools into one
// model: Apple's JSON .ips reports (iOS 15+, macOS 12+), the classic text
// .crash format (Apple ReportCrash and KSCrash's Apple-style output), and
// KSCrash's JSON reports.
//
// Parsing is pure: nothing is symbolized or read from disk. A report that
// is malformed or truncated still yields every thread that could be read:
// Parse returns a non-nil *Report together with a non-nil error, and the
// error names the field (or line) that stopped it. See docs/crashreports.md
// for how each format's fields map onto the model.
package crashreport

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/internal/addrspan"
	"github.com/stackimage/stackimage/uuid"
)

// Format names a crash report format.
type Format string

// The formats this package reads.
const (
	FormatIPS     Format = "ips"     // Apple JSON crash report, bug_type 309
	FormatCrash   Format = "crash"   // classic text .crash report
	FormatKSCrash Format = "kscrash" // KSCrash JSON report
)

// Limits on input. They bound memory on hostile input: a real report is a
// few hundred KiB and has at most a few hundred threads.
const (
	MaxReportSize = 64 << 20 // bytes of input accepted by Parse and the ParseXxx functions
	MaxThreads    = 1 << 14  // threads per report
	MaxFrames     = 1 << 16  // frames per thread (and in the last exception backtrace)
	MaxImages     = 1 << 16  // binary images per report
	maxErrors     = 10       // errors joined into the returned error; more are counted
)

// Report is one crash report in the common model.
type Report struct {
	Format Format
	// Arch is the crashed process's architecture; nil when the report does
	// not say or names one archregs does not know.
	Arch *archregs.Arch

	// Header fields, as the report wrote them (empty when absent).
	Process    string // process name
	PID        int    // 0 when unknown
	Path       string // path of the main executable
	Identifier string // bundle identifier
	Version    string // app version, "1.0 (1)"
	OS         string // "macOS 12.4 (21F79)"
	Hardware   string // hardware model, "iPhone3,1"
	Time       string // crash time
	IncidentID string
	BugType    string // .ips metadata bug_type ("309" for crashes)
	// ReportVersion is the version of the reporter's format as the report
	// states it: KSCrash report.version ("2.0" from {major, minor}, or
	// "3.3.0" as written). Consumers need it because KSCrash changed how it
	// writes frame addresses between versions. Empty when not given.
	ReportVersion string

	Exception Exception

	// CrashedThread indexes Threads; -1 when no thread is marked crashed.
	CrashedThread int
	Threads       []Thread
	// LastExceptionBacktrace is where an uncaught exception (NSException,
	// C++) was thrown, when the reporter recorded it.
	LastExceptionBacktrace []Frame
	// RecrashThread is the crash reporter's own crashed thread when the
	// reporter crashed while writing the report (KSCrash recrash_report).
	RecrashThread *Thread

	Images []Image

	// Warnings lists what could not be read but did not make the report
	// incomplete (an unknown register name, an unparsable UUID, ...).
	Warnings []string
}

// Exception describes why the process died, in the dump model's type:
// Codes as the report wrote them ("KERN_INVALID_ADDRESS at 0x1"), Address
// when the reporter gave the faulting address apart from Codes, Name and
// Reason of an uncaught language exception or the Application Specific
// Information, Diagnosis the reporter's own (KSCrash). In a Report,
// HasAddress and ThreadID are left unset: Report.Dump sets HasAddress
// when Address is not zero, and the crashed thread is the one marked
// Crashed.
type Exception = dump.Crash

// Image is one loaded binary image, in the dump model's type. VMAddress
// is set when the reporter gave __TEXT's unslid address (KSCrash
// image_vmaddr); Arch and Version are as the report wrote them; DebugID is
// never set by a crash report.
type Image = dump.Image

// Thread is one thread of the crashed process, in the dump model's type:
// Index and ID are the reporter's thread number ("Thread 3"), KernelID
// the kernel's thread ID when the report gives it (.ips), Frames the
// reporter's backtrace, innermost first, and SkippedFrames the frames it
// left out (KSCrash "skipped"). Stack, when the report holds a dump of
// the thread's stack (KSCrash), is a *StackDump, and StackLow and
// StackHigh bound it.
type Thread = dump.Thread

// newThread returns thread number n.
func newThread(n int) Thread { return Thread{Index: n, ID: uint64(n)} }

// setStack gives t the dump of its stack, st; nothing when st is nil.
func setStack(t *Thread, st *StackDump) {
	if st == nil {
		return
	}
	t.Stack = st
	t.StackLow, t.StackHigh = st.Start, st.Start+uint64(len(st.Data))
}

// Frame is one frame of a reporter's backtrace, in the dump model's type:
// Address is the PC for frame 0 and a return address for callers, the
// image fields place it in Report.Images (ImageIndex -1 when not there),
// and Symbol, File and Line are what the reporter gave. In a Report,
// ImageLoadAddress is set only for a frame whose image is not in
// Report.Images: the load address the frame itself gave (text
// "0x7fff61bc6000 + 3114", KSCrash object_addr), so that it can still be
// shown as the report wrote it. Report.Dump fills it in for the others.
type Frame = dump.Frame

// StackDump is a copy of part of a thread's stack. It satisfies
// walker.Memory.
type StackDump struct {
	Start uint64 // address of Data[0]
	Data  []byte
	// SP is the stack pointer the reporter recorded with the dump; 0 when
	// it recorded none.
	SP        uint64
	GrowsDown bool // true for every Apple platform; KSCrash grow_direction "-"
	// Overflow reports that the reporter detected a stack overflow.
	Overflow bool
}

// ReadMemory copies the dumped bytes at addr into p. It returns the number
// of bytes copied and an error when fewer than len(p) lie in the dump.
func (s *StackDump) ReadMemory(p []byte, addr uint64) (int, error) {
	end := s.Start + uint64(len(s.Data))
	if addr < s.Start || addr >= end {
		return 0, fmt.Errorf("crashreport: %#x is outside the stack dump [%#x, %#x)", addr, s.Start, end)
	}
	n := copy(p, s.Data[addr-s.Start:])
	if n < len(p) {
		return n, fmt.Errorf("crashreport: read of %d bytes at %#x runs past the stack dump's end %#x", len(p), addr, end)
	}
	return n, nil
}

// Error is a problem found while parsing: where it is and what is wrong.
type Error struct {
	Format Format
	// Field is the path to the JSON field ("threads[2].frames[5].imageIndex")
	// or the section of a text report ("Binary Images").
	Field string
	Line  int // 1-based line of a text report; 0 for JSON
	Msg   string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(string(e.Format))
	b.WriteString(": ")
	if e.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// ErrUnknownFormat is returned by Parse for data that is none of the
// formats this package reads.
var ErrUnknownFormat = errors.New("crashreport: unrecognized report format (not .ips, .crash or KSCrash JSON)")

// Parse detects the report's format from its content and parses it. A
// non-nil report with a non-nil error is partial: what it holds was read
// correctly, and the error says what could not be.
func Parse(data []byte) (*Report, error) {
	f, ok := Detect(data)
	if !ok {
		return nil, ErrUnknownFormat
	}
	switch f {
	case FormatIPS:
		return ParseIPS(data)
	case FormatKSCrash:
		return ParseKSCrash(data)
	default:
		return ParseCrash(data)
	}
}

// ReadFile reads and parses the report at path, refusing files larger than
// MaxReportSize before reading them whole.
func ReadFile(path string) (*Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxReportSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxReportSize {
		return nil, fmt.Errorf("crashreport: %s is larger than %d bytes", path, MaxReportSize)
	}
	return Parse(data)
}

// checkSize rejects input over MaxReportSize.
func checkSize(f Format, data []byte) error {
	if len(data) > MaxReportSize {
		return &Error{Format: f, Msg: fmt.Sprintf("report is %d bytes, more than the %d accepted", len(data), MaxReportSize)}
	}
	return nil
}

// problems collects the errors and warnings of one parse.
type problems struct {
	format   Format
	errs     []error
	dropped  int
	warnings []string
}

// fail records an error that makes the report incomplete.
func (p *problems) fail(field string, line int, format string, args ...any) {
	if len(p.errs) >= maxErrors {
		p.dropped++
		return
	}
	p.errs = append(p.errs, &Error{Format: p.format, Field: field, Line: line, Msg: fmt.Sprintf(format, args...)})
}

// warn records something that could not be read but costs no thread,
// frame or image.
func (p *problems) warn(format string, args ...any) {
	if len(p.warnings) >= MaxFrames {
		return
	}
	p.warnings = append(p.warnings, fmt.Sprintf(format, args...))
}

// finish attaches the warnings and returns the report with the joined
// errors, if any.
func (p *problems) finish(r *Report) (*Report, error) {
	r.Warnings = p.warnings
	if len(p.errs) == 0 {
		return r, nil
	}
	if p.dropped > 0 {
		p.errs = append(p.errs, fmt.Errorf("%s: and %d more errors", p.format, p.dropped))
	}
	if len(p.errs) == 1 {
		return r, p.errs[0]
	}
	return r, errors.Join(p.errs...)
}

// uuid parses an image's UUID as a report wrote it. A bad one is a warning
// naming where it was, not an error: the image and its frames are still
// good, only matching it with a symbol file is lost.
func (p *problems) uuid(where, s string) uuid.UUID {
	u, err := uuid.Parse(s)
	if err != nil {
		p.warn("%s: %q is not a UUID", where, s)
	}
	return u
}

// archByName maps an architecture name as reports write it to an Arch.
// 32-bit ARM variants (armv6, armv7s, armv7k, plain "arm") share armv7's
// thread state layout, which is what the register decoding needs.
func archByName(name string) *archregs.Arch {
	n := strings.ToLower(strings.TrimSpace(name))
	if a, ok := reportArchNames[n]; ok {
		n = a
	}
	a, err := archregs.ByName(n)
	if err != nil {
		return nil
	}
	return a
}

// reportArchNames maps the names reports write for an architecture to the
// archregs name, where the two differ.
var reportArchNames = map[string]string{
	"arm-64": "arm64", "arm-64e": "arm64e", "x86-64": "x86_64", "x86_64h": "x86_64", "x86": "i386",
	"arm": "armv7", "armv6": "armv7", "armv7s": "armv7", "armv7k": "armv7", "armv7f": "armv7",
}

// archByCPU maps a Mach-O cputype and cpusubtype to an Arch, or nil. A
// subtype archregs does not know reads as its CPU type's architecture (any
// 32-bit ARM, armv6 too, as armv7): a report needs only the thread state
// layout, which they share.
func archByCPU(cpuType, cpuSubtype uint64) *archregs.Arch {
	a, err := archregs.ByCPU(uint32(cpuType), uint32(cpuSubtype))
	if err != nil {
		a, _ = archregs.ByCPUType(uint32(cpuType))
	}
	return a
}

// regAliases maps register names reporters use to the arch table's names.
var regAliases = map[string]string{
	"ip":  "r12",    // ARM intra-procedure scratch register
	"rfl": "rflags", // Apple's text reports abbreviate rflags
	"x29": "fp",
	"x30": "lr",
}

// setReg stores a register on t, creating t.Registers for arch on first
// use; names the arch does not define go to OtherRegisters under the name
// the report used.
func setReg(t *Thread, arch *archregs.Arch, name string, v uint64) {
	if arch != nil {
		if t.Registers == nil {
			t.Registers = archregs.NewRegisters(arch)
		}
		canon := name
		if a, ok := regAliases[name]; ok {
			canon = a
		}
		if t.Registers.Set(canon, v) == nil {
			return
		}
	}
	if t.OtherRegisters == nil {
		t.OtherRegisters = map[string]uint64{}
	}
	t.OtherRegisters[name] = v
}

// imageResolver finds the image of an address.
type imageResolver struct {
	images []Image
	byLoad map[uint64]int
	byName map[string]int
	spans  []addrspan.Span // the images' ranges, placeholders left out
}

func newImageResolver(images []Image) *imageResolver {
	r := &imageResolver{images: images, byLoad: map[uint64]int{}, byName: map[string]int{}}
	var spans []addrspan.Span
	for i, im := range images {
		if _, dup := r.byLoad[im.LoadAddress]; !dup {
			r.byLoad[im.LoadAddress] = i
		}
		if _, dup := r.byName[im.Name]; !dup && im.Name != "" {
			r.byName[im.Name] = i
		}
		// Placeholder entries ("???" at 0 with an all-ones end) span
		// everything; any real image is preferred over them.
		if im.Size != 0 && im.LoadAddress != 0 {
			spans = append(spans, addrspan.Span{Start: im.LoadAddress, End: addrspan.ClipEnd(im.LoadAddress, im.Size),
				Prio: im.LoadAddress, Order: i, Ref: i})
		}
	}
	r.spans = addrspan.Flatten(spans)
	return r
}

// find returns the index of the image holding addr: the one loaded at
// load when the reporter named a load address, else the one whose range
// holds addr, else the one called name; -1 when none does.
func (r *imageResolver) find(addr, load uint64, haveLoad bool, name string) int {
	if haveLoad {
		if i, ok := r.byLoad[load]; ok {
			return i
		}
	}
	best := addrspan.Index(r.spans, addr)
	if best < 0 && name != "" {
		if i, ok := r.byName[name]; ok {
			best = i
		}
	}
	return best
}

// resolve sets f.ImageIndex and f.ImageOffset from the images.
func (r *imageResolver) resolve(f *Frame, load uint64, haveLoad bool) {
	f.ImageIndex = r.find(f.Address, load, haveLoad, f.ImageName)
	if f.ImageIndex >= 0 {
		im := r.images[f.ImageIndex]
		f.ImageOffset = f.Address - im.LoadAddress
		if f.ImageName == "" {
			f.ImageName = im.Name
		}
	}
}

// shortName returns the last element of a path.
func shortName(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		return path[i+1:]
	}
	return path
}

// flavorArch returns the architecture of a thread state flavor as the
// reports name it ("ARM_THREAD_STATE64", "x86_THREAD_STATE"): the report's
// own architecture when it is of the flavor's family (so arm64e stays
// arm64e), else the flavor's plain architecture. An empty or unknown
// flavor yields the report's architecture.
func flavorArch(flavor string, reportArch *archregs.Arch) *archregs.Arch {
	// The flavors archregs knows by that name: arm64 and arm64e share
	// theirs; the unified x86_THREAD_STATE carries either width, so the
	// report's own architecture says which.
	arches := archregs.FlavorArches(flavor)
	if len(arches) == 0 {
		return reportArch
	}
	if reportArch != nil {
		for _, a := range arches {
			if a.CPUType == reportArch.CPUType {
				return reportArch
			}
		}
	}
	return arches[0]
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// versionString formats a short version and a build number as Apple's
// reports do: "1.0 (42)".
func versionString(short, build string) string {
	switch {
	case short == "":
		return build
	case build == "" || build == short:
		return short
	}
	return short + " (" + build + ")"
}

// asiText flattens .ips "asi" (application specific information):
// image name -> lines.
func asiText(asi map[string][]string) string {
	keys := make([]string, 0, len(asi))
	for k := range asi {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var lines []string
	for _, k := range keys {
		lines = append(lines, asi[k]...)
	}
	return strings.Join(lines, "\n")
}
