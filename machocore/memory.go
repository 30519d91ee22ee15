package machocore

import (
	"errors"
	"fmt"
	"io"
	"sort"
)

// ErrNotCaptured is wrapped by Memory's errors for an address the core does
// not hold: in no segment, or in file data a truncated core lacks.
var ErrNotCaptured = errors.New("machocore: memory not in the core")

// Memory reads a core's memory from its segments, lazily, through the
// io.ReaderAt given to Open. It is safe for concurrent use when that
// io.ReaderAt is (as io.ReaderAt's contract asks).
type Memory struct {
	r    io.ReaderAt
	maps []mapping // sorted by addr, disjoint
}

// mapping is one region as Memory reads it: [addr, addr+present) from the
// file at off, then [addr+present, addr+declared) missing (a truncated
// file), then zero up to end.
type mapping struct {
	addr, end         uint64
	off               uint64
	present, declared uint64
}

// memory builds the Memory over the regions, which are sorted by address.
// A region overlapping one before it is left out with a warning: which of
// two overlapping segments holds the truth cannot be known.
func (p *parser) memory() *Memory {
	m := &Memory{r: p.r}
	for _, r := range p.c.Regions {
		if r.Size == 0 {
			continue
		}
		if n := len(m.maps); n > 0 && r.Addr < m.maps[n-1].end {
			p.warnCmd(r.Command, fmt.Sprintf("segment [%#x, %#x) overlaps the one before it, which ends at %#x; not read", r.Addr, r.End(), m.maps[n-1].end), nil)
			continue
		}
		m.maps = append(m.maps, mapping{
			addr: r.Addr, end: r.End(), off: r.FileOffset,
			present: r.Present, declared: min(r.FileSize, r.Size),
		})
	}
	return m
}

// ReadMemory reads len(p) bytes at addr, crossing from one segment into an
// adjacent one. Bytes of a segment past its file data read as zero. Like
// io.ReaderAt, it returns the number of bytes read and, when that is short
// of len(p), an error (wrapping ErrNotCaptured for memory the core does not
// hold) naming the first address not read.
func (m *Memory) ReadMemory(p []byte, addr uint64) (int, error) {
	return m.read(p, addr, true)
}

// read is ReadMemory; without zeroTail, bytes past a segment's file data
// are not captured either.
func (m *Memory) read(p []byte, addr uint64, zeroTail bool) (int, error) {
	n := 0
	for n < len(p) {
		a := addr + uint64(n)
		if a < addr {
			return n, fmt.Errorf("%w: read at %#x wraps past the top of the address space", ErrNotCaptured, addr)
		}
		i := sort.Search(len(m.maps), func(i int) bool { return m.maps[i].end > a })
		if i == len(m.maps) || m.maps[i].addr > a {
			return n, fmt.Errorf("%w: %#x is in no segment", ErrNotCaptured, a)
		}
		mp := m.maps[i]
		rel := a - mp.addr
		chunk := p[n:min(uint64(len(p)), uint64(n)+(mp.end-a))]
		switch {
		case rel < mp.present:
			chunk = chunk[:min(uint64(len(chunk)), mp.present-rel)]
			got, err := m.r.ReadAt(chunk, int64(mp.off+rel))
			n += got
			if got < len(chunk) {
				if err == nil || err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				return n, fmt.Errorf("machocore: read %#x: file offset %#x: %w", a+uint64(got), mp.off+rel+uint64(got), err)
			}
			continue
		case rel < mp.declared || !zeroTail:
			return n, fmt.Errorf("%w: %#x is past the end of the file's data for its segment", ErrNotCaptured, a)
		}
		clear(chunk)
		n += len(chunk)
	}
	return n, nil
}

// fileMemory reads only the memory the core's file holds (not the zeros
// past a segment's file data) and at most left bytes in all. Mach headers
// found in memory are read through it, so that what a hostile core's
// headers make Open read and allocate is bounded by the file and by
// maxHeaderBytes, however much memory the segments declare.
type fileMemory struct {
	m    *Memory
	left uint64
}

func (f *fileMemory) ReadMemory(p []byte, addr uint64) (int, error) {
	if uint64(len(p)) > f.left {
		return 0, fmt.Errorf("machocore: reading mach headers: more than %d bytes in all", maxHeaderBytes)
	}
	n, err := f.m.read(p, addr, false)
	f.left -= uint64(n)
	return n, err
}
