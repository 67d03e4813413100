//go:build unix

package opencode_test

import (
	"os/exec"
	"syscall"
)

// runAsNobody runs cmd as the unprivileged user nobody (uid 65534).
func runAsNobody(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
}
