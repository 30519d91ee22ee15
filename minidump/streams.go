package minidump

import (
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/uuid"
)

// SystemInfo is the MINIDUMP_SYSTEM_INFO stream.
type SystemInfo struct {
	CPU                CPU
	ProcessorLevel     uint16
	ProcessorRevision  uint16
	NumberOfProcessors uint8
	ProductType        uint8
	MajorVersion       uint32
	MinorVersion       uint32
	BuildNumber        uint32
	Platform           Platform
	// CSDVersion is the service pack string; Breakpad and Crashpad put the
	// macOS and iOS build ("16G29") there.
	CSDVersion string
	// CPUVendor is the x86 CPUID vendor ("GenuineIntel"); empty elsewhere.
	CPUVendor string
}

// Arch returns the archregs architecture of the dump's CPU, or nil.
func (s *SystemInfo) Arch() *archregs.Arch { return archForCPU(s.CPU) }

// archForCPU returns the first architecture of archregs.All whose
// Arch.MinidumpCPU is c: arm64 rather than arm64e, which a minidump
// cannot tell apart.
func archForCPU(c CPU) *archregs.Arch {
	switch c {
	case CPUX86Win64: // 32-bit x86 code under WOW64
		c = CPUX86
	case CPUARM64Old: // Breakpad's number before Windows defined ARM64
		c = CPUARM64
	}
	for _, a := range archregs.All {
		if a.MinidumpContext != 0 && CPU(a.MinidumpCPU) == c {
			return a
		}
	}
	return nil
}

// OSVersion returns "major.minor.build", as macOS versions read (10.12.6).
func (s *SystemInfo) OSVersion() string {
	return fmt.Sprintf("%d.%d.%d", s.MajorVersion, s.MinorVersion, s.BuildNumber)
}

// CPUDescription describes the processor as Breakpad's processor does:
// the vendor, family, model and stepping on x86; empty elsewhere.
func (s *SystemInfo) CPUDescription() string {
	if s.CPU != CPUX86 && s.CPU != CPUAMD64 && s.CPU != CPUX86Win64 {
		return ""
	}
	d := fmt.Sprintf("family %d model %d stepping %d", s.ProcessorLevel, s.ProcessorRevision>>8, s.ProcessorRevision&0xff)
	if s.CPUVendor != "" {
		d = s.CPUVendor + " " + d
	}
	return d
}

func (r *reader) systemInfo(errs *[]error) *SystemInfo {
	if r.sysDone {
		return r.sys
	}
	r.sysDone = true
	s := r.Stream(StreamSystemInfo)
	if s == nil {
		return nil
	}
	data, err := r.streamData(s)
	if err != nil {
		*errs = append(*errs, err)
		return nil
	}
	if len(data) < systemInfoSize {
		*errs = append(*errs, r.errf(s, int64(s.Offset), "stream of %d bytes is shorter than MINIDUMP_SYSTEM_INFO (%d)", len(data), systemInfoSize))
		return nil
	}
	si := &SystemInfo{
		CPU:                CPU(le.Uint16(data)),
		ProcessorLevel:     le.Uint16(data[2:]),
		ProcessorRevision:  le.Uint16(data[4:]),
		NumberOfProcessors: data[6],
		ProductType:        data[7],
		MajorVersion:       le.Uint32(data[8:]),
		MinorVersion:       le.Uint32(data[12:]),
		BuildNumber:        le.Uint32(data[16:]),
		Platform:           Platform(le.Uint32(data[20:])),
	}
	if rva := le.Uint32(data[24:]); rva != 0 {
		si.CSDVersion, err = r.readString(s, int64(s.Offset)+24, rva)
		if err != nil {
			*errs = append(*errs, err)
		}
	}
	if si.CPU == CPUX86 || si.CPU == CPUAMD64 {
		// CPU_INFORMATION.X86CpuInfo.VendorId: the CPUID vendor string.
		// Breakpad fills it on AMD64 too; Crashpad writes OtherCpuInfo's
		// feature bits there instead, which are not text.
		if v := data[32:44]; printable(v) {
			si.CPUVendor = string(v)
		}
	}
	r.sys = si
	return si
}

