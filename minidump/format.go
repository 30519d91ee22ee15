package minidump

import "fmt"

// Sizes and magic numbers of the MINIDUMP_* structures, as DbgHelp.h and
// Breakpad's minidump_format.h define them. All structures are
// little-endian and packed (no padding between fields).
const (
	headerSignature = 0x504d444d // "MDMP"
	headerVersion   = 0xa793     // MINIDUMP_VERSION, the low 16 bits of Version

	headerSize        = 32  // MINIDUMP_HEADER
	directorySize     = 12  // MINIDUMP_DIRECTORY
	threadSize        = 48  // MINIDUMP_THREAD
	moduleSize        = 108 // MINIDUMP_MODULE (MD_MODULE_SIZE: no tail padding)
	memoryDescSize    = 16  // MINIDUMP_MEMORY_DESCRIPTOR
	memory64DescSize  = 16  // MINIDUMP_MEMORY_DESCRIPTOR64
	exceptionSize     = 168 // MINIDUMP_EXCEPTION_STREAM
	systemInfoSize    = 56  // MINIDUMP_SYSTEM_INFO
	miscInfoSize      = 24  // MINIDUMP_MISC_INFO
	miscInfo4Size     = 832 // MINIDUMP_MISC_INFO_4, which adds BuildString
	threadNameSize    = 12  // MINIDUMP_THREAD_NAME (packed: u32 id, u64 RVA)
	breakpadInfoSize  = 12  // MDRawBreakpadInfo
	crashpadInfoSize  = 52  // MinidumpCrashpadInfo (version 1)
	crashpadLinkSize  = 12  // MinidumpModuleCrashpadInfoLink
	crashpadModSize   = 28  // MinidumpModuleCrashpadInfo
	annotationObjSize = 12  // MinidumpAnnotation
	maxExceptionParam = 15  // EXCEPTION_MAXIMUM_PARAMETERS

	cvSignatureRSDS = 0x53445352 // "RSDS": CodeView PDB 7.0, a GUID and an age
	cvSignatureNB10 = 0x3031424e // "NB10": CodeView PDB 2.0
	cvSignatureELF  = 0x4270454c // "BpEL": Breakpad's ELF build id

	// maxStringBytes bounds a MINIDUMP_STRING or UTF-8 string: paths and
	// annotations are far shorter, and a larger length is damage.
	maxStringBytes = 1 << 20
	// MaxThreads bounds the threads read from a thread list: above real
	// processes (a few thousand threads at most), far below what a list
	// repeating one entry can declare; the rest are left with an error
	// saying so.
	MaxThreads = 1 << 14
	// maxContextBytes bounds a thread context: the largest fixed layout
	// is 1232 bytes; XSTATE extensions add a few kilobytes.
	maxContextBytes = 1 << 16
	// maxCodeViewBytes bounds a CodeView record (a GUID, an age and a path).
	maxCodeViewBytes = 1 << 16
)

// StreamType is a MINIDUMP_STREAM_TYPE: what a directory entry holds.
type StreamType uint32

// The stream types this package reads or names.
const (
	StreamUnused         StreamType = 0
	StreamThreadList     StreamType = 3
	StreamModuleList     StreamType = 4
	StreamMemoryList     StreamType = 5
	StreamException      StreamType = 6
	StreamSystemInfo     StreamType = 7
	StreamThreadExList   StreamType = 8
	StreamMemory64List   StreamType = 9
	StreamHandleData     StreamType = 12
	StreamUnloadedModule StreamType = 14
	StreamMiscInfo       StreamType = 15
	StreamMemoryInfoList StreamType = 16
	StreamThreadInfoList StreamType = 17
	StreamThreadNames    StreamType = 0x18
	StreamBreakpadInfo   StreamType = 0x47670001 // MD_BREAKPAD_INFO_STREAM
	StreamAssertionInfo  StreamType = 0x47670002 // MD_ASSERTION_INFO_STREAM
	StreamCrashpadInfo   StreamType = 0x43500001 // MD_CRASHPAD_INFO_STREAM
)

