package symbolicator

import (
	"testing"

	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/walker"
)

// TestTrustOf: a walked frame's trust in symbolicator's terms, a scanned
// frame's by the check it passed.
func TestTrustOf(t *testing.T) {
	for _, tc := range []struct {
		found walker.FoundBy
		trust walker.Trust
		want  string
	}{
		{walker.FoundByContext, walker.TrustContext, "context"},
		{walker.FoundByCFI, walker.TrustCFI, "cfi"},
		{walker.FoundByCode, walker.TrustCode, "cfi"},
		{walker.FoundByFramePointer, walker.TrustFramePointer, "fp"},
		{walker.FoundByScan, walker.TrustScanCode, "scan"},
		{walker.FoundByScan, walker.TrustScan, "scan"},
		{walker.FoundByScan, walker.TrustCFIScan, "cfi_scan"},
	} {
		if got := trustOf(symstore.FoundBy(tc.found), tc.trust); got != tc.want {
			t.Errorf("trustOf(%v, %v) = %q, want %q", tc.found, tc.trust, got, tc.want)
		}
	}
	if got := trustOf(symstore.FoundByReport, walker.TrustNone); got != "prewalked" {
		t.Errorf("a reporter's frame: trustOf = %q, want prewalked", got)
	}
}
