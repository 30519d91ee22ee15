package crashreport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/stackimage/stackimage/archregs"
)

// ipsMeta is the one-line metadata object that starts an .ips file.
type ipsMeta struct {
	BugType      str    `json:"bug_type"`
	AppName      string `json:"app_name"`
	Name         string `json:"name"`
	AppVersion   string `json:"app_version"`
	BuildVersion string `json:"build_version"`
	BundleID     string `json:"bundleID"`
	OSVersion    string `json:"os_version"`
	IncidentID   string `json:"incident_id"`
	Timestamp    string `json:"timestamp"`
}

type ipsImage struct {
	UUID string `json:"uuid"`
	Base num    `json:"base"`
	Size num    `json:"size"`
	Arch string `json:"arch"`
	Name string `json:"name"`
	Path string `json:"path"`
}

// ipsThread is one element of "threads", read key by key (ipsThread.field).
type ipsThread struct {
	ID          num
	Name        string
	Queue       string
	Triggered   bool
	Frames      []json.RawMessage
	ThreadState map[string]json.RawMessage
	// fastFrames are the frames, converted, when readFast read the report.
	fastFrames []Frame
	// stackFrames are where the frames are in Stacks.frames when
	// ReadIPSStacks read the report, [start, end).
	stackFrames struct{ start, end int }
}

type ipsFrame struct {
	ImageIndex     *int64 `json:"imageIndex"`
	ImageOffset    num    `json:"imageOffset"`
	Symbol         string `json:"symbol"`
	SymbolLocation *num   `json:"symbolLocation"`
	SourceFile     string `json:"sourceFile"`
	SourceLine     int    `json:"sourceLine"`
	Inline         bool   `json:"inline"`
}

type ipsRegValue struct {
	Value num `json:"value"`
}

type ipsException struct {
	Type    string `json:"type"`
	Signal  string `json:"signal"`
	Codes   string `json:"codes"`
	Subtype string `json:"subtype"`
	Message string `json:"message"`
}

// ipsBody collects the payload fields as the stream delivers them; the
// model is built once the stream ends, because fields refer to each other
// in any order (frames name images listed later).
type ipsBody struct {
	procName, procPath, cpuType, captureTime, incident, modelCode string
	pid                                                           int
	osTrain, osBuild                                              string
	bundleVersion, bundleShortVersion, bundleID                   string
	exception                                                     ipsException
	asi                                                           map[string][]string
	faultingThread                                                *int64
	threads                                                       []ipsThread
	images                                                        []ipsImage
	haveImages                                                    bool
	lastException                                                 []json.RawMessage
	// fast says readFast read the report: the threads' frames are then
	// already converted (ipsThread.fastFrames).
	fast bool
	// stacks, when set, receives the threads' frames in place of
	// ipsThread.fastFrames (ReadIPSStacks).
	stacks *Stacks
}

// ParseIPS parses an Apple .ips crash report: a one-line JSON metadata
// object, then the JSON report object. A report whose metadata line is
// followed by a text report (bug_type 109, before iOS 15) is parsed as
// text and returned with Format FormatCrash.
func ParseIPS(data []byte) (*Report, error) { return parseIPS(data, true) }

// parseIPS is ParseIPS; fast says to try readFast before the token
// stream, which tests turn off to compare the two.
func parseIPS(data []byte, fast bool) (*Report, error) {
	if err := checkSize(FormatIPS, data); err != nil {
		return nil, err
	}
	r, body, bodyOffset, err := ipsMetadata(data)
	if err != nil {
		return nil, err
	}
	p := &problems{format: FormatIPS}
	switch {
	case len(body) == 0:
		p.fail("", 0, "no report after the metadata line (report truncated?)")
		return p.finish(r)
	case body[0] != '{':
		// Before iOS 15 the payload was the text format.
		tr, err := ParseCrash(body)
		if tr != nil {
			tr.BugType = r.BugType
			tr.Warnings = append(tr.Warnings, fmt.Sprintf("ips metadata (bug_type %s) followed by a text report", r.BugType))
		}
		return tr, err
	}
	if r.BugType != "309" {
		p.warn("bug_type %s is not 309 (crash); reading it as a crash report", r.BugType)
	}

	var b ipsBody
	if !fast || !b.readFast(body) {
		b = ipsBody{}
		s := newJSONStream(body, bodyOffset, p)
		_ = s.object("", func(key string) error { return b.field(s, key) })
	}
	b.build(r, p)
	return p.finish(r)
}

