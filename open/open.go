package open

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/stackimage/stackimage/crashreport"
	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/hangreport"
	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/internal/ctxio"
	"github.com/stackimage/stackimage/machocore"
	"github.com/stackimage/stackimage/metrickit"
	"github.com/stackimage/stackimage/minidump"
	"github.com/stackimage/stackimage/plcrash"
	"github.com/stackimage/stackimage/snapshot"
)

// SniffSize is how much of an input the sniffers see: enough for every
// format's magic or header, however large the input. A stream in no known
// format is refused after this much.
const SniffSize = 1 << 20

// MaxDumpSize bounds what is read of a snapshot, and of a minidump or core
// read from a stream (one behind an io.ReaderAt is read in place); each
// parser checks its own limits again.
const MaxDumpSize = 1 << 30

// ErrUnrecognizedFormat is what an input in no known format is:
// errors.Is(err, ErrUnrecognizedFormat) holds for the
// *UnrecognizedFormatError the openers return.
var ErrUnrecognizedFormat = errors.New("open: unrecognized format")

// UnrecognizedFormatError is the error for an input none of Formats
// accepts. Its message is "not a F1, F2 ... or Fn", naming each format
// tried.
type UnrecognizedFormatError struct {
	// Tried names the formats tried, in order, as Format.Name does.
	Tried []string
}

