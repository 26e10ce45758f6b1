#include "common/agreement.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "common/mcl_error.h"

namespace mcl::perf {

namespace {
constexpr size_t kNoteBytes = 480;
}  // namespace

std::string firstFailure(mclComm_t job, int rank, int nranks,
                         const std::string& mine) {
  std::vector<char> all(kNoteBytes * size_t(nranks));
  std::vector<char> own(kNoteBytes, '\0');
  std::snprintf(own.data(), kNoteBytes, "%s", mine.c_str());
  checkMcl(
      rank, "mclAllGather",
      mclAllGather(own.data(), all.data(), kNoteBytes, mclUint8, job, nullptr),
      job);
  for (int r = 0; r < nranks; ++r) {
    const char* note = all.data() + kNoteBytes * size_t(r);
    if (*note) return std::string(note, strnlen(note, kNoteBytes));
  }
  return "";
}

}  // namespace mcl::perf
