// Package harness is what every row of the benchmark (quire/bench) shares:
// the parameters of a run (Config) and the Session the rows run in; a
// bin/quire child process on a loopback port (Server) or a node in the
// benchmark's process (Inproc); the samplers of a process's memory and CPU
// and the memory cgroups of the scale rows; the closed-loop loads and the
// text of the documents they create; the streamed upload and its disk
// baselines; the readers of a site's default processing and of a
// document's actions; and the Report every row is added to.
//
// The row groups live in the packages beside it (ingest, search, ocr,
// console, cluster, backup, versions, links, intake), each importing
// harness and none another, except search, which runs console's search as
// you type over its corpus.
package harness
