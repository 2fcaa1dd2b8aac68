package pipeline

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"quire/pipeline/engine"
	"quire/storage"
)

// Scan statuses: FormKiQ's antivirus tag values and MalwareScanStatus.
const (
	scanClean     = "CLEAN"
	scanInfected  = "INFECTED"
	scanMalicious = "MALICIOUS"
	scanError     = "ERROR"
)

// runAntivirus streams the content to clamd (INSTREAM) and records the
// verdict: the CLAMAV_SCAN_STATUS and CLAMAV_SCAN_TIMESTAMP tags (as
// FormKiQ's antivirus module) and a malware scan result read back at
// GET /documents/{id}/malwareScan. An infected document is not an action
// failure: the action completes with the verdict.
func runAntivirus(ctx context.Context, j *Job) (*Outcome, error) {
	verdict, sig, err := j.clamScan(ctx)
	if err != nil {
		return nil, err
	}
	now := j.Now().UTC()
	tagStatus, resStatus := scanClean, scanClean
	msg := ""
	switch verdict {
	case "FOUND":
		tagStatus, resStatus, msg = scanInfected, scanMalicious, sig
	case "ERROR":
		tagStatus, resStatus, msg = scanError, scanError, sig
	}
	ts := now.Format("2006-01-02T15:04:05+0000")
	tags, err := j.command(storage.OpSetTags, storage.SetTags{DocumentID: j.Doc.DocumentID, Mode: storage.TagsAdd, Tags: []storage.Tag{
		{Key: "CLAMAV_SCAN_STATUS", Value: tagStatus, Type: "SYSTEMDEFINED"},
		{Key: "CLAMAV_SCAN_TIMESTAMP", Value: ts, Type: "SYSTEMDEFINED"},
	}})
	if err != nil {
		return nil, err
	}
	res, _ := json.Marshal(map[string]any{"scanStatus": resStatus, "scanEngine": "CLAM_AV", "scanMessage": msg,
		"scannedDate": ts, "s3version": j.Doc.ContentSHA256})
	out := &Outcome{
		Then:     []*storage.Command{tags},
		Results:  []storage.ActionResult{{Kind: "malwareScan", Name: fmt.Sprintf("%020d", now.UnixNano()), Value: res}},
		Metadata: map[string]string{"scanStatus": resStatus},
	}
	if msg != "" {
		out.Message = msg
	}
	// The malware scan event (quire.document.malwareScan) is written
	// with the outcome, from scanStatus (storage/events.go).
	if verdict == "ERROR" {
		out.Status = storage.ActionFailed
	}
	return out, nil
}

// clamScan sends the content to clamd and returns "OK", "FOUND" with the
// signature name, or "ERROR" with clamd's message.
func (j *Job) clamScan(ctx context.Context) (string, string, error) {
	addr := j.p.cfg.Engines.Clamd
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
	rc, err := j.Open()
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
