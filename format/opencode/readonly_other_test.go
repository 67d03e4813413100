//go:build !unix

package opencode_test

import "os/exec"

// runAsNobody is never reached here: the caller switches users only when
// running as root (uid 0), which this system does not report.
func runAsNobody(*exec.Cmd) {}
