// Package boltstore is a tasks.Store in a bbolt file, for one server whose
// finished results and task records survive a restart (wasmcp serve
// --data-dir). One process at a time may open the file: a second Open
// fails at once with ErrLocked.
//
// Records are JSON under their id in one bucket; a second bucket indexes
// an owner's tasks in creation order (owner, a zero byte, the task's
// OrderKey), which List pages through.
package boltstore
