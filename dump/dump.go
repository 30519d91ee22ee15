// Package dump is the one model every input becomes before it is walked
// and symbolicated: a stackimage snapshot, an Apple .ips or .crash report,
// a KSCrash report, a PLCrashReporter report, a minidump or a Mach-O
// core. It holds the architecture, the loaded images, the threads with
// their registers, stack memory and any backtrace a reporter wrote, the
// crash, and what the input said about the system and the process.
//
// The parsers (snapshot, crashreport, plcrash, minidump, machocore) each
// produce a *Dump; symbolize.Symbolizer.Symbolicate takes one. Nothing
// here reads a file: the model is data.
package dump

import (
	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/unwind"
	"github.com/stackimage/stackimage/uuid"
)

// Format names the input a Dump was read from.
type Format string

// The input formats.
const (
	FormatSnapshot Format = "snapshot" // stackimage's own JSON dump
	FormatIPS      Format = "ips"      // Apple JSON crash report
	FormatCrash    Format = "crash"    // Apple text crash report
	FormatKSCrash  Format = "kscrash"  // KSCrash JSON report
	FormatMinidump Format = "minidump" // Breakpad or Crashpad minidump
	FormatCore     Format = "core"     // Mach-O core file (MH_CORE)
	FormatSample   Format = "sample"   // macOS sample or spindump hang report
	FormatPLCrash  Format = "plcrash"  // PLCrashReporter binary report (.plcrash)
	// FormatMicrostackshot: a macOS or iOS resource report (CPU usage,
	// disk writes, wakeups) of microstackshots, .ips or .diag.
	FormatMicrostackshot Format = "microstackshot"
	// FormatSymbolicator: a request to Sentry symbolicator's
	// POST /symbolicate, stack traces of addresses and the modules they
	// lie in, without memory (package symbolicator).
	FormatSymbolicator Format = "symbolicator"
)

// FormatMetricKit is a diagnostic of Apple's MetricKit (an
// MXDiagnosticPayload's crash, hang, CPU, disk-write or launch
// diagnostic, or a bare MXCallStackTree).
const FormatMetricKit Format = "metrickit"

// Memory reads captured process memory: unwind.Memory, the interface the
// walker reads through (walker.Memory is the same type).
type Memory = unwind.Memory

// Dump is one input in the common model.
type Dump struct {
	Format Format
	// Arch is the process's architecture; nil when the input does not say
	// or names one archregs does not know.
	Arch *archregs.Arch
	// System describes the machine, as far as the input says.
	System System
	// Process describes the crashed or sampled process.
	Process Process
	// Crash is why the process died; nil for a dump of a live process.
	Crash *Crash
	// Images are the loaded images.
	Images []Image
	// Threads are the process's threads, in the input's order.
	Threads []Thread
	// LastExceptionBacktrace is where an uncaught exception (NSException,
	// C++) was thrown, when the reporter recorded it.
	LastExceptionBacktrace []Frame
	// RecrashThread is the crash reporter's own crashed thread when the
	// reporter crashed while writing the report (KSCrash).
	RecrashThread *Thread
	// Memory is the process memory the input holds (stacks, images in a
	// core), nil when none. A thread's own Stack, when set, is read first.
	Memory Memory
	// PACMask keeps the address bits of pointer-authenticated values when
	// the input says how many there are (a core's "addrable bits" note);
	// zero when unknown.
	PACMask uint64
	// Annotations are key/value pairs the reporter attached (Crashpad
	// simple and module annotations).
	Annotations []Annotation
	// CallerAddresses says how the reporter wrote its backtraces' caller
	// addresses; the zero value, ReturnAddresses, is what nearly every
	// reporter writes. The parser sets it: symbolicators look callers up
	// by it, not by the format's name.
	CallerAddresses CallerAddresses
	// Counting says which threads stand for the dump where stacks are
	// counted (package aggregate): the crashed thread of a crash, every
	// thread of a sampled process. The parser sets it; the zero value is
	// a crash's.
	Counting Counting
	// ReporterVersion is the version of the reporter's format as the input
	// states it (KSCrash "2.0"); reporters changed how they write addresses
	// between versions. Empty when not given.
	ReporterVersion string
	// Warnings lists what could not be read but did not stop the rest.
	Warnings []string
	// CallGraph says the threads' Frames are the nodes of call graphs,
	// each listed before the frames it calls (a MetricKit call tree), not
	// stacks innermost first. A sample or spindump report's are too,
	// whether or not it is set.
	CallGraph bool
}

