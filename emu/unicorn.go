//go:build unicorn

package emu

/*
#cgo pkg-config: unicorn
#include <stdint.h>
#include <stdlib.h>
#include <unicorn/unicorn.h>

uc_err emuAddCodeHook(uc_engine *uc, uc_hook *hh, uintptr_t handle, uint64_t begin, uint64_t end);
uc_err emuAddMemInvalidHook(uc_engine *uc, uc_hook *hh, uintptr_t handle);
uc_err emuRegReadBatch(uc_engine *uc, int *ids, uint64_t *vals, int n);
*/
import "C"

import (
	"fmt"
	"runtime/cgo"
	"unsafe"
)

// CPU selects the Unicorn architecture and mode to open.
type CPU int

// The CPUs the harness runs.
const (
	CPUARM64  CPU = iota // UC_ARCH_ARM64
	CPUARM               // UC_ARCH_ARM, UC_MODE_ARM (Thumb is entered through the T bit)
	CPUX86_64            // UC_ARCH_X86, UC_MODE_64
	CPUX86_32            // UC_ARCH_X86, UC_MODE_32
)

func (c CPU) String() string {
	switch c {
	case CPUARM64:
		return "arm64"
	case CPUARM:
		return "arm"
	case CPUX86_64:
		return "x86-64"
	case CPUX86_32:
		return "x86-32"
	}
	return fmt.Sprintf("CPU(%d)", int(c))
}

// Error is a failed Unicorn call: the function, Unicorn's error code and
// uc_strerror's message.
type Error struct {
	Op   string // "uc_mem_map"
	Code int    // the uc_err value
	Msg  string // uc_strerror(Code)
}

func (e *Error) Error() string { return fmt.Sprintf("emu: %s: %s (uc_err %d)", e.Op, e.Msg, e.Code) }

func ucErr(op string, code C.uc_err) error {
	if code == C.UC_ERR_OK {
		return nil
	}
	return &Error{Op: op, Code: int(code), Msg: C.GoString(C.uc_strerror(code))}
}

// Protection bits for MapMemory, as Unicorn's UC_PROT_*.
const (
	ProtRead  = C.UC_PROT_READ
	ProtWrite = C.UC_PROT_WRITE
	ProtExec  = C.UC_PROT_EXEC
	ProtAll   = C.UC_PROT_ALL
)

// PageSize is the granularity of MapMemory: addresses and sizes must be
// multiples of it.
const PageSize = 0x1000

// MemAccess says what kind of access faulted.
type MemAccess int

// Kinds of invalid access, in Unicorn's uc_mem_type order.
const (
	AccessReadUnmapped  MemAccess = C.UC_MEM_READ_UNMAPPED
	AccessWriteUnmapped MemAccess = C.UC_MEM_WRITE_UNMAPPED
	AccessFetchUnmapped MemAccess = C.UC_MEM_FETCH_UNMAPPED
	AccessWriteProt     MemAccess = C.UC_MEM_WRITE_PROT
	AccessReadProt      MemAccess = C.UC_MEM_READ_PROT
	AccessFetchProt     MemAccess = C.UC_MEM_FETCH_PROT
)

func (a MemAccess) String() string {
	switch a {
	case AccessReadUnmapped:
		return "read of unmapped memory"
	case AccessWriteUnmapped:
		return "write to unmapped memory"
	case AccessFetchUnmapped:
		return "fetch from unmapped memory"
	case AccessWriteProt:
		return "write to protected memory"
	case AccessReadProt:
		return "read of protected memory"
	case AccessFetchProt:
		return "fetch from non-executable memory"
	}
	return fmt.Sprintf("memory access %d", int(a))
}

// MemFault is a stray memory access that stopped the emulation.
type MemFault struct {
	Access MemAccess
	Addr   uint64
	Size   int
	PC     uint64 // the instruction that made the access
}

func (f *MemFault) Error() string {
	return fmt.Sprintf("emu: %s: %d bytes at %#x by the instruction at PC %#x", f.Access, f.Size, f.Addr, f.PC)
}

// CodeHook is called before each instruction in its range executes, with
// the instruction's address and size in bytes.
type CodeHook func(addr uint64, size uint32)

// Engine is a minimal binding of one Unicorn instance. It is not safe for
// concurrent use. Hooks must not be added while the engine runs.
type Engine struct {
	uc    *C.uc_engine
	cpu   CPU
	pcReg int // Unicorn register id of the PC, to report faults

	handles []cgo.Handle // every handle given to C, deleted by Close

	// fault is the first invalid access of the current run; hookErr a panic
	// recovered in a hook. Start returns them in preference to Unicorn's
	// terser error.
	fault   *MemFault
	hookErr error
}

