//go:build !linux

package wasmrewrite

// processCPU is 0 where it is not read (see cpu_linux_test.go).
func processCPU() int64 { return 0 }
