package crashreport

import (
	"bytes"
	"encoding/json"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// jsonThreadEnds returns the offset just past each element of the array
// reached by following keys from the top-level object of data[base:].
func jsonThreadEnds(t *testing.T, data []byte, base int, keys ...string) []int {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data[base:]))
	var ends []int
	var walk func(keys []string)
	walk = func(keys []string) {
		if _, err := dec.Token(); err != nil { // '{'
			t.Fatal(err)
		}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				t.Fatal(err)
			}
			if tok != keys[0] {
				var skip json.RawMessage
				if err := dec.Decode(&skip); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if len(keys) > 1 {
				walk(keys[1:])
				return
			}
			if _, err := dec.Token(); err != nil { // '['
				t.Fatal(err)
			}
			for dec.More() {
				var skip json.RawMessage
				if err := dec.Decode(&skip); err != nil {
					t.Fatal(err)
				}
				ends = append(ends, base+int(dec.InputOffset()))
			}
			return
		}
	}
	walk(keys)
	return ends
}

var reTextThread = regexp.MustCompile(`(?m)^Thread \d+( Crashed)?:.*$`)

// textThreadEnds returns the offset just past the blank line ending each
// thread block of a text report.
func textThreadEnds(data []byte) []int {
	var ends []int
	for _, loc := range reTextThread.FindAllIndex(data, -1) {
		end := bytes.Index(data[loc[0]:], []byte("\n\n"))
		if end < 0 {
			ends = append(ends, len(data))
			continue
		}
		ends = append(ends, loc[0]+end+2)
	}
	return ends
}

type truncKey struct {
	Where        uint64 // Address, or ImageOffset for .ips (addresses need usedImages, which come last)
	Symbol       string
	SymbolOffset uint64
}

func truncKeys(format Format, frames []Frame) []truncKey {
	var out []truncKey
	for _, f := range frames {
		w := f.Address
		if format == FormatIPS {
			w = f.ImageOffset
		}
		out = append(out, truncKey{w, f.Symbol, f.SymbolOffset})
	}
	return out
}

// Every report cut short anywhere parses without panicking, returns a
// report or an error, and keeps every thread that lay wholly before the cut.
func TestTruncated(t *testing.T) {
	type input struct {
		name string
		data []byte
	}
	inputs := []input{
		{"arm64.ips", readTestdata(t, "arm64.ips")},
		{"arm64.crash", readTestdata(t, "arm64.crash")},
		{"x86_64-kscrash.json", readTestdata(t, "x86_64-kscrash.json")},
	}
	if testing.Short() {
		t.Log("-short: hand-written samples only")
	} else if dir := corpusDirOrEmpty(t); dir != "" {
		inputs = append(inputs,
			input{"single-target-crash.ips", readCorpus(t, macsymCrashes+"single-target-crash.ips")},
			input{"single-target-crash.crash", readCorpus(t, macsymCrashes+"single-target-crash.crash")})
		for _, n := range ksNames {
			inputs = append(inputs,
				input{n + ".json", readCorpus(t, ksReports+n+".json")},
				input{n + ".txt", readCorpus(t, ksReports+n+".txt")})
		}
	}
	for _, in := range inputs {
		t.Run(in.name, func(t *testing.T) {
			data := in.data
			format, ok := Detect(data)
			if !ok {
				t.Fatalf("Detect failed on the whole report")
			}
			full, err := Parse(data)
			if err != nil {
				t.Fatalf("Parse(whole report): %v", err)
			}
			var ends []int
			switch format {
			case FormatIPS:
				ends = jsonThreadEnds(t, data, bytes.IndexByte(data, '\n')+1, "threads")
			case FormatKSCrash:
				if data[0] == '[' {
					ends = jsonThreadEnds(t, data, 1, "crash", "threads")
				} else {
					ends = jsonThreadEnds(t, data, 0, "crash", "threads")
				}
			default:
				ends = textThreadEnds(data)
			}
			if len(ends) < len(full.Threads) {
				t.Fatalf("found the ends of %d threads, want %d", len(ends), len(full.Threads))
			}
			ends = ends[:len(full.Threads)] // text: drop a recrash section's thread

			cuts := map[int]bool{}
			step := max(1, len(data)/100)
			for c := 0; c < len(data); c += step {
				cuts[c] = true
			}
			for _, e := range ends {
				for _, c := range []int{e - 2, e - 1, e, e + 1} {
					if c >= 0 && c < len(data) {
						cuts[c] = true
					}
				}
			}
			trimmedLen := len(bytes.TrimRight(data, " \t\r\n"))
			for cut := range cuts {
				r, err := Parse(data[:cut])
				if err == nil && cut < trimmedLen && format != FormatCrash {
					t.Errorf("Parse(first %d of %d bytes) gave no error", cut, len(data))
				}
				if r == nil && err == nil {
					t.Fatalf("Parse(first %d bytes) = nil, nil", cut)
				}
				if r == nil {
					if len(ends) > 0 && ends[0] <= cut {
						t.Fatalf("Parse(first %d bytes) = nil, %v; thread 0 ends at %d", cut, err, ends[0])
					}
					continue
				}
				if r.Format != full.Format {
					t.Fatalf("Parse(first %d bytes).Format = %q, want %q", cut, r.Format, full.Format)
				}
				checkInvariants(t, r)
				for i, end := range ends {
					if end > cut {
						break
					}
					if i >= len(r.Threads) {
						t.Fatalf("Parse(first %d bytes): %d threads, want at least %d (thread %d ends at %d); err %v", cut, len(r.Threads), i+1, i, end, err)
					}
					if diff := cmp.Diff(truncKeys(format, full.Threads[i].Frames), truncKeys(format, r.Threads[i].Frames)); diff != "" {
						t.Fatalf("Parse(first %d bytes): thread %d frames (-full +cut):\n%s", cut, i, diff)
					}
				}
			}
		})
	}
}

// corpusDirOrEmpty is corpusDir for tests that still run without it.
func corpusDirOrEmpty(t *testing.T) string {
	var dir string
	t.Run("corpus", func(t *testing.T) { dir = corpusDir(t) })
	return dir
}