func (e *UnrecognizedFormatError) Error() string {
	names := e.Tried
	switch len(names) {
	case 0:
		return "not in a known format"
	case 1:
		return "not " + article(names[0])
	}
	return "not a " + strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Is makes errors.Is(err, ErrUnrecognizedFormat) hold.
func (e *UnrecognizedFormatError) Is(target error) bool { return target == ErrUnrecognizedFormat }

// A Format is one input format, told apart from the others by its content
// alone.
type Format struct {
	// Format is the dump model's name of the format.
	Format dump.Format
	// Name describes the format for people ("Apple .ips crash report").
	Name string
	// Example is a typical file name of the format, for help texts.
	Example string
	// Sniff reports whether head, an input's first bytes (at most
	// SniffSize), is in this format.
	Sniff func(head []byte) bool
	// Limit is the most bytes of the format that are read whole (all of
	// them, from a stream), so that endless input costs at most that.
	Limit int64
	// read reads the input into in's dumps. An input read only in part
	// keeps what was read, together with the error that stopped it.
	read func(in *Input) error
}

// formats are tried in order; the first whose Sniff accepts the input
// reads it. Binary formats, told by their magic, come first.
var formats = []Format{
	{dump.FormatSnapshot, "stackimage snapshot", "MyApp-threads.json", isSnapshot, MaxDumpSize, readSnapshot},
	{dump.FormatMicrostackshot, "macOS or iOS microstackshot resource report", "MyApp_2025-01-31-101112_cpu_resource.diag", hangreport.DetectMicrostackshot, hangreport.MaxInputSize, readHangReport},
	{dump.FormatSample, "macOS sample or spindump report", "MyApp_2025-01-31_101112.sample.txt", hangreport.Detect, hangreport.MaxInputSize, readHangReport},
	{dump.FormatIPS, "Apple .ips crash report", "MyApp-2025-01-31-101112.ips", isCrashReport(crashreport.FormatIPS), crashreport.MaxReportSize, readCrashReport},
	{dump.FormatCrash, "Apple text crash report", "MyApp-2025-01-31-101112.crash", isCrashReport(crashreport.FormatCrash), crashreport.MaxReportSize, readCrashReport},
	{dump.FormatKSCrash, "KSCrash JSON report", "kscrash-report.json", isCrashReport(crashreport.FormatKSCrash), crashreport.MaxReportSize, readCrashReport},
	{dump.FormatPLCrash, "PLCrashReporter report", "MyApp.plcrash", plcrash.Detect, plcrash.MaxReportSize, readPLCrash},
	{dump.FormatMetricKit, "MetricKit diagnostic payload", "MXDiagnosticPayload.json", metrickit.Detect, metrickit.MaxInputSize, readMetricKit},
	{dump.FormatMinidump, "minidump", "MyApp.dmp", isMinidump, MaxDumpSize, readMinidump},
	{dump.FormatCore, "Mach-O core", "/cores/core.4242", isCore, MaxDumpSize, readCore},
}

// Formats returns the formats the openers know, in the order their
// sniffers are tried.
func Formats() []Format { return append([]Format(nil), formats...) }

// Sniff returns the format of an input from its first bytes (at most
// SniffSize of them are looked at); the error is an
// *UnrecognizedFormatError when no format accepts them.
func Sniff(head []byte) (*Format, error) {
	head = head[:min(len(head), SniffSize)]
	for i := range formats {
		if formats[i].Sniff(head) {
			return &formats[i], nil
		}
	}
	return nil, unrecognized()
}

func unrecognized() error {
	e := &UnrecognizedFormatError{}
	for _, f := range formats {
		e.Tried = append(e.Tried, f.Name)
	}
	return e
}

// FormatName describes a format for people: "Apple .ips crash report".
func FormatName(f dump.Format) string {
	for _, in := range formats {
		if in.Format == f {
			return in.Name
		}
	}
	return string(f)
}

// Article returns name with "a" or "an" before it.
func Article(name string) string { return article(name) }

func article(name string) string {
	if name != "" && strings.ContainsRune("AEIOUaeiou", rune(name[0])) {
		return "an " + name
	}
	return "a " + name
}

// Input is an opened input: its format and the dumps read from it.
type Input struct {
	// Format is the input's format.
	Format *Format
	// Dumps holds one dump per process the input describes: one for every
	// format but a spindump or microstackshot report, which lists many
	// processes, and a MetricKit payload, one per diagnostic. A report
	// with no process in it has none.
	Dumps []*dump.Dump
	// Crash is the parsed report of a .crash, .ips or KSCrash input; nil
	// for other formats.
	Crash *crashreport.Report
	// Hang is the parsed report of a sample, spindump or microstackshot
	// input; nil for other formats.
	Hang *hangreport.Report
	// PLCrash is the parsed report of a PLCrashReporter input; nil for
	// other formats.
	PLCrash *plcrash.Report
	// MetricKit is the parsed MetricKit input, whose call trees keep
	// their sample counts; nil for other formats.
	MetricKit *metrickit.Input

	r      io.ReaderAt
	size   int64
	data   []byte // the whole input, for formats read whole
	head   []byte // the whole input when sniffing read all of it
	closer io.Closer
}

// Dump returns the input's first dump, nil when it has none.
func (in *Input) Dump() *dump.Dump {
	if in == nil || len(in.Dumps) == 0 {
		return nil
	}
	return in.Dumps[0]
}

// Data returns the whole input when it was read whole: a report or a
// snapshot, or any input Reader read from a stream; nil for a minidump or
// a core opened in place by File or ReaderAt. The caller must not modify
// it.
func (in *Input) Data() []byte { return in.data }

// Close closes the file File opened, if any. The dumps of a minidump or
// a core read memory from it: use them before Close.
func (in *Input) Close() error {
	if in == nil || in.closer == nil {
		return nil
	}
	c := in.closer
	in.closer = nil
	return c.Close()
}

// File opens the input at path. A path that is not a regular file (a
// FIFO, a device) is refused after a stat, before it is opened.
//
// As ReaderAt, it returns a nil Input with the error when nothing could be
// read, and the Input together with the error that stopped it when the
// input was read only in part; ctx bounds the reading as it does there.
// Close the Input when done.
func File(ctx context.Context, path string) (*Input, error) {
	if path == "" {
		return nil, errors.New("open: empty path")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
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
	in, err := ReaderAt(ctx, f, info.Size())
	if in == nil {
		f.Close()
		return nil, err
	}
	in.closer = f
	return in, err
}

// ReaderAt opens the input r holds; size is its size in bytes. The input
// may live anywhere: a file, memory, an object store. A minidump or core
// is read in place, so r must stay readable while its dumps are used;
// other formats are read whole, up to their format's Limit.
//
// It returns a nil Input and the error when nothing could be read (an
// *UnrecognizedFormatError for an input in no known format), and the
// Input together with the error that stopped it when the input was read
// only in part: in.Dumps then holds what was read.
//
// ctx bounds the opening: once it ends, no further read of r is made and
// its error is returned, as for any read that failed. The dumps of a
// minidump or core read their memory from r later, unbound by ctx.
func ReaderAt(ctx context.Context, r io.ReaderAt, size int64) (*Input, error) {
	if r == nil {
		return nil, errors.New("open: nil reader")
	}
	if size <= 0 {
		return nil, errors.New("open: empty input")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	bounded := &ctxReaderAt{ReaderAt: r, ctx: ctx}
	r = bounded
	// Reads made after this call returns (a dump's memory) are not
	// bounded: the caller's context may end once the input is open.
	defer func() { bounded.ctx = nil }()
	head := make([]byte, min(size, SniffSize))
	if n, err := r.ReadAt(head, 0); err != nil && !(errors.Is(err, io.EOF) && n == len(head)) {
		if !errors.Is(err, io.EOF) {
			return nil, err
		}
		head = head[:n]
	}
	f, err := Sniff(head)
	if err != nil {
		return nil, err
	}
	in := &Input{Format: f, r: r, size: size}
	if int64(len(head)) == size {
		in.head = head // the whole input: read whole, it is not read again
	}
	return in.read()
}

// Bytes opens an input held in memory.
func Bytes(data []byte) (*Input, error) {
	return ReaderAt(context.Background(), bytes.NewReader(data), int64(len(data)))
}

// ctxReaderAt fails every read once ctx has ended, while ctx is set.
type ctxReaderAt struct {
	io.ReaderAt
	ctx context.Context
}

func (c *ctxReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if c.ctx != nil {
		if err := c.ctx.Err(); err != nil {
			return 0, err
		}
	}
	return c.ReaderAt.ReadAt(p, off)
}

// Reader reads an input from a stream (standard input, an HTTP body): its
// first SniffSize bytes, then the rest up to the Limit of the format they
// show. A stream in no known format is refused after SniffSize bytes, so
// endless input costs that much; one longer than its format's limit is an
// error. ctx bounds the reading: once it ends, the stream is read no
// further and its error is returned.
func Reader(ctx context.Context, r io.Reader) (*Input, error) {
	if r == nil {
		return nil, errors.New("open: nil reader")
	}
	r = ctxio.Reader(ctx, r)
	head := make([]byte, SniffSize)
	n, err := io.ReadFull(r, head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return nil, err
	}
	head = head[:n]
	if n == 0 {
		return nil, errors.New("open: empty input")
	}
	f, err := Sniff(head)
	if err != nil {
		return nil, err
	}
	buf := bytes.NewBuffer(head)
	if n == SniffSize {
		if _, err := buf.ReadFrom(io.LimitReader(r, f.Limit+1-int64(n))); err != nil {
			return nil, err
		}
	}
	if int64(buf.Len()) > f.Limit {
		return nil, fmt.Errorf("larger than %d bytes, the limit for %s", f.Limit, article(f.Name))
	}
	data := buf.Bytes()
	in := &Input{Format: f, r: bytes.NewReader(data), size: int64(len(data)), data: data}
	return in.read()
}

// read reads the input in its format.
func (in *Input) read() (*Input, error) {
	err := in.Format.read(in)
	if len(in.Dumps) == 0 && in.Crash == nil && in.Hang == nil && in.MetricKit == nil {
		if err == nil {
			err = fmt.Errorf("no process in the %s", in.Format.Name)
		}
		return nil, err
	}
	return in, err
}

// bytes reads the whole input, refusing one larger than its format's
// limit.
func (in *Input) bytes() ([]byte, error) {
	if in.data != nil {
		return in.data, nil
	}
	if in.size > in.Format.Limit {
		return nil, fmt.Errorf("larger than %d bytes, the limit for %s", in.Format.Limit, article(in.Format.Name))
	}
	if in.head != nil {
		in.data = in.head
		return in.data, nil
	}
	data := make([]byte, in.size)
	if _, err := in.r.ReadAt(data, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	in.data = data
	return data, nil
}

// isMinidump tells a minidump by its signature, "MDMP".
func isMinidump(head []byte) bool { return bytes.HasPrefix(head, []byte("MDMP")) }

// readMinidump opens a minidump in place: only its directory and streams
// are read now, and stack memory as the walk needs it.
func readMinidump(in *Input) error {
	md, err := minidump.Parse(in.r, in.size)
	if md == nil {
		return err
	}
	in.Dumps = []*dump.Dump{md.Dump()}
	return err
}

// mhCore is a Mach-O core's file type, MH_CORE.
const mhCore image.FileType = 4

// isCore tells a Mach-O core by its mach header's file type (MH_CORE).
func isCore(head []byte) bool {
	if len(head) < 4 {
		return false
	}
	h, _, _ := image.ReadLoadCommands(bytes.NewReader(head), int64(len(head)))
	return h != nil && h.Type == mhCore
}

// readCore opens a Mach-O core in place: its load commands are read, and
// memory as the walk needs it.
func readCore(in *Input) error {
	c, err := machocore.Open(in.r, in.size)
	if c == nil {
		return err
	}
	in.Dumps = []*dump.Dump{c.Dump()}
	return err
}

func readSnapshot(in *Input) error {
	data, err := in.bytes()
	if err != nil {
		return err
	}
	snap, err := snapshot.Parse(data)
	if err != nil {
		return err
	}
	in.Dumps = []*dump.Dump{snap.Dump()}
	return nil
}

func isCrashReport(want crashreport.Format) func([]byte) bool {
	return func(head []byte) bool {
		f, ok := crashreport.Detect(head)
		return ok && f == want
	}
}

func readCrashReport(in *Input) error {
	data, err := in.bytes()
	if err != nil {
		return err
	}
	cr, err := crashreport.Parse(data)
	if cr == nil {
		return err
	}
	in.Crash = cr
	in.Dumps = []*dump.Dump{cr.Dump()}
	return err
}

// readPLCrash reads a PLCrashReporter report whole: a damaged one keeps
// what was read before the damage.
func readPLCrash(in *Input) error {
	data, err := in.bytes()
	if err != nil {
		return err
	}
	r, err := plcrash.Parse(data)
	if r == nil {
		return err
	}
	in.PLCrash = r
	in.Dumps = []*dump.Dump{r.Dump()}
	return err
}

// readHangReport reads a sample, spindump or microstackshot report:
// every process it lists becomes a dump.
func readHangReport(in *Input) error {
	data, err := in.bytes()
	if err != nil {
		return err
	}
	r, err := hangreport.Parse(data)
	if r == nil || len(r.Processes) == 0 {
		return err
	}
	in.Hang = r
	// The process the report is about comes first, the others in the
	// report's order.
	target := r.Target()
	all := r.Dumps()
	in.Dumps = append(in.Dumps, all[target])
	for i, d := range all {
		if i != target {
			in.Dumps = append(in.Dumps, d)
		}
	}
	return err
}

// readMetricKit reads MetricKit JSON: every diagnostic of every payload
// becomes a dump.
func readMetricKit(in *Input) error {
	data, err := in.bytes()
	if err != nil {
		return err
	}
	mk, err := metrickit.Parse(data)
	if mk == nil {
		return err
	}
	in.MetricKit = mk
	in.Dumps = mk.Dumps()
	for _, d := range in.Dumps {
		d.Warnings = append(d.Warnings, mk.Warnings...)
	}
	return err
}

// isSnapshot tells a stackimage snapshot by its format field; every other
// JSON input is left to the crash report parsers.
func isSnapshot(head []byte) bool {
	trimmed := bytes.TrimLeft(head, "\ufeff \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return false
	}
	var doc struct {
		Format string `json:"format"`
	}
	// A snapshot longer than the head, or one that fails to parse as a
	// whole, still names its format near its start; the full parse then
	// reports what is wrong with it.
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if err := dec.Decode(&doc); err != nil {
		return bytes.Contains(trimmed[:min(len(trimmed), 256)], []byte(`"stackimage.snapshot/`))
	}
	return strings.HasPrefix(doc.Format, "stackimage.snapshot/")
}
