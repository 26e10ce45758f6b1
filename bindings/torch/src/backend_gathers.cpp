// The operations that move data without reducing it: broadcast, the
// all-gathers (a list, one tensor, several as one), gather and scatter.
#include <memory>
#include <string>
#include <vector>

#include "backend.h"
#include "call_arguments.h"
#include "element_types.h"
#include "host_view.h"
#include "mcl_api.h"

namespace mcl::torch_backend {

namespace {

using Use = HostView::Use;

// The bytes each rank contributes to an all-gather of `inputs`, side by
// side; piece(rank, i) is input i of that rank in its type.
struct GatheredBytes {
  at::Tensor sent;      // this rank's inputs, as bytes
  at::Tensor received;  // size x sent's bytes
  std::vector<at::Tensor> inputs;

  at::Tensor piece(int64_t rank, size_t i) const {
    int64_t start = 0;
    for (size_t j = 0; j < i; ++j) start += inputs[j].nbytes();
    // A copy at offset 0: a view of another type needs its offset to be a
    // multiple of that type's size, which inputs of mixed types break.
    return received[rank]
        .narrow(0, start, inputs[i].nbytes())
        .clone()
        .view(inputs[i].scalar_type());
  }
};

// The root's list of a gather or scatter, each checked against `like` and
// viewed on the host for `use`.
std::vector<std::shared_ptr<HostView>> rootViews(
    const std::vector<at::Tensor>& list, const at::Tensor& like,
    const std::string& name, HostView::Use use, HostBuffers& buffers,
    const char* what) {
  std::vector<std::shared_ptr<HostView>> views;
  for (size_t i = 0; i < list.size(); ++i) {
    checkSized(list[i], name + " " + std::to_string(i), like,
               use == Use::Write ? "the input" : "the output", 1, what);
    views.push_back(std::make_shared<HostView>(list[i], use, buffers));
  }
  return views;
}

}  // namespace

c10::intrusive_ptr<c10d::Work> Backend::broadcast(
    std::vector<at::Tensor>& tensors, const c10d::BroadcastOptions& opts) {
  const at::Tensor t = oneTensor(tensors, "broadcast");
  checkRoot(opts.rootRank, "broadcast");
  const int root = static_cast<int>(opts.rootRank);
  mclComm_t c = comm("broadcast");
  auto view = std::make_shared<HostView>(
      t, root == getRank() ? Use::Read : Use::Write, *buffers_);
  return enqueue(
      c10d::OpType::BROADCAST,
      [this, c, view, root, tensors] {
        view->fill();
        check(api().broadcast(view->data(), view->data(), view->bytes(),
                              mclUint8, root, c, nullptr),
              "broadcast");
        view->finish();
        return tensors;
      },
      callerWaitsAtOnce(opts));
}

c10::intrusive_ptr<c10d::Work> Backend::_allgather_base(
    at::Tensor& output, at::Tensor& input, const c10d::AllgatherOptions& opts) {
  const char* what = "all_gather_into_tensor";
  checkOneDevice({output, input}, what);
  checkSized(output, "the output", input, "the input", getSize(), what);
  mclComm_t c = comm(what);
  auto in = std::make_shared<HostView>(input, Use::Read, *buffers_);
  auto out = std::make_shared<HostView>(output, Use::Write, *buffers_);
  std::vector<at::Tensor> outputs{output};
  return enqueue(
      c10d::OpType::_ALLGATHER_BASE,
      [this, c, in, out, outputs, what] {
        in->fill();
        check(api().allGather(in->data(), out->data(), in->bytes(), mclUint8, c,
                              nullptr),
              what);
        out->finish();
        return outputs;
      },
      callerWaitsAtOnce(opts));
}

c10::intrusive_ptr<c10d::Work> Backend::allgather(
    std::vector<std::vector<at::Tensor>>& outputs,
    std::vector<at::Tensor>& inputs, const c10d::AllgatherOptions& opts) {
  const at::Tensor x = oneTensor(inputs, "all_gather");
  std::vector<std::vector<at::Tensor>> lists{
      oneList(outputs, getSize(), "all_gather's output")};
  for (size_t i = 0; i < lists[0].size(); ++i)
    checkSized(lists[0][i], "output " + std::to_string(i), x, "the input", 1,
               "all_gather");
  return allgather_coalesced(lists, inputs, opts);
}

c10::intrusive_ptr<c10d::Work> Backend::allgather_coalesced(
    std::vector<std::vector<at::Tensor>>& outputLists,
    std::vector<at::Tensor>& inputs, const c10d::AllgatherOptions& opts) {
  // Every input gathered into its list of outputs (one per rank), in one
  // all-gather of all the inputs' bytes.
  const char* what = "all_gather_coalesced";
  checkOneDevice(inputs, what);
  checkPairs(outputLists.size(), inputs.size(), what);
  for (size_t i = 0; i < outputLists.size(); ++i) {
    const std::string list =
        std::string(what) + "'s output list " + std::to_string(i);
    checkCount(outputLists[i].size(), getSize(), list);
    checkOneDevice(outputLists[i], list);
    for (size_t j = 0; j < outputLists[i].size(); ++j)
      checkSized(outputLists[i][j],
                 "output " + std::to_string(i) + "[" + std::to_string(j) + "]",
                 inputs[i], "input " + std::to_string(i), 1, what);
  }
  mclComm_t c = comm(what);
  auto bytes = std::make_shared<GatheredBytes>();
  bytes->inputs = inputs;
  bytes->sent = bytesOf(inputs);
  bytes->received =
      at::empty({getSize(), bytes->sent.numel()}, bytes->sent.options());
  std::vector<at::Tensor> flat;
  for (const auto& list : outputLists)
    flat.insert(flat.end(), list.begin(), list.end());
  return enqueue(
      c10d::OpType::ALLGATHER_COALESCED,
      [this, c, bytes, outputLists, flat, what] {
        check(
            api().allGather(bytes->sent.data_ptr(), bytes->received.data_ptr(),
                            bytes->sent.numel(), mclUint8, c, nullptr),
            what);
        for (size_t i = 0; i < outputLists.size(); ++i)
          for (size_t rank = 0; rank < outputLists[i].size(); ++rank) {
            at::Tensor out = outputLists[i][rank];
            out.copy_(bytes->piece(static_cast<int64_t>(rank), i).view_as(out));
          }
        return flat;
      },
      callerWaitsAtOnce(opts));
}

#if TORCH_VERSION_MAJOR >= 2
c10::intrusive_ptr<c10d::Work> Backend::allgather_into_tensor_coalesced(
    std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions& opts) {
  const char* what = "all_gather_into_tensor_coalesced";
  checkOneDevice(inputs, what);
  checkOneDevice(outputs, std::string(what) + " output");
  checkPairs(outputs.size(), inputs.size(), what);
  for (size_t i = 0; i < inputs.size(); ++i)
    checkSized(outputs[i], "output " + std::to_string(i), inputs[i],
               "input " + std::to_string(i), getSize(), what);
  mclComm_t c = comm(what);
  auto bytes = std::make_shared<GatheredBytes>();
  bytes->inputs = inputs;
  bytes->sent = bytesOf(inputs);
  bytes->received =
      at::empty({getSize(), bytes->sent.numel()}, bytes->sent.options());
  const int64_t n = getSize();
  return enqueue(
      c10d::OpType::COALESCED,
      [this, c, bytes, outputs, n, what] {
        check(
            api().allGather(bytes->sent.data_ptr(), bytes->received.data_ptr(),
                            bytes->sent.numel(), mclUint8, c, nullptr),
            what);
        for (size_t i = 0; i < outputs.size(); ++i) {
          std::vector<at::Tensor> rows;
          for (int64_t rank = 0; rank < n; ++rank)
            rows.push_back(bytes->piece(rank, i));
          at::Tensor out = outputs[i];
          out.copy_(at::stack(rows).reshape(out.sizes()));
        }
        return outputs;
      },
      callerWaitsAtOnce(opts));
}
#endif

c10::intrusive_ptr<c10d::Work> Backend::gather(
    std::vector<std::vector<at::Tensor>>& outputs,
    std::vector<at::Tensor>& inputs, const c10d::GatherOptions& opts) {
  const at::Tensor x = oneTensor(inputs, "gather");
  checkRoot(opts.rootRank, "gather");
  const int root = static_cast<int>(opts.rootRank);
  const int me = getRank();
  mclComm_t c = comm("gather");
  auto in = std::make_shared<HostView>(x, Use::Read, *buffers_);
  std::vector<std::shared_ptr<HostView>> views;
  std::vector<at::Tensor> results;
  if (me == root) {
    results = oneList(outputs, getSize(), "gather's output");
    views = rootViews(results, x, "output", Use::Write, *buffers_, "gather");
  }
  return enqueue(
      c10d::OpType::GATHER,
      [this, c, in, views, results, root, me] {
        in->fill();
        inGroup("gather", [&] {
          if (me != root) {
            check(
                api().send(in->data(), in->bytes(), mclUint8, root, c, nullptr),
                "gather");
            return;
          }
          for (int rank = 0; rank < static_cast<int>(views.size()); ++rank)
            if (rank != root)
              check(api().recv(views[rank]->data(), views[rank]->bytes(),
                               mclUint8, rank, c, nullptr),
                    "gather");
        });
        if (me == root) {
          views[root]->host().copy_(in->host().view_as(views[root]->host()));
          for (const auto& view : views) view->finish();
        }
        return results;
      },
      callerWaitsAtOnce(opts));
}

c10::intrusive_ptr<c10d::Work> Backend::scatter(
    std::vector<at::Tensor>& outputs,
    std::vector<std::vector<at::Tensor>>& inputs,
    const c10d::ScatterOptions& opts) {
  const at::Tensor out = oneTensor(outputs, "scatter");
  checkRoot(opts.rootRank, "scatter");
  const int root = static_cast<int>(opts.rootRank);
  const int me = getRank();
  mclComm_t c = comm("scatter");
  auto mine = std::make_shared<HostView>(out, Use::Write, *buffers_);
  std::vector<std::shared_ptr<HostView>> sends;
  if (me == root)
    sends = rootViews(oneList(inputs, getSize(), "scatter's input"), out,
                      "input", Use::Read, *buffers_, "scatter");
  return enqueue(
      c10d::OpType::SCATTER,
      [this, c, mine, sends, root, me, outputs] {
        for (const auto& view : sends) view->fill();
        inGroup("scatter", [&] {
          if (me != root) {
            check(api().recv(mine->data(), mine->bytes(), mclUint8, root, c,
                             nullptr),
                  "scatter");
            return;
          }
          for (int rank = 0; rank < static_cast<int>(sends.size()); ++rank)
            if (rank != root)
              check(api().send(sends[rank]->data(), sends[rank]->bytes(),
                               mclUint8, rank, c, nullptr),
                    "scatter");
        });
        if (me == root)
          mine->host().copy_(sends[root]->host().view_as(mine->host()));
        mine->finish();
        return outputs;
      },
      callerWaitsAtOnce(opts));
}

}  // namespace mcl::torch_backend
