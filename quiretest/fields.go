package quiretest

import "testing"

// Checked reads of decoded JSON. An unchecked type assertion on a missing
// field panics, and a panic ends every test of the package; these fail
// only the test t (the caller's: call them from the goroutine running t).

// Str returns m[key] as a string, failing t when it is missing or not one.
func Str(t testing.TB, m map[string]any, key string) string {
	t.Helper()
	return field[string](t, m, key, "a string")
}

// Num returns m[key] as a JSON number, failing t when it is not one.
func Num(t testing.TB, m map[string]any, key string) float64 {
	t.Helper()
	return field[float64](t, m, key, "a number")
}

// Bool returns m[key] as a JSON boolean, failing t when it is not one.
func Bool(t testing.TB, m map[string]any, key string) bool {
	t.Helper()
	return field[bool](t, m, key, "a boolean")
}

// List returns m[key] as a JSON array, failing t when it is not one.
func List(t testing.TB, m map[string]any, key string) []any {
	t.Helper()
	return field[[]any](t, m, key, "an array")
}

// field returns m[key] as a T, failing t when it is missing or not one.
func field[T any](t testing.TB, m map[string]any, key, want string) T {
	t.Helper()
	v, ok := m[key].(T)
	if !ok {
		t.Fatalf("%q is %T %v, want %s, in %v", key, m[key], m[key], want, m)
	}
	return v
}

// Obj returns v as a JSON object, failing t when it is not one.
func Obj(t testing.TB, v any) map[string]any {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%T %v, want an object", v, v)
	}
	return m
}

// Item returns the i-th element of m[key] as a JSON object, failing t
// when m[key] is not an array that long or the element is not an object.
func Item(t testing.TB, m map[string]any, key string, i int) map[string]any {
	t.Helper()
	l := List(t, m, key)
	if i < 0 || i >= len(l) {
		t.Fatalf("%q has %d elements, want index %d, in %v", key, len(l), i, m)
	}
	return Obj(t, l[i])
}
