// Package regfile reads the files an operator places for the server (a
// module, a script, its policy file, a skill file, a lock): each must be
// a regular file of bounded size, and reading it must neither block nor
// run without end whatever was put at its name.
//
// A FIFO nobody writes, opened the usual way, blocks the open for ever; a
// link to /dev/zero reads without end; a sparse file claims gigabytes it
// never wrote. So a file is opened with O_NONBLOCK (a FIFO's open returns
// at once), checked with fstat on the open descriptor (no window between
// the check and the read), refused unless regular, refused when its size
// is over the cap, and read through an io.LimitReader of cap+1 bytes, so
// a file that grows while read is refused too, never read whole.
//
// Links are followed: operators link files into a tools directory, and
// what the link reaches must pass the same checks. Code that must stay
// inside a directory opens through an os.Root (ReadIn, OpenIn).
package regfile
