// MCL_ALGO ("allreduce:tree;allgather:ring", bare names, "auto"), parsed by
// parseAlgorithmSpec (algorithm_table.h). Defects must be
// mclInvalidArgument; what is accepted forces only algorithms the table
// has for that collective, and its fixed form (describeForced, which ranks
// compare) reads back as the same choice.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "algorithms/algorithm_table.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using mcl::fuzz::check;
  std::string_view spec(reinterpret_cast<const char*>(data), size);
  mcl::ForcedAlgorithms forced;
  if (!mcl::fuzz::acceptedOr(mclInvalidArgument,
                             [&] { forced = mcl::parseAlgorithmSpec(spec); }))
    return 0;
  for (size_t c = 0; c < mcl::kTunedCollectives; ++c)
    check(forced[c] == mcl::Algorithm::Auto ||
              mcl::findAlgorithm(mcl::Collective(c), forced[c]) != nullptr,
          "a forced algorithm exists for its collective");
  check(mcl::parseAlgorithmSpec(mcl::describeForced(forced)) == forced,
        "describeForced reads back as the same choice");
  return 0;
}
