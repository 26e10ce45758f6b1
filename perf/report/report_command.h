// `mcl-perf report`: the kit a Mac owner runs, the same way on every Mac of
// the cluster, and attaches to a bug report. It runs mcl-perf's own steps
// as child jobs, one after another: the doctor (topo --check), every cable
// qualified over TCP and over RDMA, round trips TCP against RDMA from 8 B to
// 1 MiB, the all-reduce sweep over TCP and over RDMA (with the verdict
// line), and a job whose last rank is killed, to show how long the others
// take to notice. It writes one Markdown file and one JSON file, and says
// which steps passed and which did not. On the emulated fabric every part
// of both files says so.
#pragma once

namespace mcl::perf {

// argv as main's, argv[1] == "report". Exit: 0 every step passed, 1 some
// did not, 2 bad usage.
int runReport(int argc, char** argv);

}  // namespace mcl::perf