// hookRecord is what a C hook's user data handle refers to.
type hookRecord struct {
	e    *Engine
	code CodeHook
}

// Open starts a Unicorn engine for the CPU. Invalid memory accesses always
// stop the emulation; Start reports them as a *MemFault.
func Open(cpu CPU) (*Engine, error) {
	var arch C.uc_arch
	var mode C.uc_mode
	e := &Engine{cpu: cpu}
	switch cpu {
	case CPUARM64:
		arch, mode, e.pcReg = C.UC_ARCH_ARM64, C.UC_MODE_ARM, C.UC_ARM64_REG_PC
	case CPUARM:
		arch, mode, e.pcReg = C.UC_ARCH_ARM, C.UC_MODE_ARM, C.UC_ARM_REG_PC
	case CPUX86_64:
		arch, mode, e.pcReg = C.UC_ARCH_X86, C.UC_MODE_64, C.UC_X86_REG_RIP
	case CPUX86_32:
		arch, mode, e.pcReg = C.UC_ARCH_X86, C.UC_MODE_32, C.UC_X86_REG_EIP
	default:
		return nil, fmt.Errorf("emu: unsupported CPU %v", cpu)
	}
	if err := ucErr("uc_open", C.uc_open(arch, mode, &e.uc)); err != nil {
		return nil, err
	}
	h := cgo.NewHandle(&hookRecord{e: e})
	e.handles = append(e.handles, h)
	var hh C.uc_hook
	if err := ucErr("uc_hook_add(UC_HOOK_MEM_INVALID)", C.emuAddMemInvalidHook(e.uc, &hh, C.uintptr_t(h))); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// Close releases the engine. It is safe to call more than once.
func (e *Engine) Close() error {
	if e.uc == nil {
		return nil
	}
	err := ucErr("uc_close", C.uc_close(e.uc))
	e.uc = nil
	for _, h := range e.handles {
		h.Delete()
	}
	e.handles = nil
	return err
}

// MapMemory maps zeroed memory at [addr, addr+size) with the protection
// bits; both must be multiples of PageSize.
func (e *Engine) MapMemory(addr, size uint64, prot int) error {
	if addr%PageSize != 0 || size%PageSize != 0 || size == 0 {
		return fmt.Errorf("emu: map %#x bytes at %#x: address and size must be nonzero multiples of %#x", size, addr, PageSize)
	}
	if addr+size < addr {
		return fmt.Errorf("emu: map %#x bytes at %#x: wraps around the address space", size, addr)
	}
	if err := ucErr("uc_mem_map", C.uc_mem_map(e.uc, C.uint64_t(addr), C.size_t(size), C.uint32_t(prot))); err != nil {
		return fmt.Errorf("map [%#x, %#x): %w", addr, addr+size, err)
	}
	return nil
}

// WriteMemory copies p to mapped memory at addr.
func (e *Engine) WriteMemory(addr uint64, p []byte) error {
	if len(p) == 0 {
		return nil
	}
	if err := ucErr("uc_mem_write", C.uc_mem_write(e.uc, C.uint64_t(addr), unsafe.Pointer(&p[0]), C.size_t(len(p)))); err != nil {
		return fmt.Errorf("write %d bytes at %#x: %w", len(p), addr, err)
	}
	return nil
}

// ReadMemory reads len(p) bytes at addr. It satisfies walker.Memory: when
// part of the range is unmapped it returns the bytes before the first
// unmapped page and an error.
func (e *Engine) ReadMemory(p []byte, addr uint64) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if C.uc_mem_read(e.uc, C.uint64_t(addr), unsafe.Pointer(&p[0]), C.size_t(len(p))) == C.UC_ERR_OK {
		return len(p), nil
	}
	// Part of the range is unmapped: find how much of its start is readable,
	// page by page, so that callers get io.ReaderAt semantics.
	n := 0
	for n < len(p) {
		chunk := int(PageSize - (addr+uint64(n))%PageSize)
		if chunk > len(p)-n {
			chunk = len(p) - n
		}
		code := C.uc_mem_read(e.uc, C.uint64_t(addr+uint64(n)), unsafe.Pointer(&p[n]), C.size_t(chunk))
		if code != C.UC_ERR_OK {
			return n, fmt.Errorf("read %d bytes at %#x: %w", len(p), addr, ucErr("uc_mem_read", code))
		}
		n += chunk
	}
	return n, nil
}

