package servertest

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"quire/quiretest"
)

// DavDo sends one WebDAV request with Basic auth (apikey:key).
func DavDo(t *testing.T, s *quiretest.Server, method, p, key string, body []byte, hdr map[string]string) (int, string, http.Header) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, s.URL+p, rd)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.SetBasicAuth("apikey", key)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := s.Client.Do(req)
	if err != nil {
		t.Errorf("%s %s: %v", method, p, err)
		return 0, "", nil
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b), res.Header
}
