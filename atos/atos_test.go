package atos

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/internal/hexnum"
	"github.com/stackimage/stackimage/internal/hostile"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/symtab"
	"github.com/stackimage/stackimage/uuid"
)

// symbolEntry returns an entry answering from a symbol table alone: one
// 64-bit little-endian symbol named raw at 0x100003000, in a __text
// section of 0x100 bytes.
func symbolEntry(t *testing.T, raw string) *symstore.Entry {
	t.Helper()
	strs := append([]byte(" \x00"), raw...)
	strs = append(strs, 0)
	sym := make([]byte, 16)
	binary.LittleEndian.PutUint32(sym[0:], 2)
	sym[4], sym[5] = 0x0f, 1 // N_SECT|N_EXT, section 1
	binary.LittleEndian.PutUint64(sym[8:], 0x100003000)
	tab, err := symtab.NewFromParts(image.RawSymtab{Is64: true, ByteOrder: binary.LittleEndian, NSyms: 1, Syms: sym, Strings: strs},
		[]image.Section{{Index: 1, Segment: "__TEXT", Name: "__text", Addr: 0x100003000, Size: 0x100}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &symstore.Entry{Tables: []*symtab.Table{tab}}
}

// TestAtosDemanglesSwift checks that a Swift name in a symbol table is
// printed demangled, as atos prints it, and as the table spells it with
// --no-demangle.
func TestAtosDemanglesSwift(t *testing.T) {
	const raw = "_$s5MyApp14ViewControllerC11viewDidLoadyyFTo"
	tests := []struct {
		name       string
		noDemangle bool
		want       string
	}{
		{"demangled", false, "@objc ViewController.viewDidLoad() (in App) + 4\n"},
		{"no-demangle", true, "$s5MyApp14ViewControllerC11viewDidLoadyyFTo (in App) + 4\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The symbol table's fast path and frame building answer
			// alike.
			for _, symbolsOnly := range []bool{true, false} {
				a := &Answerer{entry: symbolEntry(t, raw), symbolsOnly: symbolsOnly, inImage: inImage("App"), opts: Options{NoDemangle: tt.noDemangle}}
				if got := string(a.AppendAnswer(nil, 0x100003004)); got != tt.want {
					t.Errorf("symbolsOnly %v: answer(0x100003004) = %q, want %q", symbolsOnly, got, tt.want)
				}
			}
		})
	}
}

// TestAtosLineZero checks that a frame whose file is known but whose line
// is 0 (Swift's @objc thunks, compiler-generated code) keeps its file, as
// atos prints it: "name (in Image) (File.swift:0)".
func TestAtosLineZero(t *testing.T) {
	tests := []struct {
		name     string
		frame    symstore.Frame
		fullPath bool
		want     string
	}{
		{"line 0", symstore.Frame{Symbol: "thunk", File: "/src/App/File.swift"}, false, "thunk (in App) (File.swift:0)\n"},
		{"line 0, full path", symstore.Frame{Symbol: "thunk", File: "/src/App/File.swift"}, true, "thunk (in App) (/src/App/File.swift:0)\n"},
		{"compiler-generated", symstore.Frame{Symbol: "thunk", File: "<compiler-generated>"}, false, "thunk (in App) (<compiler-generated>:0)\n"},
		{"line 12", symstore.Frame{Symbol: "f", File: "/src/a.c", Line: 12}, false, "f (in App) (a.c:12)\n"},
		{"no file, offset", symstore.Frame{Symbol: "f", HasOffset: true, SymbolOffset: 8}, false, "f (in App) + 8\n"},
		{"nothing", symstore.Frame{}, false, "0x1000\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &Answerer{inImage: inImage("App"), opts: Options{FullPath: tt.fullPath}}
			if got := string(a.appendFrame(nil, tt.frame, 0x1000)); got != tt.want {
				t.Errorf("appendFrame(%+v) = %q, want %q", tt.frame, got, tt.want)
			}
		})
	}
}