func printable(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

// cpu returns the dump's CPU and whether the system info stream gave it.
func (r *reader) cpu(errs *[]error) (CPU, bool) {
	if si := r.systemInfo(errs); si != nil {
		return si.CPU, true
	}
	return CPUUnknown, false
}

// MiscInfo is the MINIDUMP_MISC_INFO stream (any of its versions 1 to 5).
type MiscInfo struct {
	Flags             uint32 // Flags1: which fields are valid
	ProcessID         uint32 // valid when HasProcessID
	HasProcessID      bool
	ProcessCreateTime time.Time // zero unless HasProcessTimes
	ProcessUserTime   time.Duration
	ProcessKernelTime time.Duration
	HasProcessTimes   bool
	// BuildString is MINIDUMP_MISC_INFO_4's BuildString; Crashpad puts the
	// full OS description there.
	BuildString string
}

const (
	miscProcessID    = 0x1   // MINIDUMP_MISC1_PROCESS_ID
	miscProcessTimes = 0x2   // MINIDUMP_MISC1_PROCESS_TIMES
	miscBuildString  = 0x100 // MINIDUMP_MISC4_BUILDSTRING
)

func (r *reader) miscInfo(errs *[]error) *MiscInfo {
	s := r.Stream(StreamMiscInfo)
	if s == nil {
		return nil
	}
	data, err := r.streamData(s)
	if err != nil {
		*errs = append(*errs, err)
		return nil
	}
	if len(data) < miscInfoSize {
		*errs = append(*errs, r.errf(s, int64(s.Offset), "stream of %d bytes is shorter than MINIDUMP_MISC_INFO (%d)", len(data), miscInfoSize))
		return nil
	}
	mi := &MiscInfo{Flags: le.Uint32(data[4:])}
	if mi.Flags&miscProcessID != 0 {
		mi.ProcessID, mi.HasProcessID = le.Uint32(data[8:]), true
	}
	if mi.Flags&miscProcessTimes != 0 {
		mi.HasProcessTimes = true
		mi.ProcessCreateTime = time.Unix(int64(le.Uint32(data[12:])), 0).UTC()
		mi.ProcessUserTime = time.Duration(le.Uint32(data[16:])) * time.Second
		mi.ProcessKernelTime = time.Duration(le.Uint32(data[20:])) * time.Second
	}
	if mi.Flags&miscBuildString != 0 && len(data) >= miscInfo4Size {
		mi.BuildString = decodeUTF16(trimUTF16(data[232 : 232+520]))
	}
	return mi
}

// trimUTF16 cuts a fixed UTF-16 buffer at its first NUL character.
func trimUTF16(b []byte) []byte {
	for i := 0; i+1 < len(b); i += 2 {
		if b[i] == 0 && b[i+1] == 0 {
			return b[:i]
		}
	}
	return b
}

// A Thread is one MINIDUMP_THREAD.
type Thread struct {
	ID            uint32
	Name          string // from the thread names stream; often empty
	SuspendCount  uint32
	PriorityClass uint32
	Priority      uint32
	TEB           uint64
	// Stack is the captured stack memory; its bytes are in Dump.Memory.
	Stack MemoryRegion
	// Context is the register state, nil when it could not be read.
	Context *Context
}

// Registers returns the thread's registers, or nil.
func (t *Thread) Registers() *archregs.Registers {
	if t.Context == nil {
		return nil
	}
	return t.Context.Registers
}

func (r *reader) threads(errs *[]error) []Thread {
	s := r.Stream(StreamThreadList)
	if s == nil {
		return nil
	}
	data, err := r.streamData(s)
	if err != nil {
		*errs = append(*errs, err)
		return nil
	}
	entries, count, err := r.listEntries(s, data, threadSize)
	if err != nil {
		*errs = append(*errs, err)
	}
	if count > MaxThreads {
		// A list repeating one entry a million times would cost a
		// decoded context, a stack and a walk each.
		*errs = append(*errs, r.errf(s, int64(s.Offset), "%d threads, more than %d (MaxThreads): the first %d are read", count, MaxThreads, MaxThreads))
		count = MaxThreads
	}
	cpu, known := r.cpu(errs)
	base := int64(s.Offset) + int64(len(data)-len(entries))
	threads := make([]Thread, count)
	for i := range threads {
		e := entries[i*threadSize:]
		at := base + int64(i*threadSize)
		t := &threads[i]
		*t = Thread{
			ID: le.Uint32(e), SuspendCount: le.Uint32(e[4:]), PriorityClass: le.Uint32(e[8:]),
			Priority: le.Uint32(e[12:]), TEB: le.Uint64(e[16:]),
		}
		stackLoc := readLocation(e[32:])
		t.Stack = MemoryRegion{Addr: le.Uint64(e[24:]), Size: uint64(stackLoc.Size), Offset: int64(stackLoc.RVA)}
		t.Context = r.context(s, at+40, readLocation(e[40:]), cpu, known, fmt.Sprintf("thread %d (id %#x)", i, t.ID), errs)
	}
	return threads
}

// context reads and decodes the context at loc; what names its owner.
func (r *reader) context(s *Stream, at int64, loc location, cpu CPU, known bool, what string, errs *[]error) *Context {
	if loc.Size == 0 {
		return nil
	}
	b, err := r.readLocationData(s, at, loc, maxContextBytes, what+" context")
	if err != nil {
		*errs = append(*errs, err)
		return nil
	}
	c, err := decodeContext(cpu, known, b)
	if err != nil {
		*errs = append(*errs, r.errf(s, int64(loc.RVA), "%s context: %v", what, err))
		return nil
	}
	return c
}

func (r *reader) threadNames(errs *[]error) map[uint32]string {
	s := r.Stream(StreamThreadNames)
	if s == nil {
		return nil
	}
	data, err := r.streamData(s)
	if err != nil {
		*errs = append(*errs, err)
		return nil
	}
	entries, count, err := r.listEntries(s, data, threadNameSize)
	if err != nil {
		*errs = append(*errs, err)
	}
	base := int64(s.Offset) + int64(len(data)-len(entries))
	names := make(map[uint32]string)
	for i := 0; i < count; i++ {
		e := entries[i*threadNameSize:]
		rva := le.Uint64(e[4:])
		if rva > uint64(r.size) {
			*errs = append(*errs, r.errf(s, base+int64(i*threadNameSize)+4, "thread name at %#x is past the end of the file", rva))
			continue
		}
		name, err := r.readString(s, base+int64(i*threadNameSize)+4, uint32(rva))
		if err != nil {
			*errs = append(*errs, err)
			continue
		}
		names[le.Uint32(e)] = name
	}
	return names
}

// A Module is one MINIDUMP_MODULE: a loaded image.
type Module struct {
	Base uint64
	Size uint64
	Path string // the module name as the dump records it, usually a full path
	Name string // the last element of Path
	// Checksum and TimeDateStamp are the PE header's; zero on Apple platforms.
	Checksum      uint32
	TimeDateStamp uint32
	CodeView      CodeView
	// UUID is the Mach-O LC_UUID, from an RSDS CodeView record (see
	// CodeView); HasUUID is false when the module has none.
	UUID    uuid.UUID
	HasUUID bool
	// DebugID is Breakpad's debug identifier: the UUID in upper-case hex
	// without dashes, then the age in hex ("67E9247C814E392BA027DBDE6748FCBF0").
	DebugID string
	// CodeID identifies the binary: the UUID in lower-case hex on Apple
	// platforms, as symbolicator and rust-minidump name it; on Windows the
	// PE TimeDateStamp and SizeOfImage.
	CodeID string
}

// End returns the first address after the module.
func (m *Module) End() uint64 { return m.Base + m.Size }

// CodeView is a module's CodeView record.
type CodeView struct {
	Signature uint32 // "RSDS", "NB10", "BpEL" or another
	// GUID holds the RSDS record's GUID bytes as stored: Data1, Data2 and
	// Data3 little-endian, then Data4.
	GUID    [16]byte
	Age     uint32
	PDBName string // the debug file name of an RSDS or NB10 record
	BuildID []byte // the build id of a BpEL record
	Raw     []byte // the whole record when its signature is not known
	// Present is true when the module has a readable record; Size and
	// Location are its MINIDUMP_LOCATION_DESCRIPTOR.
	Present  bool
	Size     uint32
	Location uint32
}

// SignatureString returns the record's signature as four characters.
func (c *CodeView) SignatureString() string {
	b := []byte{byte(c.Signature), byte(c.Signature >> 8), byte(c.Signature >> 16), byte(c.Signature >> 24)}
	return string(b)
}

// GUIDToUUID converts a CodeView GUID as stored to the UUID it stands for.
// Breakpad and Crashpad write the Mach-O UUID's first three fields as the
// GUID's little-endian Data1, Data2 and Data3, so those bytes are swapped.
func GUIDToUUID(g [16]byte) uuid.UUID {
	u := uuid.UUID(g)
	u[0], u[1], u[2], u[3] = g[3], g[2], g[1], g[0]
	u[4], u[5] = g[5], g[4]
	u[6], u[7] = g[7], g[6]
	return u
}

// UUIDToGUID is GUIDToUUID's inverse (the swap is its own inverse).
func UUIDToGUID(u uuid.UUID) [16]byte { return [16]byte(GUIDToUUID(u)) }

// DebugID returns Breakpad's debug identifier for a UUID and age.
func DebugID(u uuid.UUID, age uint32) string {
	return strings.ToUpper(hex.EncodeToString(u[:])) + fmt.Sprintf("%X", age)
}

func (r *reader) modules(errs *[]error) []Module {
	s := r.Stream(StreamModuleList)
	if s == nil {
		return nil
	}
	data, err := r.streamData(s)
	if err != nil {
		*errs = append(*errs, err)
		return nil
	}
	entries, count, err := r.listEntries(s, data, moduleSize)
	if err != nil {
		*errs = append(*errs, err)
	}
	var platform Platform
	if si := r.systemInfo(errs); si != nil {
		platform = si.Platform
	}
	base := int64(s.Offset) + int64(len(data)-len(entries))
	mods := make([]Module, count)
	for i := range mods {
		e := entries[i*moduleSize:]
		at := base + int64(i*moduleSize)
		m := &mods[i]
		*m = Module{Base: le.Uint64(e), Size: uint64(le.Uint32(e[8:])), Checksum: le.Uint32(e[12:]),
			TimeDateStamp: le.Uint32(e[16:])}
		if m.Path, err = r.readString(s, at+20, le.Uint32(e[20:])); err != nil {
			*errs = append(*errs, err)
		}
		m.Name = moduleBaseName(m.Path)
		// VS_FIXEDFILEINFO takes 52 bytes at 24; the CodeView location follows.
		cvLoc := readLocation(e[76:])
		if cvLoc.Size > 0 {
			m.CodeView, err = r.codeView(s, at+76, cvLoc)
			if err != nil {
				*errs = append(*errs, err)
			}
		}
		m.identify(platform)
	}
	return mods
}

// moduleBaseName returns the file name of a module path, which may use
// either slash.
func moduleBaseName(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return path.Base(p)
}

func (r *reader) codeView(s *Stream, at int64, loc location) (CodeView, error) {
	cv := CodeView{Size: loc.Size, Location: loc.RVA}
	b, err := r.readLocationData(s, at, loc, maxCodeViewBytes, "CodeView record")
	if err != nil {
		return cv, err
	}
	if len(b) < 4 {
		return cv, r.errf(s, int64(loc.RVA), "CodeView record of %d bytes has no signature", len(b))
	}
	cv.Present = true
	cv.Signature = le.Uint32(b)
	switch cv.Signature {
	case cvSignatureRSDS: // signature, GUID, age, NUL-terminated name
		if len(b) < 24 {
			return cv, r.errf(s, int64(loc.RVA), "RSDS CodeView record of %d bytes is shorter than 24", len(b))
		}
		copy(cv.GUID[:], b[4:20])
		cv.Age = le.Uint32(b[20:])
		cv.PDBName = cString(b[24:])
	case cvSignatureNB10: // signature, offset, timestamp, age, name
		if len(b) < 16 {
			return cv, r.errf(s, int64(loc.RVA), "NB10 CodeView record of %d bytes is shorter than 16", len(b))
		}
		copy(cv.GUID[:4], b[8:12])
		cv.Age = le.Uint32(b[12:])
		cv.PDBName = cString(b[16:])
	case cvSignatureELF: // signature, build id
		cv.BuildID = b[4:]
	default:
		cv.Raw = b
	}
	return cv, nil
}

func cString(b []byte) string {
	if i := strings.IndexByte(string(b), 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// identify fills in the UUID, debug id and code id from the CodeView record.
func (m *Module) identify(platform Platform) {
	cv := &m.CodeView
	switch {
	case !cv.Present:
	case cv.Signature == cvSignatureRSDS:
		m.UUID = GUIDToUUID(cv.GUID)
		if m.UUID != ([16]byte{}) {
			m.HasUUID = true
			m.DebugID = DebugID(m.UUID, cv.Age)
		}
	case cv.Signature == cvSignatureNB10:
		m.DebugID = fmt.Sprintf("%08X%X", le.Uint32(cv.GUID[:]), cv.Age)
	case cv.Signature == cvSignatureELF && len(cv.BuildID) > 0:
		var g [16]byte
		copy(g[:], cv.BuildID)
		if g != ([16]byte{}) {
			m.DebugID = DebugID(GUIDToUUID(g), 0)
		}
		m.CodeID = hex.EncodeToString(cv.BuildID)
	}
	windows := platform == PlatformWin32NT || platform == PlatformWin32Windows || platform == PlatformWin32CE
	switch {
	case m.HasUUID && !windows:
		m.CodeID = hex.EncodeToString(m.UUID[:])
	case windows:
		m.CodeID = fmt.Sprintf("%08X%x", m.TimeDateStamp, m.Size)
	}
}

// memoryRegions reads the memory list and Memory64 list descriptors.
func (r *reader) memoryRegions(errs *[]error) []rawRegion {
	var raw []rawRegion
	if s := r.Stream(StreamMemoryList); s != nil {
		raw = append(raw, r.memoryList(s, errs)...)
	}
	if s := r.Stream(StreamMemory64List); s != nil {
		raw = append(raw, r.memory64List(s, errs)...)
	}
	return raw
}

func (r *reader) memoryList(s *Stream, errs *[]error) []rawRegion {
	data, err := r.streamData(s)
	if err != nil {
		*errs = append(*errs, err)
		return nil
	}
	entries, count, err := r.listEntries(s, data, memoryDescSize)
	if err != nil {
		*errs = append(*errs, err)
	}
	base := int64(s.Offset) + int64(len(data)-len(entries))
	raw := make([]rawRegion, 0, count)
	for i := 0; i < count; i++ {
		e := entries[i*memoryDescSize:]
		at := base + int64(i*memoryDescSize)
		reg := MemoryRegion{Addr: le.Uint64(e), Size: uint64(le.Uint32(e[8:])), Offset: int64(le.Uint32(e[12:]))}
		if r.checkRegion(s, at, &reg, errs) {
			raw = append(raw, rawRegion{MemoryRegion: reg, stream: s, at: at})
		}
	}
	return raw
}

// checkRegion checks that a region's bytes are in the file and that it
// does not wrap the address space, cutting it to what the file holds.
func (r *reader) checkRegion(s *Stream, at int64, reg *MemoryRegion, errs *[]error) bool {
	if reg.Size > 0 && reg.last() < reg.Addr {
		*errs = append(*errs, r.errf(s, at, "memory range at %#x of %#x bytes wraps the address space; dropped", reg.Addr, reg.Size))
		return false
	}
	if reg.Offset > r.size {
		*errs = append(*errs, r.errf(s, at, "memory range at %#x: its bytes at %#x are past the end of the file; dropped", reg.Addr, reg.Offset))
		return false
	}
	if avail := uint64(r.size - reg.Offset); reg.Size > avail {
		*errs = append(*errs, r.errf(s, at, "memory range at %#x of %#x bytes: the file holds %#x of them; cut short", reg.Addr, reg.Size, avail))
		reg.Size = avail
	}
	return true
}

func (r *reader) memory64List(s *Stream, errs *[]error) []rawRegion {
	data, err := r.streamData(s)
	if err != nil {
		*errs = append(*errs, err)
		return nil
	}
	if len(data) < 16 {
		*errs = append(*errs, r.errf(s, int64(s.Offset), "stream of %d bytes is too short for its count and base RVA", len(data)))
		return nil
	}
	count, offset := le.Uint64(data), le.Uint64(data[8:])
	if avail := uint64(len(data)-16) / memory64DescSize; count > avail {
		*errs = append(*errs, r.errf(s, int64(s.Offset), "count %d × %d bytes does not fit in the stream's %d bytes; reading %d",
			count, memory64DescSize, len(data)-16, avail))
		count = avail
	}
	raw := make([]rawRegion, 0, count)
	for i := 0; i < int(count); i++ {
		e := data[16+i*memory64DescSize:]
		at := int64(s.Offset) + 16 + int64(i*memory64DescSize)
		addr, size := le.Uint64(e), le.Uint64(e[8:])
		if offset > uint64(r.size) {
			*errs = append(*errs, r.errf(s, at, "memory range at %#x: its bytes at %#x are past the end of the file; it and the %d after it dropped",
				addr, offset, int(count)-i-1))
			break
		}
		reg := MemoryRegion{Addr: addr, Size: size, Offset: int64(offset)}
		ok := r.checkRegion(s, at, &reg, errs)
		if offset+size < offset {
			break // the next ranges' offsets would wrap; checkRegion has cut this one
		}
		offset += size
		if ok {
			raw = append(raw, rawRegion{MemoryRegion: reg, stream: s, at: at, strict: true})
		}
	}
	return raw
}

// BreakpadInfo is Breakpad's MDRawBreakpadInfo stream: which thread wrote
// the dump and which one asked for it (the crashed one).
type BreakpadInfo struct {
	DumpThreadID          uint32
	HasDumpThreadID       bool
	RequestingThreadID    uint32
	HasRequestingThreadID bool
}

func (r *reader) breakpadInfo(errs *[]error) *BreakpadInfo {
	s := r.Stream(StreamBreakpadInfo)
	if s == nil {
		return nil
	}
	data, err := r.streamData(s)
	if err != nil {
		*errs = append(*errs, err)
		return nil
	}
	if len(data) < breakpadInfoSize {
		*errs = append(*errs, r.errf(s, int64(s.Offset), "stream of %d bytes is shorter than MDRawBreakpadInfo (%d)", len(data), breakpadInfoSize))
		return nil
	}
	v := le.Uint32(data)
	return &BreakpadInfo{
		DumpThreadID: le.Uint32(data[4:]), HasDumpThreadID: v&1 != 0,
		RequestingThreadID: le.Uint32(data[8:]), HasRequestingThreadID: v&2 != 0,
	}
}

// joinErrors returns nil for no errors, the error itself for one.
func joinErrors(errs []error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}
