package aggregate

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"
	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/uuid"
)

// randomStream writes a stream of n records made to exercise the
// counting: a few devices, each with its own image set loaded elsewhere
// (images of equal load addresses, of no size, of unknown UUID), records
// listing their images inline, stacks drawn from a small pool so that
// most repeat, frames outside every image, and attributes (threads,
// versions, labels in either order, strings with JSON escapes that the
// fast decoder leaves to encoding/json) drawn from small sets.
func randomStream(rng *rand.Rand, n int) []byte {
	type device struct {
		name   string
		images string
		loads  []uint64
	}
	uuids := []string{"4c4c444c55553144a1173e15af6b6cff", "00112233-4455-6677-8899-aabbccddeeff", "4C4C4490-5555-3144-A1DD-56874335793F", "00000000000000000000000000000000", "00000000-0000-0000-0000-000000000000"}
	names := []string{"App", "libA.dylib", "libB.dylib", "libC.dylib", "libD.dylib"}
	var devices []device
	for d := range 6 {
		dv := device{name: fmt.Sprintf("dev%d", d)}
		var ims []string
		for i := range uuids {
			load := uint64(0x100000000) + uint64(i)<<28 + uint64(rng.IntN(16))<<14
			if d == 5 && i == 2 {
				load = dv.loads[1] // two images at one address
			}
			dv.loads = append(dv.loads, load)
			size := ""
			if i%2 == 1 {
				size = fmt.Sprintf(`,"size":%d`, 0x8000)
			}
			main := ""
			if i == 0 && d%2 == 0 {
				main = `,"main":true`
			}
			ims = append(ims, fmt.Sprintf(`{"uuid":%q,"load_address":%d%s,"name":%q%s}`, uuids[i], load, size, names[i], main))
		}
		dv.images = "[" + strings.Join(ims, ",") + "]"
		devices = append(devices, dv)
	}
	// The pool: each frame an image and an offset in it (image -1: an
	// absolute address outside every image).
	type frame struct {
		image  int
		offset uint64
	}
	pool := make([][]frame, 40)
	for i := range pool {
		for range 1 + rng.IntN(8) {
			pool[i] = append(pool[i], frame{rng.IntN(len(uuids)+1) - 1, uint64(rng.IntN(0x9000))})
		}
	}
	threads := []string{"main", "worker", `w\u006frker`, ""}
	labelSets := []string{"", `,"labels":{}`, `,"labels":{"api":"a"}`, `,"labels":{"api":"a","k":"v"}`, `,"labels":{"k":"v","api":"a"}`, `,"labels":{"api":"b"}`}
	defined := map[string]bool{}
	var out bytes.Buffer
	for range n {
		dv := devices[rng.IntN(len(devices))]
		out.WriteString("{")
		switch {
		case rng.IntN(10) == 0:
			fmt.Fprintf(&out, `"images":%s,`, dv.images)
		case !defined[dv.name] || rng.IntN(50) == 0:
			fmt.Fprintf(&out, `"image_set":%q,"images":%s,`, dv.name, dv.images)
			defined[dv.name] = true
		default:
			fmt.Fprintf(&out, `"image_set":%q,`, dv.name)
		}
		var addrs []string
		for _, f := range pool[rng.IntN(len(pool))] {
			addr := f.offset + 0x42
			if f.image >= 0 {
				addr += dv.loads[f.image]
			}
			if rng.IntN(2) == 0 {
				addrs = append(addrs, fmt.Sprintf(`"0x%x"`, addr))
			} else {
				addrs = append(addrs, fmt.Sprint(addr))
			}
		}
		fmt.Fprintf(&out, `"frames":[%s]`, strings.Join(addrs, ","))
		if th := threads[rng.IntN(len(threads))]; th != "" {
			fmt.Fprintf(&out, `,"thread":"%s"`, th)
		}
		fmt.Fprintf(&out, `,"device":%q,"app_version":"%d"%s`, dv.name, 1+rng.IntN(2), labelSets[rng.IntN(len(labelSets))])
		if rng.IntN(4) > 0 {
			fmt.Fprintf(&out, `,"timestamp":"2026-11-%02dT%02d:%02d:00Z"`, 1+rng.IntN(3), rng.IntN(24), rng.IntN(60))
		}
		if w := rng.IntN(4); w > 0 {
			fmt.Fprintf(&out, `,"weight":%d`, w)
		}
		out.WriteString("}\n")
	}
	return out.Bytes()
}

