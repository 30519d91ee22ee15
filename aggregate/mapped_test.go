package aggregate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stackimage/stackimage/internal/mmapfile"
	"github.com/stackimage/stackimage/open"
)

// loadResult is what a load counted and the errors it heard, as text.
type loadResult struct {
	counts map[string]string
	order  []string
	errs   []string
}

// loadStream counts a stream through Loader: from a file (mapped, read
// whole or read, as the loader chooses) or, when path is "", from a
// reader.
func loadStream(t *testing.T, path string, stream []byte, workers int) loadResult {
	t.Helper()
	got, err := tryLoadStream(path, stream, workers)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// badStream is a random stream (randomStream) with bad records among
// the good ones: a line that is not JSON, a record without frames, one
// longer than MaxRecordBytes when long is set, blank lines; its last
// line is cut short, without a newline.
func badStream(rng *rand.Rand, n int, long bool) []byte {
	lines := strings.SplitAfter(string(randomStream(rng, n)), "\n")
	var out strings.Builder
	for i, line := range lines {
		switch {
		case i%997 == 500:
			out.WriteString("{\"frames\":[1}\n")
		case i%1999 == 1000:
			out.WriteString("{\"images\":[]}\n")
		case i == 1500 && long:
			out.WriteString(`{"frames":[1],"thread":"` + strings.Repeat("x", MaxRecordBytes) + "\"}\n")
		case i%3001 == 7:
			out.WriteString("\n \n")
		}
		out.WriteString(line)
	}
	s := strings.TrimSuffix(out.String(), "\n")
	return []byte(s[:len(s)-7]) // the last record cut short
}

// A stream file is read in place (mapped, or read whole when small) and
// counts what the same stream read from a reader counts, on any number
// of cores: the same samples, numbered alike, and the same bad records
// at the same lines, the last one cut short included.
func TestStreamFileInPlaceMatchesReader(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		name    string
		records int
	}{
		{"read whole", 2000},  // under open.SniffSize: read whole, then in place
		{"mapped", 2 * 12000}, // over it, several batches of batchBytes
	} {
		t.Run(tt.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(tt.records), 9))
			stream := badStream(rng, tt.records, tt.name == "mapped")
			if big := len(stream) > open.SniffSize; big != (tt.name == "mapped") {
				t.Fatalf("stream of %d bytes: over open.SniffSize %v, want %v", len(stream), big, !big)
			}
			path := filepath.Join(dir, tt.name+".ndjson")
			if err := os.WriteFile(path, stream, 0o644); err != nil {
				t.Fatal(err)
			}
			want := loadStream(t, "", stream, 1)
			last := len(want.errs) - 1
			if last < 2 || !strings.Contains(want.errs[last], "unexpected end") ||
				tt.name == "mapped" && !strings.Contains(strings.Join(want.errs, "\n"), "longer than") {
				t.Fatalf("the reader heard of bad records %q, want several, the last one cut short (and a long one, in the mapped file)", want.errs)
			}
			defer func(m func(string) (*mmapfile.File, error)) { mapStreamFile = m }(mapStreamFile)
			mapped := 0
			mapStreamFile = func(path string) (*mmapfile.File, error) {
				m, err := mmapfile.Map(path)
				if m != nil {
					mapped++
				}
				return m, err
			}
			for _, workers := range []int{1, 2, 3} {
				got := loadStream(t, path, stream, workers)
				if diff := cmp.Diff(want, got, cmp.AllowUnexported(loadResult{})); diff != "" {
					t.Errorf("%d workers: the file in place and the reader differ (-reader +file):\n%s", workers, diff)
				}
			}
			wantMapped := map[bool]int{true: 3}[tt.name == "mapped"]
			if m, _ := mmapfile.Map(path); m == nil {
				wantMapped = 0 // a system without mmap: read as any reader is
			} else {
				m.Close()
			}
			if mapped != wantMapped {
				t.Errorf("the file was mapped %d times in 3 loads, want %d", mapped, wantMapped)
			}
		})
	}
}

