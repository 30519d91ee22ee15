//go:build race

package hostile

// raceSlowdown scales CaseTime under the race detector, which makes the
// parsers several times slower (`make test` runs this package's tests
// with -race too); the allocation budget is not scaled.
const raceSlowdown = 10