// referenceCounts counts records the plain way, for counts to be
// compared with: every frame placed by scanning all the record's images,
// every sample keyed by a string of its frames and attributes.
func referenceCounts(t *testing.T, recs []*Record) map[string]string {
	t.Helper()
	type imageKey struct {
		id   uuid.UUID
		name string
	}
	keyOf := func(im Image) imageKey {
		if im.UUID.IsZero() {
			return imageKey{name: im.Name}
		}
		return imageKey{id: im.UUID}
	}
	// An image is the main executable when any record says so: the
	// first it marks, or its first image.
	isMain := map[imageKey]bool{}
	for _, rec := range recs {
		main := 0
		for i, im := range rec.Images {
			if im.Main {
				main = i
				break
			}
		}
		if len(rec.Images) > 0 {
			isMain[keyOf(rec.Images[main])] = true
		}
	}
	type counted struct {
		count, weight int64
		first, last   time.Time
		seen          bool
	}
	samples := map[string]*counted{}
	for _, rec := range recs {
		// Each image holds its size, or up to the next image and at
		// most image.MaxOpenRange; a frame is in the image holding it
		// that is loaded highest, then listed first: image.List's rule.
		ends := make([]uint64, len(rec.Images))
		for i, im := range rec.Images {
			start := uint64(im.LoadAddress)
			end := start + uint64(im.Size)
			if im.Size == 0 {
				end = start + image.MaxOpenRange
				for _, other := range rec.Images {
					if l := uint64(other.LoadAddress); l > start && l < end {
						end = l
					}
				}
			}
			if end < start {
				end = ^uint64(0) // cut at the top of the address space
			}
			ends[i] = end
		}
		var key strings.Builder
		for _, addr := range rec.Frames {
			id, offset := "-", addr
			best := -1
			for i, im := range rec.Images {
				start := uint64(im.LoadAddress)
				if start <= addr && addr < ends[i] && (best < 0 || start > uint64(rec.Images[best].LoadAddress)) {
					best = i
				}
			}
			if best >= 0 {
				im := rec.Images[best]
				id, offset = fmt.Sprintf("%s/%s/%v", im.UUID, im.Name, isMain[keyOf(im)]), addr-uint64(im.LoadAddress)
			}
			fmt.Fprintf(&key, "%s+%#x;", id, offset)
		}
		attrs := Attributes{Thread: rec.Thread, Device: rec.Device, OSVersion: rec.OSVersion, AppVersion: rec.AppVersion}
		for k, v := range rec.Labels {
			attrs.Labels = append(attrs.Labels, Label{k, v})
		}
		slices.SortFunc(attrs.Labels, func(x, y Label) int { return strings.Compare(x.Key, y.Key) })
		fmt.Fprintf(&key, " %+v", attrs)
		c := samples[key.String()]
		if c == nil {
			c = &counted{}
			samples[key.String()] = c
		}
		c.count++
		c.weight += max(rec.Weight, 1)
		if ts := rec.Timestamp; !ts.IsZero() {
			if !c.seen || ts.Before(c.first) {
				c.first = ts
			}
			if !c.seen || ts.After(c.last) {
				c.last = ts
			}
			c.seen = true
		}
	}
	out := map[string]string{}
	for k, c := range samples {
		out[k] = fmt.Sprintf("%d %d %v %v %v", c.count, c.weight, c.first, c.last, c.seen)
	}
	return out
}

