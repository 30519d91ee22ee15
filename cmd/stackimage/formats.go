package main

import (
	"bytes"
	"encoding/binary"
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
	"github.com/stackimage/stackimage/machocore"
	"github.com/stackimage/stackimage/minidump"
	"github.com/stackimage/stackimage/snapshot"
)

// sniffSize is how much of an input the sniffers see: enough for every
// format's magic or header, however large the input. Input in no known
// format is refused after this much.
const sniffSize = 1 << 20

// maxDumpSize bounds what is read of a snapshot, and of a minidump read
// from stdin (a file is read in place); each parser checks its own limits
// again.
const maxDumpSize = 1 << 30

// An inputFormat is one format symbolicate reads, told apart from the
// others by its content alone.
type inputFormat struct {
	format dump.Format
	name   string // for people
	// sniff reports whether head, the input's first bytes (at most
	// sniffSize), is in this format.
	sniff func(head []byte) bool
	// read reads the input into the dump model. A dump read only in part
	// comes back together with the error that stopped it.
	read func(in *input, f *inputFormat) (*dump.Dump, error)
	// limit is the most bytes of the format that are read whole (all of
	// them, from stdin), so that endless input costs at most that.
	limit int64
}

// inputFormats are tried in order; the first whose sniff accepts the input
// reads it. Binary formats, told by their magic, come first.
var inputFormats = []inputFormat{
	{dump.FormatSnapshot, "stackimage snapshot", isSnapshot, readSnapshotInput, maxDumpSize},
	{dump.FormatSample, "macOS sample or spindump report", hangreport.Detect, readHangReport, hangreport.MaxInputSize},
	{dump.FormatIPS, "Apple .ips crash report", isCrashReport(crashreport.FormatIPS), readCrashReport, crashreport.MaxReportSize},
	{dump.FormatCrash, "Apple text crash report", isCrashReport(crashreport.FormatCrash), readCrashReport, crashreport.MaxReportSize},
	{dump.FormatKSCrash, "KSCrash JSON report", isCrashReport(crashreport.FormatKSCrash), readCrashReport, crashreport.MaxReportSize},
	{dump.FormatMinidump, "minidump", isMinidump, readMinidump, maxDumpSize},
	{dump.FormatCore, "Mach-O core", isCore, readCore, maxDumpSize},
}

// sniff returns the format of an input from its first bytes.
func sniff(head []byte) (*inputFormat, bool) {
	for i := range inputFormats {
		if inputFormats[i].sniff(head) {
			return &inputFormats[i], true
		}
	}
	return nil, false
}

// formatName describes a format for people.
func formatName(f dump.Format) string {
	for _, in := range inputFormats {
		if in.format == f {
			return in.name
		}
	}
	return string(f)
}

// errNotADump is the error for an input in no known format.
var errNotADump = fmt.Errorf("not a %s", knownFormats())

