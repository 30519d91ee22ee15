package leb128

import (
	"bytes"
	"math"
	"math/big"
	"testing"
)

func TestUint(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		pos  int
		v    uint64
		next int
		err  error
	}{
		{"zero", []byte{0}, 0, 0, 1, nil},
		{"one byte", []byte{0x7f}, 0, 127, 1, nil},
		{"two bytes", []byte{0xe5, 0x8e, 0x26}, 0, 624485, 3, nil}, // DWARF 5 §7.6's example
		{"at pos", []byte{0xff, 0x80, 0x01, 0x05}, 1, 128, 3, nil},
		{"max", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, 0, math.MaxUint64, 10, nil},
		{"padded", []byte{0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, 0, 1, 12, nil},
		{"bit 64 set", []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02}, 0, 0, 10, ErrOverflow},
		{"eleventh byte set", []byte{0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, 0, 1, 11, ErrOverflow},
		{"truncated", []byte{0x80, 0x80}, 0, 0, 2, ErrTruncated},
		{"empty", nil, 0, 0, 0, ErrTruncated},
		{"pos at end", []byte{1}, 1, 0, 1, ErrTruncated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, next, err := Uint(tt.in, tt.pos)
			if v != tt.v || next != tt.next || err != tt.err {
				t.Errorf("Uint(% x, %d) = %#x, %d, %v; want %#x, %d, %v", tt.in, tt.pos, v, next, err, tt.v, tt.next, tt.err)
			}
		})
	}
}

func TestInt(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		v    int64
		next int
		err  error
	}{
		{"zero", []byte{0}, 0, 1, nil},
		{"minus one", []byte{0x7f}, -1, 1, nil},
		{"63", []byte{0x3f}, 63, 1, nil},
		{"64", []byte{0xc0, 0x00}, 64, 2, nil},
		{"-128", []byte{0x80, 0x7f}, -128, 2, nil},
		{"-123456", []byte{0xc0, 0xbb, 0x78}, -123456, 3, nil}, // Wikipedia's example
		{"min", []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f}, math.MinInt64, 10, nil},
		{"max", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00}, math.MaxInt64, 10, nil},
		{"padded minus one", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, -1, 11, nil},
		{"2^63", []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, math.MinInt64, 10, ErrOverflow},
		{"sign flips in padding", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00}, -1, 11, ErrOverflow},
		{"truncated", []byte{0xff}, 0, 1, ErrTruncated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, next, err := Int(tt.in, 0)
			if v != tt.v || next != tt.next || err != tt.err {
				t.Errorf("Int(% x) = %d, %d, %v; want %d, %d, %v", tt.in, v, next, err, tt.v, tt.next, tt.err)
			}
		})
	}
}

func TestAppendRoundTrip(t *testing.T) {
	for _, u := range []uint64{0, 1, 127, 128, 255, 624485, 1 << 32, math.MaxInt64, math.MaxUint64} {
		b := AppendUint([]byte{0xaa}, u)
		if v, next, err := Uint(b, 1); v != u || next != len(b) || err != nil {
			t.Errorf("Uint(AppendUint(%d) = % x) = %d, %d, %v", u, b[1:], v, next, err)
		}
	}
	for _, s := range []int64{0, 1, -1, 63, 64, -64, -65, -123456, math.MaxInt64, math.MinInt64} {
		b := AppendInt([]byte{0xaa}, s)
		if v, next, err := Int(b, 1); v != s || next != len(b) || err != nil {
			t.Errorf("Int(AppendInt(%d) = % x) = %d, %d, %v", s, b[1:], v, next, err)
		}
	}
	if got := AppendInt(nil, -123456); !bytes.Equal(got, []byte{0xc0, 0xbb, 0x78}) {
		t.Errorf("AppendInt(-123456) = % x, want c0 bb 78", got)
	}
}

// exact decodes the number at the start of b in full precision, as the
// definition reads it: the reference Uint and Int are checked against.
func exact(b []byte, signed bool) (v *big.Int, n int, ok bool) {
	v = new(big.Int)
	for i, c := range b {
		v.Or(v, new(big.Int).Lsh(big.NewInt(int64(c&0x7f)), uint(7*i)))
		if c < 0x80 {
			if signed && c&0x40 != 0 {
				v.Sub(v, new(big.Int).Lsh(big.NewInt(1), uint(7*(i+1))))
			}
			return v, i + 1, true
		}
	}
	return nil, len(b), false
}

// FuzzDecode checks Uint and Int against the full-precision reading: the
// low 64 bits, where the number ends, and overflow exactly when the number
// does not fit.
func FuzzDecode(f *testing.F) {
	for _, s := range [][]byte{{0}, {0xe5, 0x8e, 0x26}, {0x80, 0x7f}, bytes.Repeat([]byte{0xff}, 12), append(bytes.Repeat([]byte{0x80}, 10), 0)} {
		f.Add(s)
	}
	mask := new(big.Int).SetUint64(math.MaxUint64)
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, signed := range []bool{false, true} {
			want, n, ok := exact(b, signed)
			var low uint64
			var next int
			var err error
			if signed {
				var v int64
				v, next, err = Int(b, 0)
				low = uint64(v)
			} else {
				low, next, err = Uint(b, 0)
			}
			if !ok {
				if err != ErrTruncated || next != len(b) || low != 0 {
					t.Fatalf("% x (signed %v): got %#x, %d, %v; want truncated", b, signed, low, next, err)
				}
				continue
			}
			fits := want.IsUint64()
			if signed {
				fits = want.IsInt64()
			}
			wantLow := new(big.Int).And(want, mask).Uint64()
			if low != wantLow || next != n || (err == ErrOverflow) == fits || (err != nil && err != ErrOverflow) {
				t.Fatalf("% x (signed %v): got %#x, %d, %v; want %#x, %d, fits %v", b, signed, low, next, err, wantLow, n, fits)
			}
		}
	})
}

func BenchmarkUint(b *testing.B) {
	var buf []byte
	for i := range 1000 {
		buf = AppendUint(buf, uint64(i*i*i))
	}
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		var sum uint64
		for pos := 0; pos < len(buf); {
			var v uint64
			v, pos, _ = Uint(buf, pos)
			sum += v
		}
		if sum == 0 {
			b.Fatal("no values")
		}
	}
}
