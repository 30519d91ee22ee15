package plcrash

import (
	"fmt"

	"github.com/stackimage/stackimage/uuid"
)

// Magic is what every .plcrash file starts with, before its version byte.
const Magic = "plcrash"

// Version is the only file format version PLCrashReporter writes.
const Version = 1

// headerSize is the magic and the version byte.
const headerSize = len(Magic) + 1

// Bounds on what Parse accepts. Real reports are tens of kilobytes with a
// few dozen threads; these bounds keep a hostile report's memory at a few
// times its size.
const (
	MaxReportSize  = 32 << 20 // bytes of input
	MaxThreads     = 1 << 14  // threads per report
	MaxFrames      = 1 << 16  // frames per thread (and in the exception's backtrace)
	MaxTotalFrames = 1 << 18  // frames in the whole report
	MaxImages      = 1 << 16  // binary images per report
	MaxRegisters   = 256      // registers per thread
	MaxCodes       = 64       // Mach exception codes
)

// Report is a decoded .plcrash file, field for field as PLCrashReport.proto
// defines plcrash.CrashReport. Optional messages the report lacks are nil.
type Report struct {
	// Version is the file's format version byte.
	Version byte

	System      SystemInfo
	Application ApplicationInfo
	// Process is nil in reports written before PLCrashReporter 1.1.
	Process *ProcessInfo
	// Machine is nil in reports written before PLCrashReporter 1.1.
	Machine *MachineInfo
	Threads []Thread
	Images  []BinaryImage
	// Exception is the uncaught language exception (an NSException), nil
	// when the crash was not one.
	Exception *Exception
	Signal    Signal
	// Info says how the report came about; nil before PLCrashReporter 1.1.
	Info *ReportInfo
	// CustomData is what the app attached to the reporter
	// (PLCrashReporter's customData), as the report holds it.
	CustomData string

	// Warnings lists what could not be read but did not stop the rest:
	// errors after the first (which Parse returns), fields of the wrong
	// wire type.
	Warnings []string
}

// OperatingSystem is SystemInfo.OperatingSystem's enum.
type OperatingSystem uint64

// The operating systems PLCrashReport.proto names.
const (
	MacOSX          OperatingSystem = 0 // MAC_OS_X
	IPhoneOS        OperatingSystem = 1 // IPHONE_OS
	IPhoneSimulator OperatingSystem = 2 // IPHONE_SIMULATOR
	OSUnknown       OperatingSystem = 3 // OS_UNKNOWN
	AppleTVOS       OperatingSystem = 4 // APPLE_TVOS
)

// String returns the name Apple's crash reports give the system, as
// PLCrashReporter's own text formatter writes it.
func (o OperatingSystem) String() string {
	switch o {
	case MacOSX, IPhoneSimulator:
		return "Mac OS X"
	case IPhoneOS:
		return "iPhone OS"
	case AppleTVOS:
		return "tvOS"
	}
	return fmt.Sprintf("Unknown (%d)", uint64(o))
}

// Architecture is the legacy SystemInfo.architecture enum, deprecated in
// the schema in favour of MachineInfo and each image's code type.
type Architecture uint64

// The legacy architectures.
const (
	ArchX86_32  Architecture = 0 // X86_32
	ArchX86_64  Architecture = 1 // X86_64
	ArchARMv6   Architecture = 2 // ARMV6
	ArchPPC     Architecture = 3 // PPC
	ArchPPC64   Architecture = 4 // PPC64
	ArchARMv7   Architecture = 5 // ARMV7
	ArchUnknown Architecture = 6 // ARCHITECTURE_UNKNOWN
)

// SystemInfo is CrashReport.SystemInfo.
type SystemInfo struct {
	OS           OperatingSystem // default OS_UNKNOWN
	OSVersion    string          // "16.0"
	Architecture Architecture    // deprecated; default ARCHITECTURE_UNKNOWN
	// Timestamp is when the report was written, in seconds since the Unix
	// epoch; 0 when unknown.
	Timestamp int64
	OSBuild   string // "20A362"
}

// ApplicationInfo is CrashReport.ApplicationInfo.
type ApplicationInfo struct {
	Identifier string // bundle identifier
	Version    string // CFBundleVersion
	// MarketingVersion is CFBundleShortVersionString, when written.
	MarketingVersion string
}

