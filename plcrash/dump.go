package plcrash

import (
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/dump"
)

// Dump returns the report in the common dump model. Frame addresses lose
// their pointer-authentication bits when the process's architecture has
// them (arm64, arm64e: see StripMask); registers are kept as written.
// Symbols the reporter found on the device are kept, without the leading
// underscore of the Mach-O name, as PLCrashReporter's own text formatter
// writes them.
func (r *Report) Dump() *dump.Dump {
	d := &dump.Dump{
		Format:          dump.FormatPLCrash,
		Arch:            r.Arch(),
		ReporterVersion: fmt.Sprint(r.Version),
		Warnings:        append([]string(nil), r.Warnings...),
	}
	d.System = r.system()
	d.Process = r.process()
	d.Crash = r.crash()
	for _, im := range r.Images {
		di := dump.Image{
			Name:        path.Base(im.Name),
			Path:        im.Name,
			LoadAddress: im.Base,
			Size:        im.Size,
		}
		if im.Name == "" {
			di.Name = ""
		}
		if im.HasUUID {
			di.UUID = im.UUID
		}
		if t, s, ok := im.CodeType.Mach(); ok {
			di.Arch = archregs.CPUName(t, s)
		}
		d.Images = append(d.Images, di)
	}
	res := newResolver(d.Images)
	mask := r.StripMask()
	strip := r.symbolPrefixStripped()
	for _, t := range r.Threads {
		dt := dump.Thread{Index: int(t.Number), ID: uint64(t.Number), Crashed: t.Crashed}
		dt.Frames = res.frames(t.Frames, mask, strip)
		if len(t.Registers) > 0 {
			dt.Registers, dt.OtherRegisters = registers(d.Arch, t.Registers)
		}
		d.Threads = append(d.Threads, dt)
	}
	if e := r.Exception; e != nil {
		d.LastExceptionBacktrace = res.frames(e.Frames, mask, strip)
	}
	if r.CustomData != "" {
		d.Annotations = append(d.Annotations, dump.Annotation{Key: "custom_data", Value: r.CustomData})
	}
	return d
}

// Arch returns the process's architecture: that of the main executable's
// image (named by the process path), else of the first image with a Mach
// CPU type, as PLCrashReporter's text formatter picks its code type; else
// the host processor's, else the legacy architecture field's. Nil when
// none names an architecture archregs knows.
func (r *Report) Arch() *archregs.Arch {
	byType := func(p *Processor) *archregs.Arch {
		t, s, ok := p.Mach()
		if !ok {
			return nil
		}
		if a, err := archregs.ByCPU(t, s); err == nil {
			return a
		}
		a, _ := archregs.ByCPUType(t)
		return a
	}
	if r.Process != nil && r.Process.Path != "" {
		for i := range r.Images {
			if r.Images[i].Name == r.Process.Path {
				if a := byType(r.Images[i].CodeType); a != nil {
					return a
				}
			}
		}
	}
	for i := range r.Images {
		if a := byType(r.Images[i].CodeType); a != nil {
			return a
		}
	}
	if r.Machine != nil {
		if a := byType(&r.Machine.Processor); a != nil {
			return a
		}
	}
	switch r.System.Architecture {
	case ArchX86_32:
		return archregs.I386
	case ArchX86_64:
		return archregs.X86_64
	case ArchARMv7, ArchARMv6:
		return archregs.ARMV7
	}
	return nil
}

// StripMask returns the mask that keeps the address bits of a frame's
// address, as the walker derives it (docs/walker.md, "Pointer
// authentication"): for an architecture with pointer authentication
// (arm64e, and arm64, whose apps call arm64e system libraries on arm64e
// hardware), the smallest all-ones mask that keeps every address below the
// end of the highest image, else 47 bits when the report lists no image;
// all ones (nothing stripped) for other architectures.
func (r *Report) StripMask() uint64 {
	a := r.Arch()
	if a == nil || !a.PAC {
		return ^uint64(0)
	}
	var end uint64
	for _, im := range r.Images {
		if e := im.Base + im.Size; e > im.Base && e > end {
			end = e
		}
	}
	return archregs.AddressMask(end) // DefaultPACMask when no image is listed
}

// symbolPrefixStripped says the reporter's symbol names carry the Mach-O
// leading underscore that Apple's reports leave out: on every Apple
// system, which is every system PLCrashReporter runs on.
func (r *Report) symbolPrefixStripped() bool {
	switch r.System.OS {
	case MacOSX, IPhoneOS, IPhoneSimulator, AppleTVOS:
		return true
	}
	return false
}

func (r *Report) system() dump.System {
	s := dump.System{Version: r.System.OSVersion, Build: r.System.OSBuild}
	os := r.System.OS.String()
	if r.System.OSVersion != "" {
		os += " " + r.System.OSVersion
	}
	if r.System.OSBuild != "" {
		os += " (" + r.System.OSBuild + ")"
	}
	s.OS = os
	if m := r.Machine; m != nil {
		s.Hardware = m.Model
		if t, st, ok := m.Processor.Mach(); ok {
			s.CPU = archregs.CPUName(t, st)
		}
	}
	return s
}

