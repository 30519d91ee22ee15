package report

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stackimage/stackimage/open"
	"github.com/stackimage/stackimage/symbolize"
	"github.com/stackimage/stackimage/symstore"
)

// TestFilterThreadsIsTheDocumentWithoutTheOthers: the JSON of a filtered
// set of threads is the whole document with the other threads left out,
// every other member unchanged, for one thread and for every other one.
func TestFilterThreadsIsTheDocumentWithoutTheOthers(t *testing.T) {
	in, err := open.File(context.Background(), "../crashreport/testdata/arm64.ips")
	if in == nil {
		t.Fatal(err)
	}
	defer in.Close()
	z := &symbolize.Symbolizer{Symbols: symstore.NewSymbols()}
	write := func(keep func(symbolize.Thread) bool) map[string]any {
		var out strings.Builder
		w := NewJSON(&out)
		if keep != nil {
			w = FilterThreads(w, keep)
		}
		if err := Write(context.Background(), z, in, w); err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal([]byte(out.String()), &doc); err != nil {
			t.Fatalf("%v in\n%s", err, out.String())
		}
		return doc
	}
	whole := write(nil)
	threads, _ := whole["threads"].([]any)
	if len(threads) < 3 {
		t.Fatalf("the input has %d threads, want several", len(threads))
	}
	for name, keep := range map[string]func(int, symbolize.Thread) bool{
		"crashed":   func(_ int, th symbolize.Thread) bool { return th.Crashed },
		"every 2nd": func(i int, _ symbolize.Thread) bool { return i%2 == 1 },
		"none":      func(int, symbolize.Thread) bool { return false },
	} {
		t.Run(name, func(t *testing.T) {
			i := -1
			var kept []int
			got := write(func(th symbolize.Thread) bool {
				i++
				if keep(i, th) {
					kept = append(kept, i)
					return true
				}
				return false
			})
			want := map[string]any{}
			for k, v := range whole {
				want[k] = v
			}
			wantThreads := []any{}
			for _, k := range kept {
				wantThreads = append(wantThreads, threads[k])
			}
			want["threads"] = wantThreads
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("filtered document differs from the whole one without the other threads (-want +got):\n%s", diff)
			}
		})
	}
}
