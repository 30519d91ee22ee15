package serve

import (
	"bytes"
	"context"
	"net/http"
	"os"

	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stackimage/stackimage/internal/testtool"
)

// chromium is Debian's headless browser the UI test drives.
const chromium = "/usr/bin/chromium"

// The page draws the top groups and a flame graph with the functions of
// the uploaded stacks, in a real browser; the screenshot is kept under
// the test's output (UI_SCREENSHOT names the file, else the test's
// temporary directory).
func TestUIDrawsGroupsAndFlameGraph(t *testing.T) {
	testtool.Path(t, chromium, "chromium", "the browser test drives it")
	_, ts := newTestServer(t, aggregateConfig(t.TempDir()))
	if resp, body := do(t, "POST", ts.URL+"/v1/stacks", bytes.NewReader(exampleStacks(t)), nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("POST: %d %s", resp.StatusCode, body)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:0:0],
		chromedp.ExecPath(chromium),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.UserDataDir(browserProfile(t)),
		chromedp.WindowSize(1280, 700),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	// The browser may speak a newer protocol than the driver knows; what
	// the driver cannot decode is logged with the test, not on stderr.
	ctx, cancel := chromedp.NewContext(allocCtx, chromedp.WithErrorf(t.Logf))
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
	defer cancelTimeout()

	var drawn, table string
	var flame []string
	var png []byte
	err := chromedp.Run(ctx,
		chromedp.Navigate(ts.URL+"/ui/"),
		chromedp.WaitVisible(`body[data-drawn]`, chromedp.ByQuery),
		chromedp.AttributeValue(`body`, "data-drawn", &drawn, nil, chromedp.ByQuery),
		chromedp.Text(`#groups tbody`, &table, chromedp.ByQuery),
		chromedp.Evaluate(`[...document.querySelectorAll("#flame text")].map(t => t.textContent)`, &flame),
		chromedp.FullScreenshot(&png, 100), // quality 100 is PNG
	)
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	if drawn != "true" {
		t.Fatalf("page says %q, want the graph drawn", drawn)
	}
	if !strings.Contains(table, "deepest ← step_to_deepest ← inline_host") {
		t.Errorf("groups table %q lacks the group's fingerprint", table)
	}
	joined := strings.Join(flame, "|")
	for _, name := range []string{"inline_host", "with_alloca", "deepest"} {
		if !strings.Contains(joined, name) {
			t.Errorf("flame graph labels %q lack %q", flame, name)
		}
	}
	out := os.Getenv("UI_SCREENSHOT")
	if out == "" {
		out = filepath.Join(t.TempDir(), "ui.png")
	}
	if err := os.WriteFile(out, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", out, len(png))
}

// browserProfile makes a directory for the browser's profile that
// outlives the browser's helper processes: they may still write to it for
// a moment after the browser is stopped, which makes t.TempDir's own
// cleanup fail with "directory not empty". It is removed when they are
// done, or left behind in the system's temporary directory.
func browserProfile(t *testing.T) string {
	dir, err := os.MkdirTemp("", "stackimage-ui-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for range 50 {
			if os.RemoveAll(dir) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Logf("left the browser profile %s behind: its processes still write to it", dir)
	})
	return dir
}