// ipsMetadata reads the metadata line that starts an .ips report into a
// new Report, and returns the payload after it with its offset in data,
// leading white space removed.
func ipsMetadata(data []byte) (r *Report, body []byte, bodyOffset int64, err error) {
	start := len(data) - len(bytes.TrimLeft(data, "\ufeff \t\r\n"))
	data = data[start:]
	header := data
	if nl := bytes.IndexByte(data, '\n'); nl >= 0 {
		header, body = data[:nl], data[nl+1:]
	}
	var meta ipsMeta
	if err := json.Unmarshal(header, &meta); err != nil {
		return nil, nil, 0, &Error{Format: FormatIPS, Field: "metadata", Line: 1, Msg: fmt.Sprintf("first line is not a JSON object: %s", typeErrorMsg(err))}
	}
	r = &Report{Format: FormatIPS, CrashedThread: -1, BugType: string(meta.BugType)}
	r.Process = firstNonEmpty(meta.AppName, meta.Name)
	r.OS = meta.OSVersion
	r.IncidentID = meta.IncidentID
	r.Time = meta.Timestamp
	r.Identifier = meta.BundleID
	r.Version = versionString(meta.AppVersion, meta.BuildVersion)

	bodyStart := len(body) - len(bytes.TrimLeft(body, " \t\r\n"))
	return r, body[bodyStart:], int64(start + len(header) + 1 + bodyStart), nil
}

// field reads the value of one top-level key of the payload.
func (b *ipsBody) field(s *jsonStream, key string) error {
	var err error
	switch key {
	case "procName":
		_, err = s.decode(key, &b.procName)
	case "procPath":
		_, err = s.decode(key, &b.procPath)
	case "pid":
		_, err = s.decode(key, &b.pid)
	case "cpuType":
		_, err = s.decode(key, &b.cpuType)
	case "captureTime":
		_, err = s.decode(key, &b.captureTime)
	case "incident":
		_, err = s.decode(key, &b.incident)
	case "modelCode":
		_, err = s.decode(key, &b.modelCode)
	case "osVersion":
		var v struct{ Train, Build string }
		_, err = s.decode(key, &v)
		b.osTrain, b.osBuild = v.Train, v.Build
	case "bundleInfo":
		var v struct {
			Short   string `json:"CFBundleShortVersionString"`
			Version string `json:"CFBundleVersion"`
			ID      string `json:"CFBundleIdentifier"`
		}
		_, err = s.decode(key, &v)
		b.bundleShortVersion, b.bundleVersion, b.bundleID = v.Short, v.Version, v.ID
	case "exception":
		_, err = s.decode(key, &b.exception)
	case "asi":
		_, err = s.decode(key, &b.asi)
	case "faultingThread":
		var v int64
		var ok bool
		if ok, err = s.decode(key, &v); ok {
			b.faultingThread = &v
		}
	case "threads":
		// Threads are read field by field and frame by frame, so that a
		// report cut inside a thread keeps the thread and every frame of
		// it that was complete.
		err = s.array(key, MaxThreads, func(i int) error {
			path := fmt.Sprintf("threads[%d]", i)
			// A thread that is not an object still keeps its place in
			// the numbering.
			b.threads = append(b.threads, ipsThread{})
			t := &b.threads[len(b.threads)-1]
			return s.object(path, func(k string) error { return t.field(s, path, k) })
		})
	case "usedImages":
		b.haveImages = true
		err = s.array(key, MaxImages, func(i int) error {
			var im ipsImage
			_, err := s.decode(fmt.Sprintf("usedImages[%d]", i), &im)
			// A bad entry keeps its place so that imageIndex values stay right.
			b.images = append(b.images, im)
			return err
		})
	case "lastExceptionBacktrace":
		err = s.array(key, MaxFrames, func(i int) error {
			var raw json.RawMessage
			ok, err := s.decode(fmt.Sprintf("lastExceptionBacktrace[%d]", i), &raw)
			if ok {
				b.lastException = append(b.lastException, raw)
			}
			return err
		})
	default:
		err = s.skip(key)
	}
	return err
}