// TestAtosFileInARow checks that one Answerer prints each frame's own
// file when frames in a row share a file, change it, come back to it, or
// have paths that differ but share a base name: the file last printed is
// kept, and must not stand for another.
func TestAtosFileInARow(t *testing.T) {
	frames := []symstore.Frame{
		{Symbol: "a", File: "/src/x/one.c", Line: 1},
		{Symbol: "b", File: "/src/x/one.c", Line: 2},
		{Symbol: "c", File: "/src/y/two.c", Line: 3},
		{Symbol: "d", File: "/src/y/one.c", Line: 4},
		{Symbol: "e", File: "/src/x/one.c", Line: 5},
		{Symbol: "f", File: "C:\\src\\three.c", Line: 6},
		{Symbol: "g", File: "/src/esc\x1bape.c", Line: 7},
	}
	for _, fullPath := range []bool{false, true} {
		a := &Answerer{inImage: inImage("App"), opts: Options{FullPath: fullPath}}
		for _, f := range frames {
			fresh := &Answerer{inImage: inImage("App"), opts: Options{FullPath: fullPath}}
			want := string(fresh.appendFrame(nil, f, 0x1000))
			if got := string(a.appendFrame(nil, f, 0x1000)); got != want {
				t.Errorf("fullPath %v: appendFrame(%+v) after others = %q, want %q", fullPath, f, got, want)
			}
		}
	}
}

// TestScanWords checks the ASCII fast path against bufio.ScanWords on
// inputs that mix spaces, line ends, a token cut by the buffer's end and
// bytes beyond ASCII.
func TestScanWords(t *testing.T) {
	inputs := []string{
		"", " ", "0x1", "0x1\n0x2\n", "  0x1 \t 0x2\r\n\v\f0x3  ", "0x1\n\n\n0x2",
		"0x1\u00a00x2 0x3", "é 0x1", "0x1 é\u20280x2\n", "\xff 0x1",
		// Words longer than the eight bytes tested at once, with spaces,
		// other control bytes, DEL and non-ASCII bytes at every offset.
		"0x100003f6c 0x100003f70\n0x100003f74", "0x10000\x01003f6c x", "abcdefgh\x7fijk lmnop",
		"0x1234567é0x1", "0x12345678\t0x9", "0123456789abcd\u00850x1", "        0x1234567890",
	}
	for _, in := range inputs {
		for _, bufSize := range []int{16, 4096} {
			want := splitAll(t, in, bufio.ScanWords, bufSize)
			got := splitAll(t, in, scanWords, bufSize)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("scanWords(%q, buffer %d) differs from bufio.ScanWords (-want +got):\n%s", in, bufSize, diff)
			}
		}
	}
}

// TestNotWordBytes8 checks the word test against a byte loop for every
// byte value at every position, among word bytes and among bytes that are
// not: the lowest flagged byte must be the first that is not a word byte.
func TestNotWordBytes8(t *testing.T) {
	firstNotWord := func(b []byte) int {
		for i, c := range b {
			if c <= 0x20 || c >= 0x7f {
				return i
			}
		}
		return -1
	}
	for _, fill := range []byte{'a', '!', '~', ' ', 0x00, 0x7f, 0xff, 0x80} {
		for pos := 0; pos < 8; pos++ {
			for v := 0; v < 256; v++ {
				b := []byte{fill, fill, fill, fill, fill, fill, fill, fill}
				b[pos] = byte(v)
				got := -1
				if m := notWordBytes8(binary.LittleEndian.Uint64(b)); m != 0 {
					got = bits.TrailingZeros64(m) / 8
				}
				if want := firstNotWord(b); got != want {
					t.Fatalf("notWordBytes8(% x) flags byte %d first, want %d", b, got, want)
				}
			}
		}
	}
}

func splitAll(t *testing.T, in string, split bufio.SplitFunc, bufSize int) []string {
	t.Helper()
	words, err := splitWords(in, split, bufSize)
	if err != nil {
		t.Fatalf("scanning %q: %v", in, err)
	}
	return words
}

// failingWriter fails every write after the first n bytes.
type failingWriter struct {
	n   int
	got bytes.Buffer
}

var errWriteFailed = errors.New("write failed")

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.got.Len()+len(p) > w.n {
		return 0, errWriteFailed
	}
	return w.got.Write(p)
}

