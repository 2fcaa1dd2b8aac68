package admin_test

import (
	"net"
	"net/http"
	"strings"
	"testing"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

func TestInferenceModels(t *testing.T) {
	t.Run("no endpoint", func(t *testing.T) {
		s := quiretest.NewServer(t)
		r := s.Do(http.MethodGet, "/system/inferenceModels", nil, s.Admin())
		servertest.MustStatus(t, r, http.StatusOK)
		servertest.MustBody(t, r, `{"inferenceModels":[]}`)
	})

	t.Run("endpoint down", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		dead := "http://" + ln.Addr().String() + "/v1"
		ln.Close()
		s := quiretest.NewServer(t, func(c *quiretest.Config) { c.Pipeline.Engines.LLM.URL = dead })
		servertest.MustStatus(t, s.Do(http.MethodGet, "/system/inferenceModels", nil, s.Admin()), http.StatusBadGateway)
	})

	llm := servertest.NewLLMServer(t)
	s := servertest.PipelineServer(t, func(c *quiretest.Config) {
		c.Pipeline.Engines.LLM.URL = llm.URL + "/v1"
		c.Pipeline.Engines.LLM.ModelID = "llama3"
		c.Pipeline.Engines.LLM.RequireAgreement = true
	})
	tok := s.Admin()
	availability := func(t *testing.T) map[string]string {
		t.Helper()
		r := s.Do(http.MethodGet, "/system/inferenceModels", nil, s.Token("joe", "finance"))
		servertest.MustStatus(t, r, http.StatusOK)
		out := map[string]string{}
		for _, m := range quiretest.List(t, r.JSON(t), "inferenceModels") {
			mm := quiretest.Obj(t, m)
			if quiretest.Str(t, mm, "authorizationStatus") != "AUTHORIZED" || quiretest.Str(t, quiretest.Item(t, mm, "modelInvocations", 0), "invocationType") != "DIRECT" {
				t.Errorf("model %v", mm)
			}
			out[quiretest.Str(t, mm, "defaultModelId")] = quiretest.Str(t, mm, "agreementAvailability")
		}
		return out
	}
	if got := availability(t); got["llama3"] != "NOT_AVAILABLE" || got["mistral"] != "NOT_AVAILABLE" || len(got) != 2 {
		t.Fatalf("before any agreement: %v", got)
	}
	tagging := map[string]any{"path": "t.txt", "contentType": "text/plain", "content": "Invoice for Globex, year 2026",
		"actions": []map[string]any{{"type": "DOCUMENTTAGGING", "parameters": map[string]any{"engine": "chatgpt", "tags": "customer"}}}}
	id := servertest.AddDoc(t, s, tok, "", tagging)
	if st := servertest.WaitActions(t, s, tok, "", id); !servertest.EqualStrings(st, []string{"FAILED"}) {
		t.Fatalf("without an agreement: %v", st)
	}
	if m := quiretest.Str(t, servertest.NthAction(t, s, tok, "", id, 0), "message"); !strings.Contains(m, "model 'llama3' has no usage agreement") {
		t.Fatalf("message %q", m)
	}

	for _, tt := range []struct {
		name   string
		tok    string
		body   any
		status int
	}{
		{"not an admin", s.Token("gov", "default_govern"), map[string]any{"modelId": "llama3"}, 401},
		{"no model", tok, map[string]any{}, 400},
		{"a model the endpoint lacks", tok, map[string]any{"modelId": "gpt-9"}, 400},
		{"agree", tok, map[string]any{"modelId": "llama3"}, 200},
		{"again", tok, map[string]any{"modelId": "llama3"}, 200},
	} {
		t.Run(tt.name, func(t *testing.T) {
			servertest.MustStatus(t, s.Do(http.MethodPost, "/system/inferenceModels/agreement", tt.body, tt.tok), tt.status)
		})
	}
	if got := availability(t); got["llama3"] != "AVAILABLE" || got["mistral"] != "NOT_AVAILABLE" {
		t.Fatalf("after agreeing to llama3: %v", got)
	}
	id = servertest.AddDoc(t, s, tok, "", tagging)
	if st := servertest.WaitActions(t, s, tok, "", id); !servertest.EqualStrings(st, []string{"COMPLETE"}) {
		t.Fatalf("with the agreement: %v (%s)", st, quiretest.Str(t, servertest.NthAction(t, s, tok, "", id, 0), "message"))
	}
}
