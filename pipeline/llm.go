package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"quire/pipeline/engine"
	"quire/pipeline/llmchat"
	"quire/storage"
)

// maxPromptText bounds the document text put into a prompt.
const maxPromptText = 48 << 10

// llmEndpoint resolves a site's chat endpoint: the site's llm settings,
// else the server's; a site's chatGptApiKey is used as the key when the
// site names no other. own reports an endpoint the site chose (not the
// server's): the server's key is never sent there, and it is called
// through the outbound policy.
func (p *Pipeline) llmEndpoint(site string) (c llmchat.Config, own bool, err error) {
	c = p.cfg.Engines.LLM
	sc, err := p.db.SiteConfig(site)
	if err != nil {
		return c, false, err
	}
	if sc.LLM != nil {
		if u := sc.LLM.URL; u != "" && !sameURL(u, c.URL) {
			// A site governor chose this endpoint: the server-wide key
			// belongs to the operator's endpoint only.
			c.URL, c.APIKey, own = u, "", true
		}
		if sc.LLM.APIKey != "" {
			c.APIKey = sc.LLM.APIKey
		}
		if sc.LLM.ModelID != "" {
			c.ModelID = sc.LLM.ModelID
		}
	}
	if c.APIKey == "" {
		c.APIKey = sc.ChatGptAPIKey
	}
	if c.URL == "" {
		return c, false, errors.New("no LLM endpoint configured: set the site configuration's llm.url (an OpenAI-compatible server such as Ollama, llama.cpp or vLLM) or the server's LLM endpoint")
	}
	return c, own, nil
}

// sameURL reports whether two endpoint URLs name the same endpoint.
func sameURL(a, b string) bool { return strings.TrimRight(a, "/") == strings.TrimRight(b, "/") }

// chat asks the site's model and returns its answer.
func (j *Job) chat(ctx context.Context, model string, maxTokens int, msgs []llmchat.Message) (string, string, error) {
	ep, own, err := j.p.llmEndpoint(j.Site)
	if err != nil {
		return "", "", err
	}
	if model == "" {
		model = ep.ModelID
	}
	if model == "" {
		return "", "", errors.New("no model: set modelId on the action, ModelId on the prompt entity or llm.modelId in the site configuration")
	}
	if j.p.cfg.Engines.LLM.RequireAgreement {
		ok, err := j.p.db.ModelAgreed(model)
		if err != nil {
			return "", "", engine.Retryable(err)
		}
		if !ok {
			return "", "", fmt.Errorf("model '%s' has no usage agreement: an admin accepts it with POST /system/inferenceModels/agreement", model)
		}
	}
	client := j.p.userLLM
	if !own {
		client = nil // the operator's endpoint
	}
	answer, err := llmchat.Complete(ctx, client, ep, model, maxTokens, msgs)
	if err != nil {
		return "", "", err
	}
	return answer, model, nil
}

// Models lists the model ids of the server's LLM endpoint (GET
// <url>/models, the OpenAI API), sorted; none without an endpoint.
func (p *Pipeline) Models(ctx context.Context) ([]string, error) {
	ep := p.cfg.Engines.LLM
	if ep.URL == "" {
		return nil, nil
	}
	return llmchat.Models(ctx, ep)
}

// documentText is the document's text for a prompt.
func (j *Job) documentText(ctx context.Context) (string, error) {
	if tr, err := j.p.db.Text(j.Site, j.Doc.DocumentID, storage.TextFulltext); err == nil && tr != nil {
		return truncateChars(tr.Text, maxPromptText), nil
	}
	t, src, err := j.text(ctx)
	if err != nil {
		return "", err
	}
	if src == "" {
		return "", fmt.Errorf("no text can be read from content of type '%s'; add OCR or FULLTEXT before this action", j.Doc.ContentType)
	}
	return truncateChars(t, maxPromptText), nil
}

