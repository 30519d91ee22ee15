// Command serveload measures `stackimage serve` (make loadtest): the
// throughput of one instance and its latency curve on stacks of 30 frames
// over 5 images, with vegeta as the load generator; 100k addresses of the
// darwin cmd/go build with DWARF as 1,000 requests of 100 frames, against
// llvm-symbolizer as a long-running process on a pipe, after checking
// that every one of those answers, inlined frames included, is
// llvm-symbolizer's (the same functions, files and lines at the address
// the service looks up); and the first
// answer for a cold UUID whose index (or only whose binary) is in an S3
// bucket (versitygw), against `stackimage index` on the same file.
// docs/serve.md gives the figures and how they were taken.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/uuid"
	"github.com/stackimage/stackimage/walker"
)

var (
	binFlag      = flag.String("stackimage", "bin/stackimage", "the stackimage binary")
	fixturesFlag = flag.String("fixtures", "fixtures/bin", "the fixture binaries and dSYMs")
	goBinFlag    = flag.String("gobin", filepath.Join(os.Getenv("HOME"), ".cache", "stackimage-bench", "go-darwin-arm64-dwarf"), "the darwin cmd/go build with DWARF")
	llvmFlag     = flag.String("llvm", "llvm-symbolizer", "the llvm-symbolizer to compare with")
	gwFlag       = flag.String("versitygw", filepath.Join(os.Getenv("HOME"), "go", "bin", "versitygw"), "the versitygw binary")
	rateFlag     = flag.String("rates", "500,1000,1500,2000,3000,4000", "request rates (stacks/s) of the latency curve")
	durFlag      = flag.Duration("duration", 5*time.Second, "how long each rate runs")
	runsFlag     = flag.Int("runs", 3, "runs of each timed comparison (medians are reported)")
	onlyFlag     = flag.String("only", "curve,llvm,cold", "which measurements to run")
	connsFlag    = flag.Int("conns", 4, "connections (and llvm-symbolizer processes) of the comparison's concurrent way")
	vsFlag       = flag.String("vs", "", "another stackimage build (an older one, say) whose instance takes turns with the first in the comparison with llvm-symbolizer, once both are checked to answer alike")
	startsFlag   = flag.Int("starts", 1, "with -vs: how many times both builds' instances are started (the later starts on the index the first built), each start's ratio and their median reported: where a process's memory lands moves its times by up to a tenth")
)

// images are the fixtures a stack's 30 frames are spread over.
var images = []string{"chain-arm64-O1", "chain-x86_64-O1", "dwarf-arm64-O2", "chain-nofp-arm64-O1", "async-x86_64-O1"}

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "serveload:", err)
		os.Exit(1)
	}
}

