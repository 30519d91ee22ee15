package plcrash

import (
	"bytes"
	"fmt"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"
)

// FormatError is a damaged or unreadable part of a report: Field names it
// as the schema does ("threads[3].frames[7].pc") and Off is the byte
// offset in the file (magic and version byte included) where it starts.
type FormatError struct {
	Off   int64
	Field string
	Msg   string
}

func (e *FormatError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("plcrash: offset %d: %s", e.Off, e.Msg)
	}
	return fmt.Sprintf("plcrash: offset %d: %s: %s", e.Off, e.Field, e.Msg)
}

// maxWarnings bounds Report.Warnings: a report damaged everywhere says so
// in a few lines, not one per field.
const maxWarnings = 100

// Parse decodes a .plcrash file. A report damaged part way (a truncated
// file, a field that does not decode, more threads or frames than the
// bounds allow) is returned with what was read before the damage, and
// the error, a *FormatError, says what and where; the damage after the
// first is in Report.Warnings. A nil Report means nothing could be read:
// not a .plcrash file, an unknown version, or larger than MaxReportSize.
func Parse(data []byte) (*Report, error) {
	if len(data) > MaxReportSize {
		return nil, &FormatError{Msg: fmt.Sprintf("report is %d bytes, more than the %d accepted", len(data), MaxReportSize)}
	}
	if !bytes.HasPrefix(data, []byte(Magic)) {
		return nil, &FormatError{Msg: fmt.Sprintf("not a PLCrashReporter report: no %q magic", Magic)}
	}
	if len(data) < headerSize {
		return nil, &FormatError{Off: int64(len(data)), Field: "version", Msg: "file ends before the version byte"}
	}
	if v := data[len(Magic)]; v != Version {
		return nil, &FormatError{Off: int64(len(Magic)), Field: "version", Msg: fmt.Sprintf("format version %d; only %d is known", v, Version)}
	}
	p := &parser{r: &Report{Version: data[len(Magic)]}}
	p.report(data[headerSize:], int64(headerSize))
	return p.r, p.err
}

// Detect reports whether head, the first bytes of an input, is a .plcrash
// file: it starts with the magic. The version is checked by Parse, so
// that a report of another version is named as one.
func Detect(head []byte) bool { return bytes.HasPrefix(head, []byte(Magic)) }

type parser struct {
	r           *Report
	err         error // the first damage
	totalFrames int
	bounded     map[string]bool // the bounds tooMany has reported
}

// fail records damage at file offset off in the named field.
func (p *parser) fail(off int64, field, format string, args ...any) {
	e := &FormatError{Off: off, Field: field, Msg: fmt.Sprintf(format, args...)}
	if p.err == nil {
		p.err = e
		return
	}
	p.warn("%v", e)
}

func (p *parser) warn(format string, args ...any) {
	switch n := len(p.r.Warnings); {
	case n < maxWarnings:
		p.r.Warnings = append(p.r.Warnings, fmt.Sprintf(format, args...))
	case n == maxWarnings:
		p.r.Warnings = append(p.r.Warnings, "more damage not listed")
	}
}

// field is one field of a message, of a known number and wire type.
type field struct {
	num protowire.Number
	// in is the message holding the field and name the field's name:
	// where errors say the damage is.
	in   *fieldPath
	name string
	off  int64  // file offset of the value (of the bytes, for a length-delimited field)
	v    uint64 // a varint's value
	b    []byte // a length-delimited field's bytes; cut short when truncated
	// packed says b holds packed varints of a repeated varint field.
	packed bool
}

// fieldPath names a message of the report for errors: "threads[3].frames[7]".
// It is built as the walk descends and spelled out only for an error.
type fieldPath struct {
	parent *fieldPath
	name   string
	index  int // -1 for a field that is not repeated
}

func (p *fieldPath) String() string {
	if p == nil {
		return ""
	}
	s := join(p.parent.String(), p.name)
	if p.index >= 0 {
		s += "[" + strconv.Itoa(p.index) + "]"
	}
	return s
}

// at returns the path of the field's message: of element i of a repeated
// field, or of the field itself when i is -1.
func (f field) at(i int) *fieldPath { return &fieldPath{parent: f.in, name: f.name, index: i} }

