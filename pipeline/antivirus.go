package pipeline

import (
	"context"
	"encoding/json"
	"fmt"

	"quire/pipeline/clamd"
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
	verdict, sig, err := clamd.Scan(ctx, j.p.cfg.Engines.Clamd, j.Open)
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
