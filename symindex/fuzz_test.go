package symindex_test

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"runtime/metrics"
	"testing"

	"github.com/stackimage/stackimage/symbolize"
	"github.com/stackimage/stackimage/symindex"
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
			e, _ := symbolize.NewEntry(images...)
			var buf bytes.Buffer
			if err := e.WriteIndex(&buf); err != nil {
				f.Fatal(err)
			}
			f.Add(buf.Bytes())
		}
	}
	f.Add([]byte(symindex.Magic))
	f.Fuzz(func(t *testing.T, data []byte) {
		before := allocated()
		symindex.Parse(data)
		// Mutations nearly always break the checksum: fix it and the length
		// up, so that the fuzzer reaches the directory and the lookups.
		if len(data) >= 64 {
			data = bytes.Clone(data)
			binary.LittleEndian.PutUint64(data[40:], uint64(len(data)))
			binary.LittleEndian.PutUint32(data[48:], crc32.Checksum(data[64:], crc32.MakeTable(crc32.Castagnoli)))
		}
		ix, err := symindex.Parse(data)
		if err == nil {
			for _, s := range ix.Segments() {
				for _, a := range []uint64{s.Addr, s.Addr + s.Size/2, s.Addr + s.Size - 1} {
					ix.Lookup(a)
				}
			}
			for _, a := range []uint64{0, 1 << 32, ^uint64(0)} {
				ix.Lookup(a)
			}
		}
		after := allocated()
		// Strings are copied out per lookup; each is bounded by the input.
		budget := uint64(64*len(data)) + 1<<20
		if got := after - before; got > budget {
			t.Errorf("Parse and lookups allocated %d bytes for a %d-byte input, budget %d", got, len(data), budget)
		}
	})
}

// allocated returns the bytes allocated on the heap so far. Unlike
// runtime.ReadMemStats it does not stop the world, which would slow the
// fuzzer down to a crawl.
func allocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
