package vocabulary_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"quire/quiretest"
	"quire/server/internal/servertest"
	"quire/storage"
)

// TestDefinitionFieldLimits: every field of a definition bounded by
// storage.RulesDefinitionFields, one row each. Just over its limit the
// write is refused with FormKiQ's validation shape under the field's key
// and the definition reads as before; just at the limit it is accepted.
func TestDefinitionFieldLimits(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	const site = "/sites/default"
	do := func(method, path string, body any) *quiretest.Response { return s.Do(method, path, body, tok) }

	// What the rows build on: STRING attributes a0..a100 (lists of
	// distinct defined keys), a classification, an entity type with one
	// entity, a folder, a mapping.
	for i := range storage.MaxAttributesPerRequest + 1 {
		servertest.DefineAttr(t, s, tok, "", fmt.Sprintf("a%d", i), "STRING", nil)
	}
	servertest.DefineAttr(t, s, tok, "", "color", "STRING", nil)
	servertest.DefineAttr(t, s, tok, "", "invoiceNumber", "STRING", nil)
	opt := []map[string]any{{"attributeKey": "color"}}
	r := do(http.MethodPost, site+"/classifications", map[string]any{"classification": map[string]any{"name": "invoice", "attributes": map[string]any{"optional": opt}}})
	servertest.MustStatus(t, r, http.StatusOK)
	classID := jsonField(t, r, "classificationId")
	r = do(http.MethodPost, "/entityTypes", map[string]any{"entityType": map[string]any{"namespace": "CUSTOM", "name": "vendor"}})
	servertest.MustStatus(t, r, http.StatusCreated)
	etID := jsonField(t, r, "entityTypeId")
	servertest.MustStatus(t, do(http.MethodPut, "/entities/"+etID+"/acme?createIfMissing=true", map[string]any{"entity": map[string]any{"name": "Acme"}}), http.StatusOK)
	servertest.MustStatus(t, do(http.MethodPost, "/folders", map[string]any{"path": "hr"}), http.StatusCreated)
	manual := func(extra map[string]any) map[string]any {
		a := map[string]any{"attributeKey": "color", "sourceType": "MANUAL", "defaultValue": "red"}
		for k, v := range extra {
			a[k] = v
		}
		return a
	}
	mapping := func(attrs []map[string]any, classes []map[string]any) map[string]any {
		return map[string]any{"mapping": map[string]any{"name": "m", "attributes": attrs, "classifications": classes}}
	}
	r = do(http.MethodPost, "/mappings", mapping([]map[string]any{manual(nil)}, nil))
	servertest.MustStatus(t, r, http.StatusCreated)
	mappingPath := "/mappings/" + jsonField(t, r, "mappingId")

	// n is the size of a row's field: its limit, or one more when over.
	n := func(over bool, limit int) int {
		if over {
			return limit + 1
		}
		return limit
	}
	str := func(over bool, limit int) string { return strings.Repeat("a", n(over, limit)) }
	list := func(over bool, limit int, f func(i int) any) []any {
		out := make([]any, n(over, limit))
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	value := func(i int) any { return fmt.Sprintf("v%d", i) }
	keys := func(i int) any { return fmt.Sprintf("a%d", i) }
	schema := func(attrs map[string]any) map[string]any { return map[string]any{"name": "s", "attributes": attrs} }
	color := func(extra map[string]any) map[string]any {
		return schema(map[string]any{"optional": []any{manualless(extra)}})
	}
	entity := func(attrs []any) map[string]any {
		return map[string]any{"entity": map[string]any{"name": "Acme", "attributes": attrs}}
	}
	aiPrompt := func(extra map[string]any) map[string]any {
		c := map[string]any{"sourceType": "AI_PROMPT_RESULT", "matchingType": "EXACT", "resultKey": "k", "resultValue": "v", "llmPromptEntityName": "p"}
		for k, v := range extra {
			c[k] = v
		}
		return mapping([]map[string]any{manual(nil)}, []map[string]any{{"classificationId": classID, "conditions": []any{c}}})
	}
	perms := "/folders/" + base64.RawURLEncoding.EncodeToString([]byte("hr")) + "/permissions"

	for _, row := range []struct {
		name, method, path string
		get                string // what must read the same after a refusal
		key                string
		body               func(over bool) any
	}{
		// site schema
		{"schema name", "PUT", site + "/schema/document", site + "/schema/document", "name", func(o bool) any {
			return map[string]any{"name": str(o, storage.MaxKeyBytes), "attributes": map[string]any{"optional": opt}}
		}},
		{"schema required", "PUT", site + "/schema/document", site + "/schema/document", "required", func(o bool) any {
			return schema(map[string]any{"required": list(o, storage.MaxAttributesPerRequest, func(i int) any { return map[string]any{"attributeKey": keys(i)} })})
		}},
		{"schema optional", "PUT", site + "/schema/document", site + "/schema/document", "optional", func(o bool) any {
			return schema(map[string]any{"optional": list(o, storage.MaxAttributesPerRequest, func(i int) any { return map[string]any{"attributeKey": keys(i)} })})
		}},
		{"schema compositeKeys", "PUT", site + "/schema/document", site + "/schema/document", "compositeKeys", func(o bool) any {
			return schema(map[string]any{"compositeKeys": list(o, storage.MaxAttributesPerRequest, func(int) any { return map[string]any{"attributeKeys": []string{"a0", "a1"}} })})
		}},
		{"schema attributeKeys", "PUT", site + "/schema/document", site + "/schema/document", "attributeKeys", func(o bool) any {
			return schema(map[string]any{"compositeKeys": []any{map[string]any{"attributeKeys": list(o, storage.MaxAttributesPerRequest, keys)}}})
		}},
		{"schema defaultValue", "PUT", site + "/schema/document", site + "/schema/document", "defaultValue", func(o bool) any {
			return color(map[string]any{"defaultValue": str(o, storage.MaxValueBytes)})
		}},
		{"schema defaultValues count", "PUT", site + "/schema/document", site + "/schema/document", "defaultValues", func(o bool) any {
			return color(map[string]any{"defaultValues": list(o, storage.MaxValuesPerKey, value)})
		}},
		{"schema defaultValues value", "PUT", site + "/schema/document", site + "/schema/document", "defaultValues", func(o bool) any {
			return color(map[string]any{"defaultValues": []string{str(o, storage.MaxValueBytes)}})
		}},
		{"schema allowedValues count", "PUT", site + "/schema/document", site + "/schema/document", "allowedValues", func(o bool) any {
			return color(map[string]any{"allowedValues": list(o, storage.MaxAllowedValues, value)})
		}},
		{"schema allowedValues value", "PUT", site + "/schema/document", site + "/schema/document", "allowedValues", func(o bool) any {
			return color(map[string]any{"allowedValues": []string{str(o, storage.MaxValueBytes)}})
		}},
		// classifications share the schema's checks
		{"classification allowedValues", "PUT", site + "/classifications/" + classID, site + "/classifications/" + classID, "allowedValues", func(o bool) any {
			return map[string]any{"classification": map[string]any{"name": "invoice", "attributes": map[string]any{"optional": []any{manualless(map[string]any{"allowedValues": list(o, storage.MaxAllowedValues, value)})}}}}
		}},
		// entity types and entities
		{"entityTypeId", "PUT", "", "/entityTypes", "entityTypeId", nil},
		{"entityId", "PUT", "", "/entities/" + etID, "entityId", nil},
		{"entity attributes", "PUT", "/entities/" + etID + "/acme", "/entities/" + etID + "/acme", "attributes", func(o bool) any {
			return entity(list(o, storage.MaxAttributesPerRequest, func(i int) any { return map[string]any{"key": fmt.Sprintf("k%d", i)} }))
		}},
		{"entity attribute key", "PUT", "/entities/" + etID + "/acme", "/entities/" + etID + "/acme", "key", func(o bool) any {
			return entity([]any{map[string]any{"key": str(o, storage.MaxKeyBytes)}})
		}},
		{"entity stringValues count", "PUT", "/entities/" + etID + "/acme", "/entities/" + etID + "/acme", "stringValues", func(o bool) any {
			return entity([]any{map[string]any{"key": "k", "stringValues": list(o, storage.MaxValuesPerKey, value)}})
		}},
		{"entity stringValues value", "PUT", "/entities/" + etID + "/acme", "/entities/" + etID + "/acme", "stringValues", func(o bool) any {
			return entity([]any{map[string]any{"key": "k", "stringValue": str(o, storage.MaxValueBytes)}})
		}},
		{"entity numberValues", "PATCH", "/entities/" + etID + "/acme", "/entities/" + etID + "/acme", "numberValues", func(o bool) any {
			return entity([]any{map[string]any{"key": "n", "numberValues": list(o, storage.MaxValuesPerKey, func(i int) any { return i })}})
		}},
		// folder permissions
		{"folder roles", "PUT", "/folders/permissions", perms, "roles", func(o bool) any {
			return map[string]any{"path": "hr", "roles": list(o, storage.MaxFolderRoles, func(i int) any {
				return map[string]any{"roleName": fmt.Sprintf("r%d", i), "permissions": []string{"READ"}}
			})}
		}},
		{"folder roleName", "PUT", "/folders/permissions", perms, "roleName", func(o bool) any {
			return map[string]any{"path": "hr", "roles": []any{map[string]any{"roleName": str(o, storage.MaxKeyBytes), "permissions": []string{"READ"}}}}
		}},
		// mappings
		{"mapping description", "PUT", mappingPath, mappingPath, "description", func(o bool) any {
			m := mapping([]map[string]any{manual(nil)}, nil)
			m["mapping"].(map[string]any)["description"] = str(o, storage.MaxDescriptionBytes)
			return m
		}},
		{"mapping attributes", "PUT", mappingPath, mappingPath, "attributes", func(o bool) any {
			attrs := make([]map[string]any, n(o, storage.MaxAttributesPerRequest))
			for i := range attrs {
				attrs[i] = manual(nil)
			}
			return mapping(attrs, nil)
		}},
		{"mapping classifications", "PUT", mappingPath, mappingPath, "classifications", func(o bool) any {
			cls := make([]map[string]any, n(o, storage.MaxValuesPerKey))
			for i := range cls {
				cls[i] = map[string]any{"classificationId": classID}
			}
			return mapping([]map[string]any{manual(nil)}, cls)
		}},
		{"mapping defaultValue", "PUT", mappingPath, mappingPath, "attributes[0].defaultValue", func(o bool) any {
			return mapping([]map[string]any{manual(map[string]any{"defaultValue": str(o, storage.MaxValueBytes)})}, nil)
		}},
		{"mapping defaultValues count", "PUT", mappingPath, mappingPath, "attributes[0].defaultValues", func(o bool) any {
			return mapping([]map[string]any{manual(map[string]any{"defaultValues": list(o, storage.MaxValuesPerKey, value)})}, nil)
		}},
		{"mapping defaultValues value", "PUT", mappingPath, mappingPath, "attributes[0].defaultValues", func(o bool) any {
			return mapping([]map[string]any{manual(map[string]any{"defaultValues": []string{str(o, storage.MaxValueBytes)}})}, nil)
		}},
		{"mapping labelTexts count", "PUT", mappingPath, mappingPath, "attributes[0].labelTexts", func(o bool) any {
			return mapping([]map[string]any{manual(map[string]any{"sourceType": "CONTENT", "labelMatchingType": "EXACT", "labelTexts": list(o, storage.MaxValuesPerKey, value)})}, nil)
		}},
		{"mapping labelTexts value", "PUT", mappingPath, mappingPath, "attributes[0].labelTexts", func(o bool) any {
			return mapping([]map[string]any{manual(map[string]any{"sourceType": "CONTENT", "labelMatchingType": "EXACT", "labelTexts": []string{str(o, storage.MaxValueBytes)}})}, nil)
		}},
		{"mapping validationRegex", "PUT", mappingPath, mappingPath, "attributes[0].validationRegex", func(o bool) any {
			return mapping([]map[string]any{manual(map[string]any{"validationRegex": str(o, storage.MaxValueBytes)})}, nil)
		}},
		{"mapping attribute llmPromptEntityName", "PUT", mappingPath, mappingPath, "attributes[0].llmPromptEntityName", func(o bool) any {
			return mapping([]map[string]any{manual(map[string]any{"sourceType": "AI_PROMPT_RESULT", "llmPromptEntityName": str(o, storage.MaxKeyBytes)})}, nil)
		}},
		{"mapping conditions", "PUT", mappingPath, mappingPath, "classifications[0].conditions", func(o bool) any {
			conds := list(o, storage.MaxValuesPerKey, func(int) any { return map[string]any{"sourceType": "CONTENT", "matchingType": "EXACT", "text": "x"} })
			return mapping([]map[string]any{manual(nil)}, []map[string]any{{"classificationId": classID, "conditions": conds}})
		}},
		{"mapping condition text", "PUT", mappingPath, mappingPath, "classifications[0].conditions[0].text", func(o bool) any {
			return mapping([]map[string]any{manual(nil)}, []map[string]any{{"classificationId": classID, "conditions": []any{map[string]any{"sourceType": "CONTENT", "matchingType": "EXACT", "text": str(o, storage.MaxValueBytes)}}}})
		}},
		{"mapping condition resultKey", "PUT", mappingPath, mappingPath, "classifications[0].conditions[0].resultKey", func(o bool) any {
			return aiPrompt(map[string]any{"resultKey": str(o, storage.MaxKeyBytes)})
		}},
		{"mapping condition resultValue", "PUT", mappingPath, mappingPath, "classifications[0].conditions[0].resultValue", func(o bool) any {
			return aiPrompt(map[string]any{"resultValue": str(o, storage.MaxValueBytes)})
		}},
		{"mapping condition llmPromptEntityName", "PUT", mappingPath, mappingPath, "classifications[0].conditions[0].llmPromptEntityName", func(o bool) any {
			return aiPrompt(map[string]any{"llmPromptEntityName": str(o, storage.MaxKeyBytes)})
		}},
		// attribute definitions
		{"attribute validationRegex", "POST", "/attributes", "/attributes", "validationRegex", func(o bool) any {
			return map[string]any{"attribute": map[string]any{"key": "code", "validationRegex": str(o, storage.MaxValueBytes)}}
		}},
		{"attribute validationRegex update", "PATCH", "/attributes/color", "/attributes/color", "validationRegex", func(o bool) any {
			return map[string]any{"attribute": map[string]any{"validationRegex": str(o, storage.MaxValueBytes)}}
		}},
		// numbering sequences
		{"sequence pattern", "POST", site + "/sequences", site + "/sequences", "pattern", func(o bool) any {
			return map[string]any{"sequence": map[string]any{"attributeKey": "invoiceNumber", "pattern": "{SEQUENCE}" + str(o, storage.MaxKeyBytes-len("{SEQUENCE}"))}}
		}},
		// API keys
		{"API key groups", "POST", site + "/apiKeys", site + "/apiKeys", "groups", func(o bool) any {
			return map[string]any{"name": "k", "groups": list(o, storage.MaxValuesPerKey, func(i int) any { return fmt.Sprintf("g%d", i) })}
		}},
		{"API key permissions", "POST", site + "/apiKeys", site + "/apiKeys", "permissions", func(o bool) any {
			return map[string]any{"name": "k", "permissions": list(o, storage.MaxValuesPerKey, func(int) any { return "READ" })}
		}},
	} {
		t.Run(row.name, func(t *testing.T) {
			path := func(over bool) string { return row.path }
			body := row.body
			switch row.key { // the id is the path's last segment
			case "entityTypeId":
				path = func(o bool) string { return "/entityTypes/" + str(o, storage.MaxKeyBytes) + "?createIfMissing=true" }
				body = func(bool) any {
					return map[string]any{"entityType": map[string]any{"namespace": "CUSTOM", "name": "long"}}
				}
			case "entityId":
				path = func(o bool) string {
					return "/entities/" + etID + "/" + str(o, storage.MaxKeyBytes) + "?createIfMissing=true"
				}
				body = func(bool) any { return map[string]any{"entity": map[string]any{"name": "Long"}} }
			}
			before := do(http.MethodGet, row.get, nil)
			r := do(row.method, path(true), body(true))
			if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), `{"errors":[{"key":"`+row.key+`","error":`) {
				t.Fatalf("just over the limit: %d %s, want 400 with key %q", r.Status, r.Body, row.key)
			}
			if after := do(http.MethodGet, row.get, nil); after.Status != before.Status || string(after.Body) != string(before.Body) {
				t.Fatalf("a refused write changed %s:\nbefore %d %s\nafter  %d %s", row.get, before.Status, before.Body, after.Status, after.Body)
			}
			if r := do(row.method, path(false), body(false)); r.Status/100 != 2 {
				t.Fatalf("at the limit: %d %s, want it accepted", r.Status, r.Body)
			}
		})
	}
}

// manualless is a schema attribute of color with extra fields.
func manualless(extra map[string]any) map[string]any {
	a := map[string]any{"attributeKey": "color"}
	for k, v := range extra {
		a[k] = v
	}
	return a
}

// jsonField is a top-level string field of r's JSON body.
func jsonField(t *testing.T, r *quiretest.Response, key string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("%s: %v", r.Body, err)
	}
	v, _ := m[key].(string)
	if v == "" {
		t.Fatalf("no %q in %s", key, r.Body)
	}
	return v
}
