//go:build !race

package hostile

// raceSlowdown is 1 without the race detector: CaseTime as documented.
const raceSlowdown = 1