func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// runLLMPrompt runs an LlmPrompt entity's prompt on the document's text
// and keeps the answer: AI prompt results (LLMPROMPT), data
// classifications (DATA_CLASSIFICATION) or metadata extractions
// (METADATA_EXTRACTION).
func runLLMPrompt(ctx context.Context, j *Job) (*Outcome, error) {
	name := j.Param("llmPromptEntityName")
	e, err := j.p.db.LlmPrompt(j.Site, name)
	if err != nil {
		return nil, fmt.Errorf("llmPromptEntityName '%s' not found", name)
	}
	text, err := j.documentText(ctx)
	if err != nil {
		return nil, err
	}
	system := e.String("LlmSystemPrompt")
	if system == "" {
		system = "You read documents of an office and answer precisely. When asked for fields, answer with one JSON object."
	}
	user := e.String("UserPrompt")
	if user == "" {
		user = "Summarize the document."
	}
	if keys := e.Strings("LlmResponseFieldKeys"); len(keys) > 0 {
		user += "\nAnswer with a JSON object with exactly these keys: " + strings.Join(keys, ", ") + "."
	}
	model := j.Param("modelId")
	if model == "" {
		model = firstNonEmpty(e.String("ModelId"), e.String("LlmModelId"))
	}
	maxTokens := int(e.Number("LlmMaxToken"))
	if maxTokens == 0 {
		maxTokens = int(e.Number("LlmMaxTokens"))
	}
	answer, usedModel, err := j.chat(ctx, model, maxTokens, []llmchat.Message{
		{Role: "system", Content: system},
		{Role: "user", Content: user + "\n\nDocument:\n" + text},
	})
	if err != nil {
		return nil, err
	}
	fields := llmchat.Fields(answer)
	now := j.Now().UTC().Format("2006-01-02T15:04:05+0000")
	var kind string
	var value map[string]any
	switch j.Action.Type {
	case "LLMPROMPT":
		kind = "aiPrompt"
		attrs := []map[string]any{}
		for _, k := range sortedKeys(fields) {
			attrs = append(attrs, map[string]any{"key": k, "stringValues": fields[k]})
		}
		value = map[string]any{"llmPromptEntityName": e.Name, "content": answer, "insertedDate": now,
			"analysisCategory": e.String("LlmAnalysisCategory"), "values": []any{map[string]any{"resultType": "KEY_VALUE", "attributes": attrs}}}
	default:
		kind = "dataClassification"
		if j.Action.Type == "METADATA_EXTRACTION" {
			kind = "metadataExtraction"
		}
		attrs := []map[string]any{}
		for _, k := range sortedKeys(fields) {
			attrs = append(attrs, map[string]any{"key": k, "value": strings.Join(fields[k], ", ")})
		}
		value = map[string]any{"llmPromptEntityName": e.Name, "content": answer, "insertedDate": now, "attributes": attrs}
	}
	v, _ := json.Marshal(value)
	return &Outcome{
		Results:  []storage.ActionResult{{Kind: kind, Name: e.Name, Value: v}},
		Metadata: map[string]string{"modelId": usedModel},
	}, nil
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// runDocumentTagging asks the model for values of the given tag keys and
// sets the tags it found.
func runDocumentTagging(ctx context.Context, j *Job) (*Outcome, error) {
	var keys []string
	for _, k := range strings.Split(j.Param("tags"), ",") {
		if k = strings.TrimSpace(k); k != "" {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil, errors.New("action 'tags' parameter is required")
	}
	text, err := j.documentText(ctx)
	if err != nil {
		return nil, err
	}
	answer, model, err := j.chat(ctx, j.Param("modelId"), 0, []llmchat.Message{
		{Role: "system", Content: "You tag documents of an office. Answer with one JSON object and nothing else."},
		{Role: "user", Content: "Find values in the document for these tags: " + strings.Join(keys, ", ") +
			". Answer with a JSON object whose keys are these tags and whose values are lists of strings found in the document; leave out tags with no value.\n\nDocument:\n" + text},
	})
	if err != nil {
		return nil, err
	}
	fields := llmchat.Fields(answer)
	if fields == nil {
		return nil, errors.New("the model did not answer with a JSON object")
	}
	var tags []storage.Tag
	for _, k := range keys {
		vals := fields[k]
		if len(vals) == 0 {
			continue
		}
		t := storage.Tag{Key: k}
		if len(vals) == 1 {
			t.Value = vals[0]
		} else {
			t.Values = vals
		}
		tags = append(tags, t)
	}
	out := &Outcome{Metadata: map[string]string{"modelId": model}}
	if len(tags) == 0 {
		out.Message = "the model found none of the tags"
		return out, nil
	}
	c, err := j.command(storage.OpSetTags, storage.SetTags{DocumentID: j.Doc.DocumentID, Mode: storage.TagsAdd, Tags: tags})
	if err != nil {
		return nil, err
	}
	out.Then = []*storage.Command{c}
	return out, nil
}
