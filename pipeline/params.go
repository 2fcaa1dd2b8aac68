package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"quire/pipeline/convert"
	"quire/storage"
)

// CheckEnv is what parameter checks ask of the server, about the site an
// action is added on. The pipeline does not import the server: the server
// answers through this.
type CheckEnv interface {
	// CheckWebhookURL checks a WEBHOOK url against the outbound policy
	// (nil: allowed); its error is the validation message.
	CheckWebhookURL(u string) error
	// NotificationConfigured reports whether the site's NOTIFICATION
	// actions have a sender address.
	NotificationConfigured() bool
	// QueueExists reports whether the site has the queue.
	QueueExists(id string) bool
	// MappingExists reports whether the site has the mapping (IDP).
	MappingExists(id string) bool
	// LlmPromptExists reports whether the site has the LlmPrompt entity.
	LlmPromptExists(name string) bool
	// OCRLanguages lists the languages the server's tesseract has
	// (Pipeline.InstalledOCRLanguages).
	OCRLanguages(ctx context.Context) ([]string, error)
}

// Params are an action's parameters as the API takes them.
type Params map[string]any

// Get returns a parameter as a string, trimmed ("" when absent). FormKiQ's
// parameters are strings; numbers and booleans are taken as their JSON
// text.
func (p Params) Get(k string) string {
	switch v := p[k].(type) {
	case nil:
		return ""
	case string:
		return strings.TrimSpace(v)
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}

// ParamCheck is the check of one action's parameters: what it is given
// and the validation items it found.
type ParamCheck struct {
	Params  Params
	QueueID string
	Env     CheckEnv
	Items   []storage.ValidationItem
}

func (c *ParamCheck) get(k string) string { return c.Params.Get(k) }

func (c *ParamCheck) add(key, msg string) {
	c.Items = append(c.Items, storage.ValidationItem{Key: key, Msg: msg})
}

// required reports whether parameter k is given, and adds FormKiQ's
// "action 'k' parameter is required" when not.
func (c *ParamCheck) required(k string) bool {
	if c.get(k) == "" {
		c.add("parameters."+k, "action '"+k+"' parameter is required")
		return false
	}
	return true
}

// requiredPlain is required with the message FormKiQ gives other types:
// "'k' parameter is required".
func (c *ParamCheck) requiredPlain(k string) bool {
	if c.get(k) == "" {
		c.add("parameters."+k, "'"+k+"' parameter is required")
		return false
	}
	return true
}

// noParams is the check of types that take no parameters.
func noParams(*ParamCheck) {}

func checkOCR(c *ParamCheck) {
	switch strings.ToUpper(c.get("ocrEngine")) {
	case "", "TESSERACT":
	case "TEXTRACT":
		c.add("parameters.ocrEngine", "ocrEngine 'TEXTRACT' is a cloud service and is not available on this server; use 'TESSERACT'")
	default:
		c.add("parameters.ocrEngine", "invalid 'ocrEngine' parameter")
	}
	for _, t := range splitList(c.get("ocrParseTypes")) {
		switch strings.ToUpper(t) {
		case "TEXT", "FORMS", "TABLES":
		case "QUERIES":
			// Answering questions about a page is Textract's; tesseract
			// reads text, so the queries would be silently ignored.
			c.add("parameters.ocrParseTypes", "ocrParseTypes 'QUERIES' needs Textract, a cloud service not available on this server")
		default:
			c.add("parameters.ocrParseTypes", "invalid 'ocrParseTypes' parameter")
		}
	}
	// ocrOutputType CSV: the recognized lines as a CSV artifact
	// (ocr/layout.go, issue 48 item 4).
	switch v := c.get("ocrOutputType"); strings.ToUpper(v) {
	case "", "CSV":
	default:
		c.add("parameters.ocrOutputType", "invalid 'ocrOutputType' parameter")
	}
	if v := c.get("ocrNumberOfPages"); v != "" {
		if n, err := strconv.Atoi(strings.Trim(v, `"`)); err != nil || n == 0 || n < -1 {
			c.add("parameters.ocrNumberOfPages", "invalid 'ocrNumberOfPages' parameter")
		}
	}
	if v := strings.ToLower(c.get("addPdfDetectedCharactersAsText")); v != "" && v != "true" && v != "false" {
		c.add("parameters.addPdfDetectedCharactersAsText", "invalid 'addPdfDetectedCharactersAsText' parameter")
	}
	// ocrLanguages (Quire extension): the languages of this one scan
	// instead of the site's processing.languages, as tesseract has them.
	if _, given := c.Params["ocrLanguages"]; given {
		langs, ok := OCRLanguagesParam(c.Params)
		switch {
		case !ok:
			c.add("parameters.ocrLanguages", "invalid 'ocrLanguages' parameter: tesseract language codes such as 'deu' or 'deu+eng'")
		default:
			c.Items = append(c.Items, checkLanguageList(context.Background(), "parameters.ocrLanguages", langs, c.Env.OCRLanguages)...)
		}
	}
}

// OCRLanguagesParam reads an OCR action's ocrLanguages parameter: a
// string of codes joined by '+' (tesseract's way) or ',', or a JSON list
// of codes. ok is false when it is given but names none or is of another
// type.
func OCRLanguagesParam(p Params) (langs []string, ok bool) {
	switch v := p["ocrLanguages"].(type) {
	case nil:
		return nil, true
	case string:
		langs = strings.FieldsFunc(v, func(r rune) bool { return r == '+' || r == ',' || r == ' ' })
	case []any:
		for _, x := range v {
			s, isStr := x.(string)
			if !isStr {
				return nil, false
			}
			langs = append(langs, strings.TrimSpace(s))
		}
	default:
		return nil, false
	}
	return langs, len(langs) > 0
}

func checkFulltext(c *ParamCheck) {
	if v := c.get("characterMax"); v != "" {
		if n, err := strconv.Atoi(strings.Trim(v, `"`)); err != nil || n == 0 || n < -1 {
			c.add("parameters.characterMax", "invalid 'characterMax' parameter")
		}
	}
}

func checkDocumentTagging(c *ParamCheck) {
	if c.required("engine") && !strings.EqualFold(c.get("engine"), "chatgpt") && !strings.EqualFold(c.get("engine"), "llm") {
		c.add("parameters.engine", "invalid 'engine' parameter")
	}
	c.required("tags")
}

func checkWebhook(c *ParamCheck) {
	if !c.required("url") {
		return
	}
	if u, err := url.Parse(c.get("url")); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		c.add("parameters.url", "invalid 'url' parameter")
	} else if err := c.Env.CheckWebhookURL(c.get("url")); err != nil {
		c.add("parameters.url", err.Error())
	}
}

