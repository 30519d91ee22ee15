package testtool

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"
)

// ListeningURL reads the first line a starting service writes to lines
// ("…listening on URL") and returns URL.
func ListeningURL(tb testing.TB, lines *bufio.Reader) string {
	tb.Helper()
	first, err := lines.ReadString('\n')
	if err != nil {
		tb.Fatalf("reading the service's first line: %v (%q)", err, first)
	}
	_, url, ok := strings.Cut(strings.TrimSpace(first), "listening on ")
	if !ok {
		tb.Fatalf("the service's first line is %q, want the address it listens on", first)
	}
	return url
}

// Healthcheck fails the test unless GET url/healthcheck answers 200.
func Healthcheck(tb testing.TB, url string) {
	tb.Helper()
	resp, err := http.Get(url + "/healthcheck")
	if err != nil {
		tb.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		tb.Fatalf("GET %s/healthcheck: %d %q", url, resp.StatusCode, body)
	}
}
