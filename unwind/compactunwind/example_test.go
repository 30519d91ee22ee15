package compactunwind_test

import (
	"debug/macho"
	"fmt"
	"log"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/unwind/compactunwind"
)

// textReader reads an image's __TEXT,__text at image-relative offsets.
type textReader struct {
	off  int64 // the section's image-relative address
	data []byte
}

func (r textReader) ReadAt(p []byte, off int64) (int, error) {
	if off < r.off || off-r.off >= int64(len(r.data)) {
		return 0, fmt.Errorf("no code at %#x", off)
	}
	return copy(p, r.data[off-r.off:]), nil
}

// The unwind rule of _big in the x86_64 fixture, at a call site and in
// its prologue. An image's loader hands over the section's bytes and
// image-relative addresses (vmaddr minus the __TEXT segment's vmaddr).
func Example() {
	f, err := macho.Open("testdata/x86_64-nofp")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	info, _ := f.Section("__unwind_info").Data()
	text := f.Section("__text")
	code, _ := text.Data()
	base := f.Segment("__TEXT").Addr
	reader := textReader{int64(text.Addr - base), code}

	table, err := compactunwind.Parse(info)
	if err != nil {
		log.Fatal(err)
	}
	const big = 0x570 // _big, image-relative
	e, err := table.Lookup(big + 0x20)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("function [%#x, %#x) encoding %#08x\n", e.FuncStart, e.FuncEnd, e.Encoding)

	row, err := compactunwind.RowFor(archregs.X86_64, e, reader)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("body: CFA = r%d%+d, rbx at CFA%+d, rbp at CFA%+d\n", row.CFA.Reg, row.CFA.Offset, row.Rule(3).Offset, row.Rule(6).Offset)

	// Interrupted after its first push (push rbp is one byte).
	row, ok, err := compactunwind.Frame0Row(archregs.X86_64, e, big+1, reader)
	if err != nil || !ok {
		log.Fatal(ok, err)
	}
	fmt.Printf("after push rbp: CFA = r%d%+d, rbp at CFA%+d\n", row.CFA.Reg, row.CFA.Offset, row.Rule(6).Offset)
	// Output:
	// function [0x570, 0x5e0) encoding 0x03056804
	// body: CFA = r7+3024, rbx at CFA-24, rbp at CFA-16
	// after push rbp: CFA = r7+16, rbp at CFA-16
}