// ProcessInfo is CrashReport.ProcessInfo.
type ProcessInfo struct {
	Name       string
	PID        uint32
	Path       string
	ParentName string
	ParentPID  uint32
	// Native is false when the process ran under CPU emulation (Rosetta).
	Native bool
	// StartTime is when the process started, in seconds since the Unix
	// epoch; HasStartTime says the report gave it.
	StartTime    uint64
	HasStartTime bool
}

// TypeEncodingMach is Processor.Encoding for Mach CPU types and subtypes
// (<mach/machine.h>), the only encoding PLCrashReporter writes.
const TypeEncodingMach = 1

// Processor is CrashReport.Processor: a CPU type and subtype in the given
// encoding.
type Processor struct {
	Encoding uint64 // TYPE_ENCODING_UNKNOWN (0) or TypeEncodingMach
	Type     uint64
	Subtype  uint64
}

// Mach reports whether the type and subtype are Mach's, and returns them.
func (p *Processor) Mach() (cpuType, cpuSubtype uint32, ok bool) {
	if p == nil || p.Encoding != TypeEncodingMach || p.Type > 0xffffffff || p.Subtype > 0xffffffff {
		return 0, 0, false
	}
	return uint32(p.Type), uint32(p.Subtype), true
}

// MachineInfo is CrashReport.MachineInfo: the host.
type MachineInfo struct {
	Model                 string // "iPhone14,5"
	Processor             Processor
	ProcessorCount        uint32
	LogicalProcessorCount uint32
}

// Symbol is CrashReport.Symbol: a name the reporter found for a frame on
// the device.
type Symbol struct {
	Name  string
	Start uint64
	// End is the symbol's end when the reporter knew it exactly (HasEnd).
	End    uint64
	HasEnd bool
}

// Frame is CrashReport.Thread.StackFrame.
type Frame struct {
	// PC is the address as the report holds it: the PC for a thread's
	// first frame, a return address for the others. On arm64 it may carry
	// pointer-authentication bits; Report.Dump strips them.
	PC uint64
	// Symbol is the reporter's own symbol for PC; nil when it wrote none.
	Symbol *Symbol
}

// Register is CrashReport.Thread.RegisterValue.
type Register struct {
	Name  string // as PLCrashReporter names it: "x0", "fp", "rip", "r12"
	Value uint64
}

// Thread is CrashReport.Thread.
type Thread struct {
	Number    uint32 // unique within the report, from 0
	Frames    []Frame
	Crashed   bool
	Registers []Register
}

// BinaryImage is CrashReport.BinaryImage.
type BinaryImage struct {
	Base uint64
	Size uint64
	Name string // the image's path
	// UUID is the image's LC_UUID; HasUUID says the report gave 16 bytes.
	UUID    uuid.UUID
	HasUUID bool
	// CodeType is the image's Mach-O CPU type and subtype; nil when not
	// written (reports before format 1.1).
	CodeType *Processor
}

// Exception is CrashReport.Exception: an uncaught language exception.
type Exception struct {
	Name   string
	Reason string
	// Frames is where the exception was thrown, innermost first (Apple's
	// Last Exception Backtrace); empty when not recorded.
	Frames []Frame
}

// Signal is CrashReport.Signal.
type Signal struct {
	Name    string // "SIGSEGV"
	Code    string // "SEGV_MAPERR"
	Address uint64 // the faulting address or instruction
	// Mach is the Mach exception that raised the signal, when the reporter
	// caught it (its Mach exception handler was on); nil otherwise.
	Mach *MachException
}

// MachException is CrashReport.Signal.MachException.
type MachException struct {
	Type  uint64 // EXC_BAD_ACCESS is 1
	Codes []uint64
}

// ReportInfo is CrashReport.ReportInfo.
type ReportInfo struct {
	// UserRequested says the report was written on request, not for a
	// crash.
	UserRequested bool
	// UUID is the report's own identifier; HasUUID says it was written.
	UUID    uuid.UUID
	HasUUID bool
}

// CrashedThread returns the index in Threads of the first crashed thread,
// or -1.
func (r *Report) CrashedThread() int {
	for i := range r.Threads {
		if r.Threads[i].Crashed {
			return i
		}
	}
	return -1
}
