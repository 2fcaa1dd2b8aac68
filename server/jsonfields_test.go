package server_test

import "quire/quiretest"

// Checked reads of decoded JSON, the ones quiretest gives every package
// (one set): a missing field fails the test, not the package, as an
// unchecked type assertion's panic would.
var (
	str     = quiretest.Str
	num     = quiretest.Num
	boolean = quiretest.Bool
	list    = quiretest.List
	obj     = quiretest.Obj
	item    = quiretest.Item
)