func checkNotification(c *ParamCheck) {
	// FormKiQ answers a site without a sender address with that alone,
	// whatever the parameters (storage refuses it again, in the
	// transaction that would add the action).
	if !c.Env.NotificationConfigured() {
		c.add(storage.KeyNotificationEmail, storage.MsgNotificationEmail)
		return
	}
	if c.required("notificationType") && !strings.EqualFold(c.get("notificationType"), "email") {
		c.add("parameters.notificationType", "invalid 'notificationType' parameter")
	}
	c.required("notificationSubject")
	if c.get("notificationToCc") == "" && c.get("notificationToBcc") == "" {
		c.add("parameters.notificationToCc", "action 'notificationToCc' parameter is required")
	}
	if c.get("notificationText") == "" && c.get("notificationHtml") == "" {
		c.add("parameters.notificationText", "action 'notificationText' parameter is required")
	}
	for _, k := range []string{"notificationToCc", "notificationToBcc"} {
		for _, addr := range splitList(c.get(k)) {
			if !ValidEmail(addr) {
				c.add("parameters."+k, fmt.Sprintf("invalid email address '%s'", addr))
			}
		}
	}
}

func checkQueue(c *ParamCheck) {
	if c.QueueID == "" {
		c.add("queueId", "'queueId' is required")
	} else if !c.Env.QueueExists(c.QueueID) {
		c.add("queueId", "'queueId' does not exist")
	}
}

func checkIDP(c *ParamCheck) {
	id := c.get("mappingId")
	if id == "" {
		c.add("mappingId", "'mappingId' is required")
	} else if !c.Env.MappingExists(id) {
		c.add("mappingId", "'mappingId' does not exist")
	}
}

func checkEventBus(c *ParamCheck) { c.requiredPlain("eventBusName") }

func checkChecksum(c *ParamCheck) {
	if c.requiredPlain("checksumType") && !slices.Contains([]string{"SHA1", "SHA256", "SHA512"}, strings.ToUpper(c.get("checksumType"))) {
		c.add("parameters.checksumType", "invalid 'checksumType' parameter")
	}
}

func checkResize(c *ParamCheck) {
	w, h := c.get("width"), c.get("height")
	okW, okH := c.required("width"), c.required("height")
	dim := func(k, v string) {
		if v == "auto" {
			return
		}
		if n, err := strconv.Atoi(strings.Trim(v, `"`)); err != nil || n <= 0 || n > convert.MaxResizeSide {
			c.add("parameters."+k, "invalid '"+k+"' parameter")
		}
	}
	if okW {
		dim("width", w)
	}
	if okH {
		dim("height", h)
	}
	if w == "auto" && h == "auto" {
		c.add("parameters.width", "'width' and 'height' cannot both be 'auto'")
	}
	if v := strings.ToLower(c.get("outputType")); v != "" && !slices.Contains([]string{"png", "jpeg", "jpg", "gif"}, strings.TrimPrefix(v, ".")) {
		c.add("parameters.outputType", "invalid 'outputType' parameter")
	}
}

func checkLLMPrompt(c *ParamCheck) {
	if c.requiredPlain("llmPromptEntityName") && !c.Env.LlmPromptExists(c.get("llmPromptEntityName")) {
		c.add("parameters.llmPromptEntityName", fmt.Sprintf("entity '%s' not found", c.get("llmPromptEntityName")))
	}
}

func checkMove(c *ParamCheck) {
	if c.requiredPlain("path") && !strings.HasSuffix(c.get("path"), "/") {
		c.add("parameters.path", "'path' parameter must end with '/'")
	}
}

func checkDelete(c *ParamCheck) {
	if c.requiredPlain("deleteType") && !slices.Contains([]string{"SOFT_DELETE", "HARD_DELETE", "PURGE"}, strings.ToUpper(c.get("deleteType"))) {
		c.add("parameters.deleteType", "invalid 'deleteType' parameter")
	}
}

// splitList splits a comma separated parameter.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// ValidEmail reports whether s looks like an e-mail address a
// NOTIFICATION can be sent to (the server checks a site's addresses with
// it too).
func ValidEmail(s string) bool {
	at := strings.LastIndexByte(s, '@')
	return at > 0 && at < len(s)-1 && !strings.ContainsAny(s, " \t\r\n<>,;\"")
}
