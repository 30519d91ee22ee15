package hexnum

import (
	"math/rand"
	"strconv"
	"strings"
	"testing"
)

// TestParseMatchesStrconv holds Parse to strconv.ParseUint(s, 16, 64) on
// edge cases and on random strings over a small alphabet, as a string
// and as bytes.
func TestParseMatchesStrconv(t *testing.T) {
	cases := []string{"", "0", "f", "F", "10", "ffffffffffffffff", "FFFFFFFFFFFFFFFF",
		"10000000000000000", "0000000000000000001", "00000000000000000000ffffffffffffffff",
		"g", "-1", "+1", "0x1", "1_0", " 1", "1 ", "ffffffffffffffff0", "7fffffffffffffff"}
	rng := rand.New(rand.NewSource(1))
	const alphabet = "0123456789abcdefABCDEFxg _-"
	for range 20000 {
		n := rng.Intn(20)
		var b strings.Builder
		for range n {
			if rng.Intn(8) == 0 {
				b.WriteByte(alphabet[rng.Intn(len(alphabet))])
			} else {
				b.WriteByte(alphabet[rng.Intn(22)])
			}
		}
		cases = append(cases, b.String())
	}
	for _, s := range cases {
		want, err := strconv.ParseUint(s, 16, 64)
		wantOK := err == nil
		if got, ok := Parse(s); ok != wantOK || ok && got != want {
			t.Errorf("Parse(%q) = %#x, %v; strconv says %#x, %v", s, got, ok, want, err)
		}
		if got, ok := Parse([]byte(s)); ok != wantOK || ok && got != want {
			t.Errorf("Parse([]byte(%q)) = %#x, %v; strconv says %#x, %v", s, got, ok, want, err)
		}
	}
}

func TestOptionalPrefix(t *testing.T) {
	for _, c := range []struct {
		s    string
		want uint64
		ok   bool
	}{
		{"0x1f", 0x1f, true},
		{"0X1F", 0x1f, true},
		{"1f", 0x1f, true},
		{"0", 0, true},
		{"0x", 0, false},
		{"x1", 0, false},
		{"0x0x1", 0, false},
	} {
		if v, ok := ParseOptionalPrefix([]byte(c.s)); v != c.want || ok != c.ok {
			t.Errorf("ParseOptionalPrefix(%q) = %#x, %v; want %#x, %v", c.s, v, ok, c.want, c.ok)
		}
	}
}

func BenchmarkParse(b *testing.B) {
	s := []byte("1000a3f2c")
	for b.Loop() {
		if _, ok := Parse(s); !ok {
			b.Fatal("not read")
		}
	}
}
