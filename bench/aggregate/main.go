// Command aggregate generates the inputs of the aggregation benchmark and
// times `stackimage aggregate` on them against pprof's own program (the
// one `go tool pprof` runs, built once) merging the same stacks as
// per-device pprof files with -proto, the two taking turns pair by pair;
// then it checks that pprof -top of the two profiles is the same
// (docs/aggregate.md).
//
//	go run ./bench/aggregate -dir DIR -bin bin/stackimage [-stacks 1000000] [-runs 3]
//
// The inputs are made once into DIR (they are never committed): stacks of
// random functions of fixture binaries (fixtures/bin), a few unique
// stacks repeated to the number of stacks asked, from many devices each
// loading the images elsewhere; as one stream-format file, as .ips
// reports, and as one pprof profile per device.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/stackimage/stackimage/aggregate"
	"github.com/stackimage/stackimage/bench/internal/benchkit"
	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/uuid"
)

type config struct {
	dir, bin, symbols     string
	stacks, unique        int
	frames, images        int
	devices, ipsFiles     int
	runs                  int
	seed                  uint64
	skipIPS, skipPprofCmp bool
}

func main() {
	var c config
	flag.StringVar(&c.dir, "dir", filepath.Join(os.TempDir(), "stackimage-bench-aggregate"), "where the inputs are made (once)")
	flag.StringVar(&c.bin, "bin", "bin/stackimage", "the stackimage binary to time")
	flag.StringVar(&c.symbols, "symbols", "fixtures/bin", "the binaries whose functions the stacks are made of, and their dSYMs")
	flag.IntVar(&c.stacks, "stacks", 1_000_000, "stacks in all")
	flag.IntVar(&c.unique, "unique", 50_000, "unique stacks among them (5 %: 95 % duplicates)")
	flag.IntVar(&c.frames, "frames", 30, "frames per stack")
	flag.IntVar(&c.images, "images", 20, "images the frames are spread over")
	flag.IntVar(&c.devices, "devices", 100, "devices (processes), each with its own load addresses")
	flag.IntVar(&c.ipsFiles, "ips", 10_000, ".ips files the same stacks are split into")
	flag.IntVar(&c.runs, "runs", 3, "runs of each program")
	flag.Uint64Var(&c.seed, "seed", 1, "random seed")
	flag.BoolVar(&c.skipIPS, "no-ips", false, "skip the .ips run")
	flag.BoolVar(&c.skipPprofCmp, "no-pprof", false, "skip the comparison with pprof")
	flag.Parse()
	if err := run(c); err != nil {
		log.Fatal(err)
	}
}

// benchImage is one image the stacks pass through: a fixture binary and
// the function starts its frames land after.
type benchImage struct {
	name, path string
	uuid       string
	text       uint64   // __TEXT vmaddr
	funcs      []uint64 // function starts, as offsets from the load address
}

