package symbolize

import (
	"fmt"
)

// The walker decodes a few instructions (the call before a return address,
// prologue and epilogue shapes at the PC) to place frame 0's caller. A
// crash dump holds the stack, not the code, so the code comes from the
// image files: Process.ReadMemory reads them at their slid addresses.

// ReadMemory reads code bytes at a slid address from the files of the
// process's images: the executable segments' file bytes, at the image's
// load address. It has walker.Memory's semantics and is the walker's
// Options.Instructions. An address in no image with a file, outside an
// executable segment, or past the segment's file bytes (a dSYM has none)
// cannot be read.
func (p *Process) ReadMemory(b []byte, addr uint64) (int, error) {
	n := 0
	for n < len(b) {
		at := addr + uint64(n)
		if at < addr {
			return n, fmt.Errorf("code read at %#x wraps around the address space", addr)
		}
		chunk, err := p.codeAt(at)
		if err != nil {
			return n, err
		}
		n += copy(b[n:], chunk)
	}
	return n, nil
}

// codeAt returns the code bytes from addr to the end of its page (or of its
// segment's file bytes), at least one.
func (p *Process) codeAt(addr uint64) ([]byte, error) {
	loc, err := p.List.Lookup(addr)
	if err != nil {
		return nil, fmt.Errorf("code at %#x: in no known image", addr)
	}
	if loc.Segment == nil || !loc.Segment.Executable() {
		return nil, fmt.Errorf("code at %#x: not in an executable segment of %s", addr, loc.Loaded.Name)
	}
	e := p.entries[loc.Loaded]
	if e == nil {
		return nil, fmt.Errorf("code at %#x: no file for %s", addr, loc.Loaded.Name)
	}
	if code, ok, err := e.Code(loc.Segment.Name, loc.Unslid); ok {
		return code, err
	}
	return nil, fmt.Errorf("code at %#x: %s has no file bytes for segment %s", addr, loc.Loaded.Name, loc.Segment.Name)
}
