package crashreport

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/stackimage/stackimage/archregs"
)

type ksImage struct {
	ImageAddr   num    `json:"image_addr"`
	ImageVMAddr num    `json:"image_vmaddr"`
	ImageSize   num    `json:"image_size"`
	Name        string `json:"name"`
	UUID        string `json:"uuid"`
	CPUType     num    `json:"cpu_type"`
	CPUSubtype  num    `json:"cpu_subtype"`
}

type ksThread struct {
	Index         *int64 `json:"index"`
	Name          string `json:"name"`
	DispatchQueue string `json:"dispatch_queue"`
	Crashed       bool   `json:"crashed"`
	Backtrace     *struct {
		Contents []json.RawMessage `json:"contents"`
		Skipped  int64             `json:"skipped"`
	} `json:"backtrace"`
	Registers struct {
		Basic     map[string]num `json:"basic"`
		Exception map[string]num `json:"exception"`
	} `json:"registers"`
	Stack *ksStack `json:"stack"`
}

type ksStack struct {
	StackPointer  num     `json:"stack_pointer"`
	DumpStart     num     `json:"dump_start"`
	DumpEnd       num     `json:"dump_end"`
	Contents      *string `json:"contents"`
	GrowDirection string  `json:"grow_direction"`
	Overflow      bool    `json:"overflow"`
	Error         string  `json:"error"`
}

type ksFrame struct {
	InstructionAddr *num   `json:"instruction_addr"`
	ObjectAddr      *num   `json:"object_addr"`
	ObjectName      string `json:"object_name"`
	SymbolAddr      *num   `json:"symbol_addr"`
	SymbolName      string `json:"symbol_name"`
}

type ksError struct {
	Address num    `json:"address"`
	Type    string `json:"type"`
	Reason  string `json:"reason"`
	Mach    *struct {
		ExceptionName string `json:"exception_name"`
		Exception     num    `json:"exception"`
		CodeName      string `json:"code_name"`
		Code          num    `json:"code"`
		Subcode       num    `json:"subcode"`
	} `json:"mach"`
	Signal *struct {
		Name     string `json:"name"`
		Signal   int    `json:"signal"`
		CodeName string `json:"code_name"`
	} `json:"signal"`
	NSException *struct {
		Name   string `json:"name"`
		Reason string `json:"reason"`
	} `json:"nsexception"`
	CPPException *struct {
		Name string `json:"name"`
	} `json:"cpp_exception"`
}

type ksSystem struct {
	CPUArch        string `json:"cpu_arch"`
	ExecutablePath string `json:"CFBundleExecutablePath"`
	Executable     string `json:"CFBundleExecutable"`
	BundleID       string `json:"CFBundleIdentifier"`
	ShortVersion   string `json:"CFBundleShortVersionString"`
	BundleVersion  string `json:"CFBundleVersion"`
	SystemName     string `json:"system_name"`
	SystemVersion  string `json:"system_version"`
	OSVersion      string `json:"os_version"`
	Machine        string `json:"machine"`
	ProcessName    string `json:"process_name"`
	ProcessID      int    `json:"process_id"`
}

type ksReportInfo struct {
	ID          string    `json:"id"`
	Timestamp   str       `json:"timestamp"`
	ProcessName string    `json:"process_name"`
	Version     ksVersion `json:"version"`
}

// ksVersion is KSCrash's report.version: an object {"major": 2, "minor": 0}
// in KSCrash 1.x reports (format 2.x), a string ("3.3.0") later.
type ksVersion string

// UnmarshalJSON reads either form. A version of another shape is left
// empty rather than failing the report object: it is informational.
func (v *ksVersion) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '{' {
		var mm struct{ Major, Minor *num }
		if json.Unmarshal(b, &mm) == nil && mm.Major != nil {
			minor := num(0)
			if mm.Minor != nil {
				minor = *mm.Minor
			}
			*v = ksVersion(fmt.Sprintf("%d.%d", *mm.Major, minor))
		}
		return nil
	}
	var s str
	if s.UnmarshalJSON(b) == nil {
		*v = ksVersion(s)
	}
	return nil
}

