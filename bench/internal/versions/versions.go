package versions

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"time"

	"quire/bench/internal/harness"
)

// versionsBench measures what versions cost a reader (issue 16): a
// document with 1,000 earlier versions, listing all of them (10 pages of
// 100) and reading its oldest version's content, each against reading the
// current content of the same document in the same run.
func (s *session) versionsBench(ctx context.Context, srv *harness.Server) error {
	const versions, rounds = 1000, 30
	s.Logf("versions: one document, %d content changes", versions)
	var created struct{ DocumentID string }
	if err := srv.DoJSON(ctx, http.MethodPost, "/documents", map[string]any{"path": "bench/versions.txt", "content": "version 0", "contentType": "text/plain"}, http.StatusCreated, &created); err != nil {
		return err
	}
	doc := "/documents/" + created.DocumentID
	for i := 1; i <= versions; i++ {
		if err := srv.DoJSON(ctx, http.MethodPatch, doc, map[string]any{"content": fmt.Sprintf("version %d", i), "contentType": "text/plain"}, http.StatusOK, nil); err != nil {
			return err
		}
	}
	// The oldest version still kept (at most 1,000 earlier ones are).
	var oldest string
	listAll := func() (int, error) {
		n, next := 0, ""
		for range 20 {
			p := doc + "/versions?limit=100"
			if next != "" {
				p += "&next=" + next
			}
			var page struct {
				Documents []struct{ VersionKey string }
				Next      string
			}
			if err := srv.DoJSON(ctx, http.MethodGet, p, nil, http.StatusOK, &page); err != nil {
				return n, err
			}
			n += len(page.Documents)
			if len(page.Documents) > 0 {
				oldest = page.Documents[len(page.Documents)-1].VersionKey
			}
			if page.Next == "" {
				return n, nil
			}
			next = page.Next
		}
		return n, fmt.Errorf("versions listing: more than 20 pages")
	}
	timeIt := func(fn func() error) (time.Duration, error) {
		var ds []time.Duration
		for range rounds {
			t0 := time.Now()
			if err := fn(); err != nil {
				return 0, err
			}
			ds = append(ds, time.Since(t0))
		}
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		return ds[len(ds)/2], nil
	}
	var listed int
	list, err := timeIt(func() (err error) { listed, err = listAll(); return err })
	if err != nil {
		return err
	}
	read := func(q string) func() error {
		return func() error {
			var c struct{ Content string }
			return srv.DoJSON(ctx, http.MethodGet, doc+"/content"+q, nil, http.StatusOK, &c)
		}
	}
	current, err := timeIt(read(""))
	if err != nil {
		return err
	}
	old, err := timeIt(read("?versionKey=" + oldest))
	if err != nil {
		return err
	}
	ms := func(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }
	s.Rep.Rows = append(s.Rep.Rows,
		harness.Row{Name: fmt.Sprintf("versions: list all %d states (pages of 100), median", listed), Quire: ms(list), Baseline: ms(current),
			Ratio: fmt.Sprintf("%.1f", float64(list)/float64(current)), Target: "-", Status: "info"},
		harness.Row{Name: "versions: read the oldest version's content, median", Quire: ms(old), Baseline: ms(current),
			Ratio: fmt.Sprintf("%.2f", float64(old)/float64(current)), Target: "-", Status: "info"},
	)
	s.Rep.Note("versions: baseline is reading the current content of the same document (%d rounds each)", rounds)
	return nil
}
