//go:build !linux

package estimate

import "os"

// statMatches: without a ctime this build can read, a recorded stat never
// vouches for the file, and a session with the hash chain is measured by
// the full path.
func statMatches(os.FileInfo, chainStat) bool { return false }
