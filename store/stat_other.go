//go:build !linux

package store

import "os"

// statOf gives no fingerprint off Linux: the chain is then re-hashed on
// every open that needs it, which is slower but as exact.
func statOf(os.FileInfo) (FileStat, bool) { return FileStat{}, false }
