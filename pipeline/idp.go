package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"quire/pipeline/textmatch"
	"quire/storage"
)

// runIDP fills attributes from a mapping (FormKiQ's intelligent document
// processing): values found after label texts in the document's text,
// metadata of the document, fixed values, or fields of earlier LLM and
// malware scan results; and gives the document the first classification
// of the mapping whose conditions all hold. Values are typed by the
// attributes' definitions; a value that does not fit fails the action.
func runIDP(ctx context.Context, j *Job) (*Outcome, error) {
	m, err := j.p.db.GetMapping(j.Site, j.Param("mappingId"))
	if err != nil {
		return nil, fmt.Errorf("'mappingId' does not exist")
	}
	var text string
	needText := false
	for _, a := range m.Attributes {
		needText = needText || a.SourceType == "CONTENT" || a.SourceType == "CONTENT_KEY_VALUE"
	}
	for _, c := range m.Classifications {
		for _, cond := range c.Conditions {
			needText = needText || cond.SourceType == "CONTENT"
		}
	}
	if needText {
		if text, err = j.documentText(ctx); err != nil {
			return nil, err
		}
	}
	var ins []storage.AttributeInput
	found := map[string]string{}
	for _, ma := range m.Attributes {
		vals, err := j.idpValues(ma, text)
		if err != nil {
			return nil, err
		}
		if len(vals) == 0 {
			continue
		}
		in, err := j.typedInput(ma.AttributeKey, vals)
		if err != nil {
			return nil, err
		}
		ins = append(ins, in)
		found[ma.AttributeKey] = strings.Join(vals, ", ")
	}
	for _, c := range m.Classifications {
		if j.conditionsHold(c.Conditions, text) {
			ins = append(ins, storage.AttributeInput{Key: storage.KeyClassification, ClassificationID: c.ClassificationID})
			found["classificationId"] = c.ClassificationID
			break
		}
	}
	out := &Outcome{Metadata: found}
	if len(ins) == 0 {
		out.Message = "no attribute of mapping '" + m.Name + "' was found"
		return out, nil
	}
	c, err := j.command(storage.OpSetDocAttributes, storage.SetDocAttributes{DocumentID: j.Doc.DocumentID, Mode: storage.AttrSet, Attributes: ins})
	if err != nil {
		return nil, err
	}
	out.Then = []*storage.Command{c}
	return out, nil
}

// idpValues finds one mapping attribute's values.
func (j *Job) idpValues(ma storage.MappingAttribute, text string) ([]string, error) {
	var vals []string
	switch ma.SourceType {
	case "CONTENT", "CONTENT_KEY_VALUE":
		match := ma.LabelMatchingType
		if ma.SourceType == "CONTENT_KEY_VALUE" && match == "" {
			match = "EXACT"
		}
		if v := textmatch.LabelValue(text, ma.LabelTexts, match, ma.ValidationRegex); v != "" {
			vals = []string{v}
		}
	case "METADATA":
		switch ma.MetadataField {
		case "USERNAME":
			vals = []string{j.Doc.UserID}
		case "PATH":
			vals = []string{j.Doc.Path}
		case "CONTENT_TYPE":
			vals = []string{j.Doc.ContentType}
		}
	case "MANUAL":
	case "DATA_CLASSIFICATION", "METADATA_EXTRACTION_RESULT", "AI_PROMPT_RESULT":
		v, err := j.resultField(ma.SourceType, ma.LlmPromptEntityName, ma.AttributeKey)
		if err != nil {
			return nil, err
		}
		if v != "" {
			vals = []string{v}
		}
	case "MALWARE_SCAN":
		v, err := j.resultField("MALWARE_SCAN", "", "scanStatus")
		if err != nil {
			return nil, err
		}
		if v != "" {
			vals = []string{v}
		}
	}
	if len(vals) == 0 || (len(vals) == 1 && vals[0] == "") {
		switch {
		case len(ma.DefaultValues) > 0:
			return ma.DefaultValues, nil
		case ma.DefaultValue != "":
			return []string{ma.DefaultValue}, nil
		}
		return nil, nil
	}
	return vals, nil
}

// resultField reads a field of an earlier result of the document.
func (j *Job) resultField(source, entity, key string) (string, error) {
	kind := map[string]string{"DATA_CLASSIFICATION": "dataClassification", "METADATA_EXTRACTION_RESULT": "metadataExtraction",
		"AI_PROMPT_RESULT": "aiPrompt", "MALWARE_SCAN": "malwareScan"}[source]
	res, err := j.p.db.Results(j.Site, j.Doc.DocumentID, kind)
	if err != nil {
		return "", err
	}
	for i := len(res) - 1; i >= 0; i-- {
		if entity != "" && res[i].Name != entity {
			continue
		}
		var v struct {
			ScanStatus string `json:"scanStatus"`
			Attributes []struct {
				Key          string   `json:"key"`
				Value        string   `json:"value"`
				StringValues []string `json:"stringValues"`
			} `json:"attributes"`
			Values []struct {
				Attributes []struct {
					Key          string   `json:"key"`
					StringValues []string `json:"stringValues"`
				} `json:"attributes"`
			} `json:"values"`
		}
		if json.Unmarshal(res[i].Value, &v) != nil {
			continue
		}
		if key == "scanStatus" && v.ScanStatus != "" {
			return v.ScanStatus, nil
		}
		for _, a := range v.Attributes {
			if a.Key == key {
				return a.Value, nil
			}
		}
		for _, x := range v.Values {
			for _, a := range x.Attributes {
				if a.Key == key && len(a.StringValues) > 0 {
					return a.StringValues[0], nil
				}
			}
		}
	}
	return "", nil
}

// conditionsHold checks a mapping classification's conditions.
func (j *Job) conditionsHold(conds []storage.MappingCondition, text string) bool {
	if len(conds) == 0 {
		return false
	}
	lt := strings.ToLower(text)
	for _, c := range conds {
		var subject, want string
		switch c.SourceType {
		case "CONTENT":
			subject, want = lt, strings.ToLower(c.Text)
		default:
			v, err := j.resultField(c.SourceType, c.LlmPromptEntityName, c.ResultKey)
			if err != nil {
				return false
			}
			subject, want = strings.ToLower(v), strings.ToLower(firstNonEmpty(c.ResultValue, c.Text))
		}
		if !textmatch.Holds(subject, want, c.MatchingType) {
			return false
		}
	}
	return true
}

// typedInput builds an attribute value of key's data type from strings.
func (j *Job) typedInput(key string, vals []string) (storage.AttributeInput, error) {
	in := storage.AttributeInput{Key: key}
	def, err := j.p.db.AttributeDefinition(j.Site, key)
	if err != nil {
		return in, fmt.Errorf("attribute '%s' not found", key)
	}
	switch def.DataType {
	case storage.DataNumber:
		for _, v := range vals {
			// The first number in the text: "due: 1,250.50 EUR" is 1250.5.
			f, err := textmatch.Number(v)
			if err != nil {
				return in, fmt.Errorf("attribute '%s': '%s' is not a number", key, v)
			}
			in.NumberValues = append(in.NumberValues, f)
		}
	case storage.DataBoolean:
		b, err := strconv.ParseBool(strings.ToLower(vals[0]))
		if err != nil {
			return in, fmt.Errorf("attribute '%s': '%s' is not a boolean", key, vals[0])
		}
		in.BooleanValue = &b
	case storage.DataDate:
		in.DateValues = vals
	case storage.DataKeyOnly:
	default:
		if len(vals) == 1 {
			in.StringValue = &vals[0]
		} else {
			in.StringValues = vals
		}
	}
	return in, nil
}