func run(c config) error {
	stamp := filepath.Join(c.dir, fmt.Sprintf("inputs-%d-%d-%d-%d-%d-%d-%d.done", c.stacks, c.unique, c.frames, c.images, c.devices, c.ipsFiles, c.seed))
	if _, err := os.Stat(stamp); err != nil {
		log.Printf("making the inputs in %s", c.dir)
		if err := makeInputs(c); err != nil {
			return err
		}
		if err := os.WriteFile(stamp, nil, 0o644); err != nil {
			return err
		}
	}
	if c.runs == 0 {
		return nil // -runs 0 makes the inputs only
	}
	stream := filepath.Join(c.dir, "stacks.ndjson")
	fmt.Printf("input: %d stacks of %d frames over %d images, %d unique, %d devices; %s (%s)\n",
		c.stacks, c.frames, c.images, c.unique, c.devices, stream, size(stream))
	out := filepath.Join(c.dir, "out.pb.gz")
	merged := filepath.Join(c.dir, "merged.pb.gz")
	oursArgs := []string{"aggregate", stream, "--symbols", c.symbols, "--format", "pprof", "-o", out, "--quiet"}
	ipsArgs := []string{"aggregate", filepath.Join(c.dir, "ips"), "--symbols", c.symbols, "--format", "pprof", "-o", filepath.Join(c.dir, "out-ips.pb.gz"), "--quiet",
		// Every thread of the .ips files is a captured stack: all count,
		// not the crashed thread alone, so that this run counts what the
		// stream's does.
		"--threads", "all"}

	// The peer is pprof's own program, built once by the go command (go
	// tool -n prints where), not `go tool pprof`, whose go command would
	// be timed with it.
	var pprofBin string
	var peerArgs []string
	if !c.skipPprofCmp {
		var err error
		if pprofBin, err = pprofProgram(); err != nil {
			return err
		}
		files, _ := filepath.Glob(filepath.Join(c.dir, "pprof", "*.pb.gz"))
		sort.Strings(files)
		peerArgs = append([]string{"-proto", "-symbolize=none", "-output", merged}, files...)
		fmt.Printf("peer: %s %s (%d per-device profiles)\n", pprofBin, strings.Join(peerArgs[:4], " "), len(files))
	}

	// The programs take turns, pair by pair, the first of each pair
	// alternating, so that a change in the machine's load falls on both.
	var ours, ips, peer result
	for i := range c.runs {
		turns := []func(){func() { ours.run(c.bin, oursArgs...) }}
		if pprofBin != "" {
			turns = append(turns, func() { peer.run(pprofBin, peerArgs...) })
		}
		if i%2 == 1 {
			slices.Reverse(turns)
		}
		if !c.skipIPS {
			turns = append(turns, func() { ips.run(c.bin, ipsArgs...) })
		}
		for _, turn := range turns {
			turn()
		}
	}
	report("stackimage aggregate, stream → pprof", ours, float64(c.stacks), "stacks/s")
	if !c.skipIPS {
		report(fmt.Sprintf("stackimage aggregate, %d .ips files → pprof", c.ipsFiles), ips, float64(c.ipsFiles), "files/s")
	}
	if pprofBin == "" {
		return nil
	}
	report("pprof -proto, merging the per-device profiles", peer, float64(c.stacks), "stacks/s")
	fmt.Printf("ratio (stream → pprof) / (pprof -proto merge): %.2f× its wall time, %.2f× its CPU time (medians of %d pairs)\n",
		median(ours.wall)/median(peer.wall), median(ours.cpu)/median(peer.cpu), c.runs)
	// A faster program that wrote another profile would prove nothing:
	// pprof's -top of both must be the same, line for line.
	if err := sameTop(pprofBin, out, merged); err != nil {
		return err
	}
	fmt.Printf("checked: pprof -top of our profile and of pprof's merge are the same\n")
	if !c.skipIPS {
		if err := sameTop(pprofBin, filepath.Join(c.dir, "out-ips.pb.gz"), merged); err != nil {
			return fmt.Errorf(".ips run: %w", err)
		}
		fmt.Printf("checked: pprof -top of the .ips run's profile is the same too\n")
	}
	return nil
}

// pprofProgram returns the path of pprof's own program as the go command
// builds it for go tool pprof (built once, then cached).
func pprofProgram() (string, error) {
	out, err := exec.Command("go", "tool", "-n", "pprof").Output()
	if err != nil {
		return "", fmt.Errorf("go tool -n pprof: %v", err)
	}
	path := strings.TrimSpace(string(out))
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("go tool -n pprof names %q: %v", path, err)
	}
	return path, nil
}

