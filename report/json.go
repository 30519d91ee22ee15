package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/symbolize"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/walker"
)

// SchemaVersion is the version of the JSON output's schema, its
// "schema_version" (docs/json.md). It changes when a field changes meaning
// or goes; new fields may appear within a version.
const SchemaVersion = 1

// JSON is the JSON output's document. Addresses are hex strings because
// 64-bit values do not survive JSON numbers in most readers.
//
// The first process of the input is at the top level; a report that lists
// several processes (a spindump) has the others in Processes, each with
// its own header, threads, modules, missing images and warnings.
type JSON struct {
	SchemaVersion int    `json:"schema_version"`
	Format        string `json:"format"`
	JSONProcess
	Processes []JSONProcess `json:"processes,omitempty"`
}

// JSONProcess is one process of the input: its header, threads, images and
// what could not be read.
type JSONProcess struct {
	Header        *JSONHeader  `json:"header,omitempty"`
	Threads       []JSONThread `json:"threads"`
	Modules       []JSONModule `json:"modules,omitempty"`
	MissingImages []JSONImage  `json:"missing_images,omitempty"`
	Warnings      []string     `json:"warnings,omitempty"`
}

// JSONHeader is what the input says of the system, the process and the
// crash; absent for a snapshot, which says none of it.
type JSONHeader struct {
	Arch        string           `json:"arch,omitempty"`
	OS          string           `json:"os,omitempty"`
	OSVersion   string           `json:"os_version,omitempty"`
	OSBuild     string           `json:"os_build,omitempty"`
	CPU         string           `json:"cpu,omitempty"`
	Hardware    string           `json:"hardware,omitempty"`
	Process     string           `json:"process,omitempty"`
	PID         int              `json:"pid,omitempty"`
	Path        string           `json:"path,omitempty"`
	Identifier  string           `json:"identifier,omitempty"`
	Version     string           `json:"version,omitempty"`
	Time        string           `json:"time,omitempty"`
	Crash       *JSONCrash       `json:"crash,omitempty"`
	Annotations []JSONAnnotation `json:"annotations,omitempty"`
}

// JSONCrash is why the process died.
type JSONCrash struct {
	Type      string `json:"type,omitempty"`
	Signal    string `json:"signal,omitempty"`
	Codes     string `json:"codes,omitempty"`
	Address   string `json:"address,omitempty"`
	Name      string `json:"name,omitempty"`
	Reason    string `json:"reason,omitempty"`
	Diagnosis string `json:"diagnosis,omitempty"`
}

// JSONAnnotation is a key/value pair the reporter attached.
type JSONAnnotation struct {
	Module string `json:"module,omitempty"`
	Key    string `json:"key,omitempty"`
	Value  string `json:"value"`
}

// JSONModule is one image of the input and whether symbols were found for
// it.
type JSONModule struct {
	Name        string `json:"name"`
	Path        string `json:"path,omitempty"`
	UUID        string `json:"uuid,omitempty"`
	LoadAddress string `json:"load_address"`
	Size        string `json:"size,omitempty"`
	Symbols     string `json:"symbols"` // "found" or "missing"
}

// JSONImage is an image without symbols.
type JSONImage struct {
	Name string `json:"name"`
	UUID string `json:"uuid"`
}

// JSONThread is one symbolicated thread.
type JSONThread struct {
	ID            uint64               `json:"id"`
	KernelID      uint64               `json:"kernel_thread_id,omitempty"`
	Name          string               `json:"name,omitempty"`
	Crashed       bool                 `json:"crashed"`
	LastException bool                 `json:"last_exception,omitempty"`
	StopReason    symbolize.StopReason `json:"stop_reason,omitempty"`
	StopDetail    string               `json:"stop_detail,omitempty"`
	// SetAsideLR is symbolize.Thread's SetAsideLR, hex: frame 0's link
	// register the walk set aside, a caller perhaps missing between
	// frames 0 and 1; omitted when none was.
	SetAsideLR string      `json:"set_aside_lr,omitempty"`
	Frames     []JSONFrame `json:"frames"`
	Walk       *JSONWalk   `json:"walk,omitempty"`
}

// JSONWalk is our walk of a reported thread beside the reporter's frames.
type JSONWalk struct {
	StopReason  symbolize.StopReason `json:"stop_reason"`
	StopDetail  string               `json:"stop_detail,omitempty"`
	SetAsideLR  string               `json:"set_aside_lr,omitempty"` // as JSONThread's
	AddressRule string               `json:"address_rule"`
	Compared    int                  `json:"compared"`
	Agrees      bool                 `json:"agrees"`
	Differences []JSONDifference     `json:"differences,omitempty"`
	Frames      []JSONFrame          `json:"frames"`
}

// JSONDifference is one symbolize.Difference; an index is -1 and an
// address absent on the side that lacks the frame.
type JSONDifference struct {
	Kind          string `json:"kind"`
	WalkIndex     int    `json:"walk_index"`
	ReportIndex   int    `json:"report_index"`
	WalkAddress   string `json:"walk_address,omitempty"`
	ReportAddress string `json:"report_address,omitempty"`
	Detail        string `json:"detail"`
}