// A stream file that cannot be mapped is read as any reader is, to the
// same counts.
func TestStreamFileUnmappableIsRead(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	stream := badStream(rng, 2*12000, true)
	path := filepath.Join(t.TempDir(), "stream.ndjson")
	if err := os.WriteFile(path, stream, 0o644); err != nil {
		t.Fatal(err)
	}
	mapped := 0
	defer func(m func(string) (*mmapfile.File, error)) { mapStreamFile = m }(mapStreamFile)
	mapStreamFile = func(string) (*mmapfile.File, error) {
		mapped++
		return nil, errors.New("refused")
	}
	want, got := loadStream(t, "", stream, 2), loadStream(t, path, stream, 2)
	if mapped != 1 {
		t.Errorf("the loader tried to map the file %d times, want 1", mapped)
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(loadResult{})); diff != "" {
		t.Errorf("the unmapped file and the reader differ (-reader +file):\n%s", diff)
	}
}

// A mapped stream's parts are released as they are read, each once,
// and together they cover the file.
func TestMappedStreamReleasedAsRead(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 9))
	stream := randomStream(rng, 30000)
	var parts [][2]int
	rd := newMemoryReader(stream, func(from, to int) { parts = append(parts, [2]int{from, to}) })
	n := 0
	err := rd.readAll(context.Background(), 1, true, nil, func(recs []*Record, bad []*RecordError) error {
		n += len(recs)
		for _, re := range bad {
			return fmt.Errorf("%v", re)
		}
		return nil
	})
	if err != nil || n != 30000 {
		t.Fatalf("readAll: %d records, %v; want 30000, nil", n, err)
	}
	at := 0
	for _, p := range parts {
		if p[0] != at || p[1] <= p[0] {
			t.Fatalf("parts %v: want each from where the last ended, to the end", parts)
		}
		at = p[1]
	}
	if at != len(stream) || len(parts) < 2 {
		t.Errorf("%d parts released up to %d, want several, up to %d", len(parts), at, len(stream))
	}
}

// FuzzStreamFileInPlace: any bytes, as a file the loader reads in place,
// give the counts, numbering and errors a reader of the same bytes gets.
func FuzzStreamFileInPlace(f *testing.F) {
	rng := rand.New(rand.NewPCG(7, 9))
	f.Add(badStream(rng, 20, false))
	f.Add(randomStream(rng, 5))
	f.Add([]byte("{\"frames\":[1,2,3]}\n{\"frames\":[1,2,3]}"))
	f.Add([]byte("{\"images\":[{\"uuid\":\"00000000-0000-0000-0000-000000000001\",\"load_address\":4096}],\"frames\":[4100]}\n\n{\"frames\":[1}"))
	f.Fuzz(func(t *testing.T, stream []byte) {
		if !IsStream(stream[:min(len(stream), 512)]) {
			return // not a stream: read as another format (or none), not in place
		}
		path := filepath.Join(t.TempDir(), "stream.ndjson")
		if err := os.WriteFile(path, stream, 0o644); err != nil {
			t.Fatal(err)
		}
		want, wantErr := tryLoadStream("", stream, 1)
		for _, workers := range []int{1, 2} {
			got, err := tryLoadStream(path, stream, workers)
			if (err == nil) != (wantErr == nil) {
				t.Fatalf("%d workers: the file in place gave error %v, the reader %v", workers, err, wantErr)
			}
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(loadResult{})); err == nil && diff != "" {
				t.Errorf("%d workers: the file in place and the reader differ (-reader +file):\n%s", workers, diff)
			}
		}
	})
}

// tryLoadStream is loadStream returning the loader's error instead of
// failing the test.
func tryLoadStream(path string, stream []byte, workers int) (loadResult, error) {
	agg := New()
	var errs []string
	l := &Loader{Aggregator: agg, Workers: workers, OnError: func(name string, err error) {
		errs = append(errs, err.Error())
	}}
	var err error
	if path == "" {
		err = l.Read(context.Background(), "stream", bytes.NewReader(stream))
	} else {
		err = l.Load(context.Background(), []string{path})
	}
	return loadResult{counts(agg), numbering(agg), errs}, err
}
