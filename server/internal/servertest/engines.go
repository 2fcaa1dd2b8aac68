package servertest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"quire/quiretest"
)

func B64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// LlmServer is an OpenAI-compatible chat endpoint on loopback: it answers
// prompts that ask for JSON with fields it finds in the document text, and
// records the requests.
type LlmServer struct {
	*httptest.Server
	Mu   sync.Mutex
	Reqs []map[string]any
	auth []string
}

func NewLLMServer(t *testing.T) *LlmServer {
	l := &LlmServer{}
	l.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/v1/models" {
			json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": []any{
				map[string]any{"id": "mistral", "object": "model"}, map[string]any{"id": "llama3", "object": "model"}}})
			return
		}
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		// This runs in the server's goroutine, not the test's: a request
		// it cannot read is answered 400 (the action fails, and so does
		// the test's check of it), never with t.Fatal.
		body, _ := io.ReadAll(r.Body)
		var req map[string]any
		var typed struct{ Messages []struct{ Content string } }
		if json.Unmarshal(body, &req) != nil || json.Unmarshal(body, &typed) != nil || len(typed.Messages) == 0 {
			http.Error(w, "want a JSON body with messages", http.StatusBadRequest)
			return
		}
		l.Mu.Lock()
		l.Reqs = append(l.Reqs, req)
		l.auth = append(l.auth, r.Header.Get("Authorization"))
		l.Mu.Unlock()
		prompt := typed.Messages[len(typed.Messages)-1].Content
		answer := "A short summary."
		switch {
		case strings.Contains(prompt, "Find values in the document for these tags"):
			answer = `Here you go: {"customer": ["Globex"], "year": "2026", "missing": []}`
		case strings.Contains(prompt, "JSON object with exactly these keys"):
			answer = `{"invoiceNumber": "INV-77", "total": 4200}`
		}
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": answer}}}})
	}))
	t.Cleanup(l.Close)
	return l
}

func (l *LlmServer) Last() (map[string]any, string) {
	l.Mu.Lock()
	defer l.Mu.Unlock()
	return l.Reqs[len(l.Reqs)-1], l.auth[len(l.auth)-1]
}

// Download fetches a document's content through its content URL.
func Download(t *testing.T, s *quiretest.Server, tok, site, id string) []byte {
	t.Helper()
	r := s.Do(http.MethodGet, "/documents/"+id+"/url"+site, nil, tok)
	MustStatus(t, r, http.StatusOK)
	resp, err := http.Get(quiretest.Str(t, r.JSON(t), "url"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	return b.Bytes()
}

// SiteID is the site id a site query of the sites table selects.
func SiteID(query string) string {
	if query == "" {
		return "default"
	}
	return strings.TrimPrefix(query, "?siteId=")
}
