package aggregate

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// docExample returns the lines of docs/aggregate.md's ndjson example.
func docExample(t *testing.T) []string {
	t.Helper()
	doc, err := os.ReadFile("../docs/aggregate.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "```ndjson\n")
	if !ok {
		t.Fatal("docs/aggregate.md has no ```ndjson example")
	}
	block, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatal("docs/aggregate.md: the ndjson example does not end")
	}
	return strings.Split(strings.TrimSpace(block), "\n")
}

// The documented example validates against the committed schema and is
// read, every record, by our reader; records both refuse agree.
func TestDocumentedExampleAndSchema(t *testing.T) {
	schema := compileSchema(t, "../docs/aggregate.schema.json")
	lines := docExample(t)
	if len(lines) < 3 {
		t.Fatalf("example has %d records, want at least 3", len(lines))
	}
	for i, line := range lines {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(line))
		if err != nil {
			t.Fatalf("example line %d: %v", i+1, err)
		}
		if err := schema.Validate(v); err != nil {
			t.Errorf("example line %d does not match docs/aggregate.schema.json: %v", i+1, err)
		}
	}
	rd, err := NewReader(strings.NewReader(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	agg := New()
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("our reader refuses the documented example: %v", err)
		}
		agg.Add(rec)
	}
	if agg.Records() != int64(len(lines)) {
		t.Errorf("read %d records of %d", agg.Records(), len(lines))
	}

	for _, bad := range []string{
		`{"images":[]}`,
		`{"frames":[]}`,
		`{"frames":["ff"]}`,
		`{"frames":[-1]}`,
		`{"frames":[1],"weight":-1}`,
		`{"frames":[1],"thread":3}`,
		`{"frames":[1],"labels":{"a":1}}`,
		`{"images":[{"uuid":"xyz","load_address":1,"name":"A"}],"frames":[1]}`,
		`{"images":[{"uuid":"00112233445566778899aabbccddeeff","name":"A"}],"frames":[1]}`,
		`{"images":[{"uuid":"00112233445566778899aabbccddeeff","load_address":1}],"frames":[1]}`,
	} {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(bad))
		if err != nil {
			t.Fatal(err)
		}
		if schema.Validate(v) == nil {
			t.Errorf("schema accepts %s", bad)
		}
		rd, _ := NewReader(strings.NewReader(bad))
		var re *RecordError
		if _, err := rd.Next(); !errors.As(err, &re) {
			t.Errorf("reader accepts %s (%v)", bad, err)
		}
	}
}

// The documented stream, gzip-compressed, reads the same.
func TestDocumentedExampleGzip(t *testing.T) {
	lines := docExample(t)
	var buf bytes.Buffer
	zw := newGzip(&buf)
	io.WriteString(zw, strings.Join(lines, "\n")+"\n")
	zw.Close()
	l := &Loader{Aggregator: New()}
	if err := l.Read(t.Context(), "example.ndjson.gz", &buf); err != nil {
		t.Fatal(err)
	}
	if got := l.Aggregator.Records(); got != int64(len(lines)) {
		t.Errorf("read %d records from gzip, want %d", got, len(lines))
	}
}