func (r *Report) process() dump.Process {
	p := dump.Process{Identifier: r.Application.Identifier, Version: r.Application.Version}
	if mv := r.Application.MarketingVersion; mv != "" {
		// Apple's reports: "Version: 1.2 (42)", the marketing version
		// and the build.
		p.Version = mv + " (" + r.Application.Version + ")"
	}
	if pi := r.Process; pi != nil {
		p.Name, p.PID, p.Path = pi.Name, int(pi.PID), pi.Path
		p.ParentName, p.ParentPID = pi.ParentName, int(pi.ParentPID)
	}
	if ts := r.System.Timestamp; ts != 0 {
		p.Time = time.Unix(ts, 0).UTC().Format("2006-01-02 15:04:05 -0700")
	}
	if ri := r.Info; ri != nil && ri.HasUUID {
		p.IncidentID = ri.UUID.String()
	}
	return p
}

// machExceptionNames are <mach/exception_types.h>'s EXC_* values.
var machExceptionNames = map[uint64]string{
	1: "EXC_BAD_ACCESS", 2: "EXC_BAD_INSTRUCTION", 3: "EXC_ARITHMETIC", 4: "EXC_EMULATION",
	5: "EXC_SOFTWARE", 6: "EXC_BREAKPOINT", 7: "EXC_SYSCALL", 8: "EXC_MACH_SYSCALL",
	9: "EXC_RPC_ALERT", 10: "EXC_CRASH", 11: "EXC_RESOURCE", 12: "EXC_GUARD", 13: "EXC_CORPSE_NOTIFY",
}

// crash is the signal as PLCrashReporter's text formatter writes it
// ("Exception Codes: SEGV_MAPERR at 0x0"), with the Mach exception's name
// as the type when the reporter caught one, and the uncaught language
// exception's name and reason.
func (r *Report) crash() *dump.Crash {
	s := r.Signal
	c := &dump.Crash{Signal: s.Name}
	if s.Name != "" || s.Code != "" || s.Address != 0 {
		// A report cut before its signal has none of the three.
		c.Address, c.HasAddress = s.Address, true
		c.Codes = strings.TrimSpace(fmt.Sprintf("%s at %#x", s.Code, s.Address))
	}
	if m := s.Mach; m != nil {
		c.Type = machExceptionNames[m.Type]
		if c.Type == "" {
			c.Type = fmt.Sprintf("EXC_%d", m.Type)
		}
		if len(m.Codes) > 0 {
			codes := make([]string, len(m.Codes))
			for i, v := range m.Codes {
				codes[i] = fmt.Sprintf("%#016x", v)
			}
			c.Diagnosis = "Mach exception codes: " + strings.Join(codes, ", ")
		}
	}
	if e := r.Exception; e != nil {
		c.Name, c.Reason = e.Name, e.Reason
	}
	if i := r.CrashedThread(); i >= 0 {
		c.ThreadID = uint64(r.Threads[i].Number)
	}
	if c.Signal == "" && c.Type == "" && c.Name == "" && !c.HasAddress {
		return nil // a report written on request, or cut before its signal
	}
	return c
}

// registers files a thread's registers under the architecture's names;
// those it does not define (cpsr on x86 names, segment registers) go to
// the other map.
func registers(arch *archregs.Arch, regs []Register) (*archregs.Registers, map[string]uint64) {
	var rs *archregs.Registers
	var other map[string]uint64
	for _, reg := range regs {
		if arch != nil {
			if rs == nil {
				rs = archregs.NewRegisters(arch)
			}
			if name, ok := arch.RegisterName(reg.Name); ok && rs.Set(name, reg.Value) == nil {
				continue
			}
		}
		if other == nil {
			other = map[string]uint64{}
		}
		other[reg.Name] = reg.Value
	}
	return rs, other
}

// resolver finds the image holding an address.
type resolver struct {
	images []dump.Image
	order  []int // indexes of images with a size, by load address
}

func newResolver(images []dump.Image) *resolver {
	res := &resolver{images: images}
	for i, im := range images {
		if im.Size > 0 {
			res.order = append(res.order, i)
		}
	}
	sort.SliceStable(res.order, func(a, b int) bool {
		return images[res.order[a]].LoadAddress < images[res.order[b]].LoadAddress
	})
	return res
}

// find returns the index of the image whose [load, load+size) holds addr,
// or -1.
func (res *resolver) find(addr uint64) int {
	k := sort.Search(len(res.order), func(k int) bool { return res.images[res.order[k]].LoadAddress > addr }) - 1
	if k < 0 {
		return -1
	}
	if im := &res.images[res.order[k]]; addr-im.LoadAddress < im.Size {
		return res.order[k]
	}
	return -1
}

func (res *resolver) frames(frames []Frame, mask uint64, stripUnderscore bool) []dump.Frame {
	if len(frames) == 0 {
		return nil
	}
	out := make([]dump.Frame, len(frames))
	for i, f := range frames {
		addr := f.PC & mask
		df := dump.Frame{Address: addr, ImageIndex: res.find(addr)}
		if df.ImageIndex >= 0 {
			im := &res.images[df.ImageIndex]
			df.ImageOffset = addr - im.LoadAddress
			df.ImageName = im.Name
			df.ImageLoadAddress = im.LoadAddress
		}
		if s := f.Symbol; s != nil && s.Name != "" {
			df.Symbol = s.Name
			if stripUnderscore && len(df.Symbol) > 1 && df.Symbol[0] == '_' {
				df.Symbol = df.Symbol[1:]
			}
			if s.Start <= addr {
				df.SymbolOffset, df.HasSymbolOffset = addr-s.Start, true
			}
		}
		out[i] = df
	}
	return out
}
