package server_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"quire/quiretest"
	"quire/ratelimit"
	"quire/server/internal/servertest"
)

// TestRateLimits_ValidLinksAreNotThrottled (issue 43): a signed link is
// the credential, so reading many documents back through their signed
// URLs from one address is never limited; failed verifications (a forged
// signature, an unknown short link) spend the links budget and are
// refused beyond it, and valid links from that same address still work.
func TestRateLimits_ValidLinksAreNotThrottled(t *testing.T) {
	s := quiretest.NewServer(t, quiretest.RateLimits(map[string]string{ratelimit.Links: "2/s burst 5, global 20/s burst 50"}))
	admin := s.Admin()
	const n = 40 // eight times the burst
	var urls []string
	for i := range n {
		id := servertest.AddDoc(t, s, admin, "", map[string]any{"path": "back/" + strconv.Itoa(i) + ".txt", "content": "document " + strconv.Itoa(i)})
		r := s.Do(http.MethodGet, "/documents/"+id+"/url", nil, admin)
		servertest.MustStatus(t, r, http.StatusOK)
		urls = append(urls, quiretest.Str(t, r.JSON(t), "url"))
	}
	client := servertest.ClientFrom("127.0.0.7")
	get := func(u string) (int, string) {
		st, _, b := servertest.RawDo(t, client, http.MethodGet, u, "")
		return st, b
	}
	for i, u := range urls {
		if st, b := get(u); st != http.StatusOK || b != "document "+strconv.Itoa(i) {
			t.Fatalf("signed link %d of %d: %d %.100s", i+1, n, st, b)
		}
	}
	// Forged signatures and unknown short links: refused, and beyond the
	// budget (5) limited.
	forged, limited := 0, 0
	for i := range 20 {
		u := strings.Replace(urls[i], "signature=", "signature=x", 1)
		if i%2 == 1 {
			u = s.URL + "/s/no-such-slug-" + strconv.Itoa(i)
		}
		switch st, b := get(u); st {
		case http.StatusForbidden, http.StatusNotFound:
			forged++
		case http.StatusTooManyRequests:
			limited++
		default:
			t.Fatalf("a forged link: %d %s", st, b)
		}
	}
	if forged > 6 || limited < 14 {
		t.Errorf("%d forged links answered, %d limited: want at most the burst (5) and a refill answered", forged, limited)
	}
	// The address that failed still reads with valid links.
	for i, u := range urls[:10] {
		if st, _ := get(u); st != http.StatusOK {
			t.Errorf("a valid link after the failures (%d): %d", i, st)
		}
	}
}
