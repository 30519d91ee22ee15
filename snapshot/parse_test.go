package snapshot

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/uuid"
)

const (
	appUUID = "AC58D77F-5F09-35EF-AF14-A1F163D38F99"
	libUUID = "05fe065e0633362ea0d5607511e5f35d" // lower case, no dashes
)

// arm64State returns ARM_THREAD_STATE64 bytes with every register set to a
// distinct value and pc, sp, fp, lr as given.
func arm64State(t testing.TB, pc, sp, fp, lr uint64) []byte {
	t.Helper()
	r := archregs.NewRegisters(archregs.ARM64)
	for i, n := range archregs.ARM64.RegNames {
		mustSet(t, r, n, uint64(i))
	}
	mustSet(t, r, "pc", pc)
	mustSet(t, r, "sp", sp)
	mustSet(t, r, "fp", fp)
	mustSet(t, r, "lr", lr)
	data, err := r.Encode(archregs.FlavorARMThreadState64)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func mustSet(t testing.TB, r *archregs.Registers, name string, v uint64) {
	t.Helper()
	if err := r.Set(name, v); err != nil {
		t.Fatal(err)
	}
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// stackBytes returns n bytes of recognisable content.
func stackBytes(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i)
	}
	return b
}

// validDoc returns a valid arm64 snapshot as generic JSON values, for tests
// to break one field at a time: a thread given by thread_state, one by
// registers, two images and two adjacent memory regions given out of order.
func validDoc(t testing.TB) map[string]any {
	return map[string]any{
		"format": "stackimage.snapshot/v1",
		"arch":   "arm64",
		"images": []any{
			map[string]any{"name": "/private/var/App.app/App", "uuid": appUUID,
				"load_address": "0x104cc8000", "size": "0x8000"},
			map[string]any{"name": "/usr/lib/libSystem.B.dylib", "uuid": libUUID,
				"load_address": "0x1A0000000"},
		},
		"threads": []any{
			map[string]any{"id": 259, "name": "main", "crashed": false,
				"thread_state": map[string]any{"flavor": 6,
					"data": b64(arm64State(t, 0x104ccc074, 0x16fdfe100, 0x16fdfe120, 0x104ccc010))},
				"stack": map[string]any{"low": "0x16fd00000", "high": "0x16fe00000"}},
			map[string]any{"id": 771, "crashed": true,
				"registers": map[string]any{"pc": "0x104ccc100", "SP": "0x16fdff000", "x29": "0x16fdff010", "lr": "0x0"}},
		},
		"memory": []any{
			map[string]any{"address": "0x16fdff000", "data": b64(stackBytes(4096, 7))},
			map[string]any{"address": "0x16fdfe000", "data": b64(stackBytes(4096, 1))},
		},
	}
}

