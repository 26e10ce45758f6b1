// The reductions: all-reduce (one tensor, or several as one), reduce, and
// reduce-scatter (a list, one tensor, or several as one).
#include <memory>

#include "backend.h"
#include "call_arguments.h"
#include "element_types.h"
#include "host_view.h"
#include "mcl_api.h"

namespace mcl::torch_backend {

namespace {

using Use = HostView::Use;

size_t countOf(const at::Tensor& t, const WireType& wire) {
  return static_cast<size_t>(t.numel()) * wire.elementsPerItem;
}

}  // namespace

c10::intrusive_ptr<c10d::Work> Backend::allreduce(
    std::vector<at::Tensor>& tensors, const c10d::AllreduceOptions& opts) {
  const at::Tensor t = oneTensor(tensors, "all_reduce");
  const WireType wire = reducedAs(t, opts.reduceOp, "all_reduce");
  const mclRedOp_t op = redOpOf(opts.reduceOp, "all_reduce");
  mclComm_t c = comm("all_reduce");
  auto view = std::make_shared<HostView>(t, Use::ReadWrite, *buffers_);
  return enqueue(
      c10d::OpType::ALLREDUCE,
      [this, c, view, wire, op, tensors] {
        view->fill();
        check(api().allReduce(view->data(), view->data(),
                              countOf(view->host(), wire), wire.type, op, c,
                              nullptr),
              "all_reduce");
        view->finish();
        return tensors;
      },
      callerWaitsAtOnce(opts));
}

c10::intrusive_ptr<c10d::Work> Backend::allreduce_coalesced(
    std::vector<at::Tensor>& tensors,
    const c10d::AllreduceCoalescedOptions& opts) {
  const char* what = "all_reduce_coalesced";
  checkOneDevice(tensors, what);
  if (tensors.empty())
    throwValueError(std::string("mcl backend: ") + what + ": no tensors");
  checkSameType(tensors, what);
  const WireType wire = reducedAs(tensors[0], opts.reduceOp, what);
  const mclRedOp_t op = redOpOf(opts.reduceOp, what);
  mclComm_t c = comm(what);
  std::vector<at::Tensor> flat;
  for (const at::Tensor& t : tensors)
    flat.push_back(t.to(at::kCPU).reshape({-1}));
  auto all = std::make_shared<at::Tensor>(at::cat(flat));
  return enqueue(
      c10d::OpType::ALLREDUCE_COALESCED,
      [this, c, all, wire, op, tensors, what] {
        check(api().allReduce(all->data_ptr(), all->data_ptr(),
                              countOf(*all, wire), wire.type, op, c, nullptr),
              what);
        int64_t offset = 0;
        for (const at::Tensor& t : tensors) {
          const_cast<at::Tensor&>(t).copy_(
              all->narrow(0, offset, t.numel()).view_as(t));
          offset += t.numel();
        }
        return tensors;
      },
      callerWaitsAtOnce(opts));
}

c10::intrusive_ptr<c10d::Work> Backend::reduce(
    std::vector<at::Tensor>& tensors, const c10d::ReduceOptions& opts) {
  const at::Tensor t = oneTensor(tensors, "reduce");
  checkRoot(opts.rootRank, "reduce");
  const WireType wire = reducedAs(t, opts.reduceOp, "reduce");
  const mclRedOp_t op = redOpOf(opts.reduceOp, "reduce");
  mclComm_t c = comm("reduce");
  const int root = static_cast<int>(opts.rootRank);
  auto view = std::make_shared<HostView>(
      t, root == getRank() ? Use::ReadWrite : Use::Read, *buffers_);
  return enqueue(
      c10d::OpType::REDUCE,
      [this, c, view, wire, op, root, tensors] {
        view->fill();
        check(api().reduce(view->data(), view->data(),
                           countOf(view->host(), wire), wire.type, op, root, c,
                           nullptr),
              "reduce");
        view->finish();
        return tensors;
      },
      callerWaitsAtOnce(opts));
}

c10::intrusive_ptr<c10d::Work> Backend::reduce_scatter(
    std::vector<at::Tensor>& outputs,
    std::vector<std::vector<at::Tensor>>& inputs,
    const c10d::ReduceScatterOptions& opts) {
  const at::Tensor out = oneTensor(outputs, "reduce_scatter");
  const std::vector<at::Tensor> list =
      oneList(inputs, getSize(), "reduce_scatter's input");
  checkOneDevice({out, list[0]}, "reduce_scatter");
  for (size_t i = 0; i < list.size(); ++i)
    checkSized(list[i], "input " + std::to_string(i), out, "the output", 1,
               "reduce_scatter");
  // The list side by side on the host (read when the call is made).
  std::vector<at::Tensor> rows;
  for (const at::Tensor& t : list) rows.push_back(t.to(at::kCPU).reshape({-1}));
  return reduceScatterInto(out, at::cat(rows), opts, "reduce_scatter");
}

c10::intrusive_ptr<c10d::Work> Backend::_reduce_scatter_base(
    at::Tensor& output, at::Tensor& input,
    const c10d::ReduceScatterOptions& opts) {
  const char* what = "reduce_scatter_tensor";
  checkOneDevice({output, input}, what);
  checkSized(input, "the input", output, "the output", getSize(), what);
  return reduceScatterInto(output, input, opts, what);
}

c10::intrusive_ptr<c10d::Work> Backend::reduceScatterInto(
    const at::Tensor& output, const at::Tensor& input,
    const c10d::ReduceScatterOptions& opts, const char* what) {
  const WireType wire = reducedAs(output, opts.reduceOp, what);
  const mclRedOp_t op = redOpOf(opts.reduceOp, what);
  mclComm_t c = comm(what);
  auto in = std::make_shared<HostView>(input, Use::Read, *buffers_);
  auto out = std::make_shared<HostView>(output, Use::Write, *buffers_);
  std::vector<at::Tensor> outputs{output};
  return enqueue(
      c10d::OpType::_REDUCE_SCATTER_BASE,
      [this, c, in, out, wire, op, outputs, what] {
        in->fill();
        check(api().reduceScatter(in->data(), out->data(),
                                  countOf(out->host(), wire), wire.type, op, c,
                                  nullptr),
              what);
        out->finish();
        return outputs;
      },
      callerWaitsAtOnce(opts));
}

#if TORCH_VERSION_MAJOR >= 2
c10::intrusive_ptr<c10d::Work> Backend::reduce_scatter_tensor_coalesced(
    std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::ReduceScatterOptions& opts) {
  // Rank r's share of every input side by side in row r of one matrix,
  // then one reduce-scatter.
  const char* what = "reduce_scatter_tensor_coalesced";
  checkPairs(outputs.size(), inputs.size(), what);
  checkOneDevice(inputs, what);
  checkOneDevice(outputs, std::string(what) + " output");
  checkSameType(inputs, what);
  const int64_t n = getSize();
  std::vector<at::Tensor> columns;
  for (size_t i = 0; i < inputs.size(); ++i) {
    checkSized(inputs[i], "input " + std::to_string(i), outputs[i],
               "output " + std::to_string(i), n, what);
    columns.push_back(inputs[i].to(at::kCPU).reshape({n, -1}));
  }
  auto rows = std::make_shared<at::Tensor>(at::cat(columns, 1).contiguous());
  auto mine =
      std::make_shared<at::Tensor>(at::empty({rows->size(1)}, rows->options()));
  const WireType wire = reducedAs(outputs[0], opts.reduceOp, what);
  const mclRedOp_t op = redOpOf(opts.reduceOp, what);
  mclComm_t c = comm(what);
  return enqueue(
      c10d::OpType::COALESCED,
      [this, c, rows, mine, wire, op, outputs, what] {
        check(api().reduceScatter(rows->data_ptr(), mine->data_ptr(),
                                  countOf(*mine, wire), wire.type, op, c,
                                  nullptr),
              what);
        int64_t offset = 0;
        for (const at::Tensor& out : outputs) {
          const_cast<at::Tensor&>(out).copy_(
              mine->narrow(0, offset, out.numel()).view_as(out));
          offset += out.numel();
        }
        return outputs;
      },
      callerWaitsAtOnce(opts));
}
#endif

}  // namespace mcl::torch_backend
