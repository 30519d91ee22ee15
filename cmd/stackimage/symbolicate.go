package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/hangreport"
	"github.com/stackimage/stackimage/symbolize"
)

func runSymbolicate(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("symbolicate", "symbolicate DUMP|- [--symbols DIR]... [--format text|json|same] [--exact-addresses]", stderr)
	var dirs stringList
	fs.Var(&dirs, "symbols", "a directory (searched recursively) or file of binaries and dSYMs, matched by UUID; repeatable")
	output := addOutputFlags(fs)
	depth := fs.Int("max-depth", 0, "the most frames to walk per thread (default 512)")
	total := fs.Int("max-total-frames", 0, fmt.Sprintf("the most frames of the whole report (default %d)", symbolize.DefaultMaxTotalFrames))
	noDemangle := fs.Bool("no-demangle", false, "print C++, Rust and Swift names as the binary spells them")
	exact := fs.Bool("exact-addresses", false,
		"look callers up at their return address, as atos and Apple's tools do, not one instruction back at the call")
	noUnwind := fs.Bool("no-unwind-info", false, "walk by frame records, link register and scanning only, ignoring unwind tables (for comparison)")
	async := fs.Bool("async", false, "follow Swift async context chains instead of the thread's stack at async frames")
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	format, err := output.chosen()
	if err != nil {
		return err
	}
	if len(files) != 1 {
		return fmt.Errorf("%w: want one dump file, got %d", errUsage, len(files))
	}
	in, err := openInput(files[0], stdin)
	if err != nil {
		return err
	}
	defer in.Close()
	syms := symbolize.NewSymbols()
	defer syms.Close()
	for _, d := range dirs {
		if err := syms.AddDir(d); err != nil {
			return err
		}
	}
	// A file that looks like Mach-O but cannot be read is why a user's
	// dSYM may not be used: say so, and go on with the rest.
	for _, skipped := range syms.Skipped {
		writeLine(stderr, "stackimage symbolicate: skipped %s", skipped)
	}
	z := &symbolize.Symbolizer{Symbols: syms, MaxDepth: *depth, MaxTotalFrames: *total, NoDemangle: *noDemangle,
		ExactAddresses: *exact, NoUnwindInfo: *noUnwind, Async: *async}
	if format == outputSame {
		return runSame(z, in, files[0], stdout)
	}
	d, parseErr, err := readInput(in)
	if err != nil {
		return fmt.Errorf("%s: %w", files[0], err)
	}
	// Each thread is written as soon as it is symbolicated, so that the
	// memory a report takes is one thread's, however many it has.
	out := bufio.NewWriter(stdout)
	var rw reportWriter = &textWriter{w: out}
	if format == outputJSON {
		rw = &jsonWriter{w: out}
	}
	rep, err := streamReport(z, d, rw)
	if err != nil {
		out.Flush()
		return fmt.Errorf("%s: %w", files[0], err)
	}
	// Damaged parts of the symbol files used were left out: say which.
	rep.Warnings = appendNew(rep.Warnings, syms.Warnings()...)
	if err := rw.end(rep); err != nil {
		return err
	}
	if err := out.Flush(); err != nil {
		return err
	}
	if parseErr != nil {
		// What could be read was printed; the rest is an error all the same.
		return fmt.Errorf("%s: incomplete %s: %w", files[0], formatName(rep.Format), parseErr)
	}
	return nil
}

// appendNew appends to list the items it does not hold yet.
func appendNew(list []string, items ...string) []string {
	have := make(map[string]bool, len(list))
	for _, s := range list {
		have[s] = true
	}
	for _, s := range items {
		if !have[s] {
			have[s] = true
			list = append(list, s)
		}
	}
	return list
}