// readRecords reads a stream one record at a time, with image sets
// resolved.
func readRecords(t *testing.T, stream []byte) []*Record {
	t.Helper()
	rd, err := NewReader(bytes.NewReader(stream))
	if err != nil {
		t.Fatal(err)
	}
	var recs []*Record
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	return recs
}

// numbering lists an aggregator's samples in the order they are
// numbered, each with its stack and attributes: what the profile's
// order follows.
func numbering(a *Aggregator) []string {
	var out []string
	for _, im := range a.images {
		out = append(out, fmt.Sprintf("image %s %s %v", im.UUID, im.Name, im.Main))
	}
	for _, s := range a.samples {
		out = append(out, fmt.Sprintf("stack %d %v attrs %+v: %d %d", s.stack, a.stacks[s.stack], a.attrs[s.attrs], s.count, s.weight))
	}
	return out
}

// The counting agrees with a plain count on random streams full of
// duplicates, devices and labels, however the records come in: one at a
// time, in batches, or read on several goroutines; and the samples are
// numbered in the same order whatever the number of goroutines.
func TestCountsMatchReference(t *testing.T) {
	for seed := range uint64(4) {
		rng := rand.New(rand.NewPCG(seed, 7))
		stream := randomStream(rng, 3000+rng.IntN(3000))
		recs := readRecords(t, stream)
		want := referenceCounts(t, recs)

		one := New()
		for _, rec := range recs {
			one.Add(rec)
		}
		if diff := cmp.Diff(want, counts(one)); diff != "" {
			t.Fatalf("seed %d: Add one at a time (-reference +counted):\n%s", seed, diff)
		}
		batched := New()
		batched.AddBatch(recs)
		if diff := cmp.Diff(want, counts(batched)); diff != "" {
			t.Fatalf("seed %d: AddBatch (-reference +counted):\n%s", seed, diff)
		}
		merged := New()
		merged.Absorb(batched)
		if diff := cmp.Diff(want, counts(merged)); diff != "" {
			t.Fatalf("seed %d: Absorb (-reference +counted):\n%s", seed, diff)
		}
		var first []string
		for _, workers := range []int{1, 2, 3, 8} {
			agg := New()
			l := &Loader{Aggregator: agg, Workers: workers, OnError: func(name string, err error) { t.Errorf("%s: %v", name, err) }}
			if err := l.Read(context.Background(), "stream", bytes.NewReader(stream)); err != nil {
				t.Fatal(err)
			}
			if agg.Records() != int64(len(recs)) {
				t.Errorf("seed %d, %d workers: %d records, want %d", seed, workers, agg.Records(), len(recs))
			}
			if diff := cmp.Diff(want, counts(agg)); diff != "" {
				t.Fatalf("seed %d, %d workers (-reference +counted):\n%s", seed, workers, diff)
			}
			if first == nil {
				first = numbering(agg)
			} else if diff := cmp.Diff(first, numbering(agg)); diff != "" {
				t.Errorf("seed %d: numbered otherwise on %d workers than on 1 (-1 +%d):\n%s", seed, workers, workers, diff)
			}
		}
	}
}

// Stacks whose hashes collide are kept apart: the tables confirm every
// hash against what it stands for.
func TestHashCollisionsKeptApart(t *testing.T) {
	var tb idTable
	values := []string{"a", "b", "c", "d"}
	for i := range values {
		tb.insert(42, int32(i)) // one hash for all
	}
	for i, v := range values {
		id, ok := tb.lookup(42, func(id int32) bool { return values[id] == v })
		if !ok || id != int32(i) {
			t.Errorf("lookup(%q) = %d, %v; want %d, true", v, id, ok, i)
		}
	}
	if _, ok := tb.lookup(42, func(int32) bool { return false }); ok {
		t.Error("lookup of a value not there found one")
	}
	a := New()
	a.stackSeed = 0 // hashes are then still distinct, but the table is tested above
	s1 := a.stackIDHashed(7, []frameRef{{0, 1}})
	s2 := a.stackIDHashed(7, []frameRef{{0, 2}})
	if s1 == s2 || a.stackIDHashed(7, []frameRef{{0, 1}}) != s1 || a.stackIDHashed(7, []frameRef{{0, 2}}) != s2 {
		t.Errorf("two stacks of one hash: ids %d and %d, not kept apart", s1, s2)
	}
}

