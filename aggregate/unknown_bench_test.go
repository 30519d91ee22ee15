package aggregate

import (
	"context"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/stackimage/stackimage/uuid"
)

// unknownFramesResult is an aggregate of 20,000 unique stacks of 30
// frames in 10 images without symbols: every frame named by its image
// and offset.
func unknownFramesResult(b *testing.B) *Result {
	b.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	var images []Image
	for i := range 10 {
		images = append(images, Image{UUID: uuid.UUID{byte(i + 1), 0xaa}, LoadAddress: Address(0x180000000 + uint64(i)<<24), Name: "Lib" + string(rune('A'+i))})
	}
	agg := New()
	for range 20000 {
		frames := make([]uint64, 30)
		for k := range frames {
			im := images[rng.IntN(len(images))]
			frames[k] = uint64(im.LoadAddress) + 0x1000 + uint64(rng.IntN(1<<16))*4
		}
		agg.Add(&Record{Images: images, Frames: frames, Weight: 1 + int64(rng.IntN(9))})
	}
	res, err := agg.Symbolicate(context.Background(), nil)
	if err != nil {
		b.Fatal(err)
	}
	return res
}

// BenchmarkOutputsUnknownFrames writes the folded stacks, the pprof
// profile and the groups of an aggregate whose frames no symbol file
// names.
func BenchmarkOutputsUnknownFrames(b *testing.B) {
	res := unknownFramesResult(b)
	b.Run("folded", func(b *testing.B) {
		for b.Loop() {
			if err := res.WriteFolded(io.Discard); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("pprof", func(b *testing.B) {
		for b.Loop() {
			if err := res.WriteProfile(io.Discard); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("groups", func(b *testing.B) {
		for b.Loop() {
			res.Groups(GroupOptions{})
		}
	})
}

// BenchmarkSymbolicateUnknownFrames symbolicates that aggregate: every
// location named by its image and offset once.
func BenchmarkSymbolicateUnknownFrames(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	var images []Image
	for i := range 10 {
		images = append(images, Image{UUID: uuid.UUID{byte(i + 1), 0xaa}, LoadAddress: Address(0x180000000 + uint64(i)<<24), Name: "Lib"})
	}
	agg := New()
	for range 20000 {
		frames := make([]uint64, 30)
		for k := range frames {
			im := images[rng.IntN(len(images))]
			frames[k] = uint64(im.LoadAddress) + 0x1000 + uint64(rng.IntN(1<<16))*4
		}
		agg.Add(&Record{Images: images, Frames: frames})
	}
	for b.Loop() {
		if _, err := agg.Symbolicate(context.Background(), nil); err != nil {
			b.Fatal(err)
		}
	}
}