// RegRead returns a register by Unicorn register id (UC_<ARCH>_REG_*).
// Registers narrower than 64 bits come back zero-extended.
func (e *Engine) RegRead(id int) (uint64, error) {
	var v C.uint64_t
	if err := ucErr("uc_reg_read", C.uc_reg_read(e.uc, C.int(id), unsafe.Pointer(&v))); err != nil {
		return 0, fmt.Errorf("register %d: %w", id, err)
	}
	return uint64(v), nil
}

// RegReadBatch reads the registers with the given Unicorn ids into vals,
// which must be as long as ids, in one call.
func (e *Engine) RegReadBatch(ids []int, vals []uint64) error {
	if len(ids) != len(vals) || len(ids) == 0 || len(ids) > 64 {
		return fmt.Errorf("emu: RegReadBatch: %d ids, %d values (want 1..64, equal)", len(ids), len(vals))
	}
	var cids [64]C.int
	for i, id := range ids {
		cids[i] = C.int(id)
	}
	code := C.emuRegReadBatch(e.uc, &cids[0], (*C.uint64_t)(unsafe.Pointer(&vals[0])), C.int(len(ids)))
	return ucErr("uc_reg_read_batch", code)
}

// RegWrite sets a register by Unicorn register id. Only the low bits a
// register holds are used.
func (e *Engine) RegWrite(id int, v uint64) error {
	cv := C.uint64_t(v)
	if err := ucErr("uc_reg_write", C.uc_reg_write(e.uc, C.int(id), unsafe.Pointer(&cv))); err != nil {
		return fmt.Errorf("register %d: %w", id, err)
	}
	return nil
}

// AddCodeHook calls fn before every instruction whose address is in
// [begin, end] (inclusive, as Unicorn has it; begin > end means
// everywhere).
func (e *Engine) AddCodeHook(begin, end uint64, fn CodeHook) error {
	h := cgo.NewHandle(&hookRecord{e: e, code: fn})
	e.handles = append(e.handles, h)
	var hh C.uc_hook
	return ucErr("uc_hook_add(UC_HOOK_CODE)", C.emuAddCodeHook(e.uc, &hh, C.uintptr_t(h), C.uint64_t(begin), C.uint64_t(end)))
}

// Start runs from begin until the PC reaches until, count instructions have
// run (0: no limit) or timeoutMicros elapse (0: none), or a hook calls Stop.
// A stray memory access is returned as a *MemFault, a panic in a hook as an
// error; other failures as *Error.
func (e *Engine) Start(begin, until uint64, timeoutMicros uint64, count int) error {
	e.fault, e.hookErr = nil, nil
	code := C.uc_emu_start(e.uc, C.uint64_t(begin), C.uint64_t(until), C.uint64_t(timeoutMicros), C.size_t(count))
	switch {
	case e.hookErr != nil:
		return e.hookErr
	case e.fault != nil:
		return e.fault
	}
	return ucErr("uc_emu_start", code)
}

// Stop asks a running emulation to stop; from a code hook, the hooked
// instruction does not execute.
func (e *Engine) Stop() error { return ucErr("uc_emu_stop", C.uc_emu_stop(e.uc)) }

// fail records an error from a hook and stops the emulation.
func (e *Engine) fail(err error) {
	if e.hookErr == nil {
		e.hookErr = err
	}
	C.uc_emu_stop(e.uc)
}

//export emuCodeHook
func emuCodeHook(handle C.uintptr_t, addr C.uint64_t, size C.uint32_t) {
	rec := cgo.Handle(handle).Value().(*hookRecord)
	// A panic must not unwind through Unicorn's C frames: turn it into the
	// run's error.
	defer func() {
		if r := recover(); r != nil {
			rec.e.fail(fmt.Errorf("emu: code hook at %#x panicked: %v", uint64(addr), r))
		}
	}()
	rec.code(uint64(addr), uint32(size))
}

//export emuMemInvalidHook
func emuMemInvalidHook(handle C.uintptr_t, kind C.int, addr C.uint64_t, size C.int) C.bool {
	e := cgo.Handle(handle).Value().(*hookRecord).e
	if e.fault == nil {
		pc, _ := e.RegRead(e.pcReg)
		e.fault = &MemFault{Access: MemAccess(kind), Addr: uint64(addr), Size: int(size), PC: pc}
	}
	return false // stop: the harness never maps memory on demand
}
