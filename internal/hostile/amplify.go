package hostile

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
)

// Figures of SharedStackSnapshot: the default size of the amplification
// case, where every thread's walk is as deep as the walker allows.
const (
	SharedStackThreads = 5000
	SharedStackFrames  = 512
)

// Addresses of SharedStackSnapshot.
const (
	SharedStackImage = 0x100000000 // the one image's load address
	SharedStackBase  = 0x16fd00000 // the shared stack region's lowest address
)

// SharedStackSnapshot returns an arm64 snapshot (stackimage.snapshot/v1)
// of threads whose registers all point into one stack region holding a
// chain of frames frame records, each returning into the one image: every
// thread's walk is the whole chain. Small input, huge output: threads ×
// frames frames. When distinct is true each thread's PC differs, so the
// threads are not identical (their walks differ in frame 0 only).
func SharedStackSnapshot(threads, frames int, distinct bool) []byte {
	stack := make([]byte, 16*(frames+1))
	for i := 0; i < frames; i++ {
		next := uint64(SharedStackBase + 16*(i+1))
		if i == frames-1 {
			next = 0
		}
		binary.LittleEndian.PutUint64(stack[16*i:], next)
		binary.LittleEndian.PutUint64(stack[16*i+8:], SharedStackImage+0x1000+4*uint64(i%64)+4)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"format": "stackimage.snapshot/v1", "arch": "arm64",
"images": [{"name": "/app/Shared", "uuid": "5A000000-0000-0000-0000-000000000000", "load_address": "%#x", "size": "0x100000"}],
"threads": [`, SharedStackImage)
	for i := 0; i < threads; i++ {
		if i > 0 {
			b.WriteString(",\n")
		}
		pc := uint64(SharedStackImage + 0x2000)
		if distinct {
			pc += 4 * uint64(i)
		}
		fmt.Fprintf(&b, `{"id": %d, "registers": {"pc": "%#x", "lr": "%#x", "fp": "%#x", "sp": "%#x"}, "stack": {"low": "%#x", "high": "%#x"}}`,
			i+1, pc, SharedStackImage+0x1000, SharedStackBase, SharedStackBase, SharedStackBase, SharedStackBase+len(stack))
	}
	fmt.Fprintf(&b, `],
"memory": [{"address": "%#x", "data": "%s"}]}`, SharedStackBase, base64.StdEncoding.EncodeToString(stack))
	return b.Bytes()
}
