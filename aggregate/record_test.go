package aggregate

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

const goodLine = `{"images":[{"uuid":"00112233-4455-6677-8899-AABBCCDDEEFF","load_address":4294967296,"name":"App"}],"frames":[4294968000,"0x100000100"]}`

func TestReaderReadsRecords(t *testing.T) {
	in := goodLine + "\n\n" +
		`{"image_set":"p1","images":[{"uuid":"00112233445566778899aabbccddeeff","load_address":"0x100000000","size":"0x4000","name":"App","path":"/A.app/App","main":true}],"frames":[1],"thread":"main","timestamp":"2026-11-26T01:00:00Z","device":"iPhone14,2","os_version":"iOS 17.1","app_version":"1.2 (3)","labels":{"api":"NSUserDefaults"},"weight":5}` + "\n" +
		`{"image_set":"p1","frames":[2]}`
	rd, err := NewReader(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	var got []*Record
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		got = append(got, rec)
	}
	if len(got) != 3 {
		t.Fatalf("read %d records, want 3", len(got))
	}
	if diff := cmp.Diff(Addresses{4294968000, 0x100000100}, got[0].Frames); diff != "" {
		t.Errorf("frames (-want +got):\n%s", diff)
	}
	second := got[1]
	want := Record{
		Images:   []Image{{UUID: got[0].Images[0].UUID, LoadAddress: 0x100000000, Size: 0x4000, Name: "App", Path: "/A.app/App", Main: true}},
		ImageSet: "p1", Frames: Addresses{1}, Thread: "main", Timestamp: time.Date(2026, 11, 26, 1, 0, 0, 0, time.UTC),
		Device: "iPhone14,2", OSVersion: "iOS 17.1", AppVersion: "1.2 (3)", Labels: map[string]string{"api": "NSUserDefaults"}, Weight: 5,
	}
	if diff := cmp.Diff(want, *second, cmpopts.IgnoreUnexported(Record{})); diff != "" {
		t.Errorf("record 2 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(second.Images, got[2].Images); diff != "" {
		t.Errorf("record 3 does not reuse image set p1 (-want +got):\n%s", diff)
	}
}

func TestReaderGzip(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	io.WriteString(zw, goodLine+"\n"+goodLine+"\n")
	zw.Close()
	rd, err := NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		_, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		n++
	}
	if n != 2 {
		t.Errorf("read %d records from gzip, want 2", n)
	}
}

// Every bad record is an error naming its line and field, and the record
// after it is still read.
func TestReaderBadRecords(t *testing.T) {
	tests := []struct {
		name, line, field, msg string
	}{
		{"not JSON", `{"frames":[1}`, "", "invalid"},
		{"no frames", `{"images":[]}`, "frames", "missing"},
		{"empty frames", `{"frames":[]}`, "frames", "missing"},
		{"frame not a number", `{"frames":[1,true]}`, "frames", "[1]"},
		{"frame hex without 0x", `{"frames":["ff"]}`, "frames", "starts with 0x"},
		{"frame too big", `{"frames":[18446744073709551616]}`, "frames", "unsigned 64-bit"},
		{"trailing comma", `{"frames":[1,]}`, "", "invalid character"},
		{"bad uuid", `{"images":[{"uuid":"xyz","load_address":1,"name":"A"}],"frames":[1]}`, "images.uuid", "bad UUID"},
		{"bad load address", `{"images":[{"uuid":"00112233445566778899aabbccddeeff","load_address":-1,"name":"A"}],"frames":[1]}`, "images.load_address", "unsigned"},
		{"no load address", `{"images":[{"uuid":"00112233445566778899aabbccddeeff","name":"A"}],"frames":[1]}`, "images.load_address", "missing"},
		{"image without name", `{"images":[{"uuid":"00112233445566778899aabbccddeeff","load_address":1}],"frames":[1]}`, "images[0].name", "missing"},
		{"thread not a string", `{"frames":[1],"thread":3}`, "thread", "a string is expected"},
		{"negative weight", `{"frames":[1],"weight":-2}`, "weight", "negative"},
		{"bad timestamp", `{"frames":[1],"timestamp":"yesterday"}`, "", "yesterday"},
		{"unknown image set", `{"image_set":"nope","frames":[1]}`, "image_set", "not defined"},
		{"too many frames", `{"frames":[` + strings.Repeat("1,", MaxFrames) + `1]}`, "frames", "more than"},
		{"too long", `{"frames":[1],"thread":"` + strings.Repeat("x", MaxRecordBytes) + `"}`, "", "longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rd, err := NewReader(strings.NewReader(goodLine + "\n" + tt.line + "\n" + goodLine + "\n"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := rd.Next(); err != nil {
				t.Fatalf("line 1: %v", err)
			}
			_, err = rd.Next()
			var re *RecordError
			if !errors.As(err, &re) {
				t.Fatalf("line 2: error %v, want a *RecordError", err)
			}
			if re.Line != 2 || re.Field != tt.field || !strings.Contains(re.Error(), tt.msg) {
				t.Errorf("line 2: %q (line %d, field %q), want line 2, field %q, containing %q", re.Error(), re.Line, re.Field, tt.field, tt.msg)
			}
			rec, err := rd.Next()
			if err != nil || len(rec.Frames) != 2 {
				t.Errorf("line 3 after the bad record: %v, %v; want the good record", rec, err)
			}
			if _, err := rd.Next(); err != io.EOF {
				t.Errorf("after line 3: %v, want io.EOF", err)
			}
		})
	}
}

