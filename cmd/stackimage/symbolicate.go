package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/stackimage/stackimage/crashreport"
	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/snapshot"
	"github.com/stackimage/stackimage/symbolize"
)

// maxDumpSize bounds what is read of a snapshot (or of JSON whose first
// bytes do not tell its format); a snapshot's own limits are checked again
// by the parser. Crash reports are read up to crashreport.MaxReportSize.
const maxDumpSize = 1 << 30

// sniffSize is how much of a dump is read first, to tell its format and so
// how much more may be read.
const sniffSize = 1 << 20

// errNotADump says which formats symbolicate reads.
var errNotADump = errors.New("not a stackimage snapshot, Apple .ips or .crash report, or KSCrash JSON report")

func runSymbolicate(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("symbolicate", "symbolicate DUMP [--symbols DIR]... [--json]  (DUMP - reads stdin)", stderr)
	var dirs stringList
	fs.Var(&dirs, "symbols", "a directory (searched recursively) or file of binaries and dSYMs, matched by UUID; repeatable")
	asJSON := fs.Bool("json", false, "print JSON instead of crash-report text")
	depth := fs.Int("max-depth", 0, "the most frames to walk per thread (default 512)")
	noDemangle := fs.Bool("no-demangle", false, "print C++ and Rust names as the binary spells them")
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(files) != 1 {
		return fmt.Errorf("%w: want one dump file, got %d", errUsage, len(files))
	}
	data, err := readDump(files[0], stdin)
	if err != nil {
		return err
	}
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
	z := &symbolize.Symbolizer{Symbols: syms, MaxDepth: *depth, NoDemangle: *noDemangle}
	rep, parseErr, err := symbolicate(z, data)
	if err != nil {
		return fmt.Errorf("%s: %w", files[0], err)
	}
	// Damaged parts of the symbol files used were left out: say which.
	rep.Warnings = appendNew(rep.Warnings, syms.Warnings()...)
	if *asJSON {
		err = writeJSON(stdout, rep)
	} else {
		writeText(stdout, rep)
	}
	if err != nil {
		return err
	}
	if parseErr != nil {
		// What could be read was printed; the rest is an error all the same.
		return fmt.Errorf("%s: incomplete %s: %w", files[0], formatNames[rep.Format], parseErr)
	}
	return nil
}

// formatNames describes the input formats for people.
var formatNames = map[string]string{
	"snapshot": "stackimage snapshot",
	"ips":      "Apple .ips crash report",
	"crash":    "Apple text crash report",
	"kscrash":  "KSCrash JSON report",
}

// symbolicate detects the dump's format from its content and symbolicates
// it. A crash report that could be read only in part comes back with the
// part as rep and the reason as parseErr; err means nothing could be read.
func symbolicate(z *symbolize.Symbolizer, data []byte) (rep *symbolize.Report, parseErr, err error) {
	if isSnapshot(data) {
		snap, err := snapshot.Parse(data)
		if err != nil {
			return nil, nil, err
		}
		rep, err := z.Snapshot(snap)
		return rep, nil, err
	}
	if _, ok := crashreport.Detect(data); !ok {
		return nil, nil, errNotADump
	}
	cr, parseErr := crashreport.Parse(data)
	if cr == nil {
		return nil, nil, parseErr
	}
	rep, err = z.CrashReport(cr)
	return rep, parseErr, err
}

