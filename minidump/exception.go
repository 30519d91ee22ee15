package minidump

import "fmt"

// An Exception is the MINIDUMP_EXCEPTION_STREAM: which thread crashed and
// why. On macOS and iOS, Breakpad and Crashpad store the Mach exception
// type as Code, its first code as Flags and the faulting address (the
// subcode) as Address.
type Exception struct {
	ThreadID      uint32
	Code          uint32 // ExceptionCode: the Mach exception type (EXC_*)
	Flags         uint32 // ExceptionFlags: the Mach exception code
	RecordAddress uint64 // ExceptionRecord: a chained record, usually 0
	// Address is ExceptionAddress: the crash address. For EXC_BAD_ACCESS it
	// is the address that could not be accessed.
	Address    uint64
	Parameters []uint64 // ExceptionInformation[:NumberParameters]
	// Context is the register state at the exception, when the stream has
	// one; use it in place of the crashed thread's own context.
	Context *Context

	// Type and CodeName name Code and Flags on Apple platforms
	// ("EXC_BAD_ACCESS", "KERN_INVALID_ADDRESS"); CodeName is empty when
	// the code has no name. Reason joins them as minidump-stackwalk prints
	// a crash reason: "EXC_BAD_ACCESS / KERN_INVALID_ADDRESS", or the
	// numbers in hex.
	Type     string
	CodeName string
	Reason   string
}

func (r *reader) exception(errs *[]error) *Exception {
	s := r.Stream(StreamException)
	if s == nil {
		return nil
	}
	data, err := r.streamData(s)
	if err != nil {
		*errs = append(*errs, err)
		return nil
	}
	if len(data) < exceptionSize {
		*errs = append(*errs, r.errf(s, int64(s.Offset), "stream of %d bytes is shorter than MINIDUMP_EXCEPTION_STREAM (%d)", len(data), exceptionSize))
		return nil
	}
	// ThreadId, __alignment, then MINIDUMP_EXCEPTION at 8: ExceptionCode,
	// ExceptionFlags, ExceptionRecord, ExceptionAddress, NumberParameters,
	// __unusedAlignment, ExceptionInformation[15]; ThreadContext at 160.
	e := &Exception{
		ThreadID:      le.Uint32(data),
		Code:          le.Uint32(data[8:]),
		Flags:         le.Uint32(data[12:]),
		RecordAddress: le.Uint64(data[16:]),
		Address:       le.Uint64(data[24:]),
	}
	n := le.Uint32(data[32:])
	if n > maxExceptionParam {
		*errs = append(*errs, r.errf(s, int64(s.Offset)+32, "NumberParameters %d is more than %d; reading %d", n, maxExceptionParam, maxExceptionParam))
		n = maxExceptionParam
	}
	for i := uint32(0); i < n; i++ {
		e.Parameters = append(e.Parameters, le.Uint64(data[40+8*i:]))
	}
	cpu, known := r.cpu(errs)
	e.Context = r.context(s, int64(s.Offset)+160, readLocation(data[160:]), cpu, known, "exception", errs)
	var platform Platform
	if si := r.systemInfo(errs); si != nil {
		platform = si.Platform
	}
	e.name(platform, cpu)
	return e
}

// name fills in Type, CodeName and Reason.
func (e *Exception) name(platform Platform, cpu CPU) {
	if platform != PlatformMacOS && platform != PlatformIOS {
		e.Reason = fmt.Sprintf("0x%08x / 0x%08x", e.Code, e.Flags)
		return
	}
	code, flags := e.Code, e.Flags
	if code == 0 && len(e.Parameters) >= 2 && e.Parameters[0] == excCrash {
		// Crashpad turns EXC_CRASH back into the exception that caused
		// it; for a signal with no Mach exception behind it (abort) that
		// is 0, and only ExceptionInformation keeps EXC_CRASH and its code.
		code, flags = excCrash, uint32(e.Parameters[1])
	}
	e.Type, e.CodeName = macExceptionNames(code, flags, cpu, e.Parameters)
	switch {
	case e.Type == "":
		e.Reason = fmt.Sprintf("0x%08x / 0x%08x", e.Code, e.Flags)
	case e.CodeName == "":
		e.Reason = fmt.Sprintf("%s / 0x%08x", e.Type, flags)
	default:
		e.Reason = e.Type + " / " + e.CodeName
	}
}

