package minidump

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"time"
	"unicode/utf16"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/uuid"
)

// WriterInput describes a minidump for Write.
type WriterInput struct {
	// Arch picks the CPU of the system info stream and the thread context
	// layout: AMD64 and ARM64 in Microsoft's layout, x86 in the standard
	// one, ARM in Breakpad's (which Crashpad also writes).
	Arch     *archregs.Arch
	Platform Platform // PlatformMacOS, PlatformIOS, ...
	// MajorVersion, MinorVersion and BuildNumber are the OS version
	// (10, 12, 6 for macOS 10.12.6); OSBuild ("16G29") is written as the
	// CSD version string, as Breakpad and Crashpad do.
	MajorVersion, MinorVersion, BuildNumber uint32
	OSBuild                                 string
	CPUCount                                int
	Time                                    time.Time // the header's TimeDateStamp; zero writes 0

	// ProcessID, when non-zero, is written in a misc info stream.
	ProcessID uint32

	Threads []WriterThread
	Modules []WriterModule
	// Memory lists captured memory besides the thread stacks.
	Memory []WriterMemory
	// Memory64 writes all memory, thread stacks included, as a Memory64
	// list (as full dumps do) instead of a memory list.
	Memory64  bool
	Exception *WriterException

	// CrashpadAnnotations and CrashpadModules, when set, are written in a
	// Crashpad info stream.
	CrashpadAnnotations map[string]string
	CrashpadModules     []CrashpadModuleInfo
}

// WriterThread is one thread to write.
type WriterThread struct {
	ID        uint32
	Name      string // written in a thread names stream when any thread has one
	Registers *archregs.Registers
	StackAddr uint64
	Stack     []byte
}

// WriterModule is one module to write, with an RSDS CodeView record made
// from its UUID when the UUID is not zero.
type WriterModule struct {
	Base uint64
	Size uint32
	Path string
	UUID uuid.UUID
	Age  uint32
}

// WriterMemory is one captured memory range: Data, or when Data is nil,
// Size zero bytes (streamed, never held in memory; Memory64 lists only).
type WriterMemory struct {
	Addr uint64
	Data []byte
	Size uint64
}

func (m WriterMemory) size() uint64 {
	if m.Data != nil {
		return uint64(len(m.Data))
	}
	return m.Size
}

// WriterException is the exception stream to write.
type WriterException struct {
	ThreadID   uint32
	Code       uint32
	Flags      uint32
	Address    uint64
	Parameters []uint64 // at most 15
	Registers  *archregs.Registers
}

// builder lays out the part of a dump before the Memory64 data.
type builder struct {
	buf []byte
	err error
}

func (b *builder) align() {
	for len(b.buf)%4 != 0 {
		b.buf = append(b.buf, 0)
	}
}

// put appends p, 4-byte aligned, and returns where it went.
func (b *builder) put(p []byte) location {
	b.align()
	if uint64(len(b.buf))+uint64(len(p)) > math.MaxUint32 {
		if b.err == nil {
			b.err = fmt.Errorf("minidump: the dump's streams pass 4 GiB, beyond what a 32-bit RVA reaches")
		}
		return location{}
	}
	loc := location{Size: uint32(len(p)), RVA: uint32(len(b.buf))}
	b.buf = append(b.buf, p...)
	return loc
}

func (b *builder) putString(s string) uint32 {
	u := utf16.Encode([]rune(s))
	p := le.AppendUint32(nil, uint32(2*len(u)))
	for _, c := range u {
		p = le.AppendUint16(p, c)
	}
	return b.put(le.AppendUint16(p, 0)).RVA
}

func (b *builder) putUTF8(s string) uint32 {
	p := le.AppendUint32(nil, uint32(len(s)))
	return b.put(append(append(p, s...), 0)).RVA
}

func appendLoc(p []byte, l location) []byte {
	return le.AppendUint32(le.AppendUint32(p, l.Size), l.RVA)
}

// cpuForArch returns the system info's CPU for a (Arch.MinidumpCPU).
func cpuForArch(a *archregs.Arch) (CPU, error) {
	if a == nil || a.MinidumpContext == 0 {
		return 0, fmt.Errorf("minidump: cannot write a dump for architecture %v", a)
	}
	return CPU(a.MinidumpCPU), nil
}

