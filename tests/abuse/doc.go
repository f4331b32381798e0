// Package abuse is the resource-abuse suite: each test starts `wasmcp
// serve --http` on loopback as a separate process, runs one attack against
// it for a few seconds (from 127.0.0.2 and up) beside an ordinary client
// (from 127.0.0.1), and asserts that
//
//   - the server's peak resident memory (VmHWM in /proc/PID/status) stays
//     under the test's stated bound,
//   - its CPU use (utime+stime in /proc/PID/stat) falls back to idle within
//     two seconds of the attacker leaving,
//   - every call of the ordinary client succeeds throughout, and
//   - the server's log says what it refused.
//
// The attacks and their counts are bounded; the suite runs in well under a
// minute on two cores. It needs Linux (/proc) and the 127.0.0.0/8 loopback
// range; elsewhere it is skipped.
//
// Run it with: go test ./tests/abuse (add -v for the measured figures)
package abuse