// TestBatchWriter checks that answers come out whole and in order however
// often they are flushed, and that a failed write is reported by every
// later call.
func TestBatchWriter(t *testing.T) {
	var want bytes.Buffer
	w := &failingWriter{n: 1 << 30}
	b := &batchWriter{w: w}
	for i := range 100_000 {
		line := fmt.Sprintf("answer %d\n", i)
		b.buf = append(b.buf, line...)
		want.WriteString(line)
		if err := b.flushIfFull(); err != nil {
			t.Fatal(err)
		}
		if i%1000 == 0 {
			if err := b.Flush(); err != nil { // as before a read
				t.Fatal(err)
			}
		}
	}
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(w.got.Bytes(), want.Bytes()) {
		t.Errorf("wrote %d bytes, want the %d bytes of answers in order", w.got.Len(), want.Len())
	}

	b = &batchWriter{w: &failingWriter{n: 10}}
	b.buf = append(b.buf, "0x100003f6c main (in App) + 12\n"...)
	if err := b.Flush(); !errors.Is(err, errWriteFailed) {
		t.Errorf("Flush after a failed write = %v, want %v", err, errWriteFailed)
	}
	b.buf = append(b.buf, "more\n"...)
	if err := b.Flush(); !errors.Is(err, errWriteFailed) {
		t.Errorf("second Flush = %v, want %v", err, errWriteFailed)
	}
}

