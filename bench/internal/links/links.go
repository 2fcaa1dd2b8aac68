package links

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"quire/bench/internal/harness"
)

// Signed links (issue 43): a signed download URL is its own credential,
// so a line-of-business app or a backup script reading documents back
// through them from one address must not be held to the links class's
// per-address rate (20/s by default) that a flood of forged links meets.
// 64 clients of one address download linksDocs documents through their
// signed URLs; the baseline is the same downloads through GET
// /documents/{id}/content with a token, in the same run. The server runs
// with its default rate limits.

const (
	// linksDocs is the documents of the full run.
	linksDocs = 5000
	// linksClients is the concurrent clients, all of one address.
	linksClients = 64
	// linksTarget is the lowest acceptable signed-link rate over the
	// /content rate.
	linksTarget = 0.9
	// linksDocSize is each document's content (text: /content answers it
	// inline, so both ways move the same bytes).
	linksDocSize = 4 << 10
)

// linksBench adds the signed-links row. docs is the documents to read
// back (0: linksDocs, or 500 in a quick run).
func (s *session) linksBench(ctx context.Context, srv *harness.Server, docs int) error {
	if docs <= 0 {
		docs = linksDocs
		if s.Cfg.Quick {
			docs = 500
		}
	}
	s.Logf("signed links: %d documents of %s, %d clients of one address", docs, harness.SizeName(linksDocSize), linksClients)
	body := strings.Repeat("signed link bench ", linksDocSize/18+1)[:linksDocSize]
	ids := make([]string, docs)
	urls := make([]string, docs)
	err := harness.Parallel(ctx, docs, linksClients, func(i int) error {
		var c struct{ DocumentID string }
		if err := srv.DoJSON(ctx, http.MethodPost, "/documents", map[string]any{"path": fmt.Sprintf("bench/links/%05d.txt", i),
			"content": body, "contentType": "text/plain"}, http.StatusCreated, &c); err != nil {
			return err
		}
		var u struct{ URL string }
		if err := srv.DoJSON(ctx, http.MethodGet, "/documents/"+c.DocumentID+"/url", nil, http.StatusOK, &u); err != nil {
			return err
		}
		ids[i], urls[i] = c.DocumentID, u.URL
		return nil
	})
	if err != nil {
		return err
	}
	var limited atomic.Int64
	content := func() (time.Duration, error) {
		t0 := time.Now()
		err := harness.Parallel(ctx, docs, linksClients, func(i int) error {
			var c struct{ Content string }
			if err := srv.DoJSON(ctx, http.MethodGet, "/documents/"+ids[i]+"/content", nil, http.StatusOK, &c); err != nil {
				return err
			}
			if len(c.Content) != linksDocSize {
				return fmt.Errorf("content of %s: %d bytes, want %d", ids[i], len(c.Content), linksDocSize)
			}
			return nil
		})
		return time.Since(t0), err
	}
	signed := func() (time.Duration, error) {
		t0 := time.Now()
		err := harness.Parallel(ctx, docs, linksClients, func(i int) error {
			resp, err := srv.Request(ctx, http.MethodGet, urls[i], nil, 0, "")
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			if resp.StatusCode == http.StatusTooManyRequests {
				limited.Add(1)
			}
			if err := harness.CheckStatus(resp, http.StatusOK); err != nil {
				return fmt.Errorf("signed link %d: %w", i, err)
			}
			n, err := io.Copy(io.Discard, resp.Body)
			if err == nil && n != linksDocSize {
				err = fmt.Errorf("signed link %d: %d bytes, want %d", i, n, linksDocSize)
			}
			return err
		})
		return time.Since(t0), err
	}
	// Two rounds each, interleaved; the best of each is compared.
	var bestContent, bestSigned time.Duration
	for round := range 2 {
		c, err := content()
		if err != nil {
			return err
		}
		sg, err := signed()
		if err != nil {
			return fmt.Errorf("%w (%d answered 429)", err, limited.Load())
		}
		if round == 0 || c < bestContent {
			bestContent = c
		}
		if round == 0 || sg < bestSigned {
			bestSigned = sg
		}
	}
	rate := func(d time.Duration) float64 { return float64(docs) / d.Seconds() }
	ratio := rate(bestSigned) / rate(bestContent)
	s.Rep.Rows = append(s.Rep.Rows, harness.Row{
		Name:     fmt.Sprintf("signed links: %d downloads, %d clients of one address", docs, linksClients),
		Quire:    fmt.Sprintf("%.0f docs/s", rate(bestSigned)),
		Baseline: fmt.Sprintf("%.0f docs/s", rate(bestContent)),
		Ratio:    fmt.Sprintf("%.2f", ratio),
		Target:   fmt.Sprintf(">= %.1f", linksTarget),
		Status:   harness.Status(ratio >= linksTarget),
	})
	s.Rep.Note("signed links: baseline is GET /documents/{id}/content (inline text) of the same documents with a token, same clients; best of 2 rounds each; default rate limits (links 20/s per address), no 429 allowed")
	return nil
}
