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
	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/hangreport"
	"github.com/stackimage/stackimage/snapshot"
	"github.com/stackimage/stackimage/symbolize"
)

// sniffSize is how much of an input the sniffers see: enough for every
// format's magic or header, however large the input.
const sniffSize = 64 << 10

// maxDumpSize bounds what is read of a dump that is read whole (the text
// and JSON formats); each parser checks its own, smaller limit again.
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
	read func(in *input) (*dump.Dump, error)
}

// inputFormats are tried in order; the first whose sniff accepts the input
// reads it. Binary formats, told by their magic, come first.
var inputFormats = []inputFormat{
	{dump.FormatSnapshot, "stackimage snapshot", isSnapshot, readSnapshotInput},
	{dump.FormatSample, "macOS sample or spindump report", hangreport.Detect, readHangReport},
	{dump.FormatIPS, "Apple .ips crash report", isCrashReport(crashreport.FormatIPS), readCrashReport},
	{dump.FormatCrash, "Apple text crash report", isCrashReport(crashreport.FormatCrash), readCrashReport},
	{dump.FormatKSCrash, "KSCrash JSON report", isCrashReport(crashreport.FormatKSCrash), readCrashReport},
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

// knownFormats lists the formats' names for the error on an unknown input.
func knownFormats() string {
	var names []string
	for _, in := range inputFormats {
		names = append(names, in.name)
	}
	return strings.Join(names, ", ")
}

// input is a dump to read: a file, or standard input read into memory.
type input struct {
	name string
	r    io.ReaderAt
	size int64
	head []byte
	file *os.File
}

// openInput opens path ("-" for stdin) and reads its head.
func openInput(path string, stdin io.Reader) (*input, error) {
	in := &input{name: path}
	if path == "-" {
		data, err := io.ReadAll(io.LimitReader(stdin, maxDumpSize+1))
		if err != nil {
			return nil, fmt.Errorf("reading standard input: %w", err)
		}
		if len(data) > maxDumpSize {
			return nil, fmt.Errorf("standard input: larger than %d bytes", maxDumpSize)
		}
		in.r, in.size = bytes.NewReader(data), int64(len(data))
	} else {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		st, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, err
		}
		if !st.Mode().IsRegular() {
			f.Close()
			return nil, fmt.Errorf("%s: not a regular file", path)
		}
		in.r, in.size, in.file = f, st.Size(), f
	}
	in.head = make([]byte, min(in.size, sniffSize))
	if _, err := in.r.ReadAt(in.head, 0); err != nil && !errors.Is(err, io.EOF) {
		in.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return in, nil
}

// Close closes the file behind the input, if any.
func (in *input) Close() error {
	if in.file != nil {
		return in.file.Close()
	}
	return nil
}

// bytes reads the whole input, refusing one larger than limit.
func (in *input) bytes(limit int64) ([]byte, error) {
	if in.size > limit {
		return nil, fmt.Errorf("larger than %d bytes", limit)
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

// symbolicate tells the input's format from its content, reads it and
// symbolicates it. An input that could be read only in part comes back
// with the part as rep and the reason as parseErr; err means nothing could
// be read.
func symbolicate(z *symbolize.Symbolizer, in *input) (rep *symbolize.Report, parseErr, err error) {
	for _, f := range inputFormats {
		if !f.sniff(in.head) {
			continue
		}
		d, parseErr := f.read(in)
		if d == nil {
			return nil, nil, parseErr
		}
		rep, err := z.Symbolicate(d)
		return rep, parseErr, err
	}
	return nil, nil, fmt.Errorf("not a %s", knownFormats())
}

func readSnapshotInput(in *input) (*dump.Dump, error) {
	data, err := in.bytes(snapshot.MaxInputSize)
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

func readCrashReport(in *input) (*dump.Dump, error) {
	data, err := in.bytes(crashreport.MaxReportSize)
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
