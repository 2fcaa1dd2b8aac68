package flow_test

import (
	"bufio"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"quire/pipeline/llmchat"
	"quire/quiretest"
	"quire/server/internal/servertest"
)

// TestOutbound_Webhook: a WEBHOOK to loopback is refused by default (a
// literal address when the action is added, a name resolving to loopback
// when the action runs, with the receiver getting no request), and runs
// when the operator allows loopback.
func TestOutbound_Webhook(t *testing.T) {
	strict := quiretest.NewServer(t, func(c *quiretest.Config) { c.Pipeline.RetryBase = 50 * time.Millisecond })
	allowing := servertest.PipelineServer(t)
	for _, tc := range []struct {
		name      string
		s         *quiretest.Server
		host      string // of the receiver's URL
		addStatus int
		final     string // the action's status
		message   string // in the action's or the add's message
		calls     int32
	}{
		{"literal loopback refused when added", strict, "127.0.0.1", 400, "", "destination 127.0.0.1 is not allowed by the server's outbound policy", 0},
		{"name resolving to loopback refused when dialed", strict, "localhost", 201, "FAILED", "is not allowed by the server's outbound policy", 0},
		{"loopback allowed by the operator", allowing, "127.0.0.1", 201, "COMPLETE", "", 1},
		{"name allowed by the operator", allowing, "localhost", 201, "COMPLETE", "", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := servertest.NewReceiver(t)
			u := "http://" + net.JoinHostPort(tc.host, strconv.Itoa(rc.Listener.Addr().(*net.TCPAddr).Port)) + "/hook"
			s, tok := tc.s, tc.s.Admin()
			r := s.Do(http.MethodPost, "/documents", map[string]any{"content": "x",
				"actions": []map[string]any{{"type": "WEBHOOK", "parameters": map[string]any{"url": u}}}}, tok)
			servertest.MustStatus(t, r, tc.addStatus)
			if tc.addStatus != 201 {
				if !strings.Contains(string(r.Body), `"key":"parameters.url"`) || !strings.Contains(string(r.Body), tc.message) {
					t.Fatalf("answer %s", r.Body)
				}
			} else {
				id, _ := r.JSON(t)["documentId"].(string)
				if st := servertest.WaitActions(t, s, tok, "", id); !servertest.EqualStrings(st, []string{tc.final}) {
					t.Fatalf("statuses %v", st)
				}
				if m, _ := servertest.NthAction(t, s, tok, "", id, 0)["message"].(string); !strings.Contains(m, tc.message) {
					t.Fatalf("message %q, want %q", m, tc.message)
				}
			}
			if n := rc.Calls.Load(); n != tc.calls {
				t.Fatalf("receiver got %d requests, want %d", n, tc.calls)
			}
		})
	}
}

// rawServer answers every connection on loopback with reply, whatever
// was asked.
func rawServer(t *testing.T, reply string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second))
				br := bufio.NewReader(c)
				for { // the request head, up to its blank line
					l, err := br.ReadString('\n')
					if err != nil || l == "\r\n" {
						break
					}
				}
				c.Write([]byte(reply))
			}()
		}
	}()
	return ln.Addr().String()
}

// TestOutbound_RemoteTextNotEchoed: what a receiver sends (a body, the
// reason phrase of its status line, the banner of a service that is not
// HTTP) never shows in an action's message; the status code does.
func TestOutbound_RemoteTextNotEchoed(t *testing.T) {
	s := servertest.PipelineServer(t)
	tok := s.Admin()
	const secret = "SECRET-7f3a"
	errorReply := "HTTP/1.1 400 " + secret + "-REASON\r\nContent-Type: text/plain\r\nContent-Length: 18\r\nConnection: close\r\n\r\n" + secret + "-BODY!!"
	for _, tc := range []struct {
		name, action, reply, want string
	}{
		{"webhook error status", "WEBHOOK", errorReply, "400 Bad Request"},
		{"webhook to a service that is not HTTP", "WEBHOOK", "SSH-2.0-" + secret + "-banner\r\n", "no valid answer"},
		{"site LLM error status", "LLM", errorReply, "400 Bad Request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := rawServer(t, tc.reply)
			act := map[string]any{"type": "WEBHOOK", "parameters": map[string]any{"url": "http://" + addr + "/hook"}}
			if tc.action == "LLM" {
				servertest.MustStatus(t, s.Do(http.MethodPatch, "/sites/default/configuration", map[string]any{"llm": map[string]any{"url": "http://" + addr + "/v1", "modelId": "m"}}, tok), http.StatusOK)
				servertest.MustStatus(t, s.Do(http.MethodPost, "/entities/LlmPrompt?namespace=PRESET", map[string]any{"entity": map[string]any{"name": "p", "attributes": []map[string]any{{"key": "UserPrompt", "stringValue": "x"}}}}, tok), http.StatusCreated)
				act = map[string]any{"type": "LLMPROMPT", "parameters": map[string]any{"llmPromptEntityName": "p"}}
			}
			id := servertest.AddDoc(t, s, tok, "", map[string]any{"content": "some text", "contentType": "text/plain", "actions": []map[string]any{act}})
			servertest.WaitActions(t, s, tok, "", id)
			a := servertest.NthAction(t, s, tok, "", id, 0)
			m, _ := a["message"].(string)
			if strings.Contains(m, secret) || !strings.Contains(m, tc.want) {
				t.Fatalf("message %q: want %q and nothing the receiver sent", m, tc.want)
			}
		})
	}
}