func run() error {
	tmp, err := os.MkdirTemp("", "serveload-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	only := *onlyFlag
	if strings.Contains(only, "curve") {
		if err := curve(tmp); err != nil {
			return fmt.Errorf("curve: %w", err)
		}
	}
	if strings.Contains(only, "llvm") {
		if err := versusLLVM(tmp); err != nil {
			return fmt.Errorf("llvm-symbolizer: %w", err)
		}
	}
	if strings.Contains(only, "cold") {
		if err := cold(tmp); err != nil {
			return fmt.Errorf("cold: %w", err)
		}
	}
	return nil
}

// server is one `stackimage serve` process.
type server struct {
	cmd  *exec.Cmd
	addr string
}

func freeAddr() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func startServer(env []string, args ...string) (*server, error) {
	return startBuild(*binFlag, env, args...)
}

// startBuild is startServer with the stackimage binary to run.
func startBuild(bin string, env []string, args ...string) (*server, error) {
	s := &server{addr: freeAddr()}
	s.cmd = exec.Command(bin, append([]string{"serve", "--listen", s.addr}, args...)...)
	s.cmd.Env = append(os.Environ(), env...)
	s.cmd.Stderr = os.Stderr
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	for range 600 {
		if resp, err := http.Get("http://" + s.addr + "/healthcheck"); err == nil {
			resp.Body.Close()
			return s, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.stop()
	return nil, fmt.Errorf("serve on %s does not answer", s.addr)
}

func (s *server) stop() {
	s.cmd.Process.Signal(syscall.SIGTERM)
	s.cmd.Wait()
}

func (s *server) post(body []byte) ([]byte, error) {
	resp, err := http.Post("http://"+s.addr+"/symbolicate", "application/json", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("status %d: %.200s", resp.StatusCode, data)
	}
	return data, err
}

// module is an image a request names, with addresses to ask.
type module struct {
	id    uuid.UUID
	base  uint64 // where the request says it is loaded
	text  uint64 // its __TEXT vmaddr
	arch  *archregs.Arch
	addrs []uint64
}

// loadModule reads an image's UUID and n random addresses of its __text.
func loadModule(path string, base uint64, n int, rng *rand.Rand) (module, error) {
	f, err := image.Open(path)
	if err != nil {
		return module{}, err
	}
	defer f.Close()
	im := f.Images[0]
	m := module{id: im.UUID, base: base, arch: im.Arch}
	if t, ok := im.TextSegment(); ok {
		m.text = t.Addr
	}
	for _, s := range im.Sections {
		if s.Segment == "__TEXT" && s.Name == "__text" {
			for range n {
				m.addrs = append(m.addrs, s.Addr+rng.Uint64N(s.Size))
			}
			return m, nil
		}
	}
	return module{}, fmt.Errorf("%s: no __text", path)
}

// stackBody is a /symbolicate request of one stack: frames taken in turn
// from the modules' addresses, starting at k.
func stackBody(mods []module, frames, k int) []byte {
	type frame struct {
		Addr string `json:"instruction_addr"`
	}
	type mod struct {
		Type    string `json:"type"`
		DebugID string `json:"debug_id"`
		Addr    string `json:"image_addr"`
		Size    uint64 `json:"image_size"`
	}
	var fs []frame
	for i := range frames {
		m := mods[i%len(mods)]
		a := m.addrs[(k+i)%len(m.addrs)]
		fs = append(fs, frame{fmt.Sprintf("%#x", a-m.text+m.base)})
	}
	var ms []mod
	for _, m := range mods {
		ms = append(ms, mod{"macho", strings.ToLower(m.id.String()), fmt.Sprintf("%#x", m.base), 1 << 28})
	}
	b, _ := json.Marshal(map[string]any{"stacktraces": []any{map[string]any{"frames": fs}}, "modules": ms})
	return b
}

// curve measures one instance on stacks of 30 frames over 5 images, warm:
// the highest rate it sustains, and p50/p99 at each rate.
func curve(tmp string) error {
	rng := rand.New(rand.NewPCG(1, 2))
	var mods []module
	for i, name := range images {
		m, err := loadModule(filepath.Join(*fixturesFlag, name), uint64(0x200000000+i*0x10000000), 64, rng)
		if err != nil {
			return err
		}
		mods = append(mods, m)
	}
	srv, err := startServer(nil, "--symbols", *fixturesFlag, "--cache", filepath.Join(tmp, "curve-cache"))
	if err != nil {
		return err
	}
	defer srv.stop()
	var targets []vegeta.Target
	for k := range 256 {
		targets = append(targets, vegeta.Target{Method: "POST", URL: "http://" + srv.addr + "/symbolicate",
			Body: stackBody(mods, 30, k*7), Header: http.Header{"Content-Type": {"application/json"}}})
	}
	// Warm: every image's index built and loaded.
	if out, err := srv.post(targets[0].Body); err != nil {
		return err
	} else if n := bytes.Count(out, []byte(`"debug_status":"found"`)); n != len(images) {
		return fmt.Errorf("warm-up found %d of %d images: %.500s", n, len(images), out)
	}
	attack := func(rate vegeta.Rate, d time.Duration) vegeta.Metrics {
		// At most 64 requests in flight: the instance's default
		// limits.max_concurrent, beyond which it would answer 503 by design.
		atk := vegeta.NewAttacker(vegeta.KeepAlive(true), vegeta.Connections(64), vegeta.MaxConnections(64), vegeta.MaxWorkers(64))
		var m vegeta.Metrics
		for res := range atk.Attack(vegeta.NewStaticTargeter(targets...), rate, d, "serve") {
			m.Add(res)
		}
		m.Close()
		return m
	}
	fmt.Println("== one instance, stacks of 30 frames over 5 images, warm indexes, JSON in and out")
	fmt.Println("| offered stacks/s | answered stacks/s | p50 | p99 | errors |")
	fmt.Println("|---:|---:|---:|---:|---:|")
	for _, r := range strings.Split(*rateFlag, ",") {
		var freq int
		fmt.Sscan(r, &freq)
		m := attack(vegeta.Rate{Freq: freq, Per: time.Second}, *durFlag)
		fmt.Printf("| %d | %.0f | %s | %s | %s |\n", freq, m.Throughput, ms(m.Latencies.P50), ms(m.Latencies.P99), errorsOf(m))
	}
	// As fast as 32 workers go, each waiting for its answer.
	atk := vegeta.NewAttacker(vegeta.KeepAlive(true), vegeta.Connections(32), vegeta.Workers(32), vegeta.MaxWorkers(32))
	var m vegeta.Metrics
	for res := range atk.Attack(vegeta.NewStaticTargeter(targets...), vegeta.Rate{Freq: 0}, *durFlag, "max") {
		m.Add(res)
	}
	m.Close()
	fmt.Printf("| max (32 workers) | %.0f | %s | %s | %s |\n", m.Throughput, ms(m.Latencies.P50), ms(m.Latencies.P99), errorsOf(m))
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("(load average during the run: %s)\n", strings.TrimSpace(string(load)))
	return nil
}

// errorsOf counts the failed requests, with their status codes and the
// first error.
func errorsOf(m vegeta.Metrics) string {
	failed := m.Requests - uint64(m.Success*float64(m.Requests)+0.5)
	if failed == 0 {
		return "0"
	}
	codes := []string{}
	for code, n := range m.StatusCodes {
		if code != "200" {
			codes = append(codes, fmt.Sprintf("%d × %s", n, code))
		}
	}
	sort.Strings(codes)
	first := ""
	if len(m.Errors) > 0 {
		first = ": " + m.Errors[0]
	}
	return fmt.Sprintf("%d (%s%s)", failed, strings.Join(codes, ", "), first)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/1e6) }

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// versusLLVM sends 100k addresses of cmd/go as 1,000 requests of 100
// frames to a warm instance, and the same 1,000 batches to warm
// llvm-symbolizer processes reading requests on their stdin. Two ways:
// one after another on one connection (one llvm-symbolizer), and from
// -conns connections at once, as a pipeline with several workers sends
// them (against as many llvm-symbolizer processes, each on its pipe).
// Each way's runs alternate with llvm-symbolizer's, so that a change in
// the machine's load falls on both alike. Both sides are long-running:
// the instance and the llvm-symbolizer processes are started once,
// warmed by one request each, and kept for every run.
func versusLLVM(tmp string) error {
	rng := rand.New(rand.NewPCG(3, 4))
	const base = 0x300000000
	m, err := loadModule(*goBinFlag, base, 100_000, rng)
	if err != nil {
		return err
	}
	srv, err := startServer(nil, "--symbols", *goBinFlag, "--cache", filepath.Join(tmp, "llvm-cache"))
	if err != nil {
		return err
	}
	defer srv.stop()
	var vs *server // the other build, with -vs
	if *vsFlag != "" {
		if vs, err = startBuild(*vsFlag, nil, "--symbols", *goBinFlag, "--cache", filepath.Join(tmp, "llvm-cache-vs")); err != nil {
			return err
		}
		defer vs.stop()
	}
	batches := make([][]uint64, 1000)
	bodies := make([][]byte, len(batches))
	for i := range bodies {
		batches[i] = m.addrs[i*100 : (i+1)*100]
		mm := m
		mm.addrs = batches[i]
		bodies[i] = stackBody([]module{mm}, 100, 0)
	}
	// Warm: the index built and loaded; one answer checked.
	if out, err := srv.post(bodies[0]); err != nil {
		return err
	} else if n := bytes.Count(out, []byte(`"original_index":`)); n < 100 || !bytes.Contains(out, []byte(`"debug_status":"found"`)) {
		return fmt.Errorf("warm-up answered %d frames: %.500s", n, out)
	}
	if vs != nil {
		// Both builds warm, and their answers the same, byte for byte.
		for i, body := range bodies {
			a, err := srv.post(body)
			if err != nil {
				return err
			}
			b, err := vs.post(body)
			if err != nil {
				return fmt.Errorf("-vs build: %w", err)
			}
			if !bytes.Equal(a, b) {
				return fmt.Errorf("request %d: the two builds answer differently:\n%.300s\n%.300s", i, a, b)
			}
		}
		fmt.Printf("the two builds gave the same answers to the %d requests\n", len(bodies))
	}
	conns := max(*connsFlag, 1)
	// Every answer checked against llvm-symbolizer's before any is timed:
	// a fast wrong answer must not count.
	// llvm-symbolizer is asked, in the check and in the timed runs, the
	// addresses the service looks up: a caller frame's (every frame but
	// the first) return address minus one instruction, as symbolicator
	// does.
	lookups := make([][]uint64, len(batches))
	for i, b := range batches {
		lookups[i] = slices.Clone(b)
		for k := 1; k < len(b); k++ {
			lookups[i][k] = walker.CallerLookupAddress(m.arch, b[k])
		}
	}
	if err := checkAgainstLLVM(srv, bodies, batches, lookups); err != nil {
		return err
	}
	client := newLoadClient(srv.addr, conns)
	var vsClient *loadClient
	if vs != nil {
		vsClient = newLoadClient(vs.addr, conns)
	}
	llvms := make([]*llvmProcess, conns)
	for i := range llvms {
		if llvms[i], err = startLLVM(lookups[0]); err != nil {
			return err
		}
		defer llvms[i].stop()
	}
	type way struct {
		name           string
		conns          int
		ours, theirs   []time.Duration
		oursCPU, llCPU []time.Duration
		// The -vs build's runs, taken in turn with the first build's.
		vs, vsCPU []time.Duration
	}
	ways := []*way{{name: "one connection, one request after another; one llvm-symbolizer", conns: 1}}
	if conns > 1 {
		ways = append(ways, &way{name: fmt.Sprintf("%d connections at once; %d llvm-symbolizer processes", conns, conns), conns: conns})
	}
	// timeRun sends the requests to one instance: the wall time and the
	// instance's CPU time.
	timeRun := func(srv *server, c *loadClient, conns int) (wall, cpu time.Duration, err error) {
		cpu0 := processCPU(srv.cmd.Process.Pid)
		start := time.Now()
		err = c.send(bodies, conns)
		return time.Since(start), processCPU(srv.cmd.Process.Pid) - cpu0, err
	}
	for run := range *runsFlag {
		for _, w := range ways {
			// With -vs, the two builds take turns going first.
			for turn := range 2 {
				if turn == run%2 {
					d, c, err := timeRun(srv, client, w.conns)
					if err != nil {
						return err
					}
					w.ours, w.oursCPU = append(w.ours, d), append(w.oursCPU, c)
				} else if vs != nil {
					d, c, err := timeRun(vs, vsClient, w.conns)
					if err != nil {
						return fmt.Errorf("-vs build: %w", err)
					}
					w.vs, w.vsCPU = append(w.vs, d), append(w.vsCPU, c)
				}
			}
			d, c, err := llvmRun(llvms[:w.conns], lookups)
			if err != nil {
				return err
			}
			w.theirs, w.llCPU = append(w.theirs, d), append(w.llCPU, c)
		}
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Println("== 100k addresses of darwin cmd/go (DWARF) as 1,000 requests of 100, warm (target: ≤ 0.5× llvm-symbolizer)")
	for _, w := range ways {
		fmt.Printf("-- %s\n", w.name)
		fmt.Printf("ours (HTTP /symbolicate): median %v of %v; server CPU median %v\n",
			median(w.ours).Round(time.Millisecond), rounded(w.ours), median(w.oursCPU).Round(time.Millisecond))
		fmt.Printf("llvm-symbolizer (pipe):   median %v of %v; CPU median %v\n",
			median(w.theirs).Round(time.Millisecond), rounded(w.theirs), median(w.llCPU).Round(time.Millisecond))
		fmt.Printf("ratio %.2f× (wall), %.2f× (CPU, ours without the client's)\n",
			float64(median(w.ours))/float64(median(w.theirs)), float64(median(w.oursCPU))/float64(median(w.llCPU)))
		if vs != nil {
			fmt.Printf("-vs %s: median %v of %v; server CPU median %v\n", *vsFlag,
				median(w.vs).Round(time.Millisecond), rounded(w.vs), median(w.vsCPU).Round(time.Millisecond))
			fmt.Printf("first build against the -vs build: %.2f× (wall), %.2f× (server CPU); the -vs build against llvm-symbolizer %.2f× (wall)\n",
				float64(median(w.ours))/float64(median(w.vs)), float64(median(w.oursCPU))/float64(median(w.vsCPU)),
				float64(median(w.vs))/float64(median(w.theirs)))
		}
	}
	fmt.Printf("(load average after the runs: %s)\n", strings.TrimSpace(string(load)))
	if vs == nil || *startsFlag <= 1 {
		return nil
	}
	// More starts of both builds: the first start's ratio, then each
	// later one's, and their median.
	wall := make([][]float64, len(ways))
	cpu := make([][]float64, len(ways))
	for i, w := range ways {
		wall[i] = append(wall[i], float64(median(w.ours))/float64(median(w.vs)))
		cpu[i] = append(cpu[i], float64(median(w.oursCPU))/float64(median(w.vsCPU)))
	}
	for start := range *startsFlag - 1 {
		srv.stop()
		vs.stop()
		// The two take turns being started first: the same build against
		// itself came out 1.07x at one connection over 9 starts when the
		// first build was always started first.
		startOurs := func() (err error) {
			srv, err = startServer(nil, "--symbols", *goBinFlag, "--cache", filepath.Join(tmp, "llvm-cache"))
			return err
		}
		startVs := func() (err error) {
			vs, err = startBuild(*vsFlag, nil, "--symbols", *goBinFlag, "--cache", filepath.Join(tmp, "llvm-cache-vs"))
			return err
		}
		order := []func() error{startOurs, startVs}
		if start%2 == 0 {
			order[0], order[1] = startVs, startOurs
		}
		for _, f := range order {
			if err := f(); err != nil {
				return err
			}
		}
		client, vsClient = newLoadClient(srv.addr, conns), newLoadClient(vs.addr, conns)
		for _, b := range []*server{srv, vs} {
			if _, err := b.post(bodies[0]); err != nil {
				return err
			}
		}
		for i, w := range ways {
			var ours, oursCPU, theirs, theirsCPU []time.Duration
			for run := range *runsFlag {
				for turn := range 2 {
					if turn == run%2 {
						d, c, err := timeRun(srv, client, w.conns)
						if err != nil {
							return err
						}
						ours, oursCPU = append(ours, d), append(oursCPU, c)
					} else {
						d, c, err := timeRun(vs, vsClient, w.conns)
						if err != nil {
							return fmt.Errorf("-vs build: %w", err)
						}
						theirs, theirsCPU = append(theirs, d), append(theirsCPU, c)
					}
				}
			}
			wall[i] = append(wall[i], float64(median(ours))/float64(median(theirs)))
			cpu[i] = append(cpu[i], float64(median(oursCPU))/float64(median(theirsCPU)))
		}
	}
	defer srv.stop()
	defer vs.stop()
	fmt.Printf("== the first build against the -vs build over %d starts of both (medians of %d alternating runs each)\n", *startsFlag, *runsFlag)
	for i, w := range ways {
		fmt.Printf("-- %s\nwall %s: median %.2f×; server CPU %s: median %.2f×\n", w.name,
			ratios(wall[i]), medianFloat(wall[i]), ratios(cpu[i]), medianFloat(cpu[i]))
	}
	load, _ = os.ReadFile("/proc/loadavg")
	fmt.Printf("(load average after the starts: %s)\n", strings.TrimSpace(string(load)))
	return nil
}

func ratios(rs []float64) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = fmt.Sprintf("%.2f×", r)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func medianFloat(rs []float64) float64 {
	s := slices.Clone(rs)
	slices.Sort(s)
	return s[len(s)/2]
}

func rounded(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d.Round(time.Millisecond)
	}
	return out
}

// loadClient posts /symbolicate requests as a pipeline's workers would:
// net/http's client, keep-alive connections (one per worker, kept idle
// between runs), each worker reading answers into a buffer of its own.
type loadClient struct {
	http *http.Client
	url  string
	bufs []bytes.Buffer
}

func newLoadClient(addr string, conns int) *loadClient {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = conns // the default, 2, would close the others after each request
	return &loadClient{http: &http.Client{Transport: tr}, url: "http://" + addr + "/symbolicate", bufs: make([]bytes.Buffer, conns)}
}

// send posts every body from conns workers at once, each taking the next
// body not yet sent, and checks each answer's status.
func (c *loadClient) send(bodies [][]byte, conns int) error {
	var next atomic.Int64
	errs := make(chan error, conns)
	for w := range conns {
		go func() {
			buf := &c.bufs[w]
			for {
				i := int(next.Add(1)) - 1
				if i >= len(bodies) {
					errs <- nil
					return
				}
				if err := c.post(bodies[i], buf); err != nil {
					next.Store(int64(len(bodies)))
					errs <- err
					return
				}
			}
		}()
	}
	var first error
	for range conns {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

func (c *loadClient) post(body []byte, buf *bytes.Buffer) error {
	resp, err := c.http.Post(c.url, "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	buf.Reset()
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d: %.200s", resp.StatusCode, buf.Bytes())
	}
	return nil
}

// checkAgainstLLVM asks the instance and one llvm-symbolizer every batch
// and compares each address's frames, inlined ones included: the same
// function names, file base names and lines, innermost first. Any
// difference is an error naming the address. llvm-symbolizer is asked
// lookups, the addresses the service looks up for batches.
func checkAgainstLLVM(srv *server, bodies [][]byte, batches, lookups [][]uint64) error {
	p, err := startLLVM(lookups[0])
	if err != nil {
		return err
	}
	defer p.stop()
	checked, frames := 0, 0
	for i, body := range bodies {
		want, err := p.frames(lookups[i])
		if err != nil {
			return fmt.Errorf("llvm-symbolizer: %w", err)
		}
		out, err := srv.post(body)
		if err != nil {
			return err
		}
		got, err := answerFrames(out, len(batches[i]))
		if err != nil {
			return fmt.Errorf("request %d: %w", i, err)
		}
		for k, addr := range batches[i] {
			if !slices.Equal(got[k], want[k]) {
				return fmt.Errorf("%#x: the service answers %v, llvm-symbolizer %v", addr, got[k], want[k])
			}
			frames += len(want[k])
		}
		checked += len(batches[i])
	}
	fmt.Printf("checked: the service's answers for the %d addresses (%d frames, inlined included) are llvm-symbolizer's\n", checked, frames)
	return nil
}

// symFrame is one frame of an answer as both sides can say it.
type symFrame struct {
	function, file string // file: the base name
	line           int
}

func (f symFrame) String() string { return fmt.Sprintf("%s (%s:%d)", f.function, f.file, f.line) }

// answerFrames reads a /symbolicate answer of one stack: each address's
// frames, innermost first, by original_index. A frame the service could
// not name is "??", as llvm-symbolizer prints it.
func answerFrames(out []byte, n int) ([][]symFrame, error) {
	var a struct {
		Stacktraces []struct {
			Frames []struct {
				OriginalIndex int    `json:"original_index"`
				Function      string `json:"function"`
				AbsPath       string `json:"abs_path"`
				Lineno        int    `json:"lineno"`
			} `json:"frames"`
		} `json:"stacktraces"`
	}
	if err := json.Unmarshal(out, &a); err != nil {
		return nil, fmt.Errorf("answer %.200q: %v", out, err)
	}
	if len(a.Stacktraces) != 1 {
		return nil, fmt.Errorf("%d stacks in the answer, want 1", len(a.Stacktraces))
	}
	frames := make([][]symFrame, n)
	for _, f := range a.Stacktraces[0].Frames {
		if f.OriginalIndex < 0 || f.OriginalIndex >= n {
			return nil, fmt.Errorf("original_index %d of %d frames", f.OriginalIndex, n)
		}
		sf := symFrame{function: f.Function, file: filepath.Base(f.AbsPath), line: f.Lineno}
		if f.Function == "" {
			sf.function = "??"
		}
		if f.AbsPath == "" {
			sf.file = "??"
		}
		frames[f.OriginalIndex] = append(frames[f.OriginalIndex], sf)
	}
	return frames, nil
}

// llvmProcess is llvm-symbolizer on the binary, reading addresses on its
// stdin.
type llvmProcess struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
	req   bytes.Buffer
}

// startLLVM starts llvm-symbolizer and warms it with one request.
func startLLVM(warm []uint64) (*llvmProcess, error) {
	p := &llvmProcess{cmd: exec.Command(*llvmFlag, "--obj="+*goBinFlag, "--inlining", "--functions=linkage")}
	p.stdin, _ = p.cmd.StdinPipe()
	stdout, _ := p.cmd.StdoutPipe()
	p.out = bufio.NewReaderSize(stdout, 1<<20)
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	if err := p.ask(warm); err != nil {
		p.stop()
		return nil, err
	}
	return p, nil
}

func (p *llvmProcess) stop() {
	p.stdin.Close()
	p.cmd.Wait()
}

// ask writes a batch of addresses whole, then reads its answers (one block
// per address, ending in a blank line).
func (p *llvmProcess) ask(batch []uint64) error {
	p.req.Reset()
	for _, a := range batch {
		fmt.Fprintf(&p.req, "%#x\n", a)
	}
	if _, err := p.stdin.Write(p.req.Bytes()); err != nil {
		return err
	}
	for range batch {
		for {
			line, err := p.out.ReadSlice('\n')
			if err != nil {
				return err
			}
			if len(line) == 1 {
				break
			}
		}
	}
	return nil
}

// frames asks a batch and reads each address's frames as llvm-symbolizer
// prints them: a function line, then "file:line:column", innermost first.
func (p *llvmProcess) frames(batch []uint64) ([][]symFrame, error) {
	p.req.Reset()
	for _, a := range batch {
		fmt.Fprintf(&p.req, "%#x\n", a)
	}
	if _, err := p.stdin.Write(p.req.Bytes()); err != nil {
		return nil, err
	}
	all := make([][]symFrame, len(batch))
	for i := range batch {
		for {
			fn, err := p.out.ReadString('\n')
			if err != nil {
				return nil, err
			}
			fn = strings.TrimSuffix(fn, "\n")
			if fn == "" {
				break
			}
			loc, err := p.out.ReadString('\n')
			if err != nil {
				return nil, err
			}
			// file:line:column; the file may hold colons itself.
			parts := strings.Split(strings.TrimSuffix(loc, "\n"), ":")
			if len(parts) < 3 {
				return nil, fmt.Errorf("%#x: location %q", batch[i], loc)
			}
			line, _ := strconv.Atoi(parts[len(parts)-2])
			file := strings.Join(parts[:len(parts)-2], ":")
			if file != "??" {
				file = filepath.Base(file)
			}
			all[i] = append(all[i], symFrame{function: fn, file: file, line: line})
		}
	}
	return all, nil
}

// llvmRun sends every batch to the processes at once, each process taking
// the next batch not yet sent, and returns the wall time and the CPU time
// the processes took.
func llvmRun(procs []*llvmProcess, batches [][]uint64) (time.Duration, time.Duration, error) {
	var cpu time.Duration
	for _, p := range procs {
		cpu -= processCPU(p.cmd.Process.Pid)
	}
	var next atomic.Int64
	errs := make(chan error, len(procs))
	start := time.Now()
	for _, p := range procs {
		go func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(batches) {
					errs <- nil
					return
				}
				if err := p.ask(batches[i]); err != nil {
					next.Store(int64(len(batches)))
					errs <- err
					return
				}
			}
		}()
	}
	var first error
	for range procs {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	d := time.Since(start)
	for _, p := range procs {
		cpu += processCPU(p.cmd.Process.Pid)
	}
	return d, cpu, first
}

// processCPU is the user and system time a process has used so far, from
// /proc (0 where there is none).
func processCPU(pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command name, which is in parentheses:
	// utime and stime are the 12th and 13th, in clock ticks (100 a
	// second on Linux).
	f := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	var user, sys int64
	fmt.Sscan(f[11], &user)
	fmt.Sscan(f[12], &sys)
	return time.Duration(user+sys) * (time.Second / 100)
}

// cold measures the first answer of a fresh instance for cmd/go's UUID,
// read from an S3 bucket: with its index there (built by another
// instance), and with only the binary there, against `stackimage index`
// on the same file.
func cold(tmp string) error {
	s3 := freeAddr()
	root := filepath.Join(tmp, "gw")
	os.MkdirAll(root, 0o755)
	gw := exec.Command(*gwFlag, "--port", s3, "posix", root)
	gw.Env = append(os.Environ(), "ROOT_ACCESS_KEY=load-access", "ROOT_SECRET_KEY=load-secret-key")
	if err := gw.Start(); err != nil {
		return err
	}
	defer func() { gw.Process.Signal(syscall.SIGTERM); gw.Wait() }()
	mc, err := minio.New(s3, &minio.Options{Creds: credentials.NewStaticV4("load-access", "load-secret-key", ""), BucketLookup: minio.BucketLookupPath})
	if err != nil {
		return err
	}
	for i := 0; ; i++ {
		if err = mc.MakeBucket(context.Background(), "symbols", minio.MakeBucketOptions{}); err == nil {
			break
		}
		if i > 100 {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
	config := filepath.Join(tmp, "cold.yaml")
	os.WriteFile(config, []byte(fmt.Sprintf("sources:\n  - {name: bucket, type: s3, endpoint: 'http://%s', bucket: symbols, access_key: load-access, secret_key: load-secret-key}\nstore: bucket\nauth: {upload_token: up}\nlimits: {request_timeout: 10m}\n", s3)), 0o644)
	rng := rand.New(rand.NewPCG(5, 6))
	m, err := loadModule(*goBinFlag, 0x300000000, 100, rng)
	if err != nil {
		return err
	}
	body := stackBody([]module{m}, 100, 0)
	fresh := func(i int) (*server, error) {
		return startServer(nil, "--config", config, "--cache", filepath.Join(tmp, fmt.Sprintf("cold-cache-%d", i)))
	}
	// Upload: the index is built and put in the bucket.
	up, err := fresh(0)
	if err != nil {
		return err
	}
	data, _ := os.ReadFile(*goBinFlag)
	req, _ := http.NewRequest("PUT", "http://"+up.addr+"/v1/symbols", bytes.NewReader(data))
	req.Header.Set("Authorization", "Bearer up")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		up.stop()
		return err
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	up.stop()
	if resp.StatusCode != 201 || !bytes.Contains(answer, []byte(`"index":"built"`)) {
		return fmt.Errorf("upload: %d %s", resp.StatusCode, answer)
	}
	firstAnswer := func(i int) (time.Duration, error) {
		srv, err := fresh(i)
		if err != nil {
			return 0, err
		}
		defer srv.stop()
		start := time.Now()
		out, err := srv.post(body)
		d := time.Since(start)
		if err == nil && !bytes.Contains(out, []byte(`"debug_status":"found"`)) {
			err = fmt.Errorf("not found: %.300s", out)
		}
		return d, err
	}
	var fromIndex []time.Duration
	for i := range 10 {
		d, err := firstAnswer(100 + i)
		if err != nil {
			return err
		}
		fromIndex = append(fromIndex, d)
	}
	sort.Slice(fromIndex, func(i, j int) bool { return fromIndex[i] < fromIndex[j] })
	fmt.Println("== cold UUID, darwin cmd/go (DWARF, 32 MB), index in the bucket: first answer of a fresh instance, 100 frames (target: p99 ≤ 150 ms)")
	fmt.Printf("10 runs: median %v, max %v\n", fromIndex[5].Round(time.Millisecond), fromIndex[9].Round(time.Millisecond))

	// Only the binary in the bucket: the first answer downloads it and
	// builds the index.
	var building, indexing []time.Duration
	for i := range *runsFlag {
		objs := mc.ListObjects(context.Background(), "symbols", minio.ListObjectsOptions{Prefix: "_index/", Recursive: true})
		for o := range objs {
			mc.RemoveObject(context.Background(), "symbols", o.Key, minio.RemoveObjectOptions{})
		}
		d, err := firstAnswer(200 + i)
		if err != nil {
			return err
		}
		building = append(building, d)
		out := filepath.Join(tmp, fmt.Sprintf("index-%d", i))
		start := time.Now()
		if b, err := exec.Command(*binFlag, "index", "--symbols", *goBinFlag, "--out", out).CombinedOutput(); err != nil {
			return fmt.Errorf("stackimage index: %v: %s", err, b)
		}
		indexing = append(indexing, time.Since(start))
	}
	fmt.Println("== cold UUID, only the binary in the bucket: first answer vs `stackimage index` on the same file (target: ≤ 1.2×)")
	fmt.Printf("first answer: median %v of %v\nstackimage index: median %v of %v\nratio %.2f×\n",
		median(building).Round(time.Millisecond), building, median(indexing).Round(time.Millisecond), indexing,
		float64(median(building))/float64(median(indexing)))
	return nil
}