// sameTop compares pprof -top of two profiles, from the table's header
// on (the lines before it name the file and its time).
func sameTop(pprofBin, a, b string) error {
	top := func(path string) ([]string, error) {
		out, err := exec.Command(pprofBin, "-top", "-symbolize=none", path).Output()
		if err != nil {
			return nil, fmt.Errorf("pprof -top %s: %v", path, err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		for i, l := range lines {
			if strings.HasPrefix(l, "Showing nodes") {
				return lines[i:], nil
			}
		}
		return nil, fmt.Errorf("pprof -top %s: no table in\n%s", path, out)
	}
	ta, err := top(a)
	if err != nil {
		return err
	}
	tb, err := top(b)
	if err != nil {
		return err
	}
	if len(ta) < 3 {
		return fmt.Errorf("pprof -top %s: %d lines, no functions", a, len(ta))
	}
	for i := range max(len(ta), len(tb)) {
		var la, lb string
		if i < len(ta) {
			la = ta[i]
		}
		if i < len(tb) {
			lb = tb[i]
		}
		if la != lb {
			return fmt.Errorf("pprof -top differs at line %d:\n  %s: %q\n  %s: %q", i+1, a, la, b, lb)
		}
	}
	return nil
}

func size(path string) string {
	st, err := os.Stat(path)
	if err != nil {
		return "?"
	}
	return fmt.Sprintf("%.0f MB", float64(st.Size())/1e6)
}

// makeInputs writes the stream, the .ips files and the per-device
// profiles.
func makeInputs(c config) error {
	rng := rand.New(rand.NewPCG(c.seed, 2))
	images, err := pickImages(c.symbols, c.images)
	if err != nil {
		return err
	}
	// Unique stacks: each frame a random function of a random image, a
	// few bytes into it.
	type frame struct {
		image  int
		offset uint64
	}
	unique := make([][]frame, c.unique)
	for i := range unique {
		st := make([]frame, c.frames)
		for k := range st {
			im := rng.IntN(len(images))
			fs := images[im].funcs
			st[k] = frame{im, fs[rng.IntN(len(fs))] + 4 + 4*uint64(rng.IntN(4))}
		}
		unique[i] = st
	}
	// Per device, where each image is loaded.
	loads := make([][]uint64, c.devices)
	for d := range loads {
		loads[d] = make([]uint64, len(images))
		for i := range images {
			loads[d][i] = 0x100000000 + uint64(i)<<28 + uint64(rng.IntN(1<<12))<<14
		}
	}
	// Which unique stack each captured stack is: every unique stack once,
	// then the rest skewed towards a few, as hangs are.
	order := make([]int, c.stacks)
	for i := range order {
		if i < c.unique {
			order[i] = i
		} else {
			order[i] = int(float64(c.unique) * rng.Float64() * rng.Float64() * rng.Float64())
		}
	}
	rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	apis := []string{"UserDefaults", "UIDevice.name", "FileTimestamp", "SystemBootTime", "DiskSpace"}
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	if err := os.MkdirAll(filepath.Join(c.dir, "ips"), 0o755); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(c.dir, "pprof"), 0o755); err != nil {
		return err
	}

	// The stream: each device's first record defines its image set.
	f, err := os.Create(filepath.Join(c.dir, "stacks.ndjson"))
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	defined := make([]bool, c.devices)
	deviceStacks := make([][]int, c.devices)
	var b []byte
	for i, u := range order {
		d := i % c.devices
		deviceStacks[d] = append(deviceStacks[d], i)
		b = b[:0]
		b = append(b, `{"image_set":"d`...)
		b = strconv.AppendInt(b, int64(d), 10)
		b = append(b, '"')
		if !defined[d] {
			defined[d] = true
			b = append(b, `,"images":[`...)
			for k, im := range images {
				if k > 0 {
					b = append(b, ',')
				}
				b = fmt.Appendf(b, `{"uuid":%q,"load_address":%d,"name":%q,"path":%q}`, im.uuid, loads[d][k], im.name, im.path)
			}
			b = append(b, ']')
		}
		b = append(b, `,"frames":[`...)
		for k, fr := range unique[u] {
			if k > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendUint(b, loads[d][fr.image]+fr.offset, 10)
		}
		b = fmt.Appendf(b, `],"thread":"main","timestamp":%q,"device":"iPhone%d,%d","os_version":"iOS 18.%d","app_version":"2.%d","labels":{"api":%q}}`,
			base.Add(time.Duration(i)*time.Second).Format(time.RFC3339), 12+d%4, 1+d%3, d%3, d%2, apis[u%len(apis)])
		b = append(b, '\n')
		w.Write(b)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}

	// The .ips files: each a hang report of one device whose threads are
	// consecutive captured stacks.
	perFile := (c.stacks + c.ipsFiles - 1) / c.ipsFiles
	for fi := 0; fi < c.ipsFiles; fi++ {
		lo, hi := fi*perFile, min((fi+1)*perFile, c.stacks)
		if lo >= hi {
			break
		}
		d := fi % c.devices
		b = b[:0]
		b = fmt.Appendf(b, `{"app_name":"Bench","timestamp":%q,"app_version":"2.%d","build_version":"1","bug_type":"309","os_version":"iPhone OS 18.%d (22A1)","incident_id":"%08X-0000-0000-0000-000000000000","name":"Bench"}`+"\n",
			base.Add(time.Duration(fi)*time.Minute).Format("2006-01-02 15:04:05.00 -0700"), d%2, d%3, fi)
		b = fmt.Appendf(b, `{"procName":"Bench","procPath":%q,"pid":%d,"cpuType":"ARM-64","modelCode":"iPhone%d,%d","osVersion":{"train":"iPhone OS 18.%d","build":"22A1"},`+
			`"bundleInfo":{"CFBundleShortVersionString":"2.%d","CFBundleVersion":"1"},"exception":{"type":"EXC_CRASH","signal":"SIGKILL"},"faultingThread":0,"threads":[`,
			images[0].path, 100+fi, 12+d%4, 1+d%3, d%3, d%2)
		for t := lo; t < hi; t++ {
			if t > lo {
				b = append(b, ',')
			}
			b = fmt.Appendf(b, `{"id":%d,"frames":[`, t)
			for k, fr := range unique[order[t]] {
				if k > 0 {
					b = append(b, ',')
				}
				b = fmt.Appendf(b, `{"imageOffset":%d,"imageIndex":%d}`, fr.offset, fr.image)
			}
			b = append(b, "]}"...)
		}
		b = append(b, `],"usedImages":[`...)
		for k, im := range images {
			if k > 0 {
				b = append(b, ',')
			}
			b = fmt.Appendf(b, `{"source":"P","arch":"arm64","base":%d,"size":%d,"uuid":%q,"path":%q,"name":%q}`,
				loads[d][k], 1<<28, strings.ToLower(im.uuid), im.path, im.name)
		}
		b = append(b, "]}\n"...)
		if err := os.WriteFile(filepath.Join(c.dir, "ips", fmt.Sprintf("%05d.ips", fi)), b, 0o644); err != nil {
			return err
		}
	}

	// The per-device profiles, symbolicated: what a team would have from
	// running each device's stacks through a profiler's own tools.
	syms := symstore.NewSymbols()
	defer syms.Close()
	if err := syms.AddDir(context.Background(), c.symbols); err != nil {
		return err
	}
	recImages := make([]aggregate.Image, len(images))
	for d := range c.devices {
		agg := aggregate.New()
		for k, im := range images {
			id, _ := uuid.Parse(im.uuid)
			recImages[k] = aggregate.Image{UUID: id, LoadAddress: aggregate.Address(loads[d][k]), Name: im.name, Path: im.path}
		}
		for _, i := range deviceStacks[d] {
			rec := &aggregate.Record{Images: recImages, ImageSet: "d", Thread: "main"}
			for _, fr := range unique[order[i]] {
				rec.Frames = append(rec.Frames, loads[d][fr.image]+fr.offset)
			}
			agg.Add(rec)
		}
		res, err := agg.Symbolicate(context.Background(), syms)
		if err != nil {
			return err
		}
		pf, err := os.Create(filepath.Join(c.dir, "pprof", fmt.Sprintf("device-%03d.pb.gz", d)))
		if err != nil {
			return err
		}
		if err := res.Profile().Write(pf); err != nil {
			return err
		}
		if err := pf.Close(); err != nil {
			return err
		}
	}
	return nil
}

// pickImages takes n fixture binaries with distinct UUIDs and their
// function starts.
func pickImages(dir string, n int) ([]benchImage, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	syms := symstore.NewSymbols()
	defer syms.Close()
	if err := syms.AddDir(context.Background(), dir); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []benchImage
	for _, e := range entries {
		if e.IsDir() || strings.HasSuffix(e.Name(), ".o") || len(out) == n {
			continue
		}
		f, err := image.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		im := f.Images[0]
		id := im.UUID.String()
		text, ok := im.TextSegment()
		if seen[id] || !ok {
			f.Close()
			continue
		}
		entry, err := syms.LookupContext(context.Background(), im.UUID)
		if err != nil || entry == nil {
			f.Close()
			continue
		}
		// Function starts: the addresses where the symbol changes.
		var funcs []uint64
		last := ""
		for addr := text.Addr; addr < text.Addr+text.Size; addr += 4 {
			if sym, ok := entry.Symbol(addr); ok && sym.Name != last && sym.Offset == 0 {
				funcs = append(funcs, addr-text.Addr)
				last = sym.Name
			}
		}
		entry.Release()
		f.Close()
		if len(funcs) < 4 {
			continue
		}
		seen[id] = true
		name := e.Name()
		path := "/usr/lib/" + name + ".dylib"
		if len(out) == 0 {
			path = "/private/var/containers/Bundle/Application/B/Bench.app/" + name
		} else if len(out) < 4 {
			path = "/private/var/containers/Bundle/Application/B/Bench.app/Frameworks/" + name + ".framework/" + name
		}
		out = append(out, benchImage{name: name, path: path, uuid: id, text: text.Addr, funcs: funcs})
	}
	if len(out) < n {
		return nil, fmt.Errorf("%s: %d binaries with distinct UUIDs and symbols, want %d", dir, len(out), n)
	}
	return out, nil
}

// result is the runs of one program.
type result struct {
	wall []float64 // seconds
	cpu  []float64 // user + system seconds: less shaken than wall by other load on the machine
	rss  []float64 // peak resident MB
}

// run runs a program once, timing it and taking its peak memory from
// the kernel's accounting of the child.
func (r *result) run(name string, args ...string) {
	cmd := exec.Command(name, args...)
	cmd.Stderr = os.Stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		log.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
	}
	r.wall = append(r.wall, time.Since(start).Seconds())
	r.rss = append(r.rss, float64(benchkit.PeakRSS(cmd.ProcessState))/1e6)
	r.cpu = append(r.cpu, (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds())
}

func report(what string, r result, n float64, unit string) {
	m := median(r.wall)
	fmt.Printf("%s\n  wall median %.2fs (%.2f–%.2f), %.0f %s; CPU median %.2fs (%.2f–%.2f); peak RSS median %.0f MB (%.0f–%.0f)\n",
		what, m, slices.Min(r.wall), slices.Max(r.wall), n/m, unit, median(r.cpu), slices.Min(r.cpu), slices.Max(r.cpu),
		median(r.rss), slices.Min(r.rss), slices.Max(r.rss))
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