// TestOutbound_ServerLLMKeyStaysHome: the server-wide LLM key goes to the
// server's endpoint only; a site governor who points the site at an
// endpoint of their own does not receive it.
func TestOutbound_ServerLLMKeyStaysHome(t *testing.T) {
	operators, governors := servertest.NewLLMServer(t), servertest.NewLLMServer(t)
	s := servertest.PipelineServer(t, func(c *quiretest.Config) {
		c.Pipeline.Engines.LLM = llmchat.Config{URL: operators.URL + "/v1", APIKey: "server-wide-key", ModelID: "m"}
	})
	admin := s.Admin()
	gov := s.Token("gov", "finance_govern")
	servertest.MustStatus(t, s.Do(http.MethodPatch, "/sites/finance/configuration", map[string]any{"llm": map[string]any{"url": governors.URL + "/v1"}}, gov), http.StatusOK)
	for _, tc := range []struct {
		name, site string
		endpoint   *servertest.LlmServer
		wantAuth   string
	}{
		{"the server's endpoint gets the server's key", "", operators, "Bearer server-wide-key"},
		{"a governor's endpoint gets no key", "?siteId=finance", governors, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			entity := s.Do(http.MethodPost, "/entities/LlmPrompt?namespace=PRESET"+strings.Replace(tc.site, "?", "&", 1),
				map[string]any{"entity": map[string]any{"name": "sum", "attributes": []map[string]any{{"key": "UserPrompt", "stringValue": "Summarize."}}}}, admin)
			servertest.MustStatus(t, entity, http.StatusCreated)
			id := servertest.AddDoc(t, s, admin, tc.site, map[string]any{"content": "Invoice 7", "contentType": "text/plain",
				"actions": []map[string]any{{"type": "LLMPROMPT", "parameters": map[string]any{"llmPromptEntityName": "sum"}}}})
			if st := servertest.WaitActions(t, s, admin, tc.site, id); !servertest.EqualStrings(st, []string{"COMPLETE"}) {
				t.Fatalf("statuses %v %v", st, servertest.Actions(t, s, admin, tc.site, id))
			}
			if _, auth := tc.endpoint.Last(); auth != tc.wantAuth {
				t.Fatalf("Authorization %q, want %q", auth, tc.wantAuth)
			}
		})
	}
}