// Mach exception types, as <mach/exception_types.h> numbers them.
const (
	excBadAccess      = 1
	excBadInstruction = 2
	excArithmetic     = 3
	excSoftware       = 5
	excBreakpoint     = 6
	excCrash          = 10
	excResource       = 11
	excGuard          = 12
)

var macExceptionTypes = map[uint32]string{
	1: "EXC_BAD_ACCESS", 2: "EXC_BAD_INSTRUCTION", 3: "EXC_ARITHMETIC", 4: "EXC_EMULATION",
	5: "EXC_SOFTWARE", 6: "EXC_BREAKPOINT", 7: "EXC_SYSCALL", 8: "EXC_MACH_SYSCALL",
	9: "EXC_RPC_ALERT", 10: "EXC_CRASH", 11: "EXC_RESOURCE", 12: "EXC_GUARD", 13: "EXC_CORPSE_NOTIFY",
	0x43507378: "SIMULATED", // Crashpad's SimulateCrash ('CPsx')
}

// kern_return_t values an EXC_BAD_ACCESS code may be (<mach/kern_return.h>).
var macKernCodes = map[uint32]string{
	1: "KERN_INVALID_ADDRESS", 2: "KERN_PROTECTION_FAILURE", 5: "KERN_FAILURE",
	8: "KERN_NO_ACCESS", 9: "KERN_MEMORY_FAILURE", 10: "KERN_MEMORY_ERROR", 50: "KERN_CODESIGN_ERROR",
}

