package minidump

import (
	"io"
	"time"

	"github.com/stackimage/stackimage/archregs"
)

// A Dump is everything this package reads from a minidump. Memory contents
// stay in the file and are read through Memory on demand.
type Dump struct {
	Header Header
	Time   time.Time // when the dump was written

	// CPU and Arch come from the system info stream; Arch is nil for a CPU
	// archregs does not describe.
	CPU            CPU
	Arch           *archregs.Arch
	CPUDescription string // "GenuineIntel family 6 model 70 stepping 1" on x86
	CPUCount       int
	Platform       Platform
	OSName         string // "macOS", "iOS", ...
	OSVersion      string // "10.12.6"
	OSBuild        string // "16G29"

	SystemInfo *SystemInfo // nil when the dump has no system info stream
	MiscInfo   *MiscInfo   // nil when the dump has no misc info stream

	Threads   []Thread
	Modules   []Module // in module list order
	Memory    *Memory  // never nil
	Exception *Exception

	BreakpadInfo *BreakpadInfo
	CrashpadInfo *CrashpadInfo

	// Errors lists the parts that could not be read, each a *FormatError
	// naming the stream and byte offset. Everything else was read.
	Errors []error
}

// CrashedThread returns the thread the exception names, or, without an
// exception, the thread Breakpad records as the requesting one; nil when
// neither is known.
func (d *Dump) CrashedThread() *Thread {
	var id uint32
	switch {
	case d.Exception != nil:
		id = d.Exception.ThreadID
	case d.BreakpadInfo != nil && d.BreakpadInfo.HasRequestingThreadID:
		id = d.BreakpadInfo.RequestingThreadID
	default:
		return nil
	}
	for i := range d.Threads {
		if d.Threads[i].ID == id {
			return &d.Threads[i]
		}
	}
	return nil
}

// ModuleAt returns the module whose range holds addr, or nil.
func (d *Dump) ModuleAt(addr uint64) *Module {
	for i := range d.Modules {
		if m := &d.Modules[i]; addr >= m.Base && addr-m.Base < m.Size {
			return m
		}
	}
	return nil
}

// Parse opens a minidump and reads every stream this package knows. It
// returns an error only when the header or directory is unreadable; all
// other damage is listed in Dump.Errors beside what could be read.
func Parse(r io.ReaderAt, size int64) (*Dump, error) {
	f, err := Open(r, size)
	if err != nil {
		return nil, err
	}
	return f.ReadAll(), nil
}

// ReadAll reads every stream this package knows from an open File.
func (f *File) ReadAll() *Dump {
	rd := f.newReader()
	d := &Dump{Header: f.Header, Time: f.Header.Time, CPU: CPUUnknown}
	errs := append([]error(nil), f.Errors...)

	if si := rd.systemInfo(&errs); si != nil {
		d.SystemInfo = si
		d.CPU, d.Arch = si.CPU, si.Arch()
		d.CPUDescription = si.CPUDescription()
		d.CPUCount = int(si.NumberOfProcessors)
		d.Platform, d.OSName = si.Platform, si.Platform.String()
		d.OSVersion, d.OSBuild = si.OSVersion(), si.CSDVersion
	}
	d.MiscInfo = rd.miscInfo(&errs)
	d.Threads = rd.threads(&errs)
	if names := rd.threadNames(&errs); names != nil {
		for i := range d.Threads {
			d.Threads[i].Name = names[d.Threads[i].ID]
		}
	}
	d.Modules = rd.modules(&errs)
	d.Memory = buildMemory(f.r, append(rd.memoryRegions(&errs), stackRegions(d.Threads, rd, &errs)...), &errs, f)
	d.Exception = rd.exception(&errs)
	d.BreakpadInfo = rd.breakpadInfo(&errs)
	d.CrashpadInfo = rd.crashpadInfo(&errs)
	d.Errors = errs
	return d
}

// stackRegions returns the thread stacks as memory regions. Breakpad and
// Crashpad also list them in the memory list; buildMemory merges the two.
func stackRegions(threads []Thread, rd *reader, errs *[]error) []rawRegion {
	var raw []rawRegion
	s := rd.Stream(StreamThreadList)
	for i, t := range threads {
		reg := t.Stack
		if reg.Size == 0 {
			continue
		}
		at := int64(s.Offset) + 4 + int64(i*threadSize) + 24 // the Stack descriptor (before any padding)
		if rd.checkRegion(s, at, &reg, errs) {
			raw = append(raw, rawRegion{MemoryRegion: reg, stream: s, at: at})
		}
	}
	return raw
}

// SystemInfo reads the system info stream; nil when there is none.
func (f *File) SystemInfo() (*SystemInfo, error) {
	var errs []error
	si := f.newReader().systemInfo(&errs)
	return si, joinErrors(errs)
}

// MiscInfo reads the misc info stream; nil when there is none.
func (f *File) MiscInfo() (*MiscInfo, error) {
	var errs []error
	mi := f.newReader().miscInfo(&errs)
	return mi, joinErrors(errs)
}

// Threads reads the thread list and the threads' contexts (and the system
// info, to know their layout). It returns the threads it could read and
// an error for what it could not.
func (f *File) Threads() ([]Thread, error) {
	var errs []error
	t := f.newReader().threads(&errs)
	return t, joinErrors(errs)
}

// ThreadNames reads the thread names stream, by thread id.
func (f *File) ThreadNames() (map[uint32]string, error) {
	var errs []error
	n := f.newReader().threadNames(&errs)
	return n, joinErrors(errs)
}

// Modules reads the module list with each module's CodeView record.
func (f *File) Modules() ([]Module, error) {
	var errs []error
	m := f.newReader().modules(&errs)
	return m, joinErrors(errs)
}

// Memory reads the memory list, the Memory64 list and the thread list's
// stack descriptors. It never returns nil.
func (f *File) Memory() (*Memory, error) {
	var errs []error
	rd := f.newReader()
	raw := rd.memoryRegions(&errs)
	threads := rd.threads(&[]error{}) // thread errors belong to Threads
	m := buildMemory(f.r, append(raw, stackRegions(threads, rd, &errs)...), &errs, f)
	return m, joinErrors(errs)
}

// Exception reads the exception stream; nil when there is none.
func (f *File) Exception() (*Exception, error) {
	var errs []error
	e := f.newReader().exception(&errs)
	return e, joinErrors(errs)
}

// BreakpadInfo reads Breakpad's info stream; nil when there is none.
func (f *File) BreakpadInfo() (*BreakpadInfo, error) {
	var errs []error
	b := f.newReader().breakpadInfo(&errs)
	return b, joinErrors(errs)
}

// CrashpadInfo reads Crashpad's info stream; nil when there is none.
func (f *File) CrashpadInfo() (*CrashpadInfo, error) {
	var errs []error
	c := f.newReader().crashpadInfo(&errs)
	return c, joinErrors(errs)
}
