//go:build !unix

package tstransform

import "os"

// limitCPU has no portable equivalent here: the wall ceiling bounds the
// child.
func limitCPU(uint64) {}

func overCPU(*os.ProcessState, uint64) bool { return false }
