package walker

import (
	"encoding/binary"
	"fmt"
	"sort"
	"strings"
	"testing"
)

// label is a stack address the builder learns when Mark is called; values
// that refer to it may be written before that (frame records point up the
// stack, to words written later).
type label struct {
	addr    uint64
	defined bool
}

// fixup is a word whose value is a label's address, patched by Memory.
type fixup struct {
	off   int
	size  int
	label *label
	or    uint64 // bits or'ed into the address
}

// stack is a small test assembler in the manner of Breakpad's: it lays out
// little-endian words from a base address upward and returns them as a
// Memory.
type stack struct {
	t       testing.TB
	base    uint64
	ptrSize int
	buf     []byte
	fixups  []fixup
}

func newStack(t testing.TB, base uint64, ptrSize int) *stack {
	return &stack{t: t, base: base, ptrSize: ptrSize}
}

// Here returns the address of the next word.
func (s *stack) Here() uint64 { return s.base + uint64(len(s.buf)) }

// Mark binds l to the address of the next word.
func (s *stack) Mark(l *label) *stack {
	if l.defined {
		s.t.Fatalf("label marked twice (at %#x and %#x)", l.addr, s.Here())
	}
	l.addr, l.defined = s.Here(), true
	return s
}

// D32 and D64 append a 32- or 64-bit word.
func (s *stack) D32(v uint32) *stack {
	s.buf = binary.LittleEndian.AppendUint32(s.buf, v)
	return s
}

func (s *stack) D64(v uint64) *stack {
	s.buf = binary.LittleEndian.AppendUint64(s.buf, v)
	return s
}

// Ptr appends a pointer-sized word.
func (s *stack) Ptr(v uint64) *stack {
	if s.ptrSize == 4 {
		return s.D32(uint32(v))
	}
	return s.D64(v)
}

// PtrTo appends a pointer-sized word holding l's address.
func (s *stack) PtrTo(l *label) *stack { return s.PtrToOr(l, 0) }

// PtrToOr appends a pointer-sized word holding l's address with bits or'ed
// in (pointer-authentication bits, say).
func (s *stack) PtrToOr(l *label, bits uint64) *stack {
	s.fixups = append(s.fixups, fixup{off: len(s.buf), size: s.ptrSize, label: l, or: bits})
	return s.Ptr(0)
}

// Record appends a frame record: saved FP (a label) then return address.
func (s *stack) Record(savedFP *label, ra uint64) *stack {
	return s.PtrTo(savedFP).Ptr(ra)
}

// Skip appends n zero bytes.
func (s *stack) Skip(n int) *stack {
	s.buf = append(s.buf, make([]byte, n)...)
	return s
}

// Memory resolves the labels and returns the stack as readable memory.
func (s *stack) Memory() *memory {
	s.t.Helper()
	for _, f := range s.fixups {
		if !f.label.defined {
			s.t.Fatalf("word at %#x refers to a label never marked", s.base+uint64(f.off))
		}
		v := f.label.addr | f.or
		if f.size == 4 {
			binary.LittleEndian.PutUint32(s.buf[f.off:], uint32(v))
		} else {
			binary.LittleEndian.PutUint64(s.buf[f.off:], v)
		}
	}
	return &memory{base: s.base, data: s.buf}
}

// memory is one readable region [base, base+len(data)).
type memory struct {
	base uint64
	data []byte
}

func (m *memory) ReadMemory(p []byte, addr uint64) (int, error) {
	if addr < m.base || addr-m.base >= uint64(len(m.data)) {
		return 0, fmt.Errorf("%#x not mapped", addr)
	}
	n := copy(p, m.data[addr-m.base:])
	if n < len(p) {
		return n, fmt.Errorf("%#x: only %d bytes mapped", addr, n)
	}
	return n, nil
}

// codeRanges is a CodeChecker over half-open ranges.
type codeRanges [][2]uint64

func (c codeRanges) IsCode(addr uint64) bool {
	for _, r := range c {
		if addr >= r[0] && addr < r[1] {
			return true
		}
	}
	return false
}

// funcStarts is a FunctionStarter over a sorted list of function starts.
type funcStarts []uint64

func (f funcStarts) FunctionStart(addr uint64) (uint64, bool) {
	i := sort.Search(len(f), func(i int) bool { return f[i] > addr })
	if i == 0 {
		return 0, false
	}
	return f[i-1], true
}

func TestStackBuilder(t *testing.T) {
	var a, b label
	mem := newStack(t, 0x1000, 8).Mark(&a).PtrTo(&b).D32(7).D32(9).Mark(&b).D64(0x1122334455667788).Memory()
	tests := []struct {
		name string
		addr uint64
		size int
		want uint64
	}{
		{"forward label", 0x1000, 8, 0x1010},
		{"d32", 0x1008, 4, 7},
		{"d32 second", 0x100c, 4, 9},
		{"d64", 0x1010, 8, 0x1122334455667788},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readPtr(mem, make([]byte, tt.size), tt.addr)
			if err != nil || got != tt.want {
				t.Errorf("readPtr(%#x) = %#x, %v; want %#x", tt.addr, got, err, tt.want)
			}
		})
	}
	if a.addr != 0x1000 || b.addr != 0x1010 {
		t.Errorf("labels at %#x, %#x; want 0x1000, 0x1010", a.addr, b.addr)
	}
	if _, err := readPtr(mem, make([]byte, 8), 0x1014); err == nil {
		t.Errorf("readPtr(0x1014) past the end: no error")
	}
}

// lyingMemory returns fewer bytes than asked for without an error.
type lyingMemory struct{}

func (lyingMemory) ReadMemory(p []byte, addr uint64) (int, error) { return len(p) / 2, nil }

func TestReadPtrErrors(t *testing.T) {
	tests := []struct {
		name string
		mem  Memory
		addr uint64
		want string
	}{
		{"no memory", nil, 0x1000, "no memory"},
		{"address overflows", &memory{base: 0, data: make([]byte, 16)}, ^uint64(0) - 3, "overflows"},
		{"short read without error", lyingMemory{}, 0x1000, "read 4 of 8 bytes at 0x1000: short read"},
		{"unmapped", &memory{base: 0x2000, data: make([]byte, 16)}, 0x1000, "0x1000 not mapped"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := readPtr(tt.mem, make([]byte, 8), tt.addr)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("readPtr(%#x) error = %v, want one containing %q", tt.addr, err, tt.want)
			}
		})
	}
}
