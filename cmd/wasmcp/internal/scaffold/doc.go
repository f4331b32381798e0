// Package scaffold writes the files of a new tool — `wasmcp new LANG NAME`:
// the source of a one-tool module in TypeScript, JavaScript, Go, Rust or
// C, its build line (none for a script), and a policy stub that grants
// nothing. What it writes builds with the toolchains docs/writing-tools.md
// names and passes `wasmcp check` (TestScaffoldsPassCheck in tests/).
//
// The Go, Rust and C SDKs are used from a wasmcp checkout (they are not
// published to a registry): the compiled languages' files name the
// checkout's guest-sdk directory, found by Find.
package scaffold