// knownFormats lists the formats' names for the error on an unknown input.
func knownFormats() string {
	var names []string
	for _, in := range inputFormats {
		names = append(names, in.name)
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// article is "an" before a vowel, "a" otherwise.
func article(name string) string {
	if strings.ContainsRune("AEIOUaeiou", rune(name[0])) {
		return "an " + name
	}
	return "a " + name
}

// input is a dump to read: a file, or standard input read into memory.
type input struct {
	name string
	r    io.ReaderAt
	size int64
	head []byte
	file *os.File
}

// openInput opens path ("-" for stdin) and reads its head. A path that is
// not a regular file (a FIFO, a device) is refused after a stat, before it
// is opened. Standard input is read into memory up to the limit of the
// format its head shows.
func openInput(path string, stdin io.Reader) (*input, error) {
	in := &input{name: path}
	if path == "-" {
		return readStdin(stdin)
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
	in.r, in.size, in.file = f, info.Size(), f
	in.head = make([]byte, min(in.size, sniffSize))
	if _, err := in.r.ReadAt(in.head, 0); err != nil && !errors.Is(err, io.EOF) {
		in.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return in, nil
}

// readStdin reads standard input: its head, then the rest up to the limit
// of the format the head shows. Input in no known format is refused after
// its head, so endless input costs sniffSize bytes.
func readStdin(stdin io.Reader) (*input, error) {
	head := make([]byte, sniffSize)
	n, err := io.ReadFull(stdin, head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return nil, fmt.Errorf("stdin: %w", err)
	}
	head = head[:n]
	f, ok := sniff(head)
	if !ok {
		return nil, fmt.Errorf("stdin: %w", errNotADump)
	}
	buf := bytes.NewBuffer(head)
	if n == sniffSize {
		if _, err := buf.ReadFrom(io.LimitReader(stdin, f.limit+1-int64(n))); err != nil {
			return nil, fmt.Errorf("stdin: %w", err)
		}
	}
	if int64(buf.Len()) > f.limit {
		return nil, fmt.Errorf("stdin: larger than %d bytes, the limit for %s", f.limit, article(f.name))
	}
	data := buf.Bytes()
	return &input{name: "stdin", r: bytes.NewReader(data), size: int64(len(data)), head: head}, nil
}

// readDump reads a whole input of a format that is read whole.
func readDump(path string, stdin io.Reader) ([]byte, error) {
	in, err := openInput(path, stdin)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	f, ok := sniff(in.head)
	if !ok {
		return nil, fmt.Errorf("%s: %w", path, errNotADump)
	}
	return in.bytes(f)
}

// Close closes the file behind the input, if any.
func (in *input) Close() error {
	if in.file != nil {
		return in.file.Close()
	}
	return nil
}

// bytes reads the whole input, refusing one larger than its format's
// limit.
func (in *input) bytes(f *inputFormat) ([]byte, error) {
	if in.size > f.limit {
		return nil, fmt.Errorf("%s: larger than %d bytes, the limit for %s", in.name, f.limit, article(f.name))
	}
	data := make([]byte, in.size)
	if _, err := in.r.ReadAt(data, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return data, nil
}

// detectFormat tells the input's format from its content.
func detectFormat(in *input) (inputFormat, bool) {
	for _, f := range inputFormats {
		if f.sniff(in.head) {
			return f, true
		}
	}
	return inputFormat{}, false
}

// readInput tells the input's format from its content and reads it. An
// input that could be read only in part comes back with the part as d and
// the reason as parseErr; err means nothing could be read.
func readInput(in *input) (d *dump.Dump, parseErr, err error) {
	f, ok := sniff(in.head)
	if !ok {
		return nil, nil, errNotADump
	}
	d, parseErr = f.read(in, f)
	if d == nil {
		return nil, nil, parseErr
	}
	return d, parseErr, nil
}

// isMinidump tells a minidump by its signature, "MDMP".
func isMinidump(head []byte) bool { return bytes.HasPrefix(head, []byte("MDMP")) }

// readMinidump opens a minidump in place: only its directory and streams
// are read now, and stack memory as the walk needs it.
func readMinidump(in *input, _ *inputFormat) (*dump.Dump, error) {
	md, err := minidump.Parse(in.r, in.size)
	if md == nil {
		return nil, err
	}
	return md.Model(), err
}

// isCore tells a Mach-O core by its magic and file type (MH_CORE).
func isCore(head []byte) bool {
	if len(head) < 16 {
		return false
	}
	magic := binary.LittleEndian.Uint32(head)
	return (magic == 0xfeedface || magic == 0xfeedfacf) && binary.LittleEndian.Uint32(head[12:]) == 4
}

// readCore opens a Mach-O core in place: its load commands are read, and
// memory as the walk needs it.
func readCore(in *input, _ *inputFormat) (*dump.Dump, error) {
	c, err := machocore.Open(in.r, in.size)
	if c == nil {
		return nil, err
	}
	return c.Model(), err
}

func readSnapshotInput(in *input, f *inputFormat) (*dump.Dump, error) {
	data, err := in.bytes(f)
	if err != nil {
		return nil, err
	}
	snap, err := snapshot.Parse(data)
	if err != nil {
		return nil, err
	}
	return snap.Dump(), nil
}

func isCrashReport(want crashreport.Format) func([]byte) bool {
	return func(head []byte) bool {
		f, ok := crashreport.Detect(head)
		return ok && f == want
	}
}

func readCrashReport(in *input, f *inputFormat) (*dump.Dump, error) {
	data, err := in.bytes(f)
	if err != nil {
		return nil, err
	}
	cr, err := crashreport.Parse(data)
	if cr == nil {
		return nil, err
	}
	return cr.Dump(), err
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
