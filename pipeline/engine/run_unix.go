//go:build unix

package engine

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a process group of its own, led by it.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills cmd's process group: the engine and everything it
// started (LibreOffice's soffice.bin, ocrmypdf's ghostscript and
// tesseract).
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}

// reapGroup kills what an engine that exited left running in its group:
// orphans of the run. The kernel does not reuse the group's id while a
// member lives; when none does, the call finds no group (ESRCH) unless
// a new process took that id and made itself a group leader in the
// instant since Wait, which pid allocation makes next to impossible.
func reapGroup(cmd *exec.Cmd) { killGroup(cmd) }