// where spells out the field's path.
func (f field) where() string { return join(f.in.String(), f.name) }

// walk reads the fields of one message, b at file offset off, and hands fn
// each field the message m knows with the wire type m gives it. Unknown
// fields (groups included, to protowire's nesting limit) are skipped. At
// damage walk records it and stops: what follows in this message cannot be
// framed. A length-delimited field that runs past the end of b is handed
// to fn with the bytes there are, then recorded as damage.
func (p *parser) walk(b []byte, off int64, in *fieldPath, m message, fn func(field)) {
	for pos := 0; pos < len(b); {
		tagOff := off + int64(pos)
		num, typ, n := protowire.ConsumeTag(b[pos:])
		if n < 0 {
			p.fail(tagOff, in.String(), "field tag: %v", protowire.ParseError(n))
			return
		}
		pos += n
		info, known := m.fields[num]
		fieldName := info.name
		if !known {
			fieldName = "field " + strconv.Itoa(int(num))
		}
		name := func() string { return join(in.String(), fieldName) }
		valOff := off + int64(pos)
		switch typ {
		case protowire.VarintType:
			v, n := protowire.ConsumeVarint(b[pos:])
			if n < 0 {
				p.fail(valOff, name(), "varint: %v", protowire.ParseError(n))
				return
			}
			pos += n
			if known && info.typ == protowire.VarintType {
				fn(field{num: num, in: in, name: fieldName, off: valOff, v: v})
			} else if known {
				p.warn("plcrash: offset %d: %s: a varint where the schema has another wire type; skipped", valOff, name())
			}
		case protowire.BytesType:
			l, n := protowire.ConsumeVarint(b[pos:])
			if n < 0 {
				p.fail(valOff, name(), "length: %v", protowire.ParseError(n))
				return
			}
			pos += n
			left := len(b) - pos
			short := l > uint64(left)
			end := len(b)
			if !short {
				end = pos + int(l)
			}
			switch {
			case known && info.typ == protowire.BytesType:
				fn(field{num: num, in: in, name: fieldName, off: off + int64(pos), b: b[pos:end]})
			case known && info.typ == protowire.VarintType && info.packed:
				fn(field{num: num, in: in, name: fieldName, off: off + int64(pos), b: b[pos:end], packed: true})
			case known:
				p.warn("plcrash: offset %d: %s: length-delimited where the schema has another wire type; skipped", valOff, name())
			}
			if short {
				p.fail(valOff, name(), "length %d runs past the end of %s (%d bytes left)", l, enclosing(in.String()), left)
				return
			}
			pos = end
		case protowire.Fixed32Type, protowire.Fixed64Type, protowire.StartGroupType:
			n := protowire.ConsumeFieldValue(num, typ, b[pos:])
			if n < 0 {
				p.fail(valOff, name(), "%v", protowire.ParseError(n))
				return
			}
			pos += n
			if known {
				p.warn("plcrash: offset %d: %s: wire type %d where the schema has another; skipped", valOff, name(), typ)
			}
		default:
			p.fail(tagOff, name(), "wire type %d: %s", typ, "not one a message may hold here")
			return
		}
	}
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func enclosing(path string) string {
	if path == "" {
		return "the file"
	}
	return path
}

// report reads plcrash.CrashReport.
func (p *parser) report(b []byte, off int64) {
	r := p.r
	p.walk(b, off, nil, reportMsg, func(f field) {
		switch f.num {
		case fReportSystemInfo:
			p.system(f, &r.System)
		case fReportAppInfo:
			p.application(f, &r.Application)
		case fReportThreads:
			if len(r.Threads) >= MaxThreads {
				p.tooMany(f, "threads", MaxThreads)
				return
			}
			r.Threads = append(r.Threads, Thread{})
			p.thread(f, len(r.Threads)-1)
		case fReportImages:
			if len(r.Images) >= MaxImages {
				p.tooMany(f, "binary images", MaxImages)
				return
			}
			r.Images = append(r.Images, BinaryImage{})
			p.image(f, &r.Images[len(r.Images)-1], f.at(len(r.Images)-1))
		case fReportException:
			r.Exception = &Exception{}
			p.exception(f, r.Exception)
		case fReportSignal:
			p.signal(f, &r.Signal)
		case fReportProcessInfo:
			r.Process = &ProcessInfo{}
			p.process(f, r.Process)
		case fReportMachineInfo:
			r.Machine = &MachineInfo{}
			p.machine(f, r.Machine)
		case fReportInfo:
			r.Info = &ReportInfo{}
			p.reportInfo(f, r.Info)
		case fReportCustomData:
			r.CustomData = string(f.b)
		}
	})
}

// tooMany records the first element past a bound of its kind; the rest
// are dropped without a word more.
func (p *parser) tooMany(f field, what string, max int) {
	if p.bounded[what] {
		return
	}
	if p.bounded == nil {
		p.bounded = map[string]bool{}
	}
	p.bounded[what] = true
	p.fail(f.off, f.where(), "more than %d %s; the rest are dropped", max, what)
}

func (p *parser) system(f field, s *SystemInfo) {
	s.OS, s.Architecture = OSUnknown, ArchUnknown // the schema's defaults
	p.walk(f.b, f.off, f.at(-1), systemMsg, func(f field) {
		switch f.num {
		case fSystemOS:
			s.OS = OperatingSystem(f.v)
		case fSystemOSVersion:
			s.OSVersion = string(f.b)
		case fSystemArchitecture:
			s.Architecture = Architecture(f.v)
		case fSystemTimestamp:
			s.Timestamp = int64(f.v)
		case fSystemOSBuild:
			s.OSBuild = string(f.b)
		}
	})
}

func (p *parser) application(f field, a *ApplicationInfo) {
	p.walk(f.b, f.off, f.at(-1), appMsg, func(f field) {
		switch f.num {
		case fAppIdentifier:
			a.Identifier = string(f.b)
		case fAppVersion:
			a.Version = string(f.b)
		case fAppMarketingVersion:
			a.MarketingVersion = string(f.b)
		}
	})
}

// thread reads r.Threads[i]; it is appended first so that a thread cut
// short keeps what was read.
func (p *parser) thread(f field, i int) {
	p.walk(f.b, f.off, f.at(i), threadMsg, func(f field) {
		t := &p.r.Threads[i]
		switch f.num {
		case fThreadNumber:
			t.Number = uint32(f.v)
		case fThreadCrashed:
			t.Crashed = f.v != 0
		case fThreadFrames:
			t.Frames = p.frame(f, t.Frames)
		case fThreadRegisters:
			if len(t.Registers) >= MaxRegisters {
				p.tooMany(f, "registers", MaxRegisters)
				return
			}
			var reg Register
			p.walk(f.b, f.off, f.at(len(t.Registers)), registerMsg, func(f field) {
				switch f.num {
				case fRegisterName:
					reg.Name = string(f.b)
				case fRegisterValue:
					reg.Value = f.v
				}
			})
			t.Registers = append(t.Registers, reg)
		}
	})
}

// frame reads one StackFrame and appends it to frames, within the bounds
// of one backtrace and of the whole report.
func (p *parser) frame(f field, frames []Frame) []Frame {
	if len(frames) >= MaxFrames {
		p.tooMany(f, "frames in a backtrace", MaxFrames)
		return frames
	}
	if p.totalFrames >= MaxTotalFrames {
		p.tooMany(f, "frames in the report", MaxTotalFrames)
		return frames
	}
	p.totalFrames++
	var fr Frame
	p.walk(f.b, f.off, f.at(len(frames)), frameMsg, func(f field) {
		switch f.num {
		case fFramePC:
			fr.PC = f.v
		case fFrameSymbol:
			s := &Symbol{}
			p.walk(f.b, f.off, f.at(-1), symbolMsg, func(f field) {
				switch f.num {
				case fSymbolName:
					s.Name = string(f.b)
				case fSymbolStart:
					s.Start = f.v
				case fSymbolEnd:
					s.End, s.HasEnd = f.v, true
				}
			})
			fr.Symbol = s
		}
	})
	return append(frames, fr)
}

func (p *parser) image(f field, im *BinaryImage, at *fieldPath) {
	p.walk(f.b, f.off, at, imageMsg, func(f field) {
		switch f.num {
		case fImageBase:
			im.Base = f.v
		case fImageSize:
			im.Size = f.v
		case fImageName:
			im.Name = string(f.b)
		case fImageUUID:
			if len(f.b) != len(im.UUID) {
				p.warn("plcrash: offset %d: %s: %d bytes, not a 16-byte UUID; left out", f.off, f.where(), len(f.b))
				return
			}
			copy(im.UUID[:], f.b)
			im.HasUUID = true
		case fImageCodeType:
			im.CodeType = &Processor{}
			p.processor(f, im.CodeType)
		}
	})
}

func (p *parser) processor(f field, pr *Processor) {
	p.walk(f.b, f.off, f.at(-1), processorMsg, func(f field) {
		switch f.num {
		case fProcessorEncoding:
			pr.Encoding = f.v
		case fProcessorType:
			pr.Type = f.v
		case fProcessorSubtype:
			pr.Subtype = f.v
		}
	})
}

func (p *parser) exception(f field, e *Exception) {
	p.walk(f.b, f.off, f.at(-1), exceptionMsg, func(f field) {
		switch f.num {
		case fExceptionName:
			e.Name = string(f.b)
		case fExceptionReason:
			e.Reason = string(f.b)
		case fExceptionFrames:
			e.Frames = p.frame(f, e.Frames)
		}
	})
}

func (p *parser) signal(f field, s *Signal) {
	p.walk(f.b, f.off, f.at(-1), signalMsg, func(f field) {
		switch f.num {
		case fSignalName:
			s.Name = string(f.b)
		case fSignalCode:
			s.Code = string(f.b)
		case fSignalAddress:
			s.Address = f.v
		case fSignalMach:
			s.Mach = &MachException{}
			p.mach(f, s.Mach)
		}
	})
}

func (p *parser) mach(f field, m *MachException) {
	add := func(f field, v uint64) bool {
		if len(m.Codes) >= MaxCodes {
			p.tooMany(f, "Mach exception codes", MaxCodes)
			return false
		}
		m.Codes = append(m.Codes, v)
		return true
	}
	p.walk(f.b, f.off, f.at(-1), machMsg, func(f field) {
		switch {
		case f.num == fMachType:
			m.Type = f.v
		case f.num == fMachCodes && f.packed:
			for b, off := f.b, f.off; len(b) > 0; {
				v, n := protowire.ConsumeVarint(b)
				if n < 0 {
					p.fail(off, f.where(), "packed varint: %v", protowire.ParseError(n))
					return
				}
				if !add(f, v) {
					return
				}
				b, off = b[n:], off+int64(n)
			}
		case f.num == fMachCodes:
			add(f, f.v)
		}
	})
}

func (p *parser) process(f field, pi *ProcessInfo) {
	p.walk(f.b, f.off, f.at(-1), processMsg, func(f field) {
		switch f.num {
		case fProcessName:
			pi.Name = string(f.b)
		case fProcessID:
			pi.PID = uint32(f.v)
		case fProcessPath:
			pi.Path = string(f.b)
		case fProcessParentName:
			pi.ParentName = string(f.b)
		case fProcessParentID:
			pi.ParentPID = uint32(f.v)
		case fProcessNative:
			pi.Native = f.v != 0
		case fProcessStartTime:
			pi.StartTime, pi.HasStartTime = f.v, true
		}
	})
}

func (p *parser) machine(f field, m *MachineInfo) {
	p.walk(f.b, f.off, f.at(-1), machineMsg, func(f field) {
		switch f.num {
		case fMachineModel:
			m.Model = string(f.b)
		case fMachineProcessor:
			p.processor(f, &m.Processor)
		case fMachineProcessors:
			m.ProcessorCount = uint32(f.v)
		case fMachineLogicalCount:
			m.LogicalProcessorCount = uint32(f.v)
		}
	})
}

func (p *parser) reportInfo(f field, ri *ReportInfo) {
	p.walk(f.b, f.off, f.at(-1), reportInfoMsg, func(f field) {
		switch f.num {
		case fInfoUserRequested:
			ri.UserRequested = f.v != 0
		case fInfoUUID:
			if len(f.b) != len(ri.UUID) {
				p.warn("plcrash: offset %d: %s: %d bytes, not a 16-byte UUID; left out", f.off, f.where(), len(f.b))
				return
			}
			copy(ri.UUID[:], f.b)
			ri.HasUUID = true
		}
	})
}
