// Sends, receives and the monitored barrier: the Python engine's, which
// matches tags and sources over links of their own (mcl/_torch_p2p.py).
// Tensors of other devices go through host copies there.
#include "backend.h"
#include "call_arguments.h"
#include "python_transfer_work.h"

#include <torch/csrc/utils/pybind.h>

namespace mcl::torch_backend {

namespace py = pybind11;

namespace {

void checkPeer(int peer, int me, int size, const char* what, const char* name) {
  if (peer < 0 || peer >= size)
    throwValueError(std::string("mcl backend: ") + what + ": " + name +
                    " rank " + std::to_string(peer) +
                    " is not in the group (ranks 0 to " +
                    std::to_string(size - 1) + ")");
  if (peer == me)
    throwValueError(std::string("mcl backend: ") + what + ": " + name +
                    " rank " + std::to_string(peer) + " is this rank");
}

}  // namespace

c10::intrusive_ptr<c10d::Work> Backend::send(std::vector<at::Tensor>& tensors,
                                             int dstRank, int tag) {
  checkPeer(dstRank, getRank(), getSize(), "send", "dst");
  const at::Tensor t = oneTensor(tensors, "send");
  comm("send");
  py::gil_scoped_acquire gil;
  return tracked(c10::make_intrusive<PythonTransferWork>(
      getRank(), c10d::OpType::SEND, helper_.attr("send")(t, dstRank, tag)));
}

c10::intrusive_ptr<c10d::Work> Backend::recv(std::vector<at::Tensor>& tensors,
                                             int srcRank, int tag) {
  checkPeer(srcRank, getRank(), getSize(), "recv", "src");
  const at::Tensor t = oneTensor(tensors, "recv");
  comm("recv");
  py::gil_scoped_acquire gil;
  return tracked(c10::make_intrusive<PythonTransferWork>(
      getRank(), c10d::OpType::RECV, helper_.attr("recv")(t, srcRank, tag)));
}

c10::intrusive_ptr<c10d::Work> Backend::recvAnysource(
    std::vector<at::Tensor>& tensors, int tag) {
  if (getSize() < 2)
    throwValueError(
        "mcl backend: recv from any rank: the group has no other rank");
  const at::Tensor t = oneTensor(tensors, "recv");
  comm("recv");
  py::gil_scoped_acquire gil;
  return tracked(c10::make_intrusive<PythonTransferWork>(
      getRank(), c10d::OpType::RECVANYSOURCE,
      helper_.attr("recv")(t, py::none(), tag)));
}

void Backend::monitoredBarrier(const c10d::BarrierOptions& opts,
                               bool waitAllRanks) {
  comm("monitored_barrier");
  py::gil_scoped_acquire gil;
  py::object timeout = py::none();
  if (opts.timeout != c10d::kUnsetTimeout)
    timeout =
        py::module_::import("datetime")
            .attr("timedelta")(py::arg("milliseconds") = opts.timeout.count());
  helper_.attr("monitored_barrier")(timeout, waitAllRanks);
}

}  // namespace mcl::torch_backend