// JSONFrame is one symbolicated frame.
type JSONFrame struct {
	Index         int    `json:"index"`
	Address       string `json:"address"`
	LookupAddress string `json:"lookup_address"`
	Image         string `json:"image,omitempty"`
	ImageOffset   string `json:"image_offset,omitempty"`
	Symbol        string `json:"symbol,omitempty"`
	SymbolOffset  string `json:"symbol_offset,omitempty"`
	SymbolSource  string `json:"symbol_source,omitempty"`
	MangledSymbol string `json:"mangled_symbol,omitempty"`
	Lang          string `json:"lang,omitempty"`
	File          string `json:"file,omitempty"`
	Line          int    `json:"line,omitempty"`
	Column        int    `json:"column,omitempty"`
	Inlined       bool   `json:"inlined"`
	FoundBy       string `json:"found_by"`
	// Trust is the check a walked frame passed (walker.Trust); omitted
	// for a reporter's frame.
	Trust walker.Trust `json:"trust,omitempty"`
}

func hex(v uint64) string { return fmt.Sprintf("%#x", v) }

// hexOrEmpty is hex, but empty for zero: for a field omitted when empty.
func hexOrEmpty(v uint64) string {
	if v == 0 {
		return ""
	}
	return hex(v)
}

// jsonHeaderOf returns the header of d, nil for a snapshot.
func jsonHeaderOf(d *dump.Dump) *JSONHeader {
	if d == nil || d.Format == dump.FormatSnapshot {
		return nil
	}
	h := &JSONHeader{OS: d.System.OS, OSVersion: d.System.Version, OSBuild: d.System.Build, CPU: d.System.CPU,
		Hardware: d.System.Hardware, Process: d.Process.Name, PID: d.Process.PID, Path: d.Process.Path,
		Identifier: d.Process.Identifier, Version: d.Process.Version, Time: d.Process.Time}
	if d.Arch != nil {
		h.Arch = d.Arch.Name
	}
	if c := d.Crash; c != nil {
		h.Crash = &JSONCrash{Type: c.Type, Signal: c.Signal, Codes: c.Codes, Name: c.Name, Reason: c.Reason, Diagnosis: c.Diagnosis}
		if c.HasAddress {
			h.Crash.Address = hex(c.Address)
		}
	}
	for _, a := range d.Annotations {
		h.Annotations = append(h.Annotations, JSONAnnotation{Module: a.Module, Key: a.Key, Value: a.Value})
	}
	if reflect.ValueOf(*h).IsZero() {
		return nil
	}
	return h
}

// jsonModulesOf lists the input's images, each with whether symbols were
// found for it (it is not among the report's missing images).
func jsonModulesOf(rep *symbolize.Report) []JSONModule {
	if rep.Dump == nil {
		return nil
	}
	missing := map[string]bool{}
	for _, m := range rep.Missing {
		missing[m.UUID.String()+"\x00"+m.Name] = true
	}
	var out []JSONModule
	for _, im := range rep.Dump.Images {
		name := im.Path
		if name == "" {
			name = im.Name
		}
		m := JSONModule{Name: im.Name, Path: im.Path, LoadAddress: hex(im.LoadAddress), Symbols: "found"}
		if m.Name == "" {
			m.Name = name
		}
		if !im.UUID.IsZero() {
			m.UUID = im.UUID.String()
		}
		if im.Size != 0 {
			m.Size = hex(im.Size)
		}
		if missing[im.UUID.String()+"\x00"+name] {
			m.Symbols = "missing"
		}
		out = append(out, m)
	}
	return out
}

func jsonDifferences(diffs []symbolize.Difference) []JSONDifference {
	var out []JSONDifference
	for _, d := range diffs {
		jd := JSONDifference{Kind: string(d.Kind), WalkIndex: d.WalkIndex, ReportIndex: d.ReportIndex, Detail: d.Detail}
		if d.WalkIndex >= 0 {
			jd.WalkAddress = hex(d.Walk)
		}
		if d.ReportIndex >= 0 {
			jd.ReportAddress = hex(d.Report)
		}
		out = append(out, jd)
	}
	return out
}

// jsonFrames appends the frames' JSON form to dst; it never returns nil,
// so that a thread without frames has "frames": [].
func jsonFrames(dst []JSONFrame, frames []symstore.Frame) []JSONFrame {
	if dst == nil {
		dst = []JSONFrame{}
	}
	for _, f := range frames {
		jf := JSONFrame{Index: f.Index, Address: hex(f.Address), LookupAddress: hex(f.LookupAddress),
			Image: f.Image, FoundBy: f.FoundBy.String(), Trust: f.Trust}
		if f.Image != "" {
			jf.ImageOffset = hex(f.ImageOffset)
		}
		if f.Symbol != "" {
			jf.Symbol, jf.SymbolSource = f.Symbol, f.SymbolSource.String()
			jf.MangledSymbol, jf.Lang = f.MangledSymbol, f.Lang
		}
		if f.HasOffset {
			jf.SymbolOffset = hex(f.SymbolOffset)
		}
		jf.File, jf.Line, jf.Column, jf.Inlined = f.File, f.Line, f.Column, f.Inlined
		dst = append(dst, jf)
	}
	return dst
}

