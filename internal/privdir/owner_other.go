//go:build !unix

package privdir

import (
	"io/fs"
	"os"
)

// unixModes: the mode bits do not say who may write.
const unixModes = false

// owner cannot tell a file's owner here: the check relies on the mode bits
// and the per-user directories the system provides.
func owner(fs.FileInfo) (uid uint32, mine, ok bool) { return 0, false, false }

func userTag() string {
	if u := os.Getenv("USERNAME"); u != "" {
		return u
	}
	return "user"
}
