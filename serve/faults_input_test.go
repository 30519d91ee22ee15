//go:build faults

package serve

// Hostile dumps and zips made by the test (issue items 6, 7 and 8).

import (
	"archive/zip"
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/minidump"
	"github.com/stackimage/stackimage/uuid"
)

// smallMinidump writes an arm64 minidump of one thread with a stack of
// 4 KiB and one module, the no-frame-pointer fixture.
func smallMinidump(t *testing.T) []byte {
	t.Helper()
	regs := archregs.NewRegisters(archregs.ARM64)
	const stack = 0x16f000000
	for name, v := range map[string]uint64{"pc": 0x100003f10, "sp": stack + 0x100, "fp": stack + 0x200, "lr": 0x100003f40} {
		if err := regs.Set(name, v); err != nil {
			t.Fatal(err)
		}
	}
	in := &minidump.WriterInput{Arch: archregs.ARM64, Platform: minidump.PlatformMacOS,
		Threads: []minidump.WriterThread{{ID: 1, Registers: regs, StackAddr: stack, Stack: make([]byte, 4096)}},
		Modules: []minidump.WriterModule{{Base: 0x100000000, Size: 0x10000, Path: "/usr/local/bin/chain-nofp-arm64-O1", UUID: nofpUUID(t)}}}
	var b bytes.Buffer
	if err := minidump.Write(&b, in); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// repeatThreads rewrites a minidump's thread list as n copies of its
// first entry, appended at the end of the file (MINIDUMP_THREAD: 48
// bytes; the directory's entries: type, size, RVA).
func repeatThreads(t *testing.T, dmp []byte, n int) []byte {
	t.Helper()
	const threadList, threadSize = 3, 48
	le := binary.LittleEndian
	streams, dirRVA := le.Uint32(dmp[8:]), le.Uint32(dmp[12:])
	for i := range streams {
		e := dmp[dirRVA+12*i:]
		if le.Uint32(e) != threadList {
			continue
		}
		rva := le.Uint32(e[8:])
		entry := dmp[rva+4 : rva+4+threadSize]
		out := bytes.NewBuffer(append([]byte(nil), dmp...))
		for out.Len()%8 != 0 {
			out.WriteByte(0)
		}
		at := out.Len()
		binary.Write(out, le, uint32(n))
		for range n {
			out.Write(entry)
		}
		b := out.Bytes()
		le.PutUint32(b[dirRVA+12*i+4:], uint32(4+n*threadSize))
		le.PutUint32(b[dirRVA+12*i+8:], uint32(at))
		return b
	}
	t.Fatal("no thread list")
	return nil
}

// TestFaultsBadInput (item 8): the first 64 bytes of a minidump are the
// client's fault: 4xx naming what is wrong from every endpoint, or 200
// with X-Stackimage-Incomplete where part could be read; never 500.
func TestFaultsBadInput(t *testing.T) {
	_, ts := newTestServer(t, DefaultConfig("../fixtures/bin"))
	dmp := smallMinidump(t)
	for _, cut := range []int{64, 200, len(dmp) / 2} {
		t.Run(fmt.Sprintf("v1 first %d bytes", cut), func(t *testing.T) {
			resp, data := do(t, "POST", ts.URL+"/v1/symbolicate", bytes.NewReader(dmp[:cut]), nil)
			checkClientFault(t, resp, data)
		})
		t.Run(fmt.Sprintf("minidump first %d bytes", cut), func(t *testing.T) {
			body, ct := multipartBody(t, "upload_file_minidump", "cut.dmp", dmp[:cut], "")
			resp, data := do(t, "POST", ts.URL+"/minidump", body, map[string]string{"Content-Type": ct})
			checkClientFault(t, resp, data)
		})
	}
}

// checkClientFault fails unless the answer is a 4xx naming the minidump,
// or a 200 that says the input was incomplete.
func checkClientFault(t *testing.T, resp *http.Response, data []byte) {
	t.Helper()
	switch {
	case resp.StatusCode >= 400 && resp.StatusCode < 500:
		if !strings.Contains(strings.ToLower(string(data)), "minidump") {
			t.Errorf("%d %s: the message does not say what is wrong", resp.StatusCode, data)
		}
	case resp.StatusCode == http.StatusOK:
		if resp.Header.Get("X-Stackimage-Incomplete") == "" {
			t.Errorf("200 without X-Stackimage-Incomplete for a cut minidump: %.300s", data)
		}
	default:
		t.Errorf("status %d for a client's bad bytes: %.300s", resp.StatusCode, data)
	}
}

// heapPeak samples the Go heap in use until stop is closed.
func heapPeak(stop <-chan struct{}) *atomic.Uint64 {
	var peak atomic.Uint64
	go func() {
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return &peak
}

// TestFaultsThreadAmplification (item 7): a 48 MB minidump repeating one
// thread entry a million times is read up to minidump.MaxThreads threads,
// answered within limits.max_frames, says what was cut, and keeps the
// heap under 256 MiB, through both dump endpoints.
func TestFaultsThreadAmplification(t *testing.T) {
	cfg := DefaultConfig("../fixtures/bin")
	cfg.Limits.RequestTimeout = time.Minute
	_, ts := newTestServer(t, cfg)
	path := filepath.Join(t.TempDir(), "million.dmp")
	if err := os.WriteFile(path, repeatThreads(t, smallMinidump(t), 1_000_000), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, endpoint := range []string{"/v1/symbolicate", "/minidump"} {
		t.Run(endpoint, func(t *testing.T) {
			runtime.GC()
			stop := make(chan struct{})
			peak := heapPeak(stop)
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var body io.Reader = f
			header := map[string]string{}
			if endpoint == "/minidump" {
				// Streamed: the test holds none of it.
				pr, pw := io.Pipe()
				mw := multipart.NewWriter(pw)
				go func() {
					fw, _ := mw.CreateFormFile("upload_file_minidump", "million.dmp")
					io.Copy(fw, f)
					pw.CloseWithError(mw.Close())
				}()
				body, header["Content-Type"] = pr, mw.FormDataContentType()
			}
			start := time.Now()
			resp, data := do(t, "POST", ts.URL+endpoint, body, header)
			close(stop)
			t.Logf("%s: %d in %v, answer %d bytes, heap peak %d MiB", endpoint, resp.StatusCode, time.Since(start), len(data), peak.Load()>>20)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %.300s", resp.StatusCode, data)
			}
			if !bytes.Contains(data, []byte("MaxThreads")) && !strings.Contains(resp.Header.Get("X-Stackimage-Incomplete"), "MaxThreads") {
				t.Errorf("the answer does not say the threads were cut: %.300s", data)
			}
			if n := bytes.Count(data, []byte(`"thread_id"`)) + bytes.Count(data, []byte(`"crashed":`)); n > minidump.MaxThreads+1 {
				t.Errorf("%d threads in the answer, want at most %d", n, minidump.MaxThreads)
			}
			if p := peak.Load(); p > 256<<20 {
				t.Errorf("heap peak %d MiB, want under 256 MiB", p>>20)
			}
			if hwm, ok := peakRSS(); ok {
				// The process's peak resident size so far: this test's
				// and those before it (the small ones of this file).
				t.Logf("peak RSS of the test process: %d MiB", hwm>>20)
				if hwm > 256<<20 {
					t.Errorf("peak RSS %d MiB, want under 256 MiB", hwm>>20)
				}
			}
		})
	}
}

// chainMinidump writes an arm64 minidump of threads threads, each with
// its own stack holding a frame-pointer chain of depth records (return
// addresses drawn from rng), in a module of a fresh UUID no source has:
// the walker follows each chain to its end, depth+1 frames, none named.
func chainMinidump(t *testing.T, threads, depth int) []byte {
	t.Helper()
	const base = 0x100000000
	var id uuid.UUID
	rand.Read(id[:])
	in := &minidump.WriterInput{Arch: archregs.ARM64, Platform: minidump.PlatformMacOS,
		Modules: []minidump.WriterModule{{Base: base, Size: 0x100000, Path: "/usr/local/bin/deep", UUID: id}}}
	le := binary.LittleEndian
	var ret [8]byte
	for n := range threads {
		stack := uint64(0x16f000000 + n*0x10000)
		mem := make([]byte, 16*(depth+1))
		for i := range depth {
			at := 16 * (i + 1) // a record: the caller's fp, then the return address
			next := uint64(0)
			if i < depth-1 {
				next = stack + uint64(at) + 16
			}
			rand.Read(ret[:])
			le.PutUint64(mem[at:], next)
			le.PutUint64(mem[at+8:], base+0x1000+le.Uint64(ret[:])%0xf0000&^3)
		}
		regs := archregs.NewRegisters(archregs.ARM64)
		// LR far from PC: near it, in an image without symbols or code, the
		// walker sets it aside (it cannot be told from a stale one).
		for name, v := range map[string]uint64{"pc": base + 0x1000, "sp": stack, "fp": stack + 16, "lr": base + 0x80004} {
			if err := regs.Set(name, v); err != nil {
				t.Fatal(err)
			}
		}
		in.Threads = append(in.Threads, minidump.WriterThread{ID: uint32(n + 1), Registers: regs, StackAddr: stack, Stack: mem})
	}
	var b bytes.Buffer
	if err := minidump.Write(&b, in); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// readAnswer reads a dump's answer as a stream, a stack trace at a time,
// so that the test holds none of it whole: its size, its stack traces
// and frames, and its other fields (modules, warnings) decoded.
func readAnswer(t *testing.T, body io.Reader) (size int64, traces, frames int, rest map[string]json.RawMessage) {
	t.Helper()
	counted := &countingReader{r: body}
	dec := json.NewDecoder(counted)
	rest = map[string]json.RawMessage{}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("answer starts with %v (%v), want an object", tok, err)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		key, _ := tok.(string)
		if key != "stacktraces" {
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				t.Fatalf("%s: %v", key, err)
			}
			rest[key] = v
			continue
		}
		if _, err := dec.Token(); err != nil {
			t.Fatal(err)
		}
		for dec.More() {
			var st struct{ Frames []struct{ Status string } }
			if err := dec.Decode(&st); err != nil {
				t.Fatalf("stack trace %d: %v", traces, err)
			}
			traces++
			frames += len(st.Frames)
		}
		if _, err := dec.Token(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, counted)
	return counted.n, traces, frames, rest
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// TestFaultsLargeAnswer (item 7): a minidump of 4,096 threads whose
// stacks hold frame-pointer chains of 128 records (130 frames each with
// the registers' two, 532,480 in all: within minidump.MaxThreads and the
// walker's depth, max_frames raised to fit them) makes an answer of about
// 78 MiB from an 11 MiB dump; the service's heap grows by well under a
// third of the answer, answered at once or kept for GET /requests/{id}
// (spooled to a file past 1 MiB, removed once handed out). What it does
// grow by is the dump's threads and the walks symbolize remembers (at
// most 65,536 frames), not the answer: built whole, it grew by twice the
// answer.
func TestFaultsLargeAnswer(t *testing.T) {
	const threads, depth = 4096, 128
	cfg := DefaultConfig("../fixtures/bin")
	cfg.Limits.RequestTimeout = 2 * time.Minute
	cfg.Limits.MaxFrames = threads * (depth + 2)
	s, ts := newTestServer(t, cfg)
	// The heap measured is what is live, near enough: garbage is
	// collected at a tenth over it rather than the double.
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	path := filepath.Join(t.TempDir(), "deep.dmp")
	dmp := chainMinidump(t, threads, depth)
	dumpSize := len(dmp)
	if err := os.WriteFile(path, dmp, 0o644); err != nil {
		t.Fatal(err)
	}
	dmp = nil
	for _, query := range []string{"", "?timeout=0.01"} {
		t.Run("/minidump"+query, func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			body, ct := multipartBody(t, "upload_file_minidump", "deep.dmp", data, "")
			data = nil
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			baseline := ms.HeapInuse
			stop := make(chan struct{})
			peak := heapPeak(stop)
			start := time.Now()
			req, _ := http.NewRequest("POST", ts.URL+"/minidump"+query, body)
			req.Header.Set("Content-Type", ct)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			size, traces, frames, rest := readAnswer(t, resp.Body)
			resp.Body.Close()
			for rest["status"] != nil && string(rest["status"]) == `"pending"` {
				var id string
				json.Unmarshal(rest["request_id"], &id)
				resp, err = http.Get(ts.URL + "/requests/" + id + "?timeout=30")
				if err != nil {
					t.Fatal(err)
				}
				size, traces, frames, rest = readAnswer(t, resp.Body)
				resp.Body.Close()
			}
			close(stop)
			growth := int64(peak.Load()) - int64(baseline)
			t.Logf("%d in %v: dump %d MB, answer %d MB, %d stack traces, %d frames; heap peak %d MiB over %d MiB before it",
				resp.StatusCode, time.Since(start), dumpSize>>20, size>>20, traces, frames, growth>>20, baseline>>20)
			if resp.StatusCode != http.StatusOK || string(rest["status"]) != `"completed"` {
				t.Fatalf("status %d, %s", resp.StatusCode, rest["status"])
			}
			if traces != threads || frames != threads*(depth+2) {
				t.Errorf("%d stack traces of %d frames, want %d of %d", traces, frames, threads, threads*(depth+2))
			}
			if rest["modules"] == nil {
				t.Error("no modules in the answer")
			}
			if growth > size/3 {
				t.Errorf("the heap grew by %d MiB for an answer of %d MiB: want well under a third of it", growth>>20, size>>20)
			}
			// A kept answer's file goes once the handler has written it,
			// just after the client has read it.
			var left []string
			for range 100 {
				if left, _ = filepath.Glob(filepath.Join(s.tmpDir, "answer-*")); len(left) == 0 {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			if len(left) > 0 {
				t.Errorf("kept answers left behind: %v", left)
			}
		})
	}
}

// bombZip is a zip whose central directory names one member of 1 MiB of
// zeros n times.
func bombZip(t *testing.T, n int) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, err := zw.Create("zeros")
	if err != nil {
		t.Fatal(err)
	}
	w.Write(make([]byte, 1<<20))
	zw.Close()
	data := b.Bytes()
	le := binary.LittleEndian
	eocd := bytes.LastIndex(data, []byte("PK\x05\x06"))
	cdOff, cdSize := le.Uint32(data[eocd+16:]), le.Uint32(data[eocd+12:])
	entry := data[cdOff : cdOff+cdSize]
	out := append([]byte(nil), data[:cdOff]...)
	for range n {
		out = append(out, entry...)
	}
	tail := append([]byte(nil), data[eocd:eocd+22]...)
	le.PutUint16(tail[8:], uint16(n))
	le.PutUint16(tail[10:], uint16(n))
	le.PutUint32(tail[12:], uint32(n*len(entry)))
	le.PutUint32(tail[16:], cdOff)
	return append(out, tail...)
}

// TestFaultsZipBomb (item 6): a zip of 20,000 central-directory entries
// naming one 1 MiB member stops at the upload's bound on inflated bytes
// (its size times limits.max_upload_inflate_ratio) with 413, well within
// the request's deadline.
func TestFaultsZipBomb(t *testing.T) {
	cfg := DefaultConfig("")
	cfg.Sources = []SourceConfig{{Name: "store", Type: "filesystem", Path: t.TempDir()}}
	cfg.Store = "store"
	cfg.Auth.UploadToken = "up"
	cfg.Limits.RequestTimeout = 8 * time.Second
	_, ts := newTestServer(t, cfg)
	bomb := bombZip(t, 20000)
	start := time.Now()
	resp, data := do(t, "PUT", ts.URL+"/v1/symbols", bytes.NewReader(bomb), map[string]string{"Authorization": "Bearer up"})
	took := time.Since(start)
	t.Logf("%d bytes of zip: %d in %v: %s", len(bomb), resp.StatusCode, took, data)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(data), "inflates") {
		t.Errorf("status %d %s, want 413 saying the archive inflates past its bound", resp.StatusCode, data)
	}
	if took > cfg.Limits.RequestTimeout {
		t.Errorf("answered after %v, past the deadline of %v", took, cfg.Limits.RequestTimeout)
	}
}

// peakRSS is the process's peak resident set size (VmHWM), on Linux.
func peakRSS() (uint64, bool) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb uint64
			if _, err := fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(v), " kB"), &kb); err == nil {
				return kb << 10, true
			}
		}
	}
	return 0, false
}