// ksBody collects a KSCrash report's parts as the stream delivers them.
type ksBody struct {
	images     []ksImage
	haveImages bool
	threads    []ksThread
	haveCrash  bool
	errInfo    ksError
	diagnosis  string
	system     ksSystem
	report     ksReportInfo
	recrash    *ksThread
	// complete says the top-level value was read to its end: a field it
	// lacks was left out by KSCrash, not cut off.
	complete bool
}

// ParseKSCrash parses a KSCrash JSON report. A top-level array of reports
// (as some KSCrash sinks send them) yields its first report, with a
// warning when there are more.
func ParseKSCrash(data []byte) (*Report, error) {
	if err := checkSize(FormatKSCrash, data); err != nil {
		return nil, err
	}
	p := &problems{format: FormatKSCrash}
	r := &Report{Format: FormatKSCrash, CrashedThread: -1}
	start := len(data) - len(bytes.TrimLeft(data, "\ufeff \t\r\n"))
	data = data[start:]
	var b ksBody
	s := newJSONStream(data, int64(start), p)
	var err error
	if len(data) > 0 && data[0] == '[' {
		err = s.array("", 1<<20, func(i int) error {
			if i > 0 {
				if i == 1 {
					p.warn("the file holds more than one report; only the first is read")
				}
				return s.skip(fmt.Sprintf("[%d]", i))
			}
			return s.object("[0]", func(key string) error { return b.field(s, key) })
		})
	} else {
		err = s.object("", func(key string) error { return b.field(s, key) })
	}
	b.complete = err == nil
	b.build(r, p)
	return p.finish(r)
}

// field reads the value of one top-level key.
func (b *ksBody) field(s *jsonStream, key string) error {
	var err error
	switch key {
	case "binary_images":
		b.haveImages = true
		err = s.array(key, MaxImages, func(i int) error {
			var im ksImage
			ok, err := s.decode(fmt.Sprintf("binary_images[%d]", i), &im)
			if ok {
				b.images = append(b.images, im)
			}
			return err
		})
	case "crash":
		b.haveCrash = true
		err = s.object(key, func(k string) error {
			path := "crash." + k
			switch k {
			case "threads":
				return s.array(path, MaxThreads, func(i int) error {
					var t ksThread
					ok, err := s.decode(fmt.Sprintf("%s[%d]", path, i), &t)
					if ok {
						b.threads = append(b.threads, t)
					}
					return err
				})
			case "error":
				_, err := s.decode(path, &b.errInfo)
				return err
			case "diagnosis":
				_, err := s.decode(path, &b.diagnosis)
				return err
			}
			return s.skip(path)
		})
	case "system":
		_, err = s.decode(key, &b.system)
	case "report":
		_, err = s.decode(key, &b.report)
	case "recrash_report":
		// KSCrash crashed while writing the report; the original crash is
		// the rest of the file, and this holds the handler's own thread.
		var rr struct {
			Crash struct {
				CrashedThread *ksThread `json:"crashed_thread"`
			} `json:"crash"`
		}
		var ok bool
		if ok, err = s.decode(key, &rr); ok {
			b.recrash = rr.Crash.CrashedThread
		}
	default:
		err = s.skip(key)
	}
	return err
}

