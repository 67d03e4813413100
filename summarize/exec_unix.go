//go:build unix

package summarize

import (
	"os/exec"
	"syscall"
)

// setProcessGroup puts the shell and everything it starts in one process
// group, so cancelling (Ctrl-C) kills the whole pipeline, not just sh.
func setProcessGroup(c *exec.Cmd) {
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Cancel = func() error {
		if c.Process == nil {
			return nil
		}
		return syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
	}
}
