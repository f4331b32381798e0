// Package logbatch is a writer that gathers whole lines and writes them in
// batches: the server's audit trail (one line per guest call) goes through
// it, so a call pays for an append to a buffer, not a write system call
// and a contended lock on the log's file.
//
// A batch is written when it reaches its size, after at most the flush
// interval since its first line, and when the writer is closed. Lines are
// never split: each Write is expected to be whole lines (a log handler
// writes one record per Write), and a batch holds whole Writes. What the
// process loses if it is killed without Close is at most one interval's
// lines.
package logbatch
