package segments

import zapx "github.com/blevesearch/zapx/v17"

// Zap (the segment format Bleve writes new segments in) sizes the buffer of
// each new segment from the last segment built by any index of the process
// (its scratch state sits in one pool shared by all indexes): the last
// segment's bytes per document times (the batch's documents + 100). After
// a document with 1 MiB of text, a names batch of one document reserved
// (1 + 100) × its segment, 466 MiB, and the runtime zeroed it: a spike a
// 512 MiB server cannot take, and under the race detector 39% of a test
// package's CPU in page faults (TestSegmentBuffer_SmallBatchAfterLargeDocument).
// A factor of 0 turns the estimate off: the buffer grows as the segment is
// written (doubling, so at most twice the segment's bytes are copied).
func init() {
	zapx.NewSegmentBufferNumResultsFactor = 0
}