// placement.find agrees with a binary search over the images for every
// address near an image's bounds, with images close together and far
// apart.
func TestPlacementFind(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		var imgs []placed
		at := uint64(rng.IntN(1 << 20))
		for range 1 + rng.IntN(40) {
			imgs = append(imgs, placed{start: at, end: at + 0x100, image: int32(len(imgs))})
			switch rng.IntN(3) {
			case 0:
				at += uint64(rng.IntN(0x200)) // close, or at the same address
			case 1:
				at += uint64(rng.IntN(1 << 28))
			default:
				at += uint64(rng.IntN(1 << 40))
			}
		}
		p := newPlacement(imgs)
		for _, im := range imgs {
			for _, addr := range []uint64{im.start - 1, im.start, im.start + 1, im.end, im.end + uint64(rng.IntN(1<<30)), ^uint64(0)} {
				want := sort.Search(len(imgs), func(k int) bool { return imgs[k].start > addr }) - 1
				if got := p.find(addr); got != want {
					t.Fatalf("find(%#x) = %d, want %d (images %v)", addr, got, want, imgs)
				}
			}
		}
	}
}

// The scanner reads frame numbers of every length as encoding/json's
// path does, and leaves those past 64 bits to it.
func TestDecodeFastFrameNumbers(t *testing.T) {
	for _, num := range []string{"0", "7", "4342023608", "1234567890123456789", "9999999999999999999", "18446744073709551615", "18446744073709551616", "99999999999999999999", "123456789012345678901", "01"} {
		line := []byte(`{"frames":[` + num + `]}`)
		var fast, slow Record
		fastErr := decodeFast(line, &fast)
		slowErr := decodeLine(line, 1, &slow)
		switch {
		case slowErr != nil && fastErr == nil:
			t.Errorf("frames [%s]: the scanner read %v, the slow path fails: %v", num, fast.Frames, slowErr)
		case slowErr == nil && fastErr == nil && !slices.Equal(fast.Frames, slow.Frames):
			t.Errorf("frames [%s]: the scanner read %v, the slow path %v", num, fast.Frames, slow.Frames)
		case slowErr == nil && fastErr != nil && len(num) < 20:
			t.Errorf("frames [%s]: the scanner left a number of %d digits to the slow path", num, len(num))
		}
	}
}

// parseTimestamp reads what time.Parse reads, to the same time.Time, and
// refuses what it refuses.
func TestParseTimestamp(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	cases := []string{"2026-11-26T01:02:03Z", "2024-02-29T23:59:59Z", "2023-02-29T00:00:00Z", "2026-13-01T00:00:00Z", "2026-00-10T00:00:00Z",
		"2026-04-31T00:00:00Z", "2026-01-01T24:00:00Z", "2026-01-01T00:60:00Z", "2026-01-01T00:00:60Z", "2026-01-01T00:00:00+02:00",
		"2026-01-01T00:00:00.5Z", "2026-01-01t00:00:00Z", "2026-0a-01T00:00:00Z", "0000-01-01T00:00:00Z", "9999-12-31T23:59:59Z"}
	for range 2000 {
		cases = append(cases, fmt.Sprintf("%04d-%02d-%02dT%02d:%02d:%02dZ", rng.IntN(10000), rng.IntN(14), rng.IntN(33), rng.IntN(26), rng.IntN(62), rng.IntN(62)))
	}
	for _, c := range cases {
		want, wantErr := time.Parse(time.RFC3339Nano, c)
		got, err := parseTimestamp([]byte(c))
		if (err != nil) != (wantErr != nil) || got != want {
			t.Errorf("parseTimestamp(%q) = %v, %v; time.Parse: %v, %v", c, got, err, want, wantErr)
		}
	}
	// Through a decoding goroutine's cache, times read in a row, most
	// within the hour of the one before, the same (==, not only Equal).
	cache := newDecodeCache()
	at := time.Date(2026, 11, 26, 22, 58, 0, 0, time.UTC)
	for k := range 5000 {
		c := at.Format(time.RFC3339)
		if k%97 == 0 {
			c = cases[rng.IntN(len(cases))]
		}
		want, wantErr := time.Parse(time.RFC3339Nano, c)
		got, err := cache.timestamp([]byte(c))
		if (err != nil) != (wantErr != nil) || got != want {
			t.Fatalf("timestamp(%q) through the cache = %v, %v; time.Parse: %v, %v", c, got, err, want, wantErr)
		}
		at = at.Add(time.Duration(rng.IntN(40)) * time.Second)
	}
}

