package atos

import (
	"bufio"
	"context"
	"encoding/binary"
	"io"
	"math/bits"

	"github.com/stackimage/stackimage/internal/hexnum"
	"github.com/stackimage/stackimage/internal/textesc"
)

// AnswerTokens writes the answers for tokens, each an address in hex
// (with or without 0x), to w. A token that is not an address is echoed on
// its own line and the batch goes on, as llvm-symbolizer echoes input it
// cannot parse. Once ctx ends, no more answers are written and its error
// is returned: it is checked before each write of the answers, every
// batchSize bytes.
func (a *Answerer) AnswerTokens(ctx context.Context, w io.Writer, tokens []string) error {
	out := &batchWriter{w: w, ctx: ctx}
	for _, text := range tokens {
		if err := a.answerToken(out, []byte(text)); err != nil {
			return err
		}
	}
	return out.Flush()
}

// Answer reads whitespace-separated addresses from r, as atos reads its
// standard input, and writes their answers to w as AnswerTokens does.
// Answers are written whenever reading may block, so that a pipe can be
// used interactively without paying a write per address. A batch through
// pipes goes in fewer, larger pieces: on Linux, r and w, when they are
// pipes (*os.File), are enlarged to 1 MiB. ctx ends the batch as it does
// AnswerTokens's, and is checked before each read of r too.
func (a *Answerer) Answer(ctx context.Context, w io.Writer, r io.Reader) error {
	enlargePipe(r)
	enlargePipe(w)
	out := &batchWriter{w: w, ctx: ctx}
	sc := bufio.NewScanner(flushingReader{r, out})
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	sc.Split(scanWords)
	for sc.Scan() {
		if err := a.answerToken(out, sc.Bytes()); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return out.Flush()
}

func (a *Answerer) answerToken(out *batchWriter, text []byte) error {
	if addr, ok := hexnum.ParseOptionalPrefix(text); ok {
		out.buf = a.AppendAnswer(out.buf, addr)
	} else {
		out.buf = append(textesc.Append(out.buf, string(text)), '\n')
	}
	return out.flushIfFull()
}

// batchWriter collects answers in one buffer, which each answer is
// appended to in place, and writes it out when it is full or before a read
// that may block: one write per batchSize bytes of answers.
type batchWriter struct {
	w   io.Writer
	ctx context.Context
	buf []byte
	err error // the first write's error, or ctx's; later writes are not tried
}

// batchSize is how many bytes of answers batchWriter writes at once.
const batchSize = 64 << 10

// flushIfFull writes the buffer once it holds batchSize bytes.
func (b *batchWriter) flushIfFull() error {
	if len(b.buf) < batchSize {
		return b.err
	}
	return b.Flush()
}

// Flush writes what the buffer holds.
func (b *batchWriter) Flush() error {
	if b.err == nil && b.ctx != nil {
		b.err = b.ctx.Err()
	}
	if b.err == nil && len(b.buf) > 0 {
		_, b.err = b.w.Write(b.buf)
	}
	b.buf = b.buf[:0]
	return b.err
}

// flushingReader flushes w before every read of r, that is whenever the
// scanner's buffer is exhausted and the next read may block.
type flushingReader struct {
	r io.Reader
	w interface{ Flush() error }
}

func (f flushingReader) Read(p []byte) (int, error) {
	if err := f.w.Flush(); err != nil {
		return 0, err
	}
	return f.r.Read(p)
}

// scanWords is bufio.ScanWords with a fast path for ASCII: addresses are
// ASCII, and ScanWords decodes every byte as a rune. Input with other bytes
// is left to ScanWords, which also splits at Unicode spaces.
func scanWords(data []byte, atEOF bool) (int, []byte, error) {
	start := 0
	for start < len(data) && isASCIISpace(data[start]) {
		start++
	}
	i := start
	for i+8 <= len(data) {
		if m := notWordBytes8(binary.LittleEndian.Uint64(data[i:])); m != 0 {
			// The lowest flagged byte is the first not certainly of
			// the word: the byte loop decides from there.
			i += bits.TrailingZeros64(m) / 8
			break
		}
		i += 8
	}
	for ; i < len(data); i++ {
		switch c := data[i]; {
		case c >= 0x80:
			return bufio.ScanWords(data, atEOF)
		case isASCIISpace(c):
			return i + 1, data[start:i], nil
		}
	}
	if atEOF && len(data) > start {
		return len(data), data[start:], nil
	}
	return start, nil, nil
}

// notWordBytes8 returns 0 when all 8 bytes of w are in 0x21-0x7e: ASCII,
// and neither a space nor another control byte, so certainly part of a
// word; otherwise what outsideASCII8 returns.
func notWordBytes8(w uint64) uint64 { return textesc.OutsideASCII8(w, 0x21) }

// isASCIISpace reports whether c is one of the ASCII bytes
// unicode.IsSpace accepts.
func isASCIISpace(c byte) bool {
	return c == ' ' || c >= '\t' && c <= '\r'
}