// isSnapshot tells a stackimage snapshot by its format field; every other
// JSON input is left to the crash report parsers.
func isSnapshot(data []byte) bool {
	trimmed := bytes.TrimLeft(bytes.TrimPrefix(data, utf8BOM), " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return false
	}
	var head struct {
		Format string `json:"format"`
	}
	// A snapshot that fails to parse as a whole still names its format;
	// the full parse then reports what is wrong with it.
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if err := dec.Decode(&head); err != nil {
		return bytes.Contains(trimmed[:min(len(trimmed), 256)], []byte(`"stackimage.snapshot/`))
	}
	return strings.HasPrefix(head.Format, "stackimage.snapshot/")
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

// utf8BOM is the byte order mark some editors put before UTF-8 text.
var utf8BOM = []byte("\ufeff")

// readDump reads a dump from path, or from stdin when path is "-". A path
// that is not a regular file (a FIFO, a device) is refused after a stat,
// before it is opened. The first bytes tell the format, and so the limit:
// maxDumpSize for a snapshot, crashreport.MaxReportSize for a crash report;
// input in no known format is refused from its first bytes, so endless
// input costs one read of sniffSize.
func readDump(path string, stdin io.Reader) ([]byte, error) {
	name, r, size := "stdin", stdin, int64(-1)
	if path != "-" {
		info, err := os.Stat(path)
		if err != nil {
			return nil, err
		}
		if !info.Mode().IsRegular() {
			return nil, fmt.Errorf("%s: not a regular file (%s)", path, image.FileKind(info.Mode()))
		}
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		name, r, size = path, f, info.Size()
	}
	head := make([]byte, sniffSize)
	if size >= 0 && size < sniffSize {
		head = make([]byte, size+1) // +1: the file may have grown
	}
	n, err := io.ReadFull(r, head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return nil, err
	}
	head = head[:n]
	limit, what, ok := dumpLimit(head)
	if !ok {
		return nil, fmt.Errorf("%s: %w", name, errNotADump)
	}
	tooLarge := fmt.Errorf("%s: larger than %d bytes, the limit for %s", name, limit, what)
	if size > limit || int64(len(head)) > limit {
		return nil, tooLarge
	}
	if n < len(head) || err != nil {
		return head, nil // all of it
	}
	// Read the rest into one buffer when the size is known; from a pipe
	// the buffer grows as data comes, up to the limit.
	data := head
	if size > int64(len(head)) {
		// MinRead spare: bytes.Buffer grows (doubling) when less is free.
		data = make([]byte, len(head), size+bytes.MinRead)
		copy(data, head)
	}
	buf := bytes.NewBuffer(data)
	if _, err := buf.ReadFrom(io.LimitReader(r, limit+1-int64(len(head)))); err != nil {
		return nil, err
	}
	if int64(buf.Len()) > limit {
		return nil, tooLarge
	}
	return buf.Bytes(), nil
}

// dumpLimit tells from a dump's first bytes how large it may be, and what
// it is, for messages; ok is false for a format symbolicate does not read.
func dumpLimit(head []byte) (limit int64, what string, ok bool) {
	if isSnapshot(head) {
		return maxDumpSize, "a stackimage snapshot", true
	}
	if f, ok := crashreport.Detect(head); ok {
		what := formatNames[string(f)]
		if strings.HasPrefix(what, "A") {
			return crashreport.MaxReportSize, "an " + what, true
		}
		return crashreport.MaxReportSize, "a " + what, true
	}
	trimmed := bytes.TrimLeft(bytes.TrimPrefix(head, utf8BOM), " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '{' {
		// JSON whose format key comes late: only a snapshot can be this
		// large, and the parsers say what it is once it is read.
		return maxDumpSize, "a JSON dump", true
	}
	return 0, "", false
}

// writeText writes the report as text, every line through writeLine: the
// names in it come from the dump and the symbol files.
func writeText(w io.Writer, rep *symbolize.Report) {
	ptrSize := 8
	if rep.Arch != nil {
		ptrSize = rep.Arch.PtrSize
	}
	writeLine(w, "Format: %s", formatNames[rep.Format])
	if cr := rep.CrashReport; cr != nil {
		writeReportHeader(w, cr)
	}
	for _, th := range rep.Threads {
		fmt.Fprintln(w)
		writeLine(w, "%s:", threadHeading(th))
		for _, f := range th.Frames {
			writeLine(w, "%s", f.Format(ptrSize))
		}
		if th.StopReason != "" {
			writeLine(w, "%s", stopLine(th.StopReason, th.StopDetail))
		}
		if wk := th.Walk; wk != nil {
			fmt.Fprintf(w, "\nOur walk of this thread from its registers and stack dump:\n")
			for _, f := range wk.Frames {
				writeLine(w, "%s", f.Format(ptrSize))
			}
			writeLine(w, "%s", stopLine(wk.StopReason, wk.StopDetail))
			writeComparison(w, wk)
		}
	}
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

func writeReportHeader(w io.Writer, cr *crashreport.Report) {
	field := func(name, value string) {
		if value != "" {
			writeLine(w, "%-12s%s", name+":", value)
		}
	}
	process := cr.Process
	if process != "" && cr.PID != 0 {
		process += fmt.Sprintf(" [%d]", cr.PID)
	}
	field("Process", process)
	field("Identifier", cr.Identifier)
	field("Version", cr.Version)
	field("OS", cr.OS)
	field("Hardware", cr.Hardware)
	field("Time", cr.Time)
	if cr.Arch != nil {
		field("Arch", cr.Arch.Name)
	}
	ex := cr.Exception
	exception := strings.TrimSpace(strings.Join([]string{ex.Type, paren(ex.Signal)}, " "))
	field("Exception", exception)
	field("Codes", ex.Codes)
	field("Name", ex.Name)
	field("Reason", ex.Reason)
	field("Diagnosis", ex.Diagnosis)
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
	Threads       []jsonThread `json:"threads"`
	MissingImages []jsonImage  `json:"missing_images,omitempty"`
	Warnings      []string     `json:"warnings,omitempty"`
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

func jsonFrames(frames []symbolize.Frame) []jsonFrame {
	out := []jsonFrame{}
	for _, f := range frames {
		jf := jsonFrame{Index: f.Index, Address: hex(f.Address), LookupAddress: hex(f.LookupAddress),
			Image: f.Image, FoundBy: f.FoundBy}
		if f.Image != "" {
			jf.ImageOffset = hex(f.ImageOffset)
		}
		if f.Symbol != "" {
			jf.Symbol, jf.SymbolSource = f.Symbol, f.SymbolSource
			jf.MangledSymbol, jf.Lang = f.MangledSymbol, f.Lang
		}
		if f.HasOffset {
			jf.SymbolOffset = hex(f.SymbolOffset)
		}
		jf.File, jf.Line, jf.Column, jf.Inlined = f.File, f.Line, f.Column, f.Inlined
		out = append(out, jf)
	}
	return out
}

func writeJSON(w io.Writer, rep *symbolize.Report) error {
	out := jsonReport{Format: rep.Format, Threads: []jsonThread{}}
	for _, th := range rep.Threads {
		jt := jsonThread{ID: th.ID, KernelID: th.KernelID, Name: th.Name, Crashed: th.Crashed, LastException: th.LastException,
			StopReason: th.StopReason, StopDetail: th.StopDetail, Frames: jsonFrames(th.Frames)}
		if wk := th.Walk; wk != nil {
			jt.Walk = &jsonWalk{StopReason: wk.StopReason, StopDetail: wk.StopDetail, AddressRule: string(wk.AddressRule),
				Compared: wk.Compared, Agrees: wk.Agrees, Differences: jsonDifferences(wk.Differences), Frames: jsonFrames(wk.Frames)}
		}
		out.Threads = append(out.Threads, jt)
	}
	for _, m := range rep.Missing {
		out.MissingImages = append(out.MissingImages, jsonImage{Name: m.Name, UUID: m.UUID.String()})
	}
	out.Warnings = rep.Warnings
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
