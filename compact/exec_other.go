//go:build !unix

package compact

import "os/exec"

func setProcessGroup(*exec.Cmd) {}