// field reads the value of one key of a thread object at path.
func (t *ipsThread) field(s *jsonStream, path, key string) error {
	path += "." + key
	var err error
	switch key {
	case "id":
		_, err = s.decode(path, &t.ID)
	case "name":
		_, err = s.decode(path, &t.Name)
	case "queue":
		_, err = s.decode(path, &t.Queue)
	case "triggered":
		_, err = s.decode(path, &t.Triggered)
	case "threadState":
		_, err = s.decode(path, &t.ThreadState)
	case "frames":
		t.Frames = nil
		err = s.array(path, MaxFrames, func(j int) error {
			var raw json.RawMessage
			ok, err := s.decode(fmt.Sprintf("%s[%d]", path, j), &raw)
			if ok {
				t.Frames = append(t.Frames, raw)
			}
			return err
		})
	default:
		err = s.skip(path)
	}
	return err
}

// build fills r from the collected payload.
func (b *ipsBody) build(r *Report, p *problems) {
	r.Process = firstNonEmpty(b.procName, r.Process)
	r.Path = b.procPath
	r.PID = b.pid
	if b.osTrain != "" {
		r.OS = b.osTrain
		if b.osBuild != "" {
			r.OS += " (" + b.osBuild + ")"
		}
	}
	r.Time = firstNonEmpty(b.captureTime, r.Time)
	r.IncidentID = firstNonEmpty(b.incident, r.IncidentID)
	r.Hardware = b.modelCode
	r.Identifier = firstNonEmpty(b.bundleID, r.Identifier)
	if v := versionString(b.bundleShortVersion, b.bundleVersion); v != "" {
		r.Version = v
	}
	r.Exception = Exception{Type: b.exception.Type, Signal: b.exception.Signal, Codes: firstNonEmpty(b.exception.Subtype, b.exception.Codes)}
	r.Exception.Reason = b.exception.Message
	if r.Exception.Reason == "" && len(b.asi) > 0 {
		r.Exception.Reason = asiText(b.asi)
	}

	for i, im := range b.images {
		img := Image{Name: firstNonEmpty(im.Name, shortName(im.Path)), Path: im.Path, LoadAddress: uint64(im.Base), Size: uint64(im.Size), Arch: im.Arch}
		if im.UUID != "" {
			img.UUID = p.uuid(fmt.Sprintf("usedImages[%d].uuid", i), im.UUID)
		}
		r.Images = append(r.Images, img)
	}
	if !b.haveImages {
		p.fail("usedImages", 0, "missing (report truncated?); frames keep only their image offsets")
	}

	r.Arch = b.arch(r)
	if len(b.threads) > 0 {
		r.Threads = make([]Thread, 0, len(b.threads))
	}
	for i, t := range b.threads {
		// The path names the thread in problems; it is made only when
		// there may be some, as a report has thousands of frames.
		path := ""
		if !b.fast || len(t.ThreadState) > 0 {
			path = fmt.Sprintf("threads[%d]", i)
		}
		th := newThread(i)
		th.KernelID, th.Name, th.Queue, th.Crashed = uint64(t.ID), t.Name, t.Queue, t.Triggered
		switch {
		case b.fast:
			th.Frames = t.fastFrames
		default:
			if len(t.Frames) > MaxFrames {
				p.fail(path+".frames", 0, "%d frames, more than %d", len(t.Frames), MaxFrames)
				t.Frames = t.Frames[:MaxFrames]
			}
			th.Frames = b.frames(p, path+".frames", t.Frames, len(r.Images))
		}
		b.registers(p, path+".threadState", &th, t.ThreadState, r.Arch)
		r.Threads = append(r.Threads, th)
	}
	r.LastExceptionBacktrace = b.frames(p, "lastExceptionBacktrace", b.lastException, len(r.Images))
	for i := range r.Threads {
		r.setFrameAddresses(r.Threads[i].Frames)
	}
	r.setFrameAddresses(r.LastExceptionBacktrace)

	switch ft := b.faultingThread; {
	case ft != nil && *ft >= 0 && *ft < int64(len(r.Threads)):
		r.CrashedThread = int(*ft)
		r.Threads[*ft].Crashed = true
	case ft != nil:
		p.fail("faultingThread", 0, "%d out of range (%d threads)", *ft, len(r.Threads))
	}
	if r.CrashedThread < 0 {
		for i, t := range r.Threads {
			if t.Crashed {
				r.CrashedThread = i
				break
			}
		}
	}
}