// The CPU-specific codes of <mach/arm/exception.h> and <mach/i386/exception.h>.
var (
	macARMBadAccess = map[uint32]string{0x101: "EXC_ARM_DA_ALIGN", 0x102: "EXC_ARM_DA_DEBUG",
		0x103: "EXC_ARM_SP_ALIGN", 0x104: "EXC_ARM_SWP", 0x105: "EXC_ARM_PAC_FAIL"}
	macX86BadAccess        = map[uint32]string{13: "EXC_I386_GPFLT"}
	macARMBadInstruction   = map[uint32]string{1: "EXC_ARM_UNDEFINED"}
	macX86BadInstruction   = map[uint32]string{1: "EXC_I386_INVOP", 10: "EXC_I386_INVTSSFLT", 11: "EXC_I386_SEGNPFLT", 12: "EXC_I386_STKFLT", 13: "EXC_I386_GPFLT", 17: "EXC_I386_ALIGNFLT"}
	macARMArithmetic       = map[uint32]string{0: "EXC_ARM_FP_UNDEFINED", 1: "EXC_ARM_FP_IO", 2: "EXC_ARM_FP_DZ", 3: "EXC_ARM_FP_OF", 4: "EXC_ARM_FP_UF", 5: "EXC_ARM_FP_IX", 6: "EXC_ARM_FP_ID"}
	macX86Arithmetic       = map[uint32]string{1: "EXC_I386_DIV", 2: "EXC_I386_INTO", 3: "EXC_I386_NOEXT", 4: "EXC_I386_EXTOVR", 5: "EXC_I386_EXTERR", 6: "EXC_I386_EMERR", 7: "EXC_I386_BOUND", 8: "EXC_I386_SSEEXTERR"}
	macARMBreakpoint       = map[uint32]string{1: "EXC_ARM_BREAKPOINT", 0x101: "EXC_ARM_DA_ALIGN", 0x102: "EXC_ARM_DA_DEBUG"}
	macX86Breakpoint       = map[uint32]string{1: "EXC_I386_SGL", 2: "EXC_I386_BPT"}
	macSoftwareCodes       = map[uint32]string{0x00010002: "SIGABRT", 0xdeadc0de: "UNCAUGHT_NS_EXCEPTION"}
	macResourceTypes       = map[uint64]string{1: "RESOURCE_TYPE_CPU", 2: "RESOURCE_TYPE_WAKEUPS", 3: "RESOURCE_TYPE_MEMORY", 4: "RESOURCE_TYPE_IO", 5: "RESOURCE_TYPE_THREADS"}
	macResourceFlavors     = map[[2]uint64]string{{1, 1}: "FLAVOR_CPU_MONITOR", {1, 2}: "FLAVOR_CPU_MONITOR_FATAL", {2, 1}: "FLAVOR_WAKEUPS_MONITOR", {3, 1}: "FLAVOR_HIGH_WATERMARK", {4, 1}: "FLAVOR_IO_PHYSICAL_WRITES", {4, 2}: "FLAVOR_IO_LOGICAL_WRITES", {5, 1}: "FLAVOR_THREADS_HIGH_WATERMARK"}
	macGuardTypes          = map[uint64]string{0: "GUARD_TYPE_NONE", 1: "GUARD_TYPE_MACH_PORT", 2: "GUARD_TYPE_FD", 3: "GUARD_TYPE_USER", 4: "GUARD_TYPE_VN", 5: "GUARD_TYPE_VIRT_MEMORY"}
	macSignals             = []string{1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT", 7: "SIGEMT", 8: "SIGFPE", 9: "SIGKILL", 10: "SIGBUS", 11: "SIGSEGV", 12: "SIGSYS", 13: "SIGPIPE", 14: "SIGALRM", 15: "SIGTERM", 16: "SIGURG", 17: "SIGSTOP", 18: "SIGTSTP", 19: "SIGCONT", 20: "SIGCHLD", 21: "SIGTTIN", 22: "SIGTTOU", 23: "SIGIO", 24: "SIGXCPU", 25: "SIGXFSZ", 26: "SIGVTALRM", 27: "SIGPROF", 28: "SIGWINCH", 29: "SIGINFO", 30: "SIGUSR1", 31: "SIGUSR2"}
	macCPUSpecificExcTypes = map[uint32][2]map[uint32]string{ // [ARM, x86]
		excBadInstruction: {macARMBadInstruction, macX86BadInstruction},
		excArithmetic:     {macARMArithmetic, macX86Arithmetic},
		excBreakpoint:     {macARMBreakpoint, macX86Breakpoint},
	}
)

// macExceptionNames names a Mach exception type and code. The code's
// meaning depends on the type and, for some types, on the CPU.
func macExceptionNames(typ, code uint32, cpu CPU, params []uint64) (string, string) {
	name := macExceptionTypes[typ]
	if name == "" {
		return "", ""
	}
	arm := cpu == CPUARM || cpu == CPUARM64 || cpu == CPUARM64Old
	x86 := cpu == CPUX86 || cpu == CPUAMD64 || cpu == CPUX86Win64
	switch typ {
	case excBadAccess:
		if n, ok := macKernCodes[code]; ok {
			return name, n
		}
		if arm {
			return name, macARMBadAccess[code]
		}
		if x86 {
			return name, macX86BadAccess[code]
		}
	case excBadInstruction, excArithmetic, excBreakpoint:
		tables := macCPUSpecificExcTypes[typ]
		if arm {
			return name, tables[0][code]
		}
		if x86 {
			return name, tables[1][code]
		}
	case excSoftware:
		return name, macSoftwareCodes[code]
	case excCrash:
		// Crashpad keeps the signal that ended the process in bits 24-31
		// of EXC_CRASH's code (see ExcCrashRecoverOriginalException); a
		// bare signal number is accepted too.
		sig := code >> 24 & 0xff
		if sig == 0 {
			sig = code
		}
		if sig < uint32(len(macSignals)) {
			return name, macSignals[sig]
		}
	case excResource, excGuard:
		// The 64-bit code packs the kind in its top three bits; only
		// ExceptionInformation holds all 64 bits: Crashpad stores the
		// exception type, then the codes there.
		if len(params) < 2 || params[0] != uint64(typ) {
			return name, ""
		}
		c := params[1]
		kind := c >> 61 & 7
		if typ == excGuard {
			return name, macGuardTypes[kind]
		}
		t := macResourceTypes[kind]
		if f := macResourceFlavors[[2]uint64{kind, c >> 58 & 7}]; t != "" && f != "" {
			return name, t + " / " + f
		}
		return name, t
	}
	return name, ""
}