// TestAtosAnswersBeforeInputEnds checks that Answer reading a pipe answers
// each address before the next one is written: the answers are handed to
// the writer before every read that may block.
func TestAtosAnswersBeforeInputEnds(t *testing.T) {
	m := hostile.MachO{UUID: uuid.UUID{0xa7}, Symbols: []hostile.Symbol{{Name: "_main", Addr: hostile.CodeAddr}}}.Bytes()
	bin := filepath.Join(t.TempDir(), "App")
	if err := os.WriteFile(bin, m, 0o644); err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	a, err := Open(context.Background(), bin, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	done := make(chan error, 1)
	go func() {
		done <- a.Answer(context.Background(), outW, inR)
		outW.Close()
	}()
	lines := bufio.NewReader(outR)
	for i := range 3 {
		if _, err := fmt.Fprintf(inW, "%#x\n", hostile.CodeAddr+uint64(4*i)); err != nil {
			t.Fatal(err)
		}
		got := make(chan string, 1)
		go func() {
			line, _ := lines.ReadString('\n')
			got <- line
		}()
		select {
		case line := <-got:
			if want := fmt.Sprintf("main (in App) + %d\n", 4*i); line != want {
				t.Errorf("answer %d = %q, want %q", i, line, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no answer to address %d while the input stays open", i)
		}
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Errorf("Answer: %v", err)
	}
}

// TestAppendDecimal checks the fast path against strconv for every value
// it covers, its edges and large values.
func TestAppendDecimal(t *testing.T) {
	values := []uint64{10000, 10001, 99999, 1 << 32, ^uint64(0)}
	for v := range uint64(10000) {
		values = append(values, v)
	}
	for _, v := range values {
		if got, want := string(appendDecimal([]byte("x"), v)), "x"+strconv.FormatUint(v, 10); got != want {
			t.Fatalf("appendDecimal(%d) = %q, want %q", v, got, want)
		}
	}
}

// TestAtosBatchEscapesPastCheck checks answers on both sides of
// printableCheckAfter: a name with an escape byte is escaped in every
// answer, and printable names come out the same as before the check.
func TestAtosBatchEscapesPastCheck(t *testing.T) {
	for _, tt := range []struct{ name, want string }{
		{"_ma\x1bin", `ma\x1bin (in App) + 4`},
		{"_main", "main (in App) + 4"},
	} {
		m := hostile.MachO{UUID: uuid.UUID{0xa8}, Symbols: []hostile.Symbol{{Name: tt.name, Addr: hostile.CodeAddr}}}.Bytes()
		bin := filepath.Join(t.TempDir(), "App")
		if err := os.WriteFile(bin, m, 0o644); err != nil {
			t.Fatal(err)
		}
		n := printableCheckAfter + 100
		in := strings.Repeat(fmt.Sprintf("%#x\n", hostile.CodeAddr+4), n)
		a, err := Open(context.Background(), bin, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := a.Answer(context.Background(), &out, strings.NewReader(in)); err != nil {
			t.Fatalf("%q: %v", tt.name, err)
		}
		a.Close()
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		if len(lines) != n {
			t.Fatalf("%q: %d answers, want %d", tt.name, len(lines), n)
		}
		for i, l := range lines {
			if l != tt.want {
				t.Fatalf("%q: answer %d = %q, want %q", tt.name, i, l, tt.want)
			}
		}
	}
}

// FuzzScanWords splits fuzzed input with scanWords and with
// bufio.ScanWords, through buffers of several sizes, and requires the same
// words and errors; and it parses every word with parseHex and with
// strconv, and requires the same address.
func FuzzScanWords(f *testing.F) {
	for _, s := range []string{"0x100003f6c 0x100003f70\n", "  0x1 \t zz\r\n\v\f0X2", "0x1\u00a00x2 é\u2028", "0x10000\x01003f6c\x7f x", "0x 00x1 0x0x1 ffffffffffffffff0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		for _, bufSize := range []int{16, 64, 4096} {
			want, wantErr := splitWords(in, bufio.ScanWords, bufSize)
			got, gotErr := splitWords(in, scanWords, bufSize)
			if !slices.Equal(want, got) || (wantErr == nil) != (gotErr == nil) {
				t.Fatalf("buffer %d: scanWords split %q into %q, %v; bufio.ScanWords into %q, %v", bufSize, in, got, gotErr, want, wantErr)
			}
		}
		for _, w := range strings.Fields(in) {
			digits := w
			if len(digits) > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X') {
				digits = digits[2:]
			}
			want, err := strconv.ParseUint(digits, 16, 64)
			wantOK := err == nil
			if got, ok := hexnum.ParseOptionalPrefix([]byte(w)); ok != wantOK || ok && got != want {
				t.Fatalf("ParseOptionalPrefix(%q) = %#x, %v; strconv says %#x, %v", w, got, ok, want, wantOK)
			}
		}
	})
}

// splitWords splits in as a bufio.Scanner with split and a buffer of
// bufSize bytes does.
func splitWords(in string, split bufio.SplitFunc, bufSize int) ([]string, error) {
	sc := bufio.NewScanner(strings.NewReader(in))
	sc.Buffer(make([]byte, bufSize), bufSize)
	sc.Split(split)
	var words []string
	for sc.Scan() {
		words = append(words, sc.Text())
	}
	return words, sc.Err()
}

func TestParseAddress(t *testing.T) {
	tests := []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"0x100003f60", 0x100003f60, true},
		{"100003F60", 0x100003f60, true},
		{"0XFF", 0xff, true},
		{"0xffffffffffffffff", 1<<64 - 1, true},
		{"0x1ffffffffffffffff", 0, false},
		{"main", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		got, err := ParseAddress(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseAddress(%q) = %#x, %v; want %#x, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

// TestBatchStopsWhenContextEnds: a batch whose context has ended writes
// no answer and returns the context's error.
func TestBatchStopsWhenContextEnds(t *testing.T) {
	a, err := Open(context.Background(), "../fixtures/bin/chain-arm64-O1", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out bytes.Buffer
	if err := a.Answer(ctx, &out, strings.NewReader("0x100000384\n")); !errors.Is(err, context.Canceled) || out.Len() != 0 {
		t.Errorf("Answer with an ended context: %v, wrote %q; want context.Canceled and nothing", err, out.String())
	}
	if err := a.AnswerTokens(ctx, &out, []string{"0x100000384"}); !errors.Is(err, context.Canceled) || out.Len() != 0 {
		t.Errorf("AnswerTokens with an ended context: %v, wrote %q; want context.Canceled and nothing", err, out.String())
	}
	if _, err := Open(ctx, "../fixtures/bin/chain-arm64-O1", Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Open with an ended context: %v, want context.Canceled", err)
	}
	if err := a.AnswerTokens(context.Background(), &out, []string{"0x100000384"}); err != nil || out.Len() == 0 {
		t.Errorf("AnswerTokens: %v, wrote %q", err, out.String())
	}
}