// Counting says which of a dump's threads are counted when stacks are
// grouped and profiled.
type Counting int

const (
	// CountCrashedThread: the dump is one moment of a process, most often
	// its crash (an .ips or .crash, KSCrash, a minidump, a core, a
	// .plcrash, a MetricKit crash diagnostic). Its crashed thread (the
	// thread the report attributes the event to: Thread.Crashed) alone
	// stands for it; the other threads only stood still when it died.
	// A dump with no crashed thread counts every thread.
	CountCrashedThread Counting = iota
	// CountAllThreads: the dump samples a running process over time (a
	// sample, spindump or microstackshot report; a MetricKit hang, CPU,
	// disk-write or launch diagnostic): every thread counts, with its
	// weights.
	CountAllThreads
)

// CallerAddresses says what a reporter's caller addresses (every frame of
// a backtrace but the PC) are.
type CallerAddresses int

const (
	// ReturnAddresses: callers are return addresses as the thread's stack
	// held them (Apple's reports, minidumps, most reporters).
	ReturnAddresses CallerAddresses = iota
	// MaybeRoundedReturnAddresses: the reporter may have rounded return
	// addresses its own walker read down to a multiple of twice the
	// pointer size (KSCrash before report format 3). A thread whose
	// callers are all so aligned is taken as rounded; one with any other
	// caller is not (KSCrash does not round backtraces it did not walk,
	// an NSException's, say).
	MaybeRoundedReturnAddresses
)

// System is the machine the dump was taken on.
type System struct {
	OS       string // "macOS 12.4 (21F79)", or the OS name alone
	Version  string // OS version when given apart from OS ("12.4.0")
	Build    string // OS build when given apart from OS ("21F79")
	CPU      string // CPU description ("amd64", "Intel(R) Core(TM) i7")
	Hardware string // hardware model ("iPhone3,1", "Macmini7,1")
}

// Process is the process the dump is of.
type Process struct {
	Name       string
	PID        int // 0 when unknown
	Path       string
	Identifier string // bundle identifier
	Version    string // app version, "1.0 (1)"
	Time       string // crash or capture time, as the input wrote it
	IncidentID string
	// ParentName and ParentPID are the parent process's, when given
	// (ParentPID 0 when unknown).
	ParentName string
	ParentPID  int
}

// Crash says why the process died.
type Crash struct {
	Type   string // Mach exception, "EXC_BAD_ACCESS"
	Signal string // "SIGSEGV"
	// Codes are the exception codes as the input wrote or named them
	// ("KERN_INVALID_ADDRESS at 0x1").
	Codes string
	// Address is the faulting address; HasAddress says it is known.
	Address    uint64
	HasAddress bool
	// Name and Reason come from an uncaught language exception or the
	// application-specific information.
	Name, Reason string
	// Diagnosis is the reporter's own explanation.
	Diagnosis string
	// ThreadID is the crashed thread's ID when the input names it apart
	// from the threads' own Crashed flags.
	ThreadID uint64
}

// Image is one loaded image.
type Image struct {
	Name string // short name: "CrashingTest"
	Path string // full path; empty when not given
	UUID uuid.UUID
	// LoadAddress is where the image's Mach-O header was loaded (slid).
	LoadAddress uint64
	// Size is the size of the mapped range from LoadAddress; 0 when not
	// given.
	Size uint64
	// VMAddress is the unslid vmaddr of __TEXT when given; 0 otherwise.
	VMAddress uint64
	Arch      string // as the input names it; may be empty
	Version   string // as the input wrote it; may be empty
	// DebugID is the Breakpad debug identifier (UUID and age) when the
	// input gave one (minidumps).
	DebugID string
}

