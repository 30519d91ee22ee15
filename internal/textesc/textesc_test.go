package textesc

import (
	"strings"
	"testing"
)

func TestEscapeText(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "-[ViewController viewDidLoad]", "-[ViewController viewDidLoad]"},
		{"printable unicode kept", "größe·関数", "größe·関数"},
		{"NUL and ESC", "a\x00b\x1b[31m", `a\x00b\x1b[31m`},
		{"newline and tab", "a\nb\tc\r", `a\x0ab\x09c\x0d`},
		{"DEL", "a\x7f", `a\x7f`},
		{"invalid UTF-8", "a\xffb\xc3", `a\xffb\xc3`},
		{"C1 CSI", "a\u009b31m", `a\u009b31m`},
		{"bidi override", "abc\u202etxt.exe", `abc\u202etxt.exe`},
		{"line separator", "a\u2028b", `a\u2028b`},
		{"backslash kept", `C:\Windows`, `C:\Windows`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := String(tt.in); got != tt.want {
				t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestPrintableASCII8 checks the word test against a byte loop for every
// byte value at every position, among printable neighbours and among
// bytes that are not.
func TestPrintableASCII8(t *testing.T) {
	printable := func(b []byte) bool {
		for _, c := range b {
			if c < 0x20 || c >= 0x7f {
				return false
			}
		}
		return true
	}
	for _, fill := range []byte{'a', ' ', '~', 0x00, 0x7f, 0xff, 0x1f, 0x80} {
		for pos := 0; pos < 8; pos++ {
			for v := 0; v < 256; v++ {
				b := []byte{fill, fill, fill, fill, fill, fill, fill, fill}
				b[pos] = byte(v)
				if got, want := PrintableASCII8(load64(string(b), 0)), printable(b); got != want {
					t.Fatalf("PrintableASCII8(% x) = %v, want %v", b, got, want)
				}
			}
		}
	}
}

// TestPrintableASCII checks the string test against a byte loop for every
// length up to 40 with one byte of every kind at every position.
func TestPrintableASCII(t *testing.T) {
	for n := 0; n <= 40; n++ {
		for pos := 0; pos < n; pos++ {
			for _, c := range []byte{'a', ' ', '~', 0x00, 0x1f, 0x7f, 0x80, 0xff} {
				b := []byte(strings.Repeat("m", n))
				b[pos] = c
				want := c >= 0x20 && c < 0x7f
				if got := printableASCII(string(b)); got != want {
					t.Fatalf("printableASCII(%q) = %v, want %v", b, got, want)
				}
			}
		}
		if !printableASCII(strings.Repeat("m", n)) {
			t.Fatalf("printableASCII of %d printable bytes = false", n)
		}
	}
}