// frames converts raw frames; addresses are set later by setFrameAddresses.
func (b *ipsBody) frames(p *problems, path string, raws []json.RawMessage, nImages int) []Frame {
	var out []Frame
	for j, raw := range raws {
		fpath := fmt.Sprintf("%s[%d]", path, j)
		var f ipsFrame
		fr := Frame{ImageIndex: -1}
		if decodeRaw(p, fpath, raw, &f) {
			fr.ImageOffset = uint64(f.ImageOffset)
			fr.Symbol = f.Symbol
			if f.Symbol != "" && f.SymbolLocation != nil {
				fr.SymbolOffset, fr.HasSymbolOffset = uint64(*f.SymbolLocation), true
			}
			fr.File, fr.Line, fr.Inlined = f.SourceFile, f.SourceLine, f.Inline
			switch {
			case f.ImageIndex == nil:
				p.warn("%s: no imageIndex", fpath)
			case *f.ImageIndex < 0 || *f.ImageIndex >= int64(nImages):
				if b.haveImages {
					p.fail(fpath+".imageIndex", 0, "%d out of range (%d images)", *f.ImageIndex, nImages)
				}
			default:
				fr.ImageIndex = int(*f.ImageIndex)
			}
		}
		out = append(out, fr)
	}
	return out
}

// setFrameAddresses computes absolute addresses from image bases.
func (r *Report) setFrameAddresses(frames []Frame) {
	for i := range frames {
		f := &frames[i]
		if f.ImageIndex >= 0 {
			im := r.Images[f.ImageIndex]
			f.Address = im.LoadAddress + f.ImageOffset
			f.ImageName = im.Name
		}
	}
}

// registers decodes a threadState object: {"x": [{"value": n}...],
// "pc": {"value": n}, ..., "flavor": "ARM_THREAD_STATE64"}.
func (b *ipsBody) registers(p *problems, path string, t *Thread, state map[string]json.RawMessage, arch *archregs.Arch) {
	if len(state) == 0 {
		return
	}
	var flavor string
	if raw, ok := state["flavor"]; ok && json.Unmarshal(raw, &flavor) != nil {
		p.warn("%s.flavor: not a string", path)
	}
	a := flavorArch(flavor, arch)
	if a == nil {
		p.warn("%s: architecture unknown (flavor %q); registers kept by name only", path, flavor)
	}
	keys := make([]string, 0, len(state))
	for k := range state {
		keys = append(keys, k)
	}
	sort.Strings(keys) // deterministic warnings
	for _, k := range keys {
		raw := state[k]
		switch k {
		case "flavor":
			continue
		case "x", "r":
			// The numbered registers come as an array: x0..x28 on arm64,
			// r0..r12 on arm.
			var vals []json.RawMessage
			if !decodeRaw(p, path+"."+k, raw, &vals) {
				continue
			}
			for i, rv := range vals {
				var v ipsRegValue
				if decodeRaw(p, fmt.Sprintf("%s.%s[%d]", path, k, i), rv, &v) {
					setReg(t, a, fmt.Sprintf("%s%d", k, i), uint64(v.Value))
				}
			}
		default:
			var v ipsRegValue
			if json.Unmarshal(raw, &v) != nil {
				p.warn("%s.%s: not a register value", path, k)
				continue
			}
			setReg(t, a, k, uint64(v.Value))
		}
	}
}

// arch returns the process's architecture: the main image's, else the
// payload's cpuType.
func (b *ipsBody) arch(r *Report) *archregs.Arch {
	for _, im := range r.Images {
		if im.Arch != "" && (im.Path == r.Path || im.Name == r.Process) {
			if a := archByName(im.Arch); a != nil {
				return a
			}
		}
	}
	return archByName(b.cpuType)
}