// NewJSON returns a Writer of the JSON document (JSON), indented by two
// spaces: the bytes json.Encoder with SetIndent("", "  ") makes of it,
// written one thread at a time, so that it holds one thread's JSON at a
// time whatever the report's size. Close writes the document's end.
func NewJSON(w io.Writer) Writer { return &jsonWriter{w: w} }

// WriteJSON writes a symbolicated report as one JSON document.
func WriteJSON(w io.Writer, rep *symbolize.Report) error {
	jw := NewJSON(w)
	if err := WriteReport(jw, rep); err != nil {
		return err
	}
	return jw.Close()
}

type jsonWriter struct {
	w       io.Writer
	dumps   int
	threads int
	// indent is the indentation of the current process's members: "  "
	// for the first, "      " for one in "processes".
	indent string
	// buf, enc and the frame slices are reused from thread to thread.
	buf                bytes.Buffer
	enc                *json.Encoder
	frames, walkFrames []JSONFrame
}

func (j *jsonWriter) Begin(d *dump.Dump) error {
	var b strings.Builder
	switch j.dumps {
	case 0:
		format, err := json.Marshal(string(d.Format))
		if err != nil {
			return err
		}
		j.indent = "  "
		fmt.Fprintf(&b, "{\n  \"schema_version\": %d,\n  \"format\": %s,", SchemaVersion, format)
	case 1:
		j.indent = "      "
		b.WriteString(",\n  \"processes\": [\n    {")
	default:
		b.WriteString(",\n    {")
	}
	j.dumps++
	j.threads = 0
	j.enc = json.NewEncoder(&j.buf)
	j.enc.SetIndent(j.indent+"  ", "  ")
	if h := jsonHeaderOf(d); h != nil {
		hb, err := json.MarshalIndent(h, j.indent, "  ")
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "\n%s\"header\": %s,", j.indent, hb)
	}
	fmt.Fprintf(&b, "\n%s\"threads\": [", j.indent)
	_, err := io.WriteString(j.w, b.String())
	return err
}

func (j *jsonWriter) Thread(th symbolize.Thread) error {
	j.frames = jsonFrames(j.frames[:0], th.Frames)
	jt := JSONThread{ID: th.ID, KernelID: th.KernelID, Name: th.Name, Crashed: th.Crashed, LastException: th.LastException,
		StopReason: th.StopReason, StopDetail: th.StopDetail, SetAsideLR: hexOrEmpty(th.SetAsideLR), Frames: j.frames}
	if wk := th.Walk; wk != nil {
		j.walkFrames = jsonFrames(j.walkFrames[:0], wk.Frames)
		jt.Walk = &JSONWalk{StopReason: wk.StopReason, StopDetail: wk.StopDetail, SetAsideLR: hexOrEmpty(wk.SetAsideLR),
			AddressRule: string(wk.AddressRule), Compared: wk.Compared, Agrees: wk.Agrees, Differences: jsonDifferences(wk.Differences), Frames: j.walkFrames}
	}
	j.buf.Reset()
	if err := j.enc.Encode(jt); err != nil {
		return err
	}
	sep := ","
	if j.threads == 0 {
		sep = ""
	}
	j.threads++
	if _, err := io.WriteString(j.w, sep+"\n"+j.indent+"  "); err != nil {
		return err
	}
	_, err := j.w.Write(bytes.TrimSuffix(j.buf.Bytes(), []byte("\n")))
	return err
}

func (j *jsonWriter) End(rep *symbolize.Report) error {
	closing := "]"
	if j.threads > 0 {
		closing = "\n" + j.indent + "]"
	}
	if _, err := io.WriteString(j.w, closing); err != nil {
		return err
	}
	tail := struct {
		Modules       []JSONModule `json:"modules,omitempty"`
		MissingImages []JSONImage  `json:"missing_images,omitempty"`
		Warnings      []string     `json:"warnings,omitempty"`
	}{Modules: jsonModulesOf(rep), Warnings: rep.Warnings}
	for _, m := range rep.Missing {
		tail.MissingImages = append(tail.MissingImages, JSONImage{Name: m.Name, UUID: m.UUID.String()})
	}
	outer := j.indent[:len(j.indent)-2]
	b, err := json.MarshalIndent(tail, outer, "  ")
	if err != nil {
		return err
	}
	// b is "{}", or "{\n<indent>\"modules\": ...\n<outer>}": its members
	// follow the threads.
	rest := ""
	if len(b) > len("{}") {
		rest = "," + strings.TrimSuffix(string(b[1:]), "\n"+outer+"}")
	}
	if j.dumps > 1 {
		rest += "\n    }"
	}
	_, err = io.WriteString(j.w, rest)
	return err
}

func (j *jsonWriter) Close() error {
	end := "\n}\n"
	if j.dumps > 1 {
		end = "\n  ]\n}\n"
	}
	if j.dumps == 0 {
		return nil
	}
	j.dumps = 0
	_, err := io.WriteString(j.w, end)
	return err
}