// Write writes the dump d describes to w. Streams are written in this
// order: thread list, module list, memory list or Memory64 list,
// exception, system info, misc info, thread names, Crashpad info; the
// Memory64 data comes last and is streamed.
func Write(w io.Writer, d *WriterInput) error {
	if w == nil {
		return errors.New("minidump: Write: nil writer")
	}
	if d == nil {
		return errors.New("minidump: Write: nil input")
	}
	cpu, err := cpuForArch(d.Arch)
	if err != nil {
		return err
	}
	type dirEntry struct {
		typ StreamType
		loc location
	}
	var dir []dirEntry
	nStreams := 4 // threads, modules, memory, system info
	if d.Exception != nil {
		nStreams++
	}
	if d.ProcessID != 0 {
		nStreams++
	}
	hasNames := false
	for _, t := range d.Threads {
		hasNames = hasNames || t.Name != ""
	}
	if hasNames {
		nStreams++
	}
	hasCrashpad := d.CrashpadAnnotations != nil || d.CrashpadModules != nil
	if hasCrashpad {
		nStreams++
	}
	b := &builder{buf: make([]byte, headerSize+directorySize*nStreams)}

	// Memory: thread stacks first, then the other ranges.
	var mem []WriterMemory
	for _, t := range d.Threads {
		if len(t.Stack) > 0 {
			mem = append(mem, WriterMemory{Addr: t.StackAddr, Data: t.Stack})
		}
	}
	mem = append(mem, d.Memory...)
	var memLocs []location // for the memory list: where each range's bytes went
	var mem64Offsets []uint64
	if !d.Memory64 {
		for _, m := range mem {
			if m.Data == nil && m.Size > 0 {
				return fmt.Errorf("minidump: memory at %#x has no data; only a Memory64 list streams zeros", m.Addr)
			}
			if m.size() > math.MaxUint32 {
				return fmt.Errorf("minidump: memory at %#x of %#x bytes is too large for a memory list", m.Addr, m.size())
			}
			memLocs = append(memLocs, b.put(m.Data))
		}
	} else {
		var off uint64
		for _, m := range mem {
			mem64Offsets = append(mem64Offsets, off)
			off += m.size()
		}
	}

	// Thread list. In Memory64 mode the stack's RVA points into the
	// Memory64 data, which is placed after everything else.
	var stackLocs []location
	stackIndex := 0
	var ctxLocs []location
	for _, t := range d.Threads {
		var loc location
		if t.Registers != nil {
			if t.Registers.Arch != d.Arch {
				return fmt.Errorf("minidump: thread %#x has %s registers in an %s dump", t.ID, t.Registers.Arch, d.Arch)
			}
			ctx, err := encodeContext(t.Registers)
			if err != nil {
				return err
			}
			loc = b.put(ctx)
		}
		ctxLocs = append(ctxLocs, loc)
		var sl location
		if len(t.Stack) > 0 {
			if !d.Memory64 {
				sl = memLocs[stackIndex]
			} else {
				sl = location{Size: uint32(len(t.Stack))} // RVA filled in below
			}
			stackIndex++
		}
		stackLocs = append(stackLocs, sl)
	}

	// Module names and CodeView records.
	type modRefs struct {
		name uint32
		cv   location
	}
	var mods []modRefs
	for _, m := range d.Modules {
		r := modRefs{name: b.putString(m.Path)}
		if m.UUID != ([16]byte{}) {
			g := UUIDToGUID(m.UUID)
			cv := le.AppendUint32(nil, cvSignatureRSDS)
			cv = append(cv, g[:]...)
			cv = le.AppendUint32(cv, m.Age)
			cv = append(append(cv, moduleBaseName(m.Path)...), 0)
			r.cv = b.put(cv)
		}
		mods = append(mods, r)
	}
	csd := b.putString(d.OSBuild)

	var excCtx location
	if e := d.Exception; e != nil && e.Registers != nil {
		ctx, err := encodeContext(e.Registers)
		if err != nil {
			return err
		}
		excCtx = b.put(ctx)
	}

	var nameRVAs []uint32
	if hasNames {
		for _, t := range d.Threads {
			nameRVAs = append(nameRVAs, b.putString(t.Name))
		}
	}

	var crashpad []byte
	if hasCrashpad {
		crashpad = writeCrashpad(b, d)
	}

	// The streams themselves. The thread list is laid out last among the
	// fixed streams in Memory64 mode, once the data's base is known, so
	// it is built by a function.
	threadList := func(memBase uint64) []byte {
		p := le.AppendUint32(nil, uint32(len(d.Threads)))
		stack := 0
		for i, t := range d.Threads {
			p = le.AppendUint32(p, t.ID)
			p = append(p, make([]byte, 12)...) // SuspendCount, PriorityClass, Priority
			p = le.AppendUint64(p, 0)          // Teb
			p = le.AppendUint64(p, t.StackAddr)
			sl := stackLocs[i]
			if d.Memory64 && sl.Size > 0 {
				if rva := memBase + mem64Offsets[stack]; rva <= math.MaxUint32 {
					sl.RVA = uint32(rva)
				} else {
					sl = location{}
				}
			}
			if len(t.Stack) > 0 {
				stack++
			}
			p = appendLoc(p, sl)
			p = appendLoc(p, ctxLocs[i])
		}
		return p
	}

	moduleList := le.AppendUint32(nil, uint32(len(d.Modules)))
	for i, m := range d.Modules {
		p := le.AppendUint64(nil, m.Base)
		p = le.AppendUint32(p, m.Size)
		p = le.AppendUint32(p, 0) // CheckSum
		p = le.AppendUint32(p, 0) // TimeDateStamp
		p = le.AppendUint32(p, mods[i].name)
		p = append(p, make([]byte, 52)...) // VS_FIXEDFILEINFO
		p = appendLoc(p, mods[i].cv)
		p = append(p, make([]byte, 8+16)...) // MiscRecord, Reserved0, Reserved1
		moduleList = append(moduleList, p...)
	}

	sys := le.AppendUint16(nil, uint16(cpu))
	sys = append(sys, 0, 0, 0, 0) // ProcessorLevel, ProcessorRevision
	sys = append(sys, byte(min(d.CPUCount, 255)), 0)
	sys = le.AppendUint32(sys, d.MajorVersion)
	sys = le.AppendUint32(sys, d.MinorVersion)
	sys = le.AppendUint32(sys, d.BuildNumber)
	sys = le.AppendUint32(sys, uint32(d.Platform))
	sys = le.AppendUint32(sys, csd)
	sys = append(sys, make([]byte, 4+24)...) // SuiteMask, Reserved2, Cpu

	threadsAt := len(dir)
	dir = append(dir, dirEntry{typ: StreamThreadList}) // filled in below
	dir = append(dir, dirEntry{StreamModuleList, b.put(moduleList)})
	if !d.Memory64 {
		ml := le.AppendUint32(nil, uint32(len(mem)))
		for i, m := range mem {
			ml = le.AppendUint64(ml, m.Addr)
			ml = appendLoc(ml, memLocs[i])
		}
		dir = append(dir, dirEntry{StreamMemoryList, b.put(ml)})
	}
	if e := d.Exception; e != nil {
		if len(e.Parameters) > maxExceptionParam {
			return fmt.Errorf("minidump: %d exception parameters, at most %d", len(e.Parameters), maxExceptionParam)
		}
		p := le.AppendUint32(nil, e.ThreadID)
		p = le.AppendUint32(p, 0)
		p = le.AppendUint32(p, e.Code)
		p = le.AppendUint32(p, e.Flags)
		p = le.AppendUint64(p, 0)
		p = le.AppendUint64(p, e.Address)
		p = le.AppendUint32(p, uint32(len(e.Parameters)))
		p = le.AppendUint32(p, 0)
		for i := 0; i < maxExceptionParam; i++ {
			var v uint64
			if i < len(e.Parameters) {
				v = e.Parameters[i]
			}
			p = le.AppendUint64(p, v)
		}
		dir = append(dir, dirEntry{StreamException, b.put(appendLoc(p, excCtx))})
	}
	dir = append(dir, dirEntry{StreamSystemInfo, b.put(sys)})
	if d.ProcessID != 0 {
		p := le.AppendUint32(nil, miscInfoSize)
		p = le.AppendUint32(p, miscProcessID)
		p = le.AppendUint32(p, d.ProcessID)
		dir = append(dir, dirEntry{StreamMiscInfo, b.put(append(p, make([]byte, 12)...))})
	}
	if hasNames {
		p := le.AppendUint32(nil, uint32(len(d.Threads)))
		for i, t := range d.Threads {
			p = le.AppendUint64(le.AppendUint32(p, t.ID), uint64(nameRVAs[i]))
		}
		dir = append(dir, dirEntry{StreamThreadNames, b.put(p)})
	}
	if hasCrashpad {
		dir = append(dir, dirEntry{StreamCrashpadInfo, b.put(crashpad)})
	}

	// The thread list's size does not depend on where the memory goes.
	tlSize := uint64(4 + threadSize*len(d.Threads))
	if !d.Memory64 {
		dir[threadsAt].loc = b.put(threadList(0))
	} else {
		b.align()
		m64Size := uint64(16 + memory64DescSize*len(mem))
		base := uint64(len(b.buf)) + tlSize
		base += (4 - base%4) % 4
		base += m64Size
		dir[threadsAt].loc = b.put(threadList(base))
		p := le.AppendUint64(nil, uint64(len(mem)))
		p = le.AppendUint64(p, base)
		for _, m := range mem {
			p = le.AppendUint64(le.AppendUint64(p, m.Addr), m.size())
		}
		dir = append(dir, dirEntry{StreamMemory64List, b.put(p)})
		if b.err == nil && uint64(len(b.buf)) != base {
			return fmt.Errorf("minidump: internal error: Memory64 data at %#x, expected %#x", len(b.buf), base)
		}
	}
	if b.err != nil {
		return b.err
	}

	h := b.buf[:headerSize]
	le.PutUint32(h, headerSignature)
	le.PutUint32(h[4:], headerVersion)
	le.PutUint32(h[8:], uint32(len(dir)))
	le.PutUint32(h[12:], headerSize)
	if !d.Time.IsZero() {
		le.PutUint32(h[20:], uint32(d.Time.Unix()))
	}
	for i, e := range dir {
		p := b.buf[headerSize+i*directorySize:]
		le.PutUint32(p, uint32(e.typ))
		le.PutUint32(p[4:], e.loc.Size)
		le.PutUint32(p[8:], e.loc.RVA)
	}
	if _, err := w.Write(b.buf); err != nil {
		return err
	}
	if d.Memory64 {
		for _, m := range mem {
			if err := writeMemory(w, m); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeMemory writes a range's bytes, or its size in zeros.
func writeMemory(w io.Writer, m WriterMemory) error {
	if m.Data != nil {
		_, err := w.Write(m.Data)
		return err
	}
	zeros := make([]byte, 64<<10)
	for left := m.Size; left > 0; {
		n := min(left, uint64(len(zeros)))
		if _, err := w.Write(zeros[:n]); err != nil {
			return err
		}
		left -= n
	}
	return nil
}

// writeCrashpad lays out the Crashpad info's annotations and returns the
// MinidumpCrashpadInfo stream.
func writeCrashpad(b *builder, d *WriterInput) []byte {
	dict := func(m map[string]string) location {
		if m == nil {
			return location{}
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		p := le.AppendUint32(nil, uint32(len(keys)))
		for _, k := range keys {
			p = le.AppendUint32(p, b.putUTF8(k))
			p = le.AppendUint32(p, b.putUTF8(m[k]))
		}
		return b.put(p)
	}
	simple := dict(d.CrashpadAnnotations)
	var links []byte
	for _, mi := range d.CrashpadModules {
		var list location
		if mi.ListAnnotations != nil {
			p := le.AppendUint32(nil, uint32(len(mi.ListAnnotations)))
			for _, s := range mi.ListAnnotations {
				p = le.AppendUint32(p, b.putUTF8(s))
			}
			list = b.put(p)
		}
		sd := dict(mi.SimpleAnnotations)
		var objs location
		if mi.Annotations != nil {
			p := le.AppendUint32(nil, uint32(len(mi.Annotations)))
			for _, a := range mi.Annotations {
				name := b.putUTF8(a.Name)
				val := b.put(append(le.AppendUint32(nil, uint32(len(a.Value))), a.Value...)).RVA
				p = le.AppendUint32(le.AppendUint32(le.AppendUint32(p, name), uint32(a.Type)), val)
			}
			objs = b.put(p)
		}
		m := le.AppendUint32(nil, 1) // version
		m = appendLoc(appendLoc(appendLoc(m, list), sd), objs)
		links = appendLoc(le.AppendUint32(links, uint32(mi.ModuleIndex)), b.put(m))
	}
	var modList location
	if d.CrashpadModules != nil {
		modList = b.put(append(le.AppendUint32(nil, uint32(len(d.CrashpadModules))), links...))
	}
	p := le.AppendUint32(nil, 1)       // version
	p = append(p, make([]byte, 32)...) // report_id, client_id
	return appendLoc(appendLoc(p, simple), modList)
}
