// Package mapadvice tells the kernel that the files Quire's stores map into
// memory are read at random.
//
// Badger maps its tables (.sst) and Bleve its segments (.zap) and read
// them through the mapping. A page missing from the page cache is then a
// fault, and for a fault on a mapping the kernel reads not one page but
// the device's whole readahead window around it ("read-around"): 128 KiB
// by default, 8 MiB on the virtual disks of some clouds and hypervisors.
// A query that needs a 4 KiB block of postings or one document record
// thus reads and keeps up to 8 MiB, and in a small box (or a memory
// cgroup) those pages push out the ones the next query needs. At a
// million documents in 512 MiB this made a rare-word search 35 times
// slower than with the memory to spare (index/DESIGN.md). Databases that
// read through mappings or with pread say the same: RocksDB advises
// random access on its table files by default.
//
// Random registers a directory; a single watcher advises MADV_RANDOM on
// every mapping of a matching file in it, at once and every ScanEvery
// after (new tables and segments are mapped as the stores flush and
// merge). The advice is a hint: errors are ignored, and on systems
// without madvise Random does nothing.
//
// The advice is not free where the window is small: a fault then reads
// 4 KiB, where 128 KiB of read-around would have brought the next
// blocks of a key range or a posting list too. Measured at a million
// documents in 512 MiB (storage/DESIGN.md, "Read-around"): with an 8 MiB
// window, random advice on Badger's tables took rare-word /search from
// p99 1.5 s to 0.18–0.28 s; with a 128 KiB window it made folder listing
// and rare words slower (p99 12 → 17 ms, 59 → 81 ms). On Bleve's segments
// it lost at both sizes: a word's first query reads its whole posting
// list, which read-around brings in a few large reads. So storage
// advises its tables only when Readahead reports a window over
// RandomAboveKiB, and says so in its log; quire doctor warns about such a
// disk.
package mapadvice

import "time"

// ScanEvery is how often the watcher looks for new mappings.
var ScanEvery = 2 * time.Second

// RandomAboveKiB is the readahead window (KiB) above which a store's
// randomly read files are advised random.
const RandomAboveKiB = 512
