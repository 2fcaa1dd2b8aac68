// Package llmchat calls an OpenAI-compatible chat completions endpoint
// (Ollama, llama.cpp server, vLLM on the LAN): a chat completion for the
// LLM actions, the model list of the server's endpoint, and the fields of
// a model's JSON answer. Which endpoint, key and model a site uses, and
// whether a model may be used, the pipeline decides.
package llmchat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	"quire/outbound"
	"quire/pipeline/engine"
)

// Config is an OpenAI-compatible chat completions endpoint.
type Config struct {
	URL     string // base URL, e.g. http://127.0.0.1:11434/v1
	APIKey  string
	ModelID string
	// RequireAgreement makes LLM actions use only models whose usage
	// agreement an admin accepted (POST /system/inferenceModels/agreement).
	RequireAgreement bool
}

// Message is one message of a chat.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Complete asks model at the endpoint ep for the answer to msgs (at most
// maxTokens, 0: the endpoint's limit) through client (nil: the operator's
// endpoint's client, no outbound policy). Network errors, 5xx and 429
// answers are transient (engine.Retryable).
func Complete(ctx context.Context, client *http.Client, ep Config, model string, maxTokens int, msgs []Message) (string, error) {
	req := map[string]any{"model": model, "messages": msgs, "temperature": 0, "stream": false}
	if maxTokens > 0 {
		req["max_tokens"] = maxTokens
	}
	body, _ := json.Marshal(req)
	url := strings.TrimRight(ep.URL, "/") + "/chat/completions"
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return "", fmt.Errorf("invalid LLM url: %v", err)
	}
	hr.Header.Set("Content-Type", "application/json")
	if ep.APIKey != "" {
		hr.Header.Set("Authorization", "Bearer "+ep.APIKey)
	}
	if client == nil {
		client = operatorClient
	}
	resp, err := client.Do(hr)
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		msg := fmt.Errorf("LLM endpoint %s: %s", ep.URL, outbound.Reason(err))
		if errors.As(err, new(*outbound.RefusedError)) {
			return "", msg
		}
		return "", engine.Retryable(msg)
	}
	defer resp.Body.Close()
	rb, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return "", engine.Retryable(err)
	}
	if resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests {
		return "", engine.Retryable(fmt.Errorf("LLM endpoint answered %s", outbound.Status(resp.StatusCode)))
	}
	if resp.StatusCode >= 300 {
		return "", fmt.Errorf("LLM endpoint answered %s", outbound.Status(resp.StatusCode))
	}
	var out struct {
		Choices []struct {
			Message Message `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(rb, &out); err != nil || len(out.Choices) == 0 {
		return "", errors.New("LLM endpoint gave no chat completion answer")
	}
	return out.Choices[0].Message.Content, nil
}

// Models lists the model ids of the endpoint ep (GET <url>/models, the
// OpenAI API), sorted, within 15 s.
func Models(ctx context.Context, ep Config) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(ep.URL, "/")+"/models", nil)
	if err != nil {
		return nil, fmt.Errorf("invalid LLM url: %v", err)
	}
	if ep.APIKey != "" {
		hr.Header.Set("Authorization", "Bearer "+ep.APIKey)
	}
	resp, err := operatorClient.Do(hr)
	if err != nil {
		return nil, fmt.Errorf("LLM endpoint %s: %s", ep.URL, outbound.Reason(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("LLM endpoint %s answered %s to GET /models", ep.URL, outbound.Status(resp.StatusCode))
	}
	var out struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(&out); err != nil {
		return nil, fmt.Errorf("LLM endpoint %s: GET /models gave no model list", ep.URL)
	}
	ids := make([]string, 0, len(out.Data))
	for _, m := range out.Data {
		if m.ID != "" {
			ids = append(ids, m.ID)
		}
	}
	sort.Strings(ids)
	return ids, nil
}

// operatorClient calls the operator's LLM endpoint. It has no overall timeout:
// local models can take minutes; the action timeout bounds it.
var operatorClient = &http.Client{}

// Fields reads the first JSON object in a model's answer as keys with
// string values (lists for arrays); nil when it has none.
func Fields(s string) map[string][]string {
	i, k := strings.IndexByte(s, '{'), strings.LastIndexByte(s, '}')
	if i < 0 || k < i {
		return nil
	}
	var m map[string]any
	if json.Unmarshal([]byte(s[i:k+1]), &m) != nil {
		return nil
	}
	out := map[string][]string{}
	for key, v := range m {
		switch x := v.(type) {
		case []any:
			for _, e := range x {
				out[key] = append(out[key], scalar(e))
			}
		case nil:
		default:
			out[key] = []string{scalar(x)}
		}
	}
	return out
}

func scalar(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// Check asks the endpoint ep for its model list (within 10 s) and
// reports whether it answered 200, or why not (quire doctor).
func Check(ctx context.Context, ep Config) (bool, string) {
	c, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(c, http.MethodGet, strings.TrimRight(ep.URL, "/")+"/models", nil)
	if err != nil {
		return false, err.Error()
	}
	if ep.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+ep.APIKey)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false, fmt.Sprintf("%s not reachable: %v", ep.URL, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Sprintf("%s/models answered %s", ep.URL, resp.Status)
	}
	return true, ep.URL + ": models listed"
}
