package server_test

import "testing"

// str returns m[key] as a string and fails the test (not the package, as an
// unchecked type assertion's panic would) when it is missing or not one.
func str(t *testing.T, m map[string]any, key string) string {
	t.Helper()
	v, ok := m[key].(string)
	if !ok {
		t.Fatalf("%q is %T %v, want a string, in %v", key, m[key], m[key], m)
	}
	return v
}

// list returns m[key] as a JSON array, failing the test when it is not one.
func list(t *testing.T, m map[string]any, key string) []any {
	t.Helper()
	v, ok := m[key].([]any)
	if !ok {
		t.Fatalf("%q is %T %v, want an array, in %v", key, m[key], m[key], m)
	}
	return v
}

// obj returns v as a JSON object, failing the test when it is not one.
func obj(t *testing.T, v any) map[string]any {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%T %v, want an object", v, v)
	}
	return m
}
