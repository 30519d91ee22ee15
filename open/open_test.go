package open

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/internal/hostile"
)

// committed are inputs of every format read whole that the repository
// holds, with the format each is.
var committed = map[string]dump.Format{
	"../fixtures/snapshots/chain-arm64-O1-deepest.json":    dump.FormatSnapshot,
	"../crashreport/testdata/arm64.crash":                  dump.FormatCrash,
	"../crashreport/testdata/arm64.ips":                    dump.FormatIPS,
	"../crashreport/testdata/x86_64-kscrash.json":          dump.FormatKSCrash,
	"../hangreport/testdata/branches-sample.txt":           dump.FormatSample,
	"../hangreport/testdata/spindump.txt":                  dump.FormatSample,
	"../hangreport/testdata/microstackshot-diskwrites.ips": dump.FormatMicrostackshot,
	"../plcrash/testdata/chain-arm64-O1-deepest.plcrash":   dump.FormatPLCrash,
}

func TestOpenCommittedInputs(t *testing.T) {
	for path, want := range committed {
		t.Run(filepath.Base(path), func(t *testing.T) {
			in, err := File(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			if in.Format.Format != want || len(in.Dumps) == 0 || in.Dump().Format != want {
				t.Errorf("format %s with %d dumps, want %s", in.Format.Format, len(in.Dumps), want)
			}
			data, _ := os.ReadFile(path)
			for name, open := range map[string]func() (*Input, error){
				"Bytes":  func() (*Input, error) { return Bytes(data) },
				"Reader": func() (*Input, error) { return Reader(context.Background(), bytes.NewReader(data)) },
			} {
				in2, err := open()
				if err != nil || in2.Format.Format != want || len(in2.Dumps) != len(in.Dumps) {
					t.Errorf("%s: %v, want %s with %d dumps", name, err, want, len(in.Dumps))
				}
			}
		})
	}
}

func TestUnrecognizedFormat(t *testing.T) {
	for name, data := range map[string][]byte{
		"text":     []byte("hello\n"),
		"JSON":     []byte(`{"a": 1}`),
		"Markdown": []byte("# Notes\n\nA sample report starts:\n\n    Analysis of sampling App (pid 1) every 1 millisecond\n    Call graph:\n"),
	} {
		t.Run(name, func(t *testing.T) {
			in, err := Bytes(data)
			if in != nil || !errors.Is(err, ErrUnrecognizedFormat) {
				t.Fatalf("Bytes = %v, %v; want ErrUnrecognizedFormat", in, err)
			}
			var ue *UnrecognizedFormatError
			if !errors.As(err, &ue) || len(ue.Tried) != len(Formats()) {
				t.Fatalf("error %v names %v, want the %d formats tried", err, ue, len(Formats()))
			}
			if !strings.HasPrefix(err.Error(), "not a stackimage snapshot, ") || !strings.HasSuffix(err.Error(), " or Mach-O core") {
				t.Errorf("error = %q, want every format named", err)
			}
		})
	}
}

func TestNilAndEmptyInput(t *testing.T) {
	if in, err := ReaderAt(context.Background(), nil, 10); in != nil || err == nil {
		t.Errorf("ReaderAt(nil) = %v, %v; want an error", in, err)
	}
	if in, err := Bytes(nil); in != nil || err == nil {
		t.Errorf("Bytes(nil) = %v, %v; want an error", in, err)
	}
	if in, err := Reader(context.Background(), nil); in != nil || err == nil {
		t.Errorf("Reader(nil) = %v, %v; want an error", in, err)
	}
	if in, err := Reader(context.Background(), strings.NewReader("")); in != nil || err == nil {
		t.Errorf("Reader(empty) = %v, %v; want an error", in, err)
	}
	if in, err := File(context.Background(), ""); in != nil || err == nil {
		t.Errorf("File(\"\") = %v, %v; want an error", in, err)
	}
	var in *Input
	if in.Dump() != nil || in.Close() != nil {
		t.Errorf("a nil Input has a dump or fails to close")
	}
}

// TestFileAllocatesOnce reads an 8 MiB report from a regular file: its
// size is known, so the bytes are read into one buffer of that size rather
// than one grown by doubling.
func TestFileAllocatesOnce(t *testing.T) {
	data := append([]byte("Process: App [1]\nThread 0 Crashed:\n"), bytes.Repeat([]byte("#\n"), 4<<20)...)
	path := filepath.Join(t.TempDir(), "big.crash")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	format, err := Sniff(data)
	if err != nil || format.Format != dump.FormatCrash {
		t.Fatalf("Sniff = %v, %v; want a .crash", format, err)
	}
	in := &Input{Format: format, r: f, size: int64(len(data))}
	var got []byte
	allocated := hostile.Allocated(func() { got, err = in.bytes() })
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read %d bytes, %v; want the %d bytes of the file", len(got), err, len(data))
	}
	if limit := uint64(len(data)) + 64<<10; allocated > limit {
		t.Errorf("reading allocated %d bytes for a %d-byte file; want at most %d (one buffer)", allocated, len(data), limit)
	}
}

// countingReaderAt counts the bytes read through it.
type countingReaderAt struct {
	r    *bytes.Reader
	read int
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.read += n
	return n, err
}

// TestSmallInputReadOnce opens a report shorter than SniffSize: sniffing
// read all of it, and the report is parsed from those bytes, not read
// again.
func TestSmallInputReadOnce(t *testing.T) {
	for _, path := range []string{"../crashreport/testdata/arm64.ips", "../crashreport/testdata/arm64.crash", "../fixtures/snapshots/chain-arm64-O1-deepest.json"} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			r := &countingReaderAt{r: bytes.NewReader(data)}
			in, err := ReaderAt(context.Background(), r, int64(len(data)))
			if err != nil || len(in.Dumps) == 0 {
				t.Fatalf("ReaderAt: %d dumps, %v", len(in.Dumps), err)
			}
			if r.read != len(data) {
				t.Errorf("read %d bytes of a %d-byte input, want each once", r.read, len(data))
			}
			if !bytes.Equal(in.Data(), data) {
				t.Error("Data() is not the input")
			}
		})
	}
}

// FuzzOpen: any bytes are told apart and opened without a panic, within
// the memory and time budget of a hostile input; what comes back is an
// input with at least one dump, or an error, never neither.
func FuzzOpen(f *testing.F) {
	for path := range committed {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		f.Add(data[:len(data)/2])
	}
	f.Add([]byte("MDMP"))
	f.Add([]byte{0xcf, 0xfa, 0xed, 0xfe, 0x0c, 0, 0, 1, 0, 0, 0, 0, 4, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		hostile.Budget(t, int64(len(data)), func() {
			in, err := Bytes(data)
			if in == nil && err == nil {
				t.Fatalf("Bytes gave neither an input nor an error")
			}
			if in != nil {
				if len(in.Dumps) == 0 && in.Hang == nil {
					t.Errorf("Bytes gave an input with no dump (%s)", in.Format.Name)
				}
				in.Close()
			}
		})
	})
}
