// All-to-all: even blocks of one tensor (mcl's all-to-all), blocks of any
// size, and lists of tensors (one group of sends and receives).
#include <memory>

#include "backend.h"
#include "call_arguments.h"
#include "host_view.h"
#include "mcl_api.h"

namespace mcl::torch_backend {

namespace {

using Use = HostView::Use;

// t's rows in `sizes` blocks (equal blocks when sizes is empty).
std::vector<at::Tensor> splitRows(const at::Tensor& t,
                                  const std::vector<int64_t>& sizes, int n,
                                  const char* which) {
  const int64_t rows = t.dim() == 0 ? 1 : t.size(0);
  if (sizes.empty()) {
    if (rows % n != 0)
      throwValueError(std::string("mcl backend: all_to_all_single: the ") +
                      which + "'s " + std::to_string(rows) +
                      " rows do not split evenly over " + std::to_string(n) +
                      " ranks");
    return t.chunk(n);
  }
  int64_t total = 0;
  bool negative = false;
  for (int64_t s : sizes) {
    total += s;
    negative = negative || s < 0;
  }
  if (static_cast<int>(sizes.size()) != n || total != rows || negative)
    throwValueError(std::string("mcl backend: all_to_all_single: the ") +
                    which + "'s split sizes do not cover its " +
                    std::to_string(rows) + " rows in " + std::to_string(n) +
                    " blocks");
  return t.split_with_sizes(sizes);
}

}  // namespace

c10::intrusive_ptr<c10d::Work> Backend::alltoall_base(
    at::Tensor& output, at::Tensor& input,
    std::vector<int64_t>& outputSplitSizes,
    std::vector<int64_t>& inputSplitSizes, const c10d::AllToAllOptions& opts) {
  const char* what = "all_to_all_single";
  checkOneDevice({output, input}, what);
  if (output.scalar_type() != input.scalar_type())
    throwValueError(std::string("mcl backend: ") + what + ": the output is " +
                    c10::toString(output.scalar_type()) + " and the input " +
                    c10::toString(input.scalar_type()));
  mclComm_t c = comm(what);
  auto in = std::make_shared<HostView>(input, Use::Read, *buffers_);
  auto out = std::make_shared<HostView>(output, Use::Write, *buffers_);
  std::vector<at::Tensor> outputs{output};
  const int n = getSize();
  if (outputSplitSizes.empty() && inputSplitSizes.empty()) {
    const int64_t rows = input.dim() == 0 ? 1 : input.size(0);
    if (input.numel() != output.numel() || rows % n != 0)
      throwValueError(std::string("mcl backend: ") + what + ": the input (" +
                      std::to_string(input.numel()) +
                      " elements) and output (" +
                      std::to_string(output.numel()) +
                      ") must be one size, its rows split evenly over " +
                      std::to_string(n) + " ranks");
    return enqueue(
        c10d::OpType::ALLTOALL_BASE,
        [this, c, in, out, n, outputs, what] {
          in->fill();
          check(api().alltoAll(in->data(), out->data(), in->bytes() / n,
                               mclUint8, c, nullptr),
                what);
          out->finish();
          return outputs;
        },
        callerWaitsAtOnce(opts));
  }
  std::vector<at::Tensor> sends =
      splitRows(in->host(), inputSplitSizes, n, "input");
  std::vector<at::Tensor> receives =
      splitRows(out->host(), outputSplitSizes, n, "output");
  // The blocks are views of the staging buffers: the views go with them.
  return exchange(
      std::move(sends), std::move(receives), outputs, what,
      [in] { in->fill(); }, [in, out] { out->finish(); },
      callerWaitsAtOnce(opts));
}

c10::intrusive_ptr<c10d::Work> Backend::alltoall(
    std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::AllToAllOptions& opts) {
  const char* what = "all_to_all";
  checkCount(outputs.size(), getSize(), "all_to_all's output list");
  checkCount(inputs.size(), getSize(), "all_to_all's input list");
  checkOneDevice(inputs, what);
  checkOneDevice(outputs, "all_to_all's output");
  std::vector<at::Tensor> sends;
  std::vector<at::Tensor> receives;
  auto views = std::make_shared<std::vector<HostView>>();
  views->reserve(outputs.size());
  for (const at::Tensor& t : inputs)
    sends.push_back(t.to(at::kCPU).contiguous());
  for (const at::Tensor& t : outputs) {
    views->emplace_back(t, Use::Write, *buffers_);
    receives.push_back(views->back().host());
  }
  return exchange(
      std::move(sends), std::move(receives), outputs, what, [] {},
      [views] {
        for (HostView& v : *views) v.finish();
      },
      callerWaitsAtOnce(opts));
}

c10::intrusive_ptr<c10d::Work> Backend::exchange(
    std::vector<at::Tensor> sends, std::vector<at::Tensor> receives,
    std::vector<at::Tensor> outputs, const char* what,
    std::function<void()> before, std::function<void()> finish,
    bool callerWaits) {
  const int me = getRank();
  if (sends[me].nbytes() != receives[me].nbytes())
    throwValueError(std::string("mcl backend: ") + what +
                    ": this rank's block to itself differs in size on the "
                    "two sides");
  mclComm_t c = comm(what);
  return enqueue(
      c10d::OpType::ALLTOALL,
      [this, c, sends, receives, outputs, what, before, finish, me] {
        before();
        const int n = static_cast<int>(sends.size());
        inGroup(what, [&] {
          for (int k = 1; k < n; ++k) {
            const int to = (me + k) % n;
            const int from = (me - k + n) % n;
            check(api().send(sends[to].data_ptr(), sends[to].nbytes(), mclUint8,
                             to, c, nullptr),
                  what);
            check(api().recv(receives[from].data_ptr(), receives[from].nbytes(),
                             mclUint8, from, c, nullptr),
                  what);
          }
        });
        const_cast<at::Tensor&>(receives[me])
            .copy_(sends[me].view_as(receives[me]));
        finish();
        return outputs;
      },
      callerWaits);
}

}  // namespace mcl::torch_backend