var streamNames = map[StreamType]string{
	StreamUnused:         "Unused",
	StreamThreadList:     "ThreadList",
	StreamModuleList:     "ModuleList",
	StreamMemoryList:     "MemoryList",
	StreamException:      "Exception",
	StreamSystemInfo:     "SystemInfo",
	StreamThreadExList:   "ThreadExList",
	StreamMemory64List:   "Memory64List",
	StreamHandleData:     "HandleData",
	StreamUnloadedModule: "UnloadedModuleList",
	StreamMiscInfo:       "MiscInfo",
	StreamMemoryInfoList: "MemoryInfoList",
	StreamThreadInfoList: "ThreadInfoList",
	StreamThreadNames:    "ThreadNames",
	StreamBreakpadInfo:   "BreakpadInfo",
	StreamAssertionInfo:  "AssertionInfo",
	StreamCrashpadInfo:   "CrashpadInfo",
	0x47670003:           "LinuxCPUInfo",
	0x47670004:           "LinuxProcStatus",
	0x47670005:           "LinuxLSBRelease",
	0x47670006:           "LinuxCmdLine",
	0x47670007:           "LinuxEnviron",
	0x47670008:           "LinuxAuxv",
	0x47670009:           "LinuxMaps",
	0x4767000a:           "LinuxDSODebug",
}

func (t StreamType) String() string {
	if n, ok := streamNames[t]; ok {
		return n
	}
	return fmt.Sprintf("%#x", uint32(t))
}

// CPU is a MINIDUMP_SYSTEM_INFO ProcessorArchitecture value.
type CPU uint16

// The processor architectures of DbgHelp.h and Breakpad's extensions.
const (
	CPUX86      CPU = 0      // PROCESSOR_ARCHITECTURE_INTEL
	CPUMIPS     CPU = 1      // PROCESSOR_ARCHITECTURE_MIPS
	CPUPPC      CPU = 3      // PROCESSOR_ARCHITECTURE_PPC
	CPUARM      CPU = 5      // PROCESSOR_ARCHITECTURE_ARM
	CPUIA64     CPU = 6      // PROCESSOR_ARCHITECTURE_IA64
	CPUAMD64    CPU = 9      // PROCESSOR_ARCHITECTURE_AMD64
	CPUX86Win64 CPU = 10     // PROCESSOR_ARCHITECTURE_IA32_ON_WIN64
	CPUARM64    CPU = 12     // PROCESSOR_ARCHITECTURE_ARM64
	CPUSPARC    CPU = 0x8001 // MD_CPU_ARCHITECTURE_SPARC
	CPUPPC64    CPU = 0x8002 // MD_CPU_ARCHITECTURE_PPC64
	CPUARM64Old CPU = 0x8003 // MD_CPU_ARCHITECTURE_ARM64_OLD: Breakpad's before Microsoft defined 12
	CPUMIPS64   CPU = 0x8004 // MD_CPU_ARCHITECTURE_MIPS64
	CPURISCV    CPU = 0x8005 // MD_CPU_ARCHITECTURE_RISCV
	CPURISCV64  CPU = 0x8006 // MD_CPU_ARCHITECTURE_RISCV64
	CPUUnknown  CPU = 0xffff // PROCESSOR_ARCHITECTURE_UNKNOWN
)

var cpuNames = map[CPU]string{
	CPUX86: "x86", CPUMIPS: "mips", CPUPPC: "ppc", CPUARM: "arm", CPUIA64: "ia64",
	CPUAMD64: "amd64", CPUX86Win64: "x86-on-win64", CPUARM64: "arm64", CPUSPARC: "sparc",
	CPUPPC64: "ppc64", CPUARM64Old: "arm64-old", CPUMIPS64: "mips64", CPURISCV: "riscv",
	CPURISCV64: "riscv64", CPUUnknown: "unknown",
}

