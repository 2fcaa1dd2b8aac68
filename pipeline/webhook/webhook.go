// Package webhook posts JSON to the receivers the pipeline calls: WEBHOOK
// actions' urls, event buses (EVENTBRIDGE) and event subscriptions,
// signed with the webhook secret. Which client (the outbound policy's for
// destinations users chose) and which receiver the pipeline decides.
package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"quire/outbound"
	"quire/pipeline/engine"
)

// BusClient posts events to the operator's event buses. Redirects are
// not followed: a receiver that moved must be reconfigured, not silently
// chased. Webhooks, whose urls users give, go through the outbound
// policy's client instead (the pipeline's).
var BusClient = &http.Client{
	Timeout:       30 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// RefusedError is a post the outbound policy refused.
type RefusedError struct{ error }

// Post sends body to url through client, signed when secret is set: the
// X-Quire-Timestamp header holds the Unix time (now) and
// X-Quire-Signature "sha256=" + hex(HMAC-SHA256(secret, timestamp + "." +
// body)). A network error, 408, 429 or 5xx is transient
// (engine.Retryable); another status, or a destination the outbound
// policy refuses (a RefusedError), is not. The error says what happened
// in a few words and never carries what the receiver sent.
func Post(ctx context.Context, client *http.Client, url, contentType string, body []byte, secret string, now func() time.Time) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("invalid url: %v", err)
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("User-Agent", "Quire")
	if secret != "" {
		ts := strconv.FormatInt(now().Unix(), 10)
		m := hmac.New(sha256.New, []byte(secret))
		m.Write([]byte(ts + "."))
		m.Write(body)
		req.Header.Set("X-Quire-Timestamp", ts)
		req.Header.Set("X-Quire-Signature", "sha256="+hex.EncodeToString(m.Sum(nil)))
	}
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		msg := fmt.Errorf("post to %s: %s", url, outbound.Reason(err))
		if errors.As(err, new(*outbound.RefusedError)) {
			return 0, RefusedError{msg}
		}
		return 0, engine.Retryable(msg)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	switch {
	case resp.StatusCode < 300:
		return resp.StatusCode, nil
	case resp.StatusCode == http.StatusRequestTimeout || resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return resp.StatusCode, engine.Retryable(fmt.Errorf("%s answered %s", url, outbound.Status(resp.StatusCode)))
	default:
		return resp.StatusCode, fmt.Errorf("%s answered %s", url, outbound.Status(resp.StatusCode))
	}
}
