//go:build unix

package privdir

import (
	"io/fs"
	"os"
	"strconv"
	"syscall"
)

// unixModes: the mode bits say who may write.
const unixModes = true

// owner reports the file's owner and whether it is the current user; ok is
// false where the system does not say.
func owner(st fs.FileInfo) (uid uint32, mine, ok bool) {
	sys, isStat := st.Sys().(*syscall.Stat_t)
	if !isStat {
		return 0, false, false
	}
	return sys.Uid, int(sys.Uid) == os.Geteuid(), true
}

func userTag() string { return strconv.Itoa(os.Geteuid()) }
