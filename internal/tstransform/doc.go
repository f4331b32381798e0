// Package tstransform turns a script file's TypeScript (or JavaScript with
// import/export) into the CommonJS JavaScript the script runner runs, or a
// script and the packages it imports into one program (Bundle), with
// esbuild's Go API (github.com/evanw/esbuild/pkg/api) linked into the
// host, run in a child process of the running binary.
//
// Why a child process: esbuild's parser recurses on nesting, and a Go
// stack overflow is a fatal error, not a panic: a 4 MiB .ts of nested
// parentheses, `!` or arrows ends the process that parses it. In a child
// that is one failed transform; in the server it would be every tool. The
// child is the same executable (/proc/self/exe), started with only
// childEnv in its environment; this package's init sees it, transforms
// one request read from stdin, answers on stdout and exits, before the
// program's main (or a test binary's tests) runs. The child gets
//
//   - at most cpuSeconds (10 s) of CPU time (RLIMIT_CPU where the platform has
//     it: the kernel ends a child that spins, however busy the machine,
//     and never one that merely waited for a CPU), and a wall-clock
//     ceiling (WallCeiling) only as the last resort;
//   - a stack of at most maxStack (deep nesting fails fast);
//   - an input of at most the caller's cap (the registry's 4 MiB script
//     cap), so its memory is bounded by esbuild's linear use of it;
//   - no network and no environment; a transform (esbuild's transform
//     API) reads nothing but the text it is given, a bundle (Bundle, a
//     script with the node_modules beside it) only files inside the tools
//     directory, through its own resolver and loader (bundle.go), at most
//     MaxInput bytes of them.
//
// At most maxChildren run at once. docs/design/scripts.md, "The
// TypeScript transform", gives the choice, the figures and the threat
// model.
package tstransform
