//go:build !race

package node_test

// raceEnabled reports a -race build (tests size their loads by it).
const raceEnabled = false
