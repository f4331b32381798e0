//go:build !linux

package host

// threadCPU is not available here; benchmarks report wall time only.
func threadCPU() int64 { return 0 }

// processCPU is not available here.
func processCPU() int64 { return 0 }