// build fills r from the collected parts.
func (b *ksBody) build(r *Report, p *problems) {
	sys := b.system
	r.Process = firstNonEmpty(b.report.ProcessName, sys.ProcessName, sys.Executable)
	r.PID = sys.ProcessID
	r.Path = sys.ExecutablePath
	r.Identifier = sys.BundleID
	r.Version = versionString(sys.ShortVersion, sys.BundleVersion)
	r.OS = strings.TrimSpace(sys.SystemName + " " + sys.SystemVersion)
	if sys.OSVersion != "" {
		r.OS += " (" + sys.OSVersion + ")"
	}
	r.Hardware = sys.Machine
	r.Time = string(b.report.Timestamp)
	r.IncidentID = b.report.ID
	r.ReportVersion = string(b.report.Version)
	r.Exception = b.exception()

	for i, im := range b.images {
		img := Image{
			Name:        shortName(im.Name),
			Path:        im.Name,
			LoadAddress: uint64(im.ImageAddr),
			Size:        uint64(im.ImageSize),
			VMAddress:   uint64(im.ImageVMAddr),
		}
		if a := archByCPU(uint64(im.CPUType), uint64(im.CPUSubtype)); a != nil {
			img.Arch = a.Name
		}
		if im.UUID != "" {
			img.UUID = p.uuid(fmt.Sprintf("binary_images[%d].uuid", i), im.UUID)
		}
		r.Images = append(r.Images, img)
	}
	switch {
	case b.haveImages:
	case b.complete:
		// KSCrash leaves the images out of reports that have no stack to
		// symbolicate: its out-of-memory report (KSCrashMonitor_Memory,
		// omitBinaryImages) is written ahead of time and sent after the
		// kill. Such a report is whole.
		p.warn("binary_images: absent (KSCrash omits them from its out-of-memory report); frames keep their addresses")
	default:
		p.fail("binary_images", 0, "missing (report truncated?)")
	}
	if !b.haveCrash {
		p.fail("crash", 0, "missing (report truncated?)")
	}

	r.Arch = archByName(sys.CPUArch)
	if r.Arch == nil {
		// Without system.cpu_arch, the main executable's CPU type says it.
		for i, im := range b.images {
			if r.Images[i].Path == sys.ExecutablePath || i == 0 && sys.ExecutablePath == "" {
				r.Arch = archByCPU(uint64(im.CPUType), uint64(im.CPUSubtype))
				break
			}
		}
	}

	res := newImageResolver(r.Images)
	for i, kt := range b.threads {
		t := b.thread(p, fmt.Sprintf("crash.threads[%d]", i), kt, i, r.Arch, res)
		if t.Crashed && r.CrashedThread < 0 {
			r.CrashedThread = len(r.Threads)
		}
		r.Threads = append(r.Threads, t)
	}
	if b.recrash != nil {
		t := b.thread(p, "recrash_report.crash.crashed_thread", *b.recrash, -1, r.Arch, res)
		r.RecrashThread = &t
		p.warn("recrash_report: KSCrash crashed while writing this report; its own crashed thread is in RecrashThread")
	}
}

// exception maps crash.error onto Exception.
func (b *ksBody) exception() Exception {
	e := b.errInfo
	x := Exception{Address: uint64(e.Address), Reason: e.Reason, Diagnosis: b.diagnosis}
	if e.Mach != nil {
		x.Type = e.Mach.ExceptionName
		if x.Type == "" {
			x.Type = fmt.Sprintf("%#x", uint64(e.Mach.Exception))
		}
		if e.Mach.CodeName != "" {
			x.Codes = fmt.Sprintf("%s at %#x", e.Mach.CodeName, uint64(e.Address))
		} else {
			x.Codes = fmt.Sprintf("%#x, %#x", uint64(e.Mach.Code), uint64(e.Mach.Subcode))
		}
	}
	if e.Mach == nil && e.Type == "memory_termination" {
		// KSCrash's out-of-memory report: no Mach exception, a SIGKILL
		// added after the fact; the type is what says what happened.
		x.Type = e.Type
	}
	if e.Signal != nil {
		x.Signal = e.Signal.Name
		if x.Signal == "" {
			x.Signal = fmt.Sprintf("signal %d", e.Signal.Signal)
		}
	}
	switch {
	case e.NSException != nil:
		x.Name, x.Reason = e.NSException.Name, firstNonEmpty(e.NSException.Reason, x.Reason)
	case e.CPPException != nil:
		x.Name = e.CPPException.Name
	}
	return x
}