// Thread is one thread.
type Thread struct {
	// Index is the input's thread number ("Thread 3"), ID the thread ID
	// the input gives (a snapshot's, a minidump's), KernelID the kernel's
	// thread ID when given apart from it.
	Index    int
	ID       uint64
	KernelID uint64
	Name     string
	Queue    string // dispatch queue name, when given
	Crashed  bool
	// Registers holds the thread's registers; nil when the input has none.
	Registers *archregs.Registers
	// OtherRegisters holds registers the arch table does not define (far,
	// esr, cr2); nil when there are none.
	OtherRegisters map[string]uint64
	// StackLow and StackHigh bound the stack, [low, high); zero when
	// unknown.
	StackLow, StackHigh uint64
	// Stack is this thread's own stack memory when the input keeps it
	// apart from Dump.Memory (a KSCrash stack dump); nil otherwise.
	Stack Memory
	// Frames is the reporter's own backtrace, innermost first; empty when
	// the input has none and the stack must be walked.
	Frames []Frame
	// SkippedFrames counts frames the reporter left out of Frames; when
	// non-zero, Frames[0] is not the PC.
	SkippedFrames int
}

// Frame is one frame of a reporter's backtrace.
type Frame struct {
	// Address is the absolute instruction address the reporter gave: the
	// PC for frame 0, a return address for callers.
	Address uint64
	// ImageIndex indexes Dump.Images; -1 when the frame's image is not
	// known. ImageOffset is Address minus that image's LoadAddress.
	ImageIndex  int
	ImageOffset uint64
	// ImageName is the image name the frame itself gave; it stays set
	// when the image is not in Dump.Images.
	ImageName string
	// ImageLoadAddress is the load address of the frame's image: that of
	// Dump.Images[ImageIndex], else the one the frame itself gave (a text
	// report's "0x7fff61bc6000 + 3114" naming an image its Binary Images
	// lack); 0 when unknown.
	ImageLoadAddress uint64
	// Symbol and SymbolOffset are the reporter's symbol, when it gave one;
	// HasSymbolOffset says the reporter gave the offset too ("main + 20"),
	// not the name alone.
	Symbol          string
	SymbolOffset    uint64
	HasSymbolOffset bool
	// File and Line are the source position the reporter gave.
	File    string
	Line    int
	Inlined bool
	// Lookup says at which address the frame is named, when the input
	// says (symbolicator's adjust_instruction_addr); the zero value lets
	// the frame's place decide.
	Lookup Lookup
}

// Lookup says at which address a reporter's frame is named.
type Lookup int

const (
	// LookupByPlace: frame 0 (the PC) at its address, callers (return
	// addresses) one instruction back, in the call.
	LookupByPlace Lookup = iota
	// LookupAsGiven: at the address itself, whatever the frame's place.
	LookupAsGiven
	// LookupCaller: one instruction back, as a return address, whatever
	// the frame's place.
	LookupCaller
)

// Annotation is one key/value pair a reporter attached, to the process or
// to one module.
type Annotation struct {
	Module string // empty for a process-wide annotation
	Key    string
	Value  string
}

// CrashedThread returns the index in Threads of the first crashed thread,
// or -1.
func (d *Dump) CrashedThread() int {
	for i := range d.Threads {
		if d.Threads[i].Crashed {
			return i
		}
	}
	return -1
}

// IsReport reports whether the format is a report whose threads carry the
// reporter's backtraces (a crash report, or a sample's call graph), rather
// than a memory dump whose threads must be walked.
func (f Format) IsReport() bool {
	return f == FormatIPS || f == FormatCrash || f == FormatKSCrash || f == FormatPLCrash ||
		f == FormatMetricKit || f == FormatSymbolicator || f.IsCallGraph()
}

// IsCallGraph reports whether the format's threads hold a call graph's
// nodes rather than stacks: a sample, spindump or microstackshot report
// (package hangreport reads them).
func (f Format) IsCallGraph() bool {
	return f == FormatSample || f == FormatMicrostackshot
}
