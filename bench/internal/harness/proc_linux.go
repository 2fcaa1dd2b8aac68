//go:build linux

package harness

import (
	"os/exec"
	"syscall"
)

// killWithParent makes the kernel kill the child if the benchmark dies
// without running its deferred cleanup (SIGKILL, a panic in a worker).
func killWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