func TestIsStream(t *testing.T) {
	for in, want := range map[string]bool{
		goodLine:                             true,
		`{"frames":[1]}`:                     true,
		` {"image_set":"a","frames":[1]}`:    true,
		`{"app_name":"X","bug_type":"309"}`:  false,
		`{"format":"stackimage.snapshot/1"}`: false,
		"Process:         Foo [123]":         false,
		"":                                   false,
	} {
		if got := IsStream([]byte(in)); got != want {
			t.Errorf("IsStream(%.30q) = %v, want %v", in, got, want)
		}
	}
}

func FuzzReader(f *testing.F) {
	f.Add([]byte(goodLine))
	f.Add([]byte(`{"image_set":"a","images":[{"uuid":"00112233445566778899aabbccddeeff","load_address":"0x1","name":"A"}],"frames":["0x2"]}` + "\n" + `{"image_set":"a","frames":[3]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rd, err := NewReader(bytes.NewReader(data))
		if err != nil {
			return
		}
		agg := New()
		for i := 0; i < 1000; i++ {
			rec, err := rd.Next()
			if err == io.EOF {
				break
			}
			var re *RecordError
			if err != nil && !errors.As(err, &re) {
				break
			}
			if err == nil {
				agg.Add(rec)
			}
		}
		res, err := agg.Symbolicate(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		res.Groups(GroupOptions{})
		if err := res.Profile().CheckValid(); err != nil {
			t.Fatalf("profile: %v", err)
		}
	})
}

// Strings that are not valid UTF-8 read as encoding/json reads them, each
// bad byte replaced by U+FFFD, whichever decoder reads the record.
func TestDecodeLineInvalidUTF8(t *testing.T) {
	thread := func(r *Record) string { return r.Thread }
	label := func(r *Record) string { return r.Labels["k"] }
	for _, c := range []struct {
		name, line, want string
		field            func(*Record) string
	}{
		{"thread", "{\"frames\":[1],\"thread\":\"a\xffb\"}", "a\uFFFDb", thread},
		{"label", "{\"frames\":[1],\"labels\":{\"k\":\"\xc3\"}}", "\uFFFD", label},
		{"valid", "{\"frames\":[1],\"thread\":\"\u00e9t\u00e9\"}", "\u00e9t\u00e9", thread},
	} {
		t.Run(c.name, func(t *testing.T) {
			var rec Record
			if err := decodeLine([]byte(c.line), 1, &rec); err != nil {
				t.Fatal(err)
			}
			if got := c.field(&rec); got != c.want {
				t.Errorf("decodeLine(%q) read %q, want %q", c.line, got, c.want)
			}
		})
	}
}

// The fast decoder agrees with encoding/json on every record it accepts.
func FuzzDecodeFast(f *testing.F) {
	for _, s := range []string{
		goodLine,
		`{"image_set":"p1","images":[{"uuid":"00112233445566778899aabbccddeeff","load_address":"0x100000000","size":"0x4000","name":"App","main":true}],"frames":[1,"0x2"],"thread":"main","timestamp":"2026-11-26T01:00:00Z","device":"d","os_version":"o","app_version":"a","labels":{"api":"x"},"weight":5}`,
		`{"frames":[1],"unknown":{"a":[1,"}"]},"also":3}`,
		`{"frames":[01]}`, `{"frames":[1],}`, `{"frames":[1]} x`, `{"thread":"a\"b","frames":[1]}`,
		"{\"frames\":[1],\"thread\":\"a\xffb\"}", "{\"frames\":[1],\"labels\":{\"\xff\":\"\xc3\"}}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var fast Record
		if decodeFast(line, &fast) != nil {
			return
		}
		var slow Record
		if err := json.Unmarshal(line, &slow); err != nil {
			t.Fatalf("fast path accepted what encoding/json refuses (%v): %q", err, line)
		}
		if len(fast.Frames) == 0 {
			fast.Frames = nil
		}
		if len(slow.Frames) == 0 {
			slow.Frames = nil
		}
		if diff := cmp.Diff(slow, fast, cmpopts.IgnoreUnexported(Record{})); diff != "" {
			t.Fatalf("fast and slow decoders differ on %q (-slow +fast):\n%s", line, diff)
		}
	})
}

func newGzip(w io.Writer) *gzip.Writer { return gzip.NewWriter(w) }
