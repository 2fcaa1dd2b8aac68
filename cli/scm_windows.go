//go:build windows

package cli

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/windows/svc"

	"quire/config"
)

// runUnderSCM serves as the Windows service named "quire": the service
// control manager starts `quire service run`, which reports to it that it
// runs, and stops on its Stop or Shutdown. Unlike `serve`, it does not
// guess whether the service manager started it (the guess looks at the
// parent process's session, which Wine does not set as Windows does).
func runUnderSCM(l *config.Loaded, log io.Writer) error {
	return svc.Run("quire", &scmHandler{l: l, log: log})
}

type scmHandler struct {
	l   *config.Loaded
	log io.Writer
}

func (h *scmHandler) Execute(_ []string, req <-chan svc.ChangeRequest, st chan<- svc.Status) (bool, uint32) {
	st <- svc.Status{State: svc.StartPending}
	stop := make(chan os.Signal, 1)
	done := make(chan error, 1)
	go func() { done <- serve(h.l, h.log, stop) }()
	st <- svc.Status{State: svc.Running, Accepts: svc.AcceptStop | svc.AcceptShutdown}
	for {
		select {
		case err := <-done:
			// Serving ended on its own: a failure exit, so that the
			// service's recovery restarts it.
			fmt.Fprintln(h.log, "quire:", err)
			return false, 1
		case c := <-req:
			switch c.Cmd {
			case svc.Interrogate:
				st <- c.CurrentStatus
			case svc.Stop, svc.Shutdown:
				st <- svc.Status{State: svc.StopPending}
				stop <- os.Interrupt
				if err := <-done; err != nil {
					fmt.Fprintln(h.log, "quire:", err)
					return false, 1
				}
				return false, 0
			}
		}
	}
}
