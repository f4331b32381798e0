//go:build race

package interop

// raceEnabled is true when the tests run with -race; the wasmcp binary they
// start is then built with -race too.
const raceEnabled = true