func encodeDoc(t testing.TB, doc map[string]any) []byte {
	t.Helper()
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// Helpers to reach into a generic document.
func elem(doc map[string]any, array string, i int) map[string]any {
	return doc[array].([]any)[i].(map[string]any)
}

func child(m map[string]any, key string) map[string]any { return m[key].(map[string]any) }

// threadView and snapshotView are comparable renderings of a Snapshot
// (Registers has unexported fields).
type threadView struct {
	ID                  uint64
	Name                string
	Crashed             bool
	Registers           map[string]uint64
	StackLow, StackHigh uint64
}

type snapshotView struct {
	Arch    string
	Images  []Image
	Threads []threadView
	Memory  []Region
}

func view(s *Snapshot) snapshotView {
	v := snapshotView{Arch: s.Arch.Name, Images: s.Images, Memory: s.Memory.All()}
	for _, th := range s.Threads {
		v.Threads = append(v.Threads, threadView{th.ID, th.Name, th.Crashed, th.Registers.Values(), th.StackLow, th.StackHigh})
	}
	return v
}

func mustUUID(t testing.TB, s string) uuid.UUID {
	t.Helper()
	u, err := uuid.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestParseValid(t *testing.T) {
	s, err := Parse(encodeDoc(t, validDoc(t)))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	main := make(map[string]uint64)
	for i, n := range archregs.ARM64.RegNames {
		main[n] = uint64(i)
	}
	main["pc"], main["sp"], main["fp"], main["lr"] = 0x104ccc074, 0x16fdfe100, 0x16fdfe120, 0x104ccc010
	want := snapshotView{
		Arch: "arm64",
		Images: []Image{
			{Name: "/private/var/App.app/App", UUID: mustUUID(t, appUUID), LoadAddress: 0x104cc8000, Size: 0x8000},
			{Name: "/usr/lib/libSystem.B.dylib", UUID: mustUUID(t, libUUID), LoadAddress: 0x1a0000000},
		},
		Threads: []threadView{
			{ID: 259, Name: "main", Registers: main, StackLow: 0x16fd00000, StackHigh: 0x16fe00000},
			{ID: 771, Crashed: true, Registers: map[string]uint64{"pc": 0x104ccc100, "sp": 0x16fdff000, "fp": 0x16fdff010, "lr": 0}},
		},
		Memory: []Region{
			{Address: 0x16fdfe000, Data: stackBytes(4096, 1)},
			{Address: 0x16fdff000, Data: stackBytes(4096, 7)},
		},
	}
	if diff := cmp.Diff(want, view(s)); diff != "" {
		t.Errorf("Parse() mismatch (-want +got):\n%s", diff)
	}
	if s.Arch != archregs.ARM64 {
		t.Errorf("Parse().Arch = %p, want archregs.ARM64", s.Arch)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name   string
		edit   func(d map[string]any)
		errHas string
	}{
		{"unknown top-level field", func(d map[string]any) { d["extra"] = 1 }, `snapshot: unknown field "extra"`},
		{"unknown thread field", func(d map[string]any) { elem(d, "threads", 0)["colour"] = "red" },
			`threads[0]: unknown field "colour"`},
		{"unknown thread_state field", func(d map[string]any) { child(elem(d, "threads", 0), "thread_state")["count"] = 68 },
			`threads[0]: unknown field "count"`},
		{"unknown image field", func(d map[string]any) { elem(d, "images", 1)["path"] = "/x" },
			`images[1]: unknown field "path"`},
		{"unknown memory field", func(d map[string]any) { elem(d, "memory", 1)["size"] = "0x10" },
			`memory[1]: unknown field "size"`},
		{"format missing", func(d map[string]any) { delete(d, "format") }, `format: missing`},
		{"format newer", func(d map[string]any) { d["format"] = "stackimage.snapshot/v2" },
			`format: unsupported version "stackimage.snapshot/v2"`},
		{"format foreign", func(d map[string]any) { d["format"] = "minidump" }, `format: "minidump" is not a stackimage snapshot`},
		{"format not a string", func(d map[string]any) { d["format"] = 1 }, `format: got JSON number, want a string`},
		{"arch missing", func(d map[string]any) { delete(d, "arch") }, `arch: missing`},
		{"arch unknown", func(d map[string]any) { d["arch"] = "ppc" },
			`arch: unknown architecture "ppc" (want one of arm64, arm64e, armv7, x86_64, i386)`},
		{"images not an array", func(d map[string]any) { d["images"] = "none" }, `images: got JSON string, want an array`},
		{"image name missing", func(d map[string]any) { delete(elem(d, "images", 0), "name") }, `images[0].name: missing`},
		{"image uuid missing", func(d map[string]any) { delete(elem(d, "images", 1), "uuid") }, `images[1].uuid: missing`},
		{"image uuid bad", func(d map[string]any) { elem(d, "images", 1)["uuid"] = "05FE065E-0633-362E-A0D5" }, `images[1].uuid: `},
		{"image uuid not hex", func(d map[string]any) { elem(d, "images", 0)["uuid"] = "ZC58D77F-5F09-35EF-AF14-A1F163D38F99" },
			`images[0].uuid: `},
		{"load_address missing", func(d map[string]any) { delete(elem(d, "images", 0), "load_address") },
			`images[0].load_address: missing`},
		{"load_address without 0x", func(d map[string]any) { elem(d, "images", 0)["load_address"] = "104cc8000" },
			`images[0].load_address: bad hex value "104cc8000": want 0x and 1 to 16 hex digits`},
		{"load_address bad digit", func(d map[string]any) { elem(d, "images", 0)["load_address"] = "0x104cg8000" },
			`images[0].load_address: bad hex value "0x104cg8000"`},
		{"load_address too long", func(d map[string]any) { elem(d, "images", 0)["load_address"] = "0x10000000000000000" },
			`images[0].load_address: bad hex value "0x10000000000000000"`},
		{"load_address a number", func(d map[string]any) { elem(d, "images", 0)["load_address"] = 4375478272 },
			`images[0].load_address: got JSON number, want a string`},
		{"image size zero", func(d map[string]any) { elem(d, "images", 0)["size"] = "0x0" }, `images[0].size: zero`},
		{"image size past the end", func(d map[string]any) { elem(d, "images", 0)["size"] = "0xffffffffffffffff" },
			`images[0].size: 0xffffffffffffffff bytes at 0x104cc8000 run past the end of the 64-bit address space`},
		{"threads missing", func(d map[string]any) { delete(d, "threads") }, `threads: missing or empty`},
		{"threads empty", func(d map[string]any) { d["threads"] = []any{} }, `threads: missing or empty`},
		{"thread id missing", func(d map[string]any) { delete(elem(d, "threads", 0), "id") }, `threads[0].id: missing`},
		{"thread id negative", func(d map[string]any) { elem(d, "threads", 1)["id"] = -1 },
			`threads[1].id: got JSON number -1, want a non-negative integer`},
		{"thread id fraction", func(d map[string]any) { elem(d, "threads", 1)["id"] = 1.5 },
			`threads[1].id: got JSON number 1.5, want a non-negative integer`},
		{"thread id duplicate", func(d map[string]any) { elem(d, "threads", 1)["id"] = 259 },
			`threads[1].id: 259 is also the id of threads[0]`},
		{"crashed not bool", func(d map[string]any) { elem(d, "threads", 0)["crashed"] = "yes" },
			`threads[0].crashed: got JSON string, want true or false`},
		{"both states", func(d map[string]any) {
			elem(d, "threads", 1)["thread_state"] = child(elem(d, "threads", 0), "thread_state")
		}, `threads[1]: has both thread_state and registers; give one`},
		{"neither state", func(d map[string]any) { delete(elem(d, "threads", 0), "thread_state") },
			`threads[0]: has neither thread_state nor registers`},
		{"flavor missing", func(d map[string]any) { delete(child(elem(d, "threads", 0), "thread_state"), "flavor") },
			`threads[0].thread_state.flavor: missing`},
		{"flavor of another arch", func(d map[string]any) { child(elem(d, "threads", 0), "thread_state")["flavor"] = 4 },
			`threads[0].thread_state: archregs: arm64 has no thread state flavor 4`},
		{"flavor negative", func(d map[string]any) { child(elem(d, "threads", 0), "thread_state")["flavor"] = -6 },
			`threads[0].thread_state.flavor: got JSON number -6, want a non-negative integer`},
		{"state data missing", func(d map[string]any) { delete(child(elem(d, "threads", 0), "thread_state"), "data") },
			`threads[0].thread_state.data: missing`},
		{"state data short", func(d map[string]any) {
			child(elem(d, "threads", 0), "thread_state")["data"] = b64(make([]byte, 268))
		}, `threads[0].thread_state: archregs: arm64 ARM_THREAD_STATE64 (flavor 6): 268 bytes of data, want 272 (count 68)`},
		{"state data bad base64", func(d map[string]any) { child(elem(d, "threads", 0), "thread_state")["data"] = "AAA*" },
			`threads[0].thread_state.data: bad base64: illegal base64 data at input byte 3`},
		{"state data huge", func(d map[string]any) {
			child(elem(d, "threads", 0), "thread_state")["data"] = b64(make([]byte, 1<<20))
		}, `threads[0].thread_state.data: 1398104 characters, more than any thread state`},
		{"register unknown", func(d map[string]any) { child(elem(d, "threads", 1), "registers")["x31"] = "0x1" },
			`threads[1].registers.x31: arm64 has no register "x31"`},
		{"register of another arch", func(d map[string]any) { child(elem(d, "threads", 1), "registers")["rip"] = "0x1" },
			`threads[1].registers.rip: arm64 has no register "rip"`},
		{"register given twice", func(d map[string]any) { child(elem(d, "threads", 1), "registers")["fp"] = "0x1" },
			`threads[1].registers.x29: register fp is also given as "fp"`},
		{"register bad hex", func(d map[string]any) { child(elem(d, "threads", 1), "registers")["pc"] = "0x" },
			`threads[1].registers.pc: bad hex value "0x"`},
		{"register a number", func(d map[string]any) { child(elem(d, "threads", 1), "registers")["pc"] = 4096 },
			`threads[1].registers.pc: got JSON number, want a string`},
		{"registers without pc", func(d map[string]any) { delete(child(elem(d, "threads", 1), "registers"), "pc") },
			`threads[1].registers: no pc (the program counter is required)`},
		{"registers empty", func(d map[string]any) { elem(d, "threads", 1)["registers"] = map[string]any{} },
			`threads[1].registers: empty`},
		{"stack high missing", func(d map[string]any) { delete(child(elem(d, "threads", 0), "stack"), "high") },
			`threads[0].stack.high: missing`},
		{"stack low bad", func(d map[string]any) { child(elem(d, "threads", 0), "stack")["low"] = "-0x1" },
			`threads[0].stack.low: bad hex value "-0x1"`},
		{"stack inverted", func(d map[string]any) { child(elem(d, "threads", 0), "stack")["low"] = "0x16fe00000" },
			`threads[0].stack: low 0x16fe00000 is not below high 0x16fe00000`},
		{"memory address missing", func(d map[string]any) { delete(elem(d, "memory", 0), "address") },
			`memory[0].address: missing`},
		{"memory data missing", func(d map[string]any) { delete(elem(d, "memory", 1), "data") },
			`memory[1].data: missing or empty`},
		{"memory data only newlines", func(d map[string]any) { elem(d, "memory", 1)["data"] = "\n\n" },
			`memory[1].data: no bytes`},
		{"memory bad base64", func(d map[string]any) { elem(d, "memory", 0)["data"] = "AAAA=AAA" },
			`memory[0].data: bad base64`},
		{"memory overlap", func(d map[string]any) { elem(d, "memory", 1)["address"] = "0x16fdfe001" },
			`memory[0]: [0x16fdff000, 0x16fe00000) overlaps memory[1] [0x16fdfe001, 0x16fdff001)`},
		{"memory past the end", func(d map[string]any) { elem(d, "memory", 1)["address"] = "0xfffffffffffff800" },
			`memory[1].data: 4096 bytes at 0xfffffffffffff800 run past the end of the 64-bit address space`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := validDoc(t)
			tt.edit(d)
			s, err := Parse(encodeDoc(t, d))
			if err == nil || !strings.Contains(err.Error(), tt.errHas) {
				t.Fatalf("Parse() = %v, %v; want error containing %q", s, err, tt.errHas)
			}
		})
	}
}

// Documents broken below the level of single fields.
func TestParseMalformed(t *testing.T) {
	valid := encodeDoc(t, validDoc(t))
	tests := []struct {
		name   string
		data   []byte
		errHas string
	}{
		{"empty", nil, `snapshot: document: empty document`},
		{"array", []byte(`[]`), `snapshot: document: got JSON array, want an object`},
		{"truncated", valid[:len(valid)/2], `snapshot: document: invalid JSON`},
		{"trailing value", append(append([]byte{}, valid...), []byte(` {}`)...), `snapshot: unexpected data after the JSON value`},
		{"trailing garbage", append(append([]byte{}, valid...), 'x'), `snapshot: unexpected data after the JSON value`},
		{"null", []byte(`null`), `snapshot: format: missing`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse(tt.data)
			if err == nil || !strings.Contains(err.Error(), tt.errHas) {
				t.Fatalf("Parse() = %v, %v; want error containing %q", s, err, tt.errHas)
			}
		})
	}
}

