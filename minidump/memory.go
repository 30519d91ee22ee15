package minidump

import (
	"errors"
	"fmt"
	"io"
	"sort"
)

// ErrNotCaptured is returned (wrapped) by Memory.ReadMemory for an address
// the dump holds no bytes for.
var ErrNotCaptured = errors.New("minidump: memory not captured")

// A MemoryRegion is a range of target memory [Addr, Addr+Size) whose bytes
// the dump holds at file offset Offset.
type MemoryRegion struct {
	Addr   uint64
	Size   uint64
	Offset int64
}

// End returns the first address after the region; 0 for a region that
// reaches the top of the address space.
func (m MemoryRegion) End() uint64 { return m.Addr + m.Size }

// last returns the region's last address; the caller checks Size > 0.
func (m MemoryRegion) last() uint64 { return m.Addr + m.Size - 1 }

// Memory is the target memory a dump captured: the memory list, the
// Memory64 list and the thread stacks. Bytes are read from the dump file on
// demand. Memory is safe for concurrent use when the file's io.ReaderAt is.
type Memory struct {
	r       io.ReaderAt
	regions []MemoryRegion // sorted by Addr, not overlapping, none empty
}

// Regions returns the captured regions in address order. The caller must
// not modify them.
func (m *Memory) Regions() []MemoryRegion {
	if m == nil {
		return nil
	}
	return m.regions
}

// ReadMemory reads len(p) bytes of target memory at addr, across adjacent
// regions. It has io.ReaderAt semantics with a uint64 address: when fewer
// than len(p) bytes are captured it returns how many were read and an error
// wrapping ErrNotCaptured.
func (m *Memory) ReadMemory(p []byte, addr uint64) (int, error) {
	n := 0
	for n < len(p) {
		a := addr + uint64(n)
		if a < addr {
			return n, fmt.Errorf("%w: read at %#x wraps past the end of the address space", ErrNotCaptured, addr)
		}
		regions := m.Regions()
		// The first region ending above a is the only one that can hold it.
		i := sort.Search(len(regions), func(i int) bool { return regions[i].last() >= a })
		if i == len(regions) || regions[i].Addr > a {
			return n, fmt.Errorf("%w at %#x", ErrNotCaptured, a)
		}
		reg := regions[i]
		k := min(uint64(len(p)-n), reg.last()-a+1)
		got, err := m.r.ReadAt(p[n:n+int(k)], reg.Offset+int64(a-reg.Addr))
		n += got
		if got < int(k) {
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return n, fmt.Errorf("minidump: reading memory at %#x from the dump: %w", a, err)
		}
	}
	return n, nil
}

// rawRegion is a region as a list describes it, before overlaps are
// resolved.
type rawRegion struct {
	MemoryRegion
	stream *Stream // which stream described it (nil for a thread stack)
	at     int64   // the descriptor's offset, for errors
	strict bool    // an overlap is an error (Memory64) rather than dropped quietly
}

// buildMemory sorts regions and drops those overlapping an earlier one.
// Overlaps of Memory64 ranges are reported; thread stacks and memory list
// ranges commonly describe the same bytes twice and are merged quietly.
func buildMemory(r io.ReaderAt, raw []rawRegion, errs *[]error, f *File) *Memory {
	sort.SliceStable(raw, func(i, j int) bool { return raw[i].Addr < raw[j].Addr })
	m := &Memory{r: r}
	for _, rr := range raw {
		if rr.Size == 0 {
			continue
		}
		if k := len(m.regions); k > 0 && rr.Addr <= m.regions[k-1].last() {
			prev := m.regions[k-1]
			if rr.strict {
				*errs = append(*errs, f.errf(rr.stream, rr.at, "memory range [%#x, %#x) overlaps [%#x, %#x); dropped",
					rr.Addr, rr.End(), prev.Addr, prev.End()))
			}
			continue
		}
		m.regions = append(m.regions, rr.MemoryRegion)
	}
	return m
}
