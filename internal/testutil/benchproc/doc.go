// Package benchproc measures whole processes for `make bench`: the wall
// time, CPU time (user+sys) and peak RSS (getrusage ru_maxrss of the waited
// child) of a command run to completion, A/B pairs of lakesink and a
// baseline run alternately, and the re-execution of a test binary as one
// side of a benchmark (so a library benchmark's two sides are whole
// processes too, each measured alone). The rows it prints are the BENCHROW
// lines internal/benchtable collects.
package benchproc