// encodeProfile writes what profile.Profile's own encoder writes, as
// profile.Parse reads both: samples in order with their locations,
// values and labels, mappings, locations with their lines, functions.
func TestEncodeProfileMatchesPprofs(t *testing.T) {
	syms := fixtureSymbols(t)
	defer func(n int) { samplesPerPiece = n }(samplesPerPiece)
	samplesPerPiece = 500 // pieces of samples on every core
	for _, procs := range []int{1, 2, 3} {
		agg := New()
		l := &Loader{Aggregator: agg, OnError: func(name string, err error) { t.Errorf("%s: %v", name, err) }}
		if err := l.Read(context.Background(), "stream", bytes.NewReader(randomStream(rand.New(rand.NewPCG(9, 9)), 20000))); err != nil {
			t.Fatal(err)
		}
		res, err := agg.Symbolicate(context.Background(), syms)
		if err != nil {
			t.Fatal(err)
		}
		p := res.Profile()
		var theirs bytes.Buffer
		if err := p.WriteUncompressed(&theirs); err != nil {
			t.Fatal(err)
		}
		old := runtime.GOMAXPROCS(procs)
		ours := encodeProfile(p)
		runtime.GOMAXPROCS(old)
		want, err := profile.ParseData(theirs.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		got, err := profile.ParseData(ours)
		if err != nil {
			t.Fatalf("GOMAXPROCS %d: profile.ParseData of encodeProfile's bytes: %v", procs, err)
		}
		if len(got.Sample) < 3*samplesPerPiece || len(got.Function) == 0 {
			t.Fatalf("%d samples, %d functions: the test wants three pieces of samples at least and named functions", len(got.Sample), len(got.Function))
		}
		if diff := cmp.Diff(want.String(), got.String()); diff != "" {
			t.Errorf("GOMAXPROCS %d: profile read back differs (-pprof's encoder +ours):\n%s", procs, diff)
		}
	}
}

// Eight digits at once are read as strconv reads them, and anything else
// is told apart from them.
func TestEightDigits(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	for range 100000 {
		var b [8]byte
		for i := range b {
			b[i] = '0' + byte(rng.IntN(10))
			if rng.IntN(40) == 0 {
				b[i] = byte(rng.IntN(256))
			}
		}
		x := binary.LittleEndian.Uint64(b[:])
		want, err := strconv.ParseUint(string(b[:]), 10, 64)
		allDigits := err == nil && !strings.ContainsAny(string(b[:]), "+-_")
		if eightDigits(x) != allDigits {
			t.Fatalf("eightDigits(%q) = %v, want %v", b, eightDigits(x), allDigits)
		}
		if allDigits && parseEightDigits(x) != want {
			t.Fatalf("parseEightDigits(%q) = %d, want %d", b, parseEightDigits(x), want)
		}
	}
}
