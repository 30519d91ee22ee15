package testtool

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// FreshSeedsEnv names the seeds (comma-separated) of the programs a test
// run generates afresh, to repeat a run that failed; unset, they are
// drawn from the clock and logged.
const FreshSeedsEnv = "STACKIMAGE_FRESH_SEEDS"

// FreshSeed returns the seed of the one program a test generates afresh:
// the first of FreshSeedsEnv, or one drawn from the clock. It logs the
// seed and how to repeat the run.
func FreshSeed(tb testing.TB) int64 {
	tb.Helper()
	seed := time.Now().UnixNano()
	if env := os.Getenv(FreshSeedsEnv); env != "" {
		v, err := strconv.ParseInt(strings.TrimSpace(strings.Split(env, ",")[0]), 10, 64)
		if err != nil {
			tb.Fatalf("%s: %v", FreshSeedsEnv, err)
		}
		seed = v
	}
	tb.Logf("seed drawn for this run: %d (repeat with %s=%d)", seed, FreshSeedsEnv, seed)
	return seed
}
