//go:build !race

package runtime

// raceEnabled reports a test binary built with -race.
const raceEnabled = false
