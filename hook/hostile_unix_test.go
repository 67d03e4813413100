//go:build unix

package hook

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Issue 45 #2: a state file that is a FIFO, a link to /dev/zero, a
// directory or an oversized file neither hangs the hook nor stops the
// injection: it is set aside.
func TestHostileStateFile(t *testing.T) {
	cases := map[string]func(path string) error{
		"fifo":      func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"dev zero":  func(p string) error { return os.Symlink("/dev/zero", p) },
		"directory": func(p string) error { return os.Mkdir(p, 0o700) },
		"symlink to a state": func(p string) error {
			_ = os.WriteFile(p+".elsewhere", []byte(`{"schema_version":1}`), 0o600)
			return os.Symlink(p+".elsewhere", p)
		},
		"oversized": func(p string) error { return os.WriteFile(p, make([]byte, maxStateBytes+1), 0o600) },
		"garbage":   func(p string) error { return os.WriteFile(p, []byte("\x00\xff{"), 0o600) },
	}
	for name, plant := range cases {
		t.Run(name, func(t *testing.T) {
			var sp string
			done := make(chan error, 1)
			go func() {
				file, cache := pendingAfter(t, func(p string) {
					sp = p
					_ = os.MkdirAll(filepath.Dir(p), 0o700)
					if err := plant(p); err != nil {
						t.Error(err)
					}
				})
				var printed int
				err := prompt(file, cache, func([]byte) error { printed++; return nil })
				if err == nil && printed != 1 {
					err = errors.New("the compaction was not injected")
				}
				done <- err
			}()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the hook hangs on the state file")
			}
			if fi, err := os.Lstat(sp); err != nil || !fi.Mode().IsRegular() {
				t.Fatalf("the state was not written: %v %v", fi, err)
			}
		})
	}
}