// TestSiteConfig_MaskedSecretsFollowDestination: a secret sent back
// masked is kept while its destination stays; with a new destination the
// PATCH must give it again. Destinations the outbound policy refuses are
// refused when given.
func TestSiteConfig_MaskedSecretsFollowDestination(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	cfg := "/sites/default/configuration"
	llm := func(url, key string) map[string]any {
		return map[string]any{"llm": map[string]any{"url": url, "apiKey": key}}
	}
	smtp := func(host string, port int, pw string) map[string]any {
		return map[string]any{"notification": map[string]any{"email": "dms@example.com", "smtp": map[string]any{"host": host, "port": port, "username": "u", "password": pw}}}
	}
	servertest.RunSteps(t, s, tok, "", []servertest.Step{
		{Name: "llm key", Method: "PATCH", Path: cfg, Body: llm("http://llm.office.lan/v1", "key-one-123456"), Want: 200, Resp: `{"message":"Config saved"}`},
		{Name: "llm masked", Method: "GET", Path: cfg, Body: nil, Want: 200, Resp: `~"apiKey":"****3456"`},
		{Name: "masked key, same url", Method: "PATCH", Path: cfg, Body: llm("http://llm.office.lan/v1", "****3456"), Want: 200, Resp: `{"message":"Config saved"}`},
		{Name: "key kept", Method: "GET", Path: cfg, Body: nil, Want: 200, Resp: `~"apiKey":"****3456"`},
		{Name: "masked key, new url", Method: "PATCH", Path: cfg, Body: llm("http://evil.example/v1", "****3456"), Want: 400,
			Resp: `{"errors":[{"key":"llm.apiKey","error":"the masked 'apiKey' is kept only while 'url' stays the same: give the key again"}]}`},
		{Name: "key given again, new url", Method: "PATCH", Path: cfg, Body: llm("http://llm2.office.lan/v1", "key-two-654321"), Want: 200, Resp: `{"message":"Config saved"}`},
		{Name: "new key", Method: "GET", Path: cfg, Body: nil, Want: 200, Resp: `~"apiKey":"****4321"`},
		{Name: "loopback llm url", Method: "PATCH", Path: cfg, Body: llm("http://127.0.0.1:11434/v1", ""), Want: 400, Resp: `~"key":"llm.url","error":"destination 127.0.0.1 is not allowed`},
		{Name: "metadata llm url", Method: "PATCH", Path: cfg, Body: llm("http://169.254.169.254/", ""), Want: 400, Resp: `~"key":"llm.url","error":"destination 169.254.169.254 is not allowed`},

		{Name: "smtp password", Method: "PATCH", Path: cfg, Body: smtp("mail.office.lan", 587, "pw-secret-9876"), Want: 200, Resp: `{"message":"Config saved"}`},
		{Name: "masked password, same host and port", Method: "PATCH", Path: cfg, Body: smtp("mail.office.lan", 587, "****9876"), Want: 200, Resp: `{"message":"Config saved"}`},
		{Name: "password kept", Method: "GET", Path: cfg, Body: nil, Want: 200, Resp: `~"password":"****9876"`},
		{Name: "masked password, new port", Method: "PATCH", Path: cfg, Body: smtp("mail.office.lan", 25, "****9876"), Want: 400,
			Resp: `{"errors":[{"key":"notification.smtp.password","error":"the masked 'password' is kept only while 'host' and 'port' stay the same: give the password again"}]}`},
		{Name: "masked password, new host", Method: "PATCH", Path: cfg, Body: smtp("mail.evil.example", 587, "****9876"), Want: 400, Resp: `~"key":"notification.smtp.password"`},
		{Name: "loopback smtp host", Method: "PATCH", Path: cfg, Body: smtp("127.0.0.1", 25, "x"), Want: 400, Resp: `~"key":"notification.smtp.host","error":"destination 127.0.0.1 is not allowed`},

		{Name: "chatGptApiKey", Method: "PATCH", Path: cfg, Body: map[string]any{"chatGptApiKey": "sk-chat-111111", "llm": map[string]any{"url": "http://llm.office.lan/v1"}}, Want: 200, Resp: `{"message":"Config saved"}`},
		{Name: "chatGptApiKey does not follow a new url", Method: "PATCH", Path: cfg, Body: map[string]any{"llm": map[string]any{"url": "http://evil.example/v1"}}, Want: 400, Resp: `~"key":"chatGptApiKey"`},
		{Name: "chatGptApiKey given again", Method: "PATCH", Path: cfg, Body: map[string]any{"chatGptApiKey": "sk-chat-222222", "llm": map[string]any{"url": "http://evil.example/v1"}}, Want: 200, Resp: `{"message":"Config saved"}`},
	})
}

// TestOutbound_SiteDestinationsRefusedWhenDialed: a site's SMTP host and
// LLM url naming loopback by a name pass validation and are refused when
// the action connects; nothing reaches the receivers.
func TestOutbound_SiteDestinationsRefusedWhenDialed(t *testing.T) {
	s := quiretest.NewServer(t, func(c *quiretest.Config) { c.Pipeline.RetryBase = 50 * time.Millisecond })
	tok := s.Admin()
	mail := quiretest.NewMailServer(t)
	llm := servertest.NewLLMServer(t)
	llmPort := strconv.Itoa(llm.Listener.Addr().(*net.TCPAddr).Port)
	servertest.MustStatus(t, s.Do(http.MethodPatch, "/sites/default/configuration", map[string]any{
		"notification": map[string]any{"email": "dms@example.com", "smtp": map[string]any{"host": "localhost", "port": mail.Port}},
		"llm":          map[string]any{"url": "http://localhost:" + llmPort + "/v1", "modelId": "m"},
	}, tok), http.StatusOK)
	servertest.MustStatus(t, s.Do(http.MethodPost, "/entities/LlmPrompt?namespace=PRESET", map[string]any{"entity": map[string]any{"name": "p", "attributes": []map[string]any{{"key": "UserPrompt", "stringValue": "x"}}}}, tok), http.StatusCreated)
	for _, tc := range []struct {
		name   string
		action map[string]any
	}{
		{"site SMTP host", map[string]any{"type": "NOTIFICATION", "parameters": map[string]any{"notificationType": "email", "notificationSubject": "s", "notificationToCc": "a@example.com", "notificationText": "t"}}},
		{"site LLM url", map[string]any{"type": "LLMPROMPT", "parameters": map[string]any{"llmPromptEntityName": "p"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := servertest.AddDoc(t, s, tok, "", map[string]any{"content": "text", "contentType": "text/plain", "actions": []map[string]any{tc.action}})
			if st := servertest.WaitActions(t, s, tok, "", id); !servertest.EqualStrings(st, []string{"FAILED"}) {
				t.Fatalf("statuses %v %v", st, servertest.Actions(t, s, tok, "", id))
			}
			if m, _ := servertest.NthAction(t, s, tok, "", id, 0)["message"].(string); !strings.Contains(m, "is not allowed by the server's outbound policy") {
				t.Fatalf("message %q", m)
			}
		})
	}
	llm.Mu.Lock()
	calls := len(llm.Reqs)
	llm.Mu.Unlock()
	if n := len(mail.Messages()); n != 0 || calls != 0 {
		t.Fatalf("mail server got %d messages, LLM server %d requests", n, calls)
	}
}
