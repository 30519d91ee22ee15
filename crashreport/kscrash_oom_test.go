package crashreport

import (
	"strings"
	"testing"
)

// ksOOM is a KSCrash out-of-memory report as KSCrashMonitor_Memory writes
// it: the breadcrumb report written at launch with omitBinaryImages set
// (so without "binary_images"), then given the memory figures and a
// SIGKILL signal when the next launch finds the app was killed.
const ksOOM = `{
  "report": {"id": "5E0F4F3B-0F4E-4C8B-9F5A-3F0C3C1B9E11", "timestamp": 1716220000000000, "type": "standard",
             "version": "3.3.0", "process_name": "MemoryHog"},
  "system": {"cpu_arch": "arm64", "CFBundleExecutable": "MemoryHog", "CFBundleIdentifier": "com.example.MemoryHog",
             "system_name": "iOS", "system_version": "17.4", "machine": "iPhone15,2", "process_id": 312,
             "app_memory": {"memory_footprint": 2147483648, "memory_remaining": 0, "memory_limit": 2147483648,
                            "memory_pressure": "critical", "memory_level": "terminal", "timestamp": 1716220000000000,
                            "app_transition_state": "foreground"}},
  "crash": {
    "error": {"type": "memory_termination",
              "memory_termination": {"memory_footprint": 2147483648, "memory_remaining": 0, "memory_limit": 2147483648,
                                     "memory_pressure": "critical", "memory_level": "terminal"},
              "signal": {"signal": 9, "name": "SIGKILL"}},
    "threads": [{"index": 0, "crashed": true, "current_thread": true, "name": "main",
                 "backtrace": {"skipped": 0, "contents": [
                   {"instruction_addr": 4297064448, "object_addr": 4296998912, "object_name": "MemoryHog",
                    "symbol_addr": 4297064400, "symbol_name": "-[AppDelegate application:didFinishLaunchingWithOptions:]"},
                   {"instruction_addr": 7516192768}]}}]
  }
}`

// TestKSCrashOOMWithoutImages: a KSCrash report without binary_images is
// whole when the rest of it is (KSCrash omits the images from its OOM
// report), not a truncated one.
func TestKSCrashOOMWithoutImages(t *testing.T) {
	if f, ok := Detect([]byte(ksOOM)); !ok || f != FormatKSCrash {
		t.Fatalf("Detect = %q, %v; want kscrash", f, ok)
	}
	r, err := Parse([]byte(ksOOM))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	checkInvariants(t, r)
	if len(r.Images) != 0 {
		t.Errorf("%d images, want none", len(r.Images))
	}
	if r.Exception.Type != "memory_termination" || r.Exception.Signal != "SIGKILL" || r.Process != "MemoryHog" || r.CrashedThread != 0 {
		t.Errorf("Exception %q (%q), Process %q, CrashedThread %d; want memory_termination (SIGKILL), MemoryHog, 0",
			r.Exception.Type, r.Exception.Signal, r.Process, r.CrashedThread)
	}
	if len(r.Threads) != 1 || len(r.Threads[0].Frames) != 2 {
		t.Fatalf("threads = %+v, want one of 2 frames", r.Threads)
	}
	f := r.Threads[0].Frames[0]
	if f.Address != 4297064448 || f.ImageIndex != -1 || f.ImageName != "MemoryHog" || f.ImageLoadAddress != 4296998912 ||
		f.ImageOffset != 4297064448-4296998912 || f.SymbolOffset != 48 {
		t.Errorf("frame 0 = %+v", f)
	}
	if !strings.Contains(strings.Join(r.Warnings, "\n"), "binary_images") {
		t.Errorf("warnings %q do not say the images are absent", r.Warnings)
	}

	// The same report cut short is still an error that names the images.
	_, err = Parse([]byte(ksOOM[:len(ksOOM)-10]))
	if err == nil || !strings.Contains(err.Error(), "binary_images: missing") {
		t.Errorf("Parse(truncated OOM report) error = %v, want one naming binary_images", err)
	}
}
