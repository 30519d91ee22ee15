package crashreport

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stackimage/stackimage/archregs"
)

// ipsFastCases are payloads around one thread's frames and the images,
// each saying whether readFast reads it (the rest go to the token
// stream). Either way ParseIPS must give what the stream alone gives.
var ipsFastCases = []ipsFastCase{
	{name: "plain", frames: `{"imageOffset":16,"imageIndex":0},{"imageOffset":32,"imageIndex":1}`, wantFast: true},
	{name: "all frame fields", frames: `{"imageOffset":16,"symbol":"main","symbolLocation":8,"sourceFile":"a.c","sourceLine":12,"inline":true,"imageIndex":0}`, wantFast: true},
	{name: "symbolLocation without symbol", frames: `{"imageOffset":16,"symbolLocation":8,"imageIndex":0}`, wantFast: true},
	{name: "spaces everywhere", frames: " {\n\"imageOffset\" :\t16 , \"imageIndex\" : 0 } , { \"imageIndex\":1 } ", wantFast: true},
	{name: "symbol with escapes", frames: `{"symbol":"a\"b\u00e9\\n","imageIndex":0}`, wantFast: true},
	{name: "symbol not ASCII", frames: `{"symbol":"Straße.größe() → 🙂","imageIndex":0}`, wantFast: true},
	{name: "symbol not UTF-8", frames: "{\"symbol\":\"a\xff\xfeb\",\"imageIndex\":0}", wantFast: true},
	{name: "offset as hex string", frames: `{"imageOffset":"0x10","imageIndex":0}`, wantFast: true},
	{name: "offset of 20 digits", frames: `{"imageOffset":18446744073709551615,"imageIndex":0}`, wantFast: true},
	{name: "negative offset", frames: `{"imageOffset":-1,"imageIndex":0}`, wantFast: true},
	{name: "null offset", frames: `{"imageOffset":null,"imageIndex":0}`, wantFast: true},
	{name: "duplicate key, last wins", frames: `{"imageOffset":1,"imageOffset":2,"imageIndex":1,"imageIndex":0}`, wantFast: true},
	{name: "other frame key", frames: `{"region":{"a":[1,"]"]},"imageIndex":0}`, wantFast: true},
	{name: "no frames", frames: ``, wantFast: true},
	{name: "image fields as hex and other keys", images: `{"base":"0x1000","size":"4096","source":"P","CFBundleIdentifier":"x"}`, frames: `{"imageIndex":0}`, wantFast: true},
	{name: "image UUID not a UUID", images: `{"base":4096,"uuid":"nope"}`, frames: `{"imageIndex":0}`, wantFast: true},
	{name: "threadState and lastExceptionBacktrace", frames: `{"imageIndex":0}`, wantFast: true,
		payload: `{"threads":[{"threadState":{"x":[{"value":1}],"flavor":"ARM_THREAD_STATE64","pc":{"value":4096},"far":{"value":16}},"frames":[{"imageIndex":0}]}],` +
			`"usedImages":[{"base":4096,"arch":"arm64"}],"lastExceptionBacktrace":[{"imageIndex":0,"imageOffset":4}],"cpuType":"ARM-64"}`},
	{name: "two threads keys", wantFast: true,
		payload: `{"threads":[{"frames":[{"imageIndex":0}]}],"usedImages":[{"base":4096}],"threads":[{"id":"0x10","frames":[{"imageIndex":0}],"frames":[]}]}`},
	{name: "thread without frames, null faultingThread", wantFast: true,
		payload: `{"threads":[{"id":1}],"faultingThread":null,"usedImages":[]}`},

	{name: "key differing in case", frames: `{"ImageIndex":1,"imageIndex":0}`},
	{name: "image key differing in case", images: `{"Base":4096}`, frames: `{"imageIndex":0}`},
	{name: "escaped key", frames: `{"symb\u006fl":"x","imageIndex":0}`},
	{name: "no imageIndex", frames: `{"imageOffset":16}`},
	{name: "imageIndex out of range", frames: `{"imageIndex":2}`},
	{name: "negative imageIndex", frames: `{"imageIndex":-1}`},
	{name: "imageIndex a float", frames: `{"imageIndex":1.0}`},
	{name: "imageIndex with leading zero", frames: `{"imageIndex":01}`},
	{name: "null symbol", frames: `{"symbol":null,"imageIndex":0}`},
	{name: "symbol a number", frames: `{"symbol":5,"imageIndex":0}`},
	{name: "offset not a number", frames: `{"imageOffset":"zz","imageIndex":0}`},
	{name: "inline not a bool", frames: `{"inline":1,"imageIndex":0}`},
	{name: "frame not an object", frames: `7`},
	{name: "trailing comma", frames: `{"imageIndex":0},`},
	{name: "missing comma", frames: `{"imageIndex":0} {"imageIndex":0}`},
	{name: "control character in symbol", frames: "{\"symbol\":\"a\tb\",\"imageIndex\":0}"},
	{name: "no usedImages", payload: `{"threads":[{"frames":[{"imageIndex":0}]}]}`},
	{name: "thread not an object", payload: `{"threads":[{"frames":[]},7],"usedImages":[]}`},
	{name: "frames not an array", payload: `{"threads":[{"frames":{}}],"usedImages":[]}`},
	{name: "text after the payload", payload: `{"threads":[],"usedImages":[]} x`},
	{name: "truncated", payload: `{"threads":[{"frames":[{"imageIndex":0},{"imageOff`},
	{name: "bad JSON in a skipped value", payload: `{"other":[1,},"threads":[],"usedImages":[]}`},
}

