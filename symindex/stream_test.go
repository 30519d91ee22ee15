package symindex

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLineStream round-trips ranges through the stream encoding, with
// every field changing, staying and taking extreme values.
func TestLineStream(t *testing.T) {
	ranges := []lineRange{
		{addr: 0x1000},
		{addr: 0x1004, ok: true, leaf: 1, file: 1, line: 10, col: 3},
		{addr: 0x1008, ok: true, leaf: 1, file: 1, line: 9},
		{addr: 0x1008 + maxAddrDelta, ok: true, leaf: 70000, file: 2, line: 1<<32 - 1, col: 1<<32 - 1},
		{addr: 0x1009 + maxAddrDelta, leaf: 0, file: 0, line: 0},
	}
	var stream []byte
	prev := lineRange{addr: ranges[0].addr}
	for _, r := range ranges {
		stream = encodeRange(stream, prev, r, 0)
		prev = r
	}
	d := decoder{b: stream}
	prev = lineRange{addr: ranges[0].addr}
	var got []lineRange
	for range ranges {
		r, err := d.next(prev)
		if err != nil {
			t.Fatalf("next after %d ranges: %v", len(got), err)
		}
		got = append(got, r)
		prev = r
	}
	if diff := cmp.Diff(ranges, got, cmp.AllowUnexported(lineRange{})); diff != "" {
		t.Errorf("decoded ranges differ (-written +read):\n%s", diff)
	}
	if len(d.b) != 0 {
		t.Errorf("%d bytes left after the last range", len(d.b))
	}
	if _, err := (&decoder{b: stream[:1]}).next(lineRange{}); err == nil {
		// One byte is a complete head; the line delta is missing.
		t.Errorf("next on a cut stream: no error")
	}
}

// TestWideGap checks that a gap wider than the stream's address step is
// bridged by repeating the answer before it, by appendRange and by the
// line writer.
func TestWideGap(t *testing.T) {
	first := lineRange{addr: 0x10, ok: true, line: 5}
	r := lineRange{addr: 0x10 + 2*maxAddrDelta + 1, ok: true, line: 6}
	got := appendRange(appendRange(nil, first), r)
	want := []lineRange{first,
		{addr: 0x10 + maxAddrDelta, ok: true, line: 5},
		{addr: 0x10 + 2*maxAddrDelta, ok: true, line: 5},
		r}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(lineRange{})); diff != "" {
		t.Errorf("appendRange (-want +got):\n%s", diff)
	}
	// The writer bridges it too, and steps a narrow gap at once.
	narrow := lineRange{addr: r.addr + maxAddrDelta, ok: true, line: 7}
	w := &lineWriter{}
	for _, x := range []lineRange{first, r, narrow} {
		w.add(x)
	}
	if diff := cmp.Diff(append(want, narrow), w.ranges(), cmp.AllowUnexported(lineRange{})); diff != "" {
		t.Errorf("lineWriter.add (-want +got):\n%s", diff)
	}
}

// TestLineStreamShift round-trips aligned ranges with their steps stored
// shifted right, as a block whose steps share two zero bits is written.
func TestLineStreamShift(t *testing.T) {
	ranges := []lineRange{{addr: 0x1000, ok: true, line: 1}, {addr: 0x1004, ok: true, line: 2}, {addr: 0x1000 + 4*1000, line: 3}}
	var stream []byte
	prev := lineRange{addr: ranges[0].addr}
	for _, r := range ranges {
		stream = encodeRange(stream, prev, r, 2)
		prev = r
	}
	d := decoder{b: stream, shift: 2}
	prev = lineRange{addr: ranges[0].addr}
	for i, want := range ranges {
		r, err := d.next(prev)
		if err != nil || r != want {
			t.Fatalf("range %d: %+v, %v; want %+v", i, r, err, want)
		}
		prev = r
	}
}

// TestUvarintAt checks the line stream's varint decoder against
// binary.Uvarint: the same value and length, and the same failures (the
// bytes end, or the value overflows 64 bits).
func TestUvarintAt(t *testing.T) {
	inputs := [][]byte{
		{}, {0}, {0x7f}, {0x80}, {0x80, 0x01}, {0xff, 0x7f}, {0xff, 0xff, 0x03},
		binary.AppendUvarint(nil, 1<<35+12345),
		binary.AppendUvarint(nil, math.MaxUint64),
		{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02},       // overflows in the 10th byte
		{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, // 11 bytes
		{0x80, 0x80, 0x80},
	}
	for _, in := range inputs {
		for _, lead := range []int{0, 3} {
			b := append(make([]byte, lead), in...)
			want, n := binary.Uvarint(b[lead:])
			wantNext := lead + n
			if n <= 0 {
				want, wantNext = 0, -1
			}
			got, next := uvarintAt(b, lead)
			if got != want || next != wantNext {
				t.Errorf("uvarintAt(% x, %d) = %d, %d; want %d, %d", b, lead, got, next, want, wantNext)
			}
		}
	}
}

// encodeRange appends one range as the file holds it (the tests' streams):
// a uvarint holding the address step from the previous range and the flag
// bits, then the leaf node and file as zigzag deltas from the previous
// range's when they differ, the line as a zigzag delta, and the column
// when it is not 0.
func encodeRange(out []byte, prev, r lineRange, shift int) []byte {
	flags := rangeFlags(prev, r)
	out = binary.AppendUvarint(out, (r.addr-prev.addr)>>shift<<lineFlagBits|flags)
	if flags&flagLeaf != 0 {
		out = binary.AppendVarint(out, int64(r.leaf)-int64(prev.leaf))
	}
	return appendRangeRest(out, flags, prev, r)
}
