//go:build e2e || faults

package serve

// The end-to-end test of a scaled-out deployment, run by `make e2e` (and
// so by `make test`), which installs what it needs: versitygw, an S3
// gateway, as the shared bucket; three `stackimage serve` processes of the
// command built as go install builds it; nginx
// in front of them; Debian's debuginfod-find as a client. Everything runs
// on loopback, in temporary directories, and is stopped when the test
// ends.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/uuid"
)

// e2eFixtures are the fixture images uploaded: binaries and their dSYMs.
var e2eFixtures = []string{"chain-arm64-O1", "chain-x86_64-O1", "dwarf-arm64-O2", "chain-nofp-arm64-O1", "async-x86_64-O1"}

// tool finds a program the test needs: in the named environment variable,
// else in PATH. It fails the test when it is missing: make e2e installs it.
func tool(t *testing.T, env, name string, extra ...string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		return p
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, p := range extra {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Fatalf("%s not found (set %s, or run make e2e, which installs it)", name, env)
	return ""
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// proc is a process the test started; stop ends it.
type proc struct {
	cmd  *exec.Cmd
	done chan error
	// exited is closed once the process has been waited for.
	exited chan struct{}
	log    string
}

func start(t *testing.T, dir, name string, env []string, args ...string) *proc {
	t.Helper()
	logPath := filepath.Join(dir, name+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, done: make(chan error, 1), exited: make(chan struct{}), log: logPath}
	go func() {
		err := cmd.Wait()
		logf.Close()
		p.done <- err
		close(p.exited)
	}()
	t.Cleanup(func() { p.kill() })
	return p
}

// kill ends the process group at once (a crash, as far as the others can
// tell) and waits for it.
func (p *proc) kill() {
	select {
	case <-p.exited:
		return
	default:
	}
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
	}
}

// term sends SIGTERM and returns the exit error.
func (p *proc) term(t *testing.T) error {
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		return err
	case <-time.After(40 * time.Second):
		t.Errorf("%s: still running 40 s after SIGTERM", p.cmd.Path)
		p.kill()
		return errors.New("no exit")
	}
}

func (p *proc) logText() string { b, _ := os.ReadFile(p.log); return string(b) }

// waitHTTP waits until url answers at all.
func waitHTTP(t *testing.T, url string, p *proc) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			return
		}
		select {
		case err := <-p.done:
			t.Fatalf("%s exited (%v):\n%s", p.cmd.Path, err, p.logText())
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("%s does not answer:\n%s", url, p.logText())
}

// instance is one serve process.
type instance struct {
	addr, cacheDir, config string
	p                      *proc
}

func (in *instance) start(t *testing.T, bin, dir string, n int) {
	in.p = start(t, dir, fmt.Sprintf("serve%d", n), []string{"AWS_ACCESS_KEY_ID=e2e-access", "AWS_SECRET_ACCESS_KEY=e2e-secret-key"},
		bin, "serve", "--config", in.config, "--listen", in.addr, "--cache", in.cacheDir)
	waitHTTP(t, "http://"+in.addr+"/healthcheck", in.p)
}

// metricSum reads one metric from an instance's /metrics, summed over its
// label sets matching filter.
func metricSum(t *testing.T, addr, name, filter string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sum := 0.0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name) || !strings.Contains(line, filter) {
			continue
		}
		var v float64
		fmt.Sscan(line[strings.LastIndexByte(line, ' ')+1:], &v)
		sum += v
	}
	return sum
}