const imagesAB = `{"base":4096,"size":4096,"uuid":"00000000-0000-0000-0000-000000000001","name":"a","path":"/a"},{"base":65536,"size":4096,"name":"b"}`

func (c ipsFastCase) report() []byte {
	payload := c.payload
	if payload == "" {
		images := c.images
		if images == "" {
			images = imagesAB
		}
		payload = `{"procName":"T","threads":[{"id":3,"name":"n","queue":"q","triggered":true,"frames":[` + c.frames + `]}],"usedImages":[` + images + `]}`
	}
	return []byte(ipsHeader + payload)
}

type ipsFastCase struct {
	name     string
	frames   string // the frames array's elements
	images   string // the usedImages array's elements; imagesAB when empty
	payload  string // the whole payload instead, when set
	wantFast bool
}

// TestIPSFastMatchesStream checks that ParseIPS gives what the token
// stream alone gives, and that readFast reads what it should.
func TestIPSFastMatchesStream(t *testing.T) {
	for _, c := range ipsFastCases {
		t.Run(c.name, func(t *testing.T) {
			data := c.report()
			checkFastMatchesStream(t, data)
			if got := readsFast(data); got != c.wantFast {
				t.Errorf("readFast read it: %v, want %v", got, c.wantFast)
			}
		})
	}
	for _, name := range []string{"arm64.ips"} {
		t.Run(name, func(t *testing.T) {
			data := readTestdata(t, name)
			checkFastMatchesStream(t, data)
			if !readsFast(data) {
				t.Error("readFast did not read it")
			}
		})
	}
	t.Run("aggregation benchmark's shape", func(t *testing.T) {
		data := benchIPS(5, 30, 20)
		checkFastMatchesStream(t, data)
		if !readsFast(data) {
			t.Error("readFast did not read it")
		}
	})
}

func TestIPSFastMatchesStreamCorpus(t *testing.T) {
	// The corpus's only JSON .ips (its _symbolicated.ips is a text report).
	for _, file := range []string{macsymCrashes + "single-target-crash.ips"} {
		t.Run(file, func(t *testing.T) {
			data := readCorpus(t, file)
			checkFastMatchesStream(t, data)
			if !readsFast(data) {
				t.Error("readFast did not read it")
			}
		})
	}
}

// readsFast reports whether readFast reads the payload of the .ips
// report data.
func readsFast(data []byte) bool {
	_, body, _ := bytes.Cut(data, []byte("\n"))
	var b ipsBody
	return b.readFast(bytes.TrimLeft(body, " \t\r\n"))
}

// checkFastMatchesStream fails t when ParseIPS and the token stream alone
// read data differently, in the report or the error.
func checkFastMatchesStream(t *testing.T, data []byte) {
	t.Helper()
	fast, fastErr := parseIPS(data, true)
	slow, slowErr := parseIPS(data, false)
	if fmt.Sprint(fastErr) != fmt.Sprint(slowErr) {
		t.Fatalf("error: ParseIPS gives %v, the stream %v", fastErr, slowErr)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("report (-stream +ParseIPS):\n%s", cmp.Diff(slow, fast,
			cmp.Comparer(func(a, b *archregs.Arch) bool { return a == b }),
			cmp.AllowUnexported(archregs.Registers{})))
	}
}

func FuzzIPSFastMatchesStream(f *testing.F) {
	for _, c := range ipsFastCases {
		f.Add(c.report())
	}
	f.Add(readTestdata(f, "arm64.ips"))
	f.Add(benchIPS(2, 3, 2))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 || !strings.Contains(string(data), "\n") {
			return // the payload starts after the metadata line
		}
		checkFastMatchesStream(t, data)
	})
}