// thread converts one KSCrash thread; idx is its position when the report
// gives no index.
func (b *ksBody) thread(p *problems, path string, kt ksThread, idx int, arch *archregs.Arch, res *imageResolver) Thread {
	t := newThread(idx)
	t.Name, t.Queue, t.Crashed = kt.Name, kt.DispatchQueue, kt.Crashed
	if kt.Index != nil {
		t.Index = int(*kt.Index)
		t.ID = uint64(t.Index)
	}
	if kt.Backtrace != nil {
		contents := kt.Backtrace.Contents
		if kt.Backtrace.Skipped > 0 && kt.Backtrace.Skipped <= 1<<31 {
			t.SkippedFrames = int(kt.Backtrace.Skipped)
		}
		if len(contents) > MaxFrames {
			p.fail(path+".backtrace.contents", 0, "%d frames, more than %d", len(contents), MaxFrames)
			contents = contents[:MaxFrames]
		}
		for j, raw := range contents {
			fpath := fmt.Sprintf("%s.backtrace.contents[%d]", path, j)
			var kf ksFrame
			if !decodeRaw(p, fpath, raw, &kf) {
				continue
			}
			if kf.InstructionAddr == nil {
				p.fail(fpath+".instruction_addr", 0, "missing")
				continue
			}
			f := Frame{Address: uint64(*kf.InstructionAddr), ImageName: shortName(kf.ObjectName), Symbol: kf.SymbolName}
			var load uint64
			if kf.ObjectAddr != nil {
				load = uint64(*kf.ObjectAddr)
			}
			res.resolve(&f, load, kf.ObjectAddr != nil)
			if f.ImageIndex < 0 && kf.ObjectAddr != nil {
				f.ImageOffset, f.ImageLoadAddress = f.Address-load, load
			}
			if kf.SymbolAddr != nil && f.Symbol != "" {
				f.SymbolOffset, f.HasSymbolOffset = f.Address-uint64(*kf.SymbolAddr), true
			}
			t.Frames = append(t.Frames, f)
		}
	}
	for _, name := range sortedKeys(kt.Registers.Basic) {
		setReg(&t, arch, name, uint64(kt.Registers.Basic[name]))
	}
	for _, name := range sortedKeys(kt.Registers.Exception) {
		if t.OtherRegisters == nil {
			t.OtherRegisters = map[string]uint64{}
		}
		t.OtherRegisters[name] = uint64(kt.Registers.Exception[name])
	}
	if st := kt.Stack; st != nil {
		setStack(&t, stackDump(p, path+".stack", st))
	}
	return t
}

// stackDump checks and decodes a KSCrash stack dump; nil when it has no
// usable contents.
func stackDump(p *problems, path string, st *ksStack) *StackDump {
	if st.Contents == nil {
		if st.Error != "" {
			p.warn("%s: no contents: %s", path, st.Error)
		} else {
			p.warn("%s: no contents", path)
		}
		return nil
	}
	data, err := hex.DecodeString(*st.Contents)
	if err != nil {
		p.fail(path+".contents", 0, "not hex bytes: %v", err)
		return nil
	}
	start, end := uint64(st.DumpStart), uint64(st.DumpEnd)
	if end < start || end-start != uint64(len(data)) {
		p.fail(path+".contents", 0, "%d bytes, but dump_end - dump_start = %#x - %#x", len(data), end, start)
		return nil
	}
	return &StackDump{
		Start:     start,
		Data:      data,
		SP:        uint64(st.StackPointer),
		GrowsDown: st.GrowDirection != "+",
		Overflow:  st.Overflow,
	}
}

func sortedKeys(m map[string]num) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