func TestE2EScaleOut(t *testing.T) {
	versitygw := tool(t, "VERSITYGW", "versitygw", filepath.Join(os.Getenv("HOME"), "go", "bin", "versitygw"))
	nginx := tool(t, "NGINX", "nginx", "/usr/sbin/nginx")
	debuginfodFind := tool(t, "DEBUGINFOD_FIND", "debuginfod-find")
	dir := t.TempDir()

	// The command, built alone as go install builds it.
	bin := filepath.Join(dir, "stackimage")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/stackimage").CombinedOutput(); err != nil {
		t.Fatalf("go build ../cmd/stackimage: %v\n%s", err, out)
	}

	// The bucket.
	s3Addr := freePort(t)
	gwRoot := filepath.Join(dir, "gw")
	os.MkdirAll(gwRoot, 0o755)
	gw := start(t, dir, "versitygw", []string{"ROOT_ACCESS_KEY=e2e-access", "ROOT_SECRET_KEY=e2e-secret-key"},
		versitygw, "--port", s3Addr, "posix", gwRoot)
	waitHTTP(t, "http://"+s3Addr+"/", gw)
	mc, err := minio.New(s3Addr, &minio.Options{Creds: credentials.NewStaticV4("e2e-access", "e2e-secret-key", ""), BucketLookup: minio.BucketLookupPath})
	if err != nil {
		t.Fatal(err)
	}
	if err := mc.MakeBucket(context.Background(), "symbols", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}

	// Three instances sharing the bucket; credentials from the environment.
	instances := make([]*instance, 3)
	for i := range instances {
		in := &instance{addr: freePort(t), cacheDir: filepath.Join(dir, fmt.Sprintf("cache%d", i)), config: filepath.Join(dir, fmt.Sprintf("serve%d.yaml", i))}
		cfg := fmt.Sprintf(`sources:
  - name: bucket
    type: s3
    endpoint: http://%s
    bucket: symbols
    prefix: store
store: bucket
auth:
  upload_token: e2e-upload
limits:
  request_timeout: 20s
`, s3Addr)
		if err := os.WriteFile(in.config, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		in.start(t, bin, dir, i)
		instances[i] = in
	}

	// nginx in front of them. POST /symbolicate has no side effects, so
	// it is safe to retry on another instance (non_idempotent); when none
	// answers, the client gets a clear 503.
	lbAddr := freePort(t)
	ngDir := filepath.Join(dir, "nginx")
	os.MkdirAll(filepath.Join(ngDir, "tmp"), 0o755)
	var upstream strings.Builder
	for _, in := range instances {
		fmt.Fprintf(&upstream, "    server %s max_fails=1 fail_timeout=1s;\n", in.addr)
	}
	user := ""
	if os.Geteuid() == 0 {
		user = "user root;"
	}
	ngConf := fmt.Sprintf(`%s
worker_processes 1;
pid %[2]s/nginx.pid;
error_log %[2]s/error.log warn;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path %[2]s/tmp/body;
  proxy_temp_path %[2]s/tmp/proxy;
  fastcgi_temp_path %[2]s/tmp/fastcgi;
  uwsgi_temp_path %[2]s/tmp/uwsgi;
  scgi_temp_path %[2]s/tmp/scgi;
  upstream serve {
%[3]s    keepalive 16;
  }
  server {
    listen %[4]s;
    client_max_body_size 64m;
    location / {
      proxy_pass http://serve;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_next_upstream error timeout http_502 http_503 non_idempotent;
      proxy_next_upstream_tries 3;
      proxy_connect_timeout 1s;
      error_page 502 504 = @unavailable;
    }
    location @unavailable {
      add_header Retry-After 1 always;
      default_type application/json;
      return 503 '{"status":"failed","message":"no instance answered"}';
    }
  }
}
`, user, ngDir, upstream.String(), lbAddr)
	if err := os.WriteFile(filepath.Join(ngDir, "nginx.conf"), []byte(ngConf), 0o644); err != nil {
		t.Fatal(err)
	}
	ng := start(t, dir, "nginx", nil, nginx, "-p", ngDir, "-c", filepath.Join(ngDir, "nginx.conf"), "-g", "daemon off;", "-e", filepath.Join(ngDir, "error.log"))
	lb := "http://" + lbAddr
	waitHTTP(t, lb+"/healthcheck", ng)

	// Upload every fixture through instance 0.
	type fixture struct {
		name string
		id   uuid.UUID
		dsym string
	}
	var fixtures []fixture
	for _, name := range e2eFixtures {
		bin := filepath.Join("..", "fixtures", "bin", name)
		dsym := filepath.Join(bin+".dSYM", "Contents", "Resources", "DWARF", name)
		syms := symstore.NewSymbols()
		syms.AddFile(context.Background(), bin)
		ids := syms.UUIDs()
		syms.Close()
		if len(ids) != 1 {
			t.Fatalf("%s: %d UUIDs", bin, len(ids))
		}
		fixtures = append(fixtures, fixture{name, ids[0], dsym})
		for _, f := range []string{dsym, bin} {
			resp, data := do(t, "PUT", "http://"+instances[0].addr+"/v1/symbols", bytes.NewReader(readFile(t, f)), map[string]string{"Authorization": "Bearer e2e-upload"})
			if resp.StatusCode != 201 || !bytes.Contains(data, []byte(`"index":"built"`)) {
				t.Fatalf("upload %s: %d %s", f, resp.StatusCode, data)
			}
		}
	}

	// debuginfod-find fetches a dSYM through the balancer.
	for _, f := range fixtures[:2] {
		cmd := exec.Command(debuginfodFind, "debuginfo", f.id.Hex())
		cmd.Env = append(os.Environ(), "DEBUGINFOD_URLS="+lb, "DEBUGINFOD_CACHE_PATH="+filepath.Join(dir, "debuginfod-cache"), "DEBUGINFOD_TIMEOUT=30")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("debuginfod-find debuginfo %s: %v\n%s", f.id.Hex(), err, out)
		}
		got := readFile(t, strings.TrimSpace(string(out)))
		if !bytes.Equal(got, readFile(t, f.dsym)) {
			t.Errorf("debuginfod-find %s: %d bytes that are not the dSYM's %s", f.id.Hex(), len(got), f.dsym)
		}
	}

	// The correct answer for each fixture, from the library.
	type expect struct {
		body []byte
		want string
	}
	var expects []expect
	for i, f := range fixtures {
		syms := symstore.NewSymbols()
		syms.AddDir(context.Background(), filepath.Join("..", "fixtures", "bin", f.name+".dSYM"))
		base := uint64(0x200000000 + i*0x10000000)
		// A function start of the image: the first address with a name.
		var addr uint64
		var name string
		for off := uint64(0x400); off < 0x4000 && name == ""; off += 0x40 {
			fr, err := syms.Resolve(f.id, nil, 0x100000000+off)
			if err == nil && fr[len(fr)-1].Symbol != "" {
				addr, name = off, fr[len(fr)-1].Symbol
			}
		}
		syms.Close()
		if name == "" {
			t.Fatalf("%s: no named address", f.name)
		}
		body := fmt.Sprintf(`{"stacktraces":[{"frames":[{"instruction_addr":"%#x"}]}],"modules":[{"type":"macho","debug_id":"%s","image_addr":"%#x","image_size":16384}]}`,
			base+addr, strings.ToLower(f.id.String()), base)
		expects = append(expects, expect{[]byte(body), name})
	}

	// Load through the balancer; one instance is killed and restarted
	// midway. Every answer must be right or a clear 503.
	var ok, unavailable, wrong atomic.Int64
	var mu sync.Mutex
	var wrongs []string
	stop := make(chan struct{})
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 30 * time.Second}
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				e := expects[i%len(expects)]
				resp, err := client.Post(lb+"/symbolicate", "application/json", bytes.NewReader(e.body))
				if err != nil {
					wrong.Add(1)
					mu.Lock()
					wrongs = append(wrongs, err.Error())
					mu.Unlock()
					continue
				}
				var buf bytes.Buffer
				buf.ReadFrom(resp.Body)
				resp.Body.Close()
				switch {
				case resp.StatusCode == 503 && resp.Header.Get("Retry-After") != "":
					unavailable.Add(1)
				case resp.StatusCode == 200 && bytes.Contains(buf.Bytes(), []byte(`"function":"`+e.want+`"`)) && bytes.Contains(buf.Bytes(), []byte(`"debug_status":"found"`)):
					ok.Add(1)
				default:
					wrong.Add(1)
					mu.Lock()
					wrongs = append(wrongs, fmt.Sprintf("%d %.300s", resp.StatusCode, buf.String()))
					mu.Unlock()
				}
			}
		}()
	}
	time.Sleep(2 * time.Second)
	instances[1].p.kill()
	time.Sleep(2 * time.Second)
	instances[1].start(t, bin, dir, 1)
	time.Sleep(2 * time.Second)
	close(stop)
	wg.Wait()
	t.Logf("under load: %d right, %d clear 503, %d wrong", ok.Load(), unavailable.Load(), wrong.Load())
	if wrong.Load() > 0 {
		t.Errorf("%d wrong answers, first: %v", wrong.Load(), wrongs[:min(3, len(wrongs))])
	}
	if ok.Load() < 100 {
		t.Errorf("only %d right answers", ok.Load())
	}

	// Instance 0 built every index, once per upload; the others read them
	// from the bucket and built none.
	if b := metricSum(t, instances[0].addr, "stackimage_index_builds_total", `result="ok"`); b != float64(2*len(fixtures)) {
		t.Errorf("instance 0 built %v indexes, want %d (one per upload)", b, 2*len(fixtures))
	}
	for _, i := range []int{1, 2} {
		if b := metricSum(t, instances[i].addr, "stackimage_index_builds_total", ""); b != 0 {
			t.Errorf("instance %d built %v indexes, want 0: they are in the bucket", i, b)
		}
	}
	if s := metricSum(t, instances[2].addr, "stackimage_index_cache_total", `result="shared"`); s < 1 {
		t.Errorf("instance 2 read %v indexes from the bucket, want some", s)
	}

	// SIGTERM: each instance finishes and exits 0.
	for i, in := range instances {
		if err := in.p.term(t); err != nil {
			t.Errorf("instance %d after SIGTERM: %v\n%s", i, err, in.p.logText())
		}
	}
	// nginx and the gateway stop on SIGTERM too, reaping their workers.
	ng.term(t)
	gw.term(t)
}