func TestParse32BitAddresses(t *testing.T) {
	doc := func(addr string, pc string) []byte {
		return []byte(`{"format": "stackimage.snapshot/v1", "arch": "armv7",
			"threads": [{"id": 1, "registers": {"pc": "` + pc + `", "r7": "0x2000"}}],
			"memory": [{"address": "` + addr + `", "data": "AAAAAA=="}]}`)
	}
	tests := []struct {
		name, addr, pc string
		errHas         string
	}{
		{"fits", "0xfffffffc", "0x1000", ""},
		{"address too wide", "0x100000000", "0x1000", `memory[0].address: 0x100000000 does not fit a 32-bit armv7 address`},
		{"region past 4 GiB", "0xfffffffd", "0x1000", `memory[0].data: 4 bytes at 0xfffffffd run past the end of the 32-bit address space`},
		{"register too wide", "0x1000", "0x100000000", `threads[0].registers: archregs: armv7 ARM_THREAD_STATE: register pc = 0x100000000 does not fit in 32 bits`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse(doc(tt.addr, tt.pc))
			if tt.errHas == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if got, ok := s.Threads[0].Registers.FP(); !ok || got != 0x2000 {
					t.Errorf("FP() = %#x, %v; want 0x2000, true", got, ok)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.errHas) {
				t.Fatalf("Parse() = %v, %v; want error containing %q", s, err, tt.errHas)
			}
		})
	}
}

