package symindex_test

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"

	"github.com/stackimage/stackimage/internal/testcorpus"
	"github.com/stackimage/stackimage/internal/testtool"
	"github.com/stackimage/stackimage/symindex"
	"github.com/stackimage/stackimage/symstore"
)

// FuzzOpen parses arbitrary bytes as an index file and looks addresses up
// in what it accepts. Parse must never panic, and what it and the lookups
// allocate stays within a small multiple of the input's size.
func FuzzOpen(f *testing.F) {
	dir := fixtureDir(f)
	for _, name := range []string{"chain-arm64-O1", "chain-x86_64-O2", "chain-armv7-O1"} {
		paths := []string{filepath.Join(dir, name)}
		if d := dsymFile(filepath.Join(dir, name+".dSYM")); d != "" {
			paths = append(paths, d)
		}
		if _, err := os.Stat(paths[0]); err != nil {
			continue
		}
		for _, images := range openImages(f, paths...) {
			e, _ := symstore.NewEntry(images...)
			var buf bytes.Buffer
			if err := e.WriteIndex(&buf); err != nil {
				f.Fatal(err)
			}
			f.Add(buf.Bytes())
		}
	}
	// A C++ dSYM of the corpus, when it is there: its index holds
	// demangled names, which the fixtures' C does not.
	if corpus, err := testcorpus.Find(); err == nil {
		if d := dsymFile(filepath.Join(corpus, "symbolic/symbolic-testutils/fixtures/macos/crash.dSYM")); d != "" {
			for _, images := range openImages(f, d) {
				e, _ := symstore.NewEntry(images...)
				var buf bytes.Buffer
				if err := e.WriteIndex(&buf); err != nil {
					f.Fatal(err)
				}
				f.Add(buf.Bytes())
			}
		}
	}
	f.Add([]byte(symindex.Magic))
	f.Fuzz(func(t *testing.T, data []byte) {
		// Strings are copied out per lookup; each is bounded by the input.
		budget := uint64(64*len(data)) + 1<<20
		got := testtool.HeapAllocated(func() { parseAndLookUp(data) }, budget)
		if got > budget {
			t.Errorf("Parse and lookups allocated %d bytes for a %d-byte input, budget %d", got, len(data), budget)
		}
	})
}

// parseAndLookUp parses data, and data with its checksums repaired, and
// looks up addresses in each segment of what Parse accepts.
func parseAndLookUp(data []byte) {
	symindex.Parse(data)
	// Mutations nearly always break a checksum: fix them and the length
	// up, so that the fuzzer reaches the directory and the lookups.
	data = repair(data)
	ix, err := symindex.Parse(data)
	if err != nil {
		return
	}
	for _, s := range ix.Segments() {
		for _, a := range []uint64{s.Addr, s.Addr + s.Size/2, s.Addr + s.Size - 1} {
			ix.Lookup(a)
		}
	}
	for _, a := range []uint64{0, 1 << 32, ^uint64(0)} {
		ix.Lookup(a)
	}
	ix.Verify()
	ix.Symbols()
}

// repair sets the header's length, the chunk checksums and the header's
// checksum to match data, when its directory ends in a checksum section
// that ends the file (as a writer lays it out).
func repair(data []byte) []byte {
	if len(data) < 64 {
		return data
	}
	data = bytes.Clone(data)
	le := binary.LittleEndian
	le.PutUint64(data[40:], uint64(len(data)))
	count := uint64(le.Uint32(data[12:]))
	if count == 0 || count > uint64(len(data)-64)/24 {
		return data
	}
	dirEnd := 64 + 24*count
	last := data[dirEnd-24 : dirEnd]
	off := le.Uint64(last[8:])
	if off < dirEnd || off > uint64(len(data)) {
		return data
	}
	le.PutUint32(last, 14)
	le.PutUint64(last[16:], uint64(len(data))-off)
	castagnoli := crc32.MakeTable(crc32.Castagnoli)
	for c := uint64(0); off+4*c+4 <= uint64(len(data)) && dirEnd+c<<16 < off; c++ {
		lo := dirEnd + c<<16
		hi := min(lo+1<<16, off)
		le.PutUint32(data[off+4*c:], crc32.Checksum(data[lo:hi], castagnoli))
	}
	sum := crc32.Update(crc32.Checksum(data[64:dirEnd], castagnoli), castagnoli, data[off:])
	le.PutUint32(data[48:], sum)
	return data
}