// runSame prints a symbolicated input in its own layout: a .crash or .ips
// report, or a sample or spindump report.
func runSame(z *symbolize.Symbolizer, in *input, name string, stdout io.Writer) error {
	f, ok := sniff(in.head)
	if !ok {
		return fmt.Errorf("%s: %w", name, errNotADump)
	}
	var parseErr, err error
	switch f.format {
	case dump.FormatSample:
		parseErr, err = writeSame(z, in, f, stdout, hangreport.StyleReport)
	case dump.FormatCrash, dump.FormatIPS:
		parseErr, err = symbolicateSame(z, in, f, stdout)
	default:
		return fmt.Errorf("%s: --format same writes .crash, .ips, sample and spindump reports; this is %s", name, article(f.name))
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if parseErr != nil {
		return fmt.Errorf("%s: incomplete %s: %w", name, f.name, parseErr)
	}
	return nil
}

// reportWriter writes a report thread by thread: begin before the first
// thread, thread for each, end with the report's tail (missing images,
// warnings).
type reportWriter interface {
	begin(d *dump.Dump) error
	thread(th symbolize.Thread) error
	end(rep *symbolize.Report) error
}

// streamReport symbolicates d, writing each thread through rw as it
// comes; it returns the report without its threads, for rw.end. Nothing
// is written when symbolication fails before the first thread.
func streamReport(z *symbolize.Symbolizer, d *dump.Dump, rw reportWriter) (*symbolize.Report, error) {
	began := false
	rep, err := z.SymbolicateEach(d, func(th symbolize.Thread) error {
		if !began {
			began = true
			if err := rw.begin(d); err != nil {
				return err
			}
		}
		return rw.thread(th)
	})
	if err == nil && !began {
		err = rw.begin(d)
	}
	return rep, err
}

// writeReport writes a whole report through rw.
func writeReport(rw reportWriter, rep *symbolize.Report) error {
	d := rep.Dump
	if d == nil {
		d = &dump.Dump{Format: rep.Format, Arch: rep.Arch}
	}
	if err := rw.begin(d); err != nil {
		return err
	}
	for _, th := range rep.Threads {
		if err := rw.thread(th); err != nil {
			return err
		}
	}
	return rw.end(rep)
}

// writeText writes the report as text.
func writeText(w io.Writer, rep *symbolize.Report) {
	writeReport(&textWriter{w: w}, rep)
}

// textWriter writes a report as text, every line through writeLine: the
// names in it come from the dump and the symbol files. Write errors are
// left to the caller's final flush.
type textWriter struct {
	w       io.Writer
	ptrSize int
}

func (t *textWriter) begin(d *dump.Dump) error {
	t.ptrSize = 8
	if d.Arch != nil {
		t.ptrSize = d.Arch.PtrSize
	}
	writeLine(t.w, "Format: %s", formatName(d.Format))
	if d.Format != dump.FormatSnapshot {
		writeReportHeader(t.w, d)
	}
	return nil
}

func (t *textWriter) thread(th symbolize.Thread) error {
	w, ptrSize := t.w, t.ptrSize
	fmt.Fprintln(w)
	writeLine(w, "%s:", threadHeading(th))
	for _, f := range th.Frames {
		writeLine(w, "%s", frameLine(f, ptrSize))
	}
	if th.StopReason != "" {
		writeLine(w, "%s", stopLine(th.StopReason, th.StopDetail))
	}
	if wk := th.Walk; wk != nil {
		fmt.Fprintf(w, "\nOur walk of this thread from its registers and stack dump:\n")
		for _, f := range wk.Frames {
			writeLine(w, "%s", frameLine(f, ptrSize))
		}
		writeLine(w, "%s", stopLine(wk.StopReason, wk.StopDetail))
		writeComparison(w, wk)
	}
	return nil
}

func (t *textWriter) end(rep *symbolize.Report) error {
	w := t.w
	if len(rep.Warnings) > 0 {
		fmt.Fprintln(w, "\nWarnings:")
		for _, warning := range rep.Warnings {
			writeLine(w, "  %s", warning)
		}
	}
	if len(rep.Missing) > 0 {
		fmt.Fprintln(w, "\nImages without symbols (no file with their UUID under --symbols):")
		for _, m := range rep.Missing {
			writeLine(w, "  %s %s", m.UUID, m.Name)
		}
	}
	return nil
}

// frameLine formats a frame as a crash report line, and says how a walked
// caller was found: the trust a reader gives it differs between a frame an
// unwind table gave and one a stack scan guessed.
func frameLine(f symbolize.Frame, ptrSize int) string {
	line := f.Format(ptrSize)
	if f.Index == 0 || f.Inlined || f.FoundBy == symbolize.FoundByReport {
		return line
	}
	return line + "  [found by " + f.FoundBy.String() + "]"
}

// ruleNames describe symbolize.AddressRule values for people.
var ruleNames = map[symbolize.AddressRule]string{
	symbolize.RuleReturnAddress:        "return addresses",
	symbolize.RuleRoundedReturnAddress: "return addresses rounded down to a multiple of twice the pointer size (KSCrash 2.x)",
}

// writeComparison says how our walk compares with the reporter's frames:
// the disagreements first, then the frames one side lacks, each explained.
func writeComparison(w io.Writer, wk *symbolize.Walk) {
	fmt.Fprintf(w, "The report's callers are %s.\n", ruleNames[wk.AddressRule])
	var mismatches, explained []symbolize.Difference
	for _, d := range wk.Differences {
		if d.Kind == symbolize.DiffAddress {
			mismatches = append(mismatches, d)
		} else {
			explained = append(explained, d)
		}
	}
	both := fmt.Sprintf("%d frames both have", wk.Compared)
	switch {
	case wk.Agrees && wk.Compared == 1:
		fmt.Fprintln(w, "The walk agrees with the report in the one frame both have.")
	case wk.Agrees:
		fmt.Fprintf(w, "The walk agrees with the report in all %s.\n", both)
	default:
		fmt.Fprintf(w, "The walk differs from the report in %d of %s:\n", len(mismatches), both)
		for _, d := range mismatches {
			writeLine(w, "  %s", d)
		}
	}
	for _, d := range explained {
		writeLine(w, "Note: %s.", d)
	}
}

func threadHeading(th symbolize.Thread) string {
	if th.LastException || th.Name == "Last Exception Backtrace" {
		return "Last Exception Backtrace"
	}
	head := fmt.Sprintf("Thread %d", th.ID)
	if th.Crashed {
		head += " Crashed"
	}
	if th.Name != "" {
		head += fmt.Sprintf(" (%s)", th.Name)
	}
	return head
}

func stopLine(reason, detail string) string {
	if detail == "" {
		return "Walk stopped: " + reason
	}
	return fmt.Sprintf("Walk stopped: %s (%s)", reason, detail)
}

func writeReportHeader(w io.Writer, d *dump.Dump) {
	field := func(name, value string) {
		if value != "" {
			writeLine(w, "%-12s%s", name+":", value)
		}
	}
	pr := d.Process
	process := pr.Name
	if process != "" && pr.PID != 0 {
		process += fmt.Sprintf(" [%d]", pr.PID)
	}
	field("Process", process)
	field("Identifier", pr.Identifier)
	field("Version", pr.Version)
	field("OS", d.System.OS)
	field("CPU", d.System.CPU)
	field("Hardware", d.System.Hardware)
	field("Time", pr.Time)
	if d.Arch != nil {
		field("Arch", d.Arch.Name)
	}
	if ex := d.Crash; ex != nil {
		exception := strings.TrimSpace(strings.Join([]string{ex.Type, paren(ex.Signal)}, " "))
		field("Exception", exception)
		field("Codes", ex.Codes)
		if ex.HasAddress && !strings.Contains(ex.Codes, "0x") {
			field("Address", fmt.Sprintf("%#x", ex.Address))
		}
		field("Name", ex.Name)
		field("Reason", ex.Reason)
		field("Diagnosis", ex.Diagnosis)
	}
	if len(d.Annotations) > 0 {
		writeLine(w, "Annotations:")
		for _, a := range d.Annotations {
			what := a.Key
			if a.Module != "" {
				what = a.Module + ": " + a.Key
			}
			if a.Key == "" {
				what = a.Module
			}
			writeLine(w, "  %s = %s", what, a.Value)
		}
	}
}

func paren(s string) string {
	if s == "" {
		return ""
	}
	return "(" + s + ")"
}

// The JSON output's shape; addresses are hex strings because 64-bit values
// do not survive JSON numbers in most readers.
type jsonReport struct {
	Format        string       `json:"format"`
	Header        *jsonHeader  `json:"header,omitempty"`
	Threads       []jsonThread `json:"threads"`
	Modules       []jsonModule `json:"modules,omitempty"`
	MissingImages []jsonImage  `json:"missing_images,omitempty"`
	Warnings      []string     `json:"warnings,omitempty"`
}

// jsonHeader is what the input says of the system, the process and the
// crash; absent for a snapshot, which says none of it.
type jsonHeader struct {
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
	Crash       *jsonCrash       `json:"crash,omitempty"`
	Annotations []jsonAnnotation `json:"annotations,omitempty"`
}

type jsonCrash struct {
	Type      string `json:"type,omitempty"`
	Signal    string `json:"signal,omitempty"`
	Codes     string `json:"codes,omitempty"`
	Address   string `json:"address,omitempty"`
	Name      string `json:"name,omitempty"`
	Reason    string `json:"reason,omitempty"`
	Diagnosis string `json:"diagnosis,omitempty"`
}

type jsonAnnotation struct {
	Module string `json:"module,omitempty"`
	Key    string `json:"key,omitempty"`
	Value  string `json:"value"`
}

// jsonModule is one image of the input and whether symbols were found
// for it.
type jsonModule struct {
	Name        string `json:"name"`
	Path        string `json:"path,omitempty"`
	UUID        string `json:"uuid,omitempty"`
	LoadAddress string `json:"load_address"`
	Size        string `json:"size,omitempty"`
	Symbols     string `json:"symbols"` // "found" or "missing"
}

// jsonHeaderOf returns the header of d, nil for a snapshot.
func jsonHeaderOf(d *dump.Dump) *jsonHeader {
	if d == nil || d.Format == dump.FormatSnapshot {
		return nil
	}
	h := &jsonHeader{OS: d.System.OS, OSVersion: d.System.Version, OSBuild: d.System.Build, CPU: d.System.CPU,
		Hardware: d.System.Hardware, Process: d.Process.Name, PID: d.Process.PID, Path: d.Process.Path,
		Identifier: d.Process.Identifier, Version: d.Process.Version, Time: d.Process.Time}
	if d.Arch != nil {
		h.Arch = d.Arch.Name
	}
	if c := d.Crash; c != nil {
		h.Crash = &jsonCrash{Type: c.Type, Signal: c.Signal, Codes: c.Codes, Name: c.Name, Reason: c.Reason, Diagnosis: c.Diagnosis}
		if c.HasAddress {
			h.Crash.Address = hex(c.Address)
		}
	}
	for _, a := range d.Annotations {
		h.Annotations = append(h.Annotations, jsonAnnotation{Module: a.Module, Key: a.Key, Value: a.Value})
	}
	if reflect.ValueOf(*h).IsZero() {
		return nil
	}
	return h
}

// jsonModulesOf lists the input's images, each with whether symbols were
// found for it (it is not among the report's missing images).
func jsonModulesOf(rep *symbolize.Report) []jsonModule {
	if rep.Dump == nil {
		return nil
	}
	missing := map[string]bool{}
	for _, m := range rep.Missing {
		missing[m.UUID.String()+"\x00"+m.Name] = true
	}
	var out []jsonModule
	for _, im := range rep.Dump.Images {
		name := im.Path
		if name == "" {
			name = im.Name
		}
		m := jsonModule{Name: im.Name, Path: im.Path, LoadAddress: hex(im.LoadAddress), Symbols: "found"}
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

type jsonImage struct {
	Name string `json:"name"`
	UUID string `json:"uuid"`
}

type jsonThread struct {
	ID            uint64      `json:"id"`
	KernelID      uint64      `json:"kernel_thread_id,omitempty"`
	Name          string      `json:"name,omitempty"`
	Crashed       bool        `json:"crashed"`
	LastException bool        `json:"last_exception,omitempty"`
	StopReason    string      `json:"stop_reason,omitempty"`
	StopDetail    string      `json:"stop_detail,omitempty"`
	Frames        []jsonFrame `json:"frames"`
	Walk          *jsonWalk   `json:"walk,omitempty"`
}

// jsonWalk is our walk of a reported thread beside the reporter's frames.
type jsonWalk struct {
	StopReason  string           `json:"stop_reason"`
	StopDetail  string           `json:"stop_detail,omitempty"`
	AddressRule string           `json:"address_rule"`
	Compared    int              `json:"compared"`
	Agrees      bool             `json:"agrees"`
	Differences []jsonDifference `json:"differences,omitempty"`
	Frames      []jsonFrame      `json:"frames"`
}

// jsonDifference is one symbolize.Difference; an index is -1 and an
// address absent on the side that lacks the frame.
type jsonDifference struct {
	Kind          string `json:"kind"`
	WalkIndex     int    `json:"walk_index"`
	ReportIndex   int    `json:"report_index"`
	WalkAddress   string `json:"walk_address,omitempty"`
	ReportAddress string `json:"report_address,omitempty"`
	Detail        string `json:"detail"`
}

func jsonDifferences(diffs []symbolize.Difference) []jsonDifference {
	var out []jsonDifference
	for _, d := range diffs {
		jd := jsonDifference{Kind: string(d.Kind), WalkIndex: d.WalkIndex, ReportIndex: d.ReportIndex, Detail: d.Detail}
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

type jsonFrame struct {
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
}

func hex(v uint64) string { return fmt.Sprintf("%#x", v) }

// jsonFrames appends the frames' JSON form to dst; it never returns nil,
// so that a thread without frames has "frames": [].
func jsonFrames(dst []jsonFrame, frames []symbolize.Frame) []jsonFrame {
	if dst == nil {
		dst = []jsonFrame{}
	}
	for _, f := range frames {
		jf := jsonFrame{Index: f.Index, Address: hex(f.Address), LookupAddress: hex(f.LookupAddress),
			Image: f.Image, FoundBy: f.FoundBy.String()}
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

// writeJSON writes the report as one JSON document (jsonReport).
func writeJSON(w io.Writer, rep *symbolize.Report) error {
	return writeReport(&jsonWriter{w: w}, rep)
}

// jsonWriter writes a report as the JSON document json.Encoder with
// SetIndent("", "  ") makes of a jsonReport, byte for byte, one thread at
// a time: the document's head and tail are written by hand around threads
// encoded one by one at their depth. It holds one thread's JSON at a time.
type jsonWriter struct {
	w       io.Writer
	threads int
	// buf, enc and the frame slices are reused from thread to thread.
	buf                bytes.Buffer
	enc                *json.Encoder
	frames, walkFrames []jsonFrame
}

func (j *jsonWriter) begin(d *dump.Dump) error {
	format, err := json.Marshal(string(d.Format))
	if err != nil {
		return err
	}
	header := ""
	if h := jsonHeaderOf(d); h != nil {
		b, err := json.MarshalIndent(h, "  ", "  ")
		if err != nil {
			return err
		}
		header = "\n  \"header\": " + string(b) + ","
	}
	_, err = fmt.Fprintf(j.w, "{\n  \"format\": %s,%s\n  \"threads\": [", format, header)
	return err
}

func (j *jsonWriter) thread(th symbolize.Thread) error {
	if j.enc == nil {
		j.enc = json.NewEncoder(&j.buf)
		j.enc.SetIndent("    ", "  ")
	}
	j.frames = jsonFrames(j.frames[:0], th.Frames)
	jt := jsonThread{ID: th.ID, KernelID: th.KernelID, Name: th.Name, Crashed: th.Crashed, LastException: th.LastException,
		StopReason: th.StopReason, StopDetail: th.StopDetail, Frames: j.frames}
	if wk := th.Walk; wk != nil {
		j.walkFrames = jsonFrames(j.walkFrames[:0], wk.Frames)
		jt.Walk = &jsonWalk{StopReason: wk.StopReason, StopDetail: wk.StopDetail, AddressRule: string(wk.AddressRule),
			Compared: wk.Compared, Agrees: wk.Agrees, Differences: jsonDifferences(wk.Differences), Frames: j.walkFrames}
	}
	j.buf.Reset()
	if err := j.enc.Encode(jt); err != nil {
		return err
	}
	sep := ",\n    "
	if j.threads == 0 {
		sep = "\n    "
	}
	j.threads++
	if _, err := io.WriteString(j.w, sep); err != nil {
		return err
	}
	_, err := j.w.Write(bytes.TrimSuffix(j.buf.Bytes(), []byte("\n")))
	return err
}

func (j *jsonWriter) end(rep *symbolize.Report) error {
	closing := "]"
	if j.threads > 0 {
		closing = "\n  ]"
	}
	if _, err := io.WriteString(j.w, closing); err != nil {
		return err
	}
	tail := struct {
		Modules       []jsonModule `json:"modules,omitempty"`
		MissingImages []jsonImage  `json:"missing_images,omitempty"`
		Warnings      []string     `json:"warnings,omitempty"`
	}{Modules: jsonModulesOf(rep), Warnings: rep.Warnings}
	for _, m := range rep.Missing {
		tail.MissingImages = append(tail.MissingImages, jsonImage{Name: m.Name, UUID: m.UUID.String()})
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(tail); err != nil {
		return err
	}
	// b is "{}\n", or "{\n  \"missing_images\": ...\n}\n": its members follow
	// the threads.
	rest := "\n}\n"
	if b.Len() > len("{}\n") {
		rest = "," + b.String()[1:]
	}
	_, err := io.WriteString(j.w, rest)
	return err
}
