//go:build !linux

package mapadvice

// Random does nothing where Quire has no madvise to call.
func Random(string, ...string) func() { return func() {} }

// Readahead reports that it cannot tell the readahead window here.
func Readahead(string) (kib int, device string, ok bool) { return 0, "", false }

// Advised reports nothing mapped where Quire cannot tell.
func Advised(string) (random, mapped bool, err error) { return false, false, nil }
