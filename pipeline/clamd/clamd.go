// Package clamd scans content with ClamAV's daemon: the content is
// streamed to clamd (INSTREAM) over its socket, and its verdict read back.
// What a verdict does to a document (tags, a malware scan result) the
// pipeline's ANTIVIRUS engine decides.
package clamd

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"quire/pipeline/engine"
)

// Scan sends the content open gives to clamd at addr ("unix:/path" or
// "tcp:host:port") and returns "OK", "FOUND" with the signature name, or
// "ERROR" with clamd's message. clamd not reachable, or a stream cut
// short, is transient (engine.Retryable).
func Scan(ctx context.Context, addr string, open func() (io.ReadCloser, error)) (string, string, error) {
	network, address, ok := strings.Cut(addr, ":")
	if !ok || (network != "unix" && network != "tcp") {
		return "", "", fmt.Errorf("invalid clamd address '%s' (want unix:/path or tcp:host:port)", addr)
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, network, address)
	if err != nil {
		return "", "", engine.Retryable(fmt.Errorf("clamd not reachable at %s: %v (install and start the Debian package clamav-daemon)", addr, err))
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	} else {
		conn.SetDeadline(time.Now().Add(10 * time.Minute))
	}
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	defer stop()
	rc, err := open()
	if err != nil {
		return "", "", err
	}
	defer rc.Close()
	w := bufio.NewWriterSize(conn, 64<<10)
	if _, err := w.WriteString("zINSTREAM\x00"); err != nil {
		return "", "", engine.Retryable(err)
	}
	buf := make([]byte, 32<<10)
	var hdr [4]byte
	for {
		n, rerr := rc.Read(buf)
		if n > 0 {
			binary.BigEndian.PutUint32(hdr[:], uint32(n))
			if _, err := w.Write(hdr[:]); err != nil {
				return "", "", engine.Retryable(fmt.Errorf("send to clamd: %v", err))
			}
			if _, err := w.Write(buf[:n]); err != nil {
				// clamd closes the stream when it exceeds StreamMaxLength;
				// its reply says so.
				break
			}
		}
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			return "", "", rerr
		}
	}
	binary.BigEndian.PutUint32(hdr[:], 0)
	w.Write(hdr[:])
	if err := w.Flush(); err != nil && ctx.Err() == nil {
		// Read the reply anyway: it explains why clamd stopped reading.
		_ = err
	}
	reply, err := bufio.NewReader(conn).ReadString(0)
	if err != nil && reply == "" {
		if ctx.Err() != nil {
			return "", "", ctx.Err()
		}
		return "", "", engine.Retryable(fmt.Errorf("read clamd reply: %v", err))
	}
	reply = strings.TrimRight(reply, "\x00\n")
	reply = strings.TrimPrefix(reply, "stream: ")
	switch {
	case reply == "OK":
		return "OK", "", nil
	case strings.HasSuffix(reply, " FOUND"):
		return "FOUND", strings.TrimSuffix(reply, " FOUND"), nil
	case strings.HasSuffix(reply, " ERROR"):
		return "ERROR", "clamd: " + strings.TrimSuffix(reply, " ERROR"), nil
	}
	return "", "", fmt.Errorf("unexpected clamd reply %q", reply)
}

// Check pings clamd at addr ("": the Debian socket) and reports whether
// it answered, with its version or why not (quire doctor).
func Check(ctx context.Context, addr string) (bool, string) {
	if addr == "" {
		addr = "unix:/run/clamav/clamd.ctl"
	}
	network, address, _ := strings.Cut(addr, ":")
	d := net.Dialer{Timeout: 5 * time.Second}
	conn, err := d.DialContext(ctx, network, address)
	if err != nil {
		return false, fmt.Sprintf("not reachable at %s: %v (install and start clamav-daemon)", addr, err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Write([]byte("zVERSION\x00")); err != nil {
		return false, err.Error()
	}
	v, err := bufio.NewReader(conn).ReadString(0)
	if err != nil && v == "" {
		return false, fmt.Sprintf("no answer from %s: %v", addr, err)
	}
	return true, addr + ": " + strings.TrimRight(v, "\x00\n")
}