func TestParseLimits(t *testing.T) {
	data := encodeDoc(t, validDoc(t))
	tests := []struct {
		name   string
		lim    limits
		errHas string
	}{
		{"input at the limit", limits{input: len(data), memory: 8192}, ""},
		{"input over the limit", limits{input: len(data) - 1, memory: 8192},
			`snapshot: document is larger than ` + itoa(len(data)-1) + ` bytes`},
		// The second region in document order is the one that overflows.
		{"memory over the limit", limits{input: len(data), memory: 8191},
			`snapshot: memory[1].data: captured memory would exceed 8191 bytes (MaxMemorySize)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, via := range []string{"parse", "read"} {
				var err error
				if via == "parse" {
					_, err = parseLimited(data, tt.lim)
				} else {
					_, err = read(bytes.NewReader(data), tt.lim)
				}
				if tt.errHas == "" {
					if err != nil {
						t.Errorf("%s: %v", via, err)
					}
					continue
				}
				if err == nil || !strings.Contains(err.Error(), tt.errHas) {
					t.Errorf("%s() error = %v, want one containing %q", via, err, tt.errHas)
				}
			}
		})
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestRead(t *testing.T) {
	s, err := Read(bytes.NewReader(encodeDoc(t, validDoc(t))))
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if len(s.Threads) != 2 {
		t.Errorf("Read() has %d threads, want 2", len(s.Threads))
	}
}