func (c CPU) String() string {
	if n, ok := cpuNames[c]; ok {
		return n
	}
	return fmt.Sprintf("cpu %#x", uint16(c))
}

// Platform is a MINIDUMP_SYSTEM_INFO PlatformId value: the operating system.
type Platform uint32

// The platforms of DbgHelp.h and Breakpad's extensions.
const (
	PlatformWin32s       Platform = 0      // VER_PLATFORM_WIN32s
	PlatformWin32Windows Platform = 1      // VER_PLATFORM_WIN32_WINDOWS
	PlatformWin32NT      Platform = 2      // VER_PLATFORM_WIN32_NT
	PlatformWin32CE      Platform = 3      // VER_PLATFORM_WIN32_CE
	PlatformUnix         Platform = 0x8000 // MD_OS_UNIX
	PlatformMacOS        Platform = 0x8101 // MD_OS_MAC_OS_X
	PlatformIOS          Platform = 0x8102 // MD_OS_IOS
	PlatformLinux        Platform = 0x8201 // MD_OS_LINUX
	PlatformSolaris      Platform = 0x8202 // MD_OS_SOLARIS
	PlatformAndroid      Platform = 0x8203 // MD_OS_ANDROID
	PlatformPS3          Platform = 0x8204 // MD_OS_PS3
	PlatformNaCl         Platform = 0x8205 // MD_OS_NACL
	PlatformFuchsia      Platform = 0x8206 // MD_OS_FUCHSIA
)

var platformNames = map[Platform]string{
	PlatformWin32s: "Windows 3.1 (Win32s)", PlatformWin32Windows: "Windows 9x",
	PlatformWin32NT: "Windows NT", PlatformWin32CE: "Windows CE", PlatformUnix: "Unix",
	PlatformMacOS: "macOS", PlatformIOS: "iOS", PlatformLinux: "Linux",
	PlatformSolaris: "Solaris", PlatformAndroid: "Android", PlatformPS3: "PS3",
	PlatformNaCl: "NaCl", PlatformFuchsia: "Fuchsia",
}

func (p Platform) String() string {
	if n, ok := platformNames[p]; ok {
		return n
	}
	return fmt.Sprintf("platform %#x", uint32(p))
}

// Thread context flags: the high bits name the layout, the low bits which
// register groups it holds. DbgHelp.h's CONTEXT_* and Breakpad's MD_CONTEXT_*.
const (
	contextX86      = 0x00010000 // CONTEXT_i386
	contextAMD64    = 0x00100000 // CONTEXT_AMD64
	contextARM      = 0x40000000 // MD_CONTEXT_ARM (Breakpad and Crashpad)
	contextARMMS    = 0x00200000 // CONTEXT_ARM (Windows)
	contextARM64    = 0x00400000 // CONTEXT_ARM64, MD_CONTEXT_ARM64
	contextARM64Old = 0x80000000 // MD_CONTEXT_ARM64_OLD (in a 64-bit flags field)

	ctxControl  = 0x1 // CONTEXT_CONTROL: pc, sp, flags (and fp on x86/arm64)
	ctxInteger  = 0x2 // CONTEXT_INTEGER: the general registers
	ctxSegments = 0x4 // CONTEXT_SEGMENTS on x86 and AMD64
	ctxFloat    = 0x8 // CONTEXT_FLOATING_POINT on x86 and AMD64

	contextX86Size      = 716  // CONTEXT (x86), MDRawContextX86
	contextAMD64Size    = 1232 // CONTEXT (AMD64), MDRawContextAMD64
	contextARMSize      = 368  // MDRawContextARM
	contextARMMSSize    = 416  // CONTEXT (ARM, Windows)
	contextARM64Size    = 912  // CONTEXT (ARM64), MDRawContextARM64
	contextARM64OldSize = 796  // MDRawContextARM64_Old (packed to 4)
)
