// How one rank of a run joins its job: forked locally by mcl-perf (rank,
// nranks and the unique id given) or started by a launcher.
#pragma once

#include <mcl/mcl.h>

namespace mcl::perf {

struct RankSetup {
  int rank = 0;
  int nranks = 1;
  mclUniqueId id{};
  // Join through mclCommInitFromEnv (a launcher's job); rank and nranks
  // then come from the communicator.
  bool fromEnvironment = false;
};

}  // namespace mcl::perf
