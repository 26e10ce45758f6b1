// The "mcl" backend of torch.distributed in C++: every collective on one
// mcl communicator, called straight from c10d (no Python on the way),
// tensors of any device staged through host buffers of mcl's own. Sends,
// receives and the monitored barrier stay with the Python engine that
// matches tags and sources (mcl/_torch_p2p.py), reached through `helper`.
#pragma once

#include <mcl/mcl.h>
#include <pybind11/pybind11.h>

#include <memory>
#include <string>
#include <vector>

#include "host_buffers.h"
#include "ordered_work.h"
#include "torch_version.h"

namespace mcl::torch_backend {

class Backend : public BackendBase {
 public:
  // Joins the communicator rank 0's id names (its text, unsealed by the
  // Python side from the store); blocks, without the GIL, until every rank
  // joined or the timeout. helper: the Python object with send, recv,
  // monitored_barrier and close.
  Backend(int rank, int size, const std::string& uniqueId, int timeoutSeconds,
          pybind11::object helper);
  ~Backend() override;

  const std::string getBackendName() const override { return "mcl"; }
  int timeoutSeconds() const { return timeoutSeconds_; }
  pybind11::object helper() const { return helper_; }
  std::string topology() const;
  // Ends the group: queued work finishes, the point-to-point links close,
  // the communicator goes. Later calls fail, saying so.
  void close();

  c10::intrusive_ptr<c10d::Work> broadcast(
      std::vector<at::Tensor>& tensors,
      const c10d::BroadcastOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce(
      std::vector<at::Tensor>& tensors,
      const c10d::AllreduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(
      std::vector<at::Tensor>& tensors,
      const c10d::AllreduceCoalescedOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce(
      std::vector<at::Tensor>& tensors,
      const c10d::ReduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather(
      std::vector<std::vector<at::Tensor>>& outputs,
      std::vector<at::Tensor>& inputs,
      const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(
      at::Tensor& output, at::Tensor& input,
      const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather_coalesced(
      std::vector<std::vector<at::Tensor>>& outputLists,
      std::vector<at::Tensor>& inputs,
      const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> gather(
      std::vector<std::vector<at::Tensor>>& outputs,
      std::vector<at::Tensor>& inputs,
      const c10d::GatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> scatter(
      std::vector<at::Tensor>& outputs,
      std::vector<std::vector<at::Tensor>>& inputs,
      const c10d::ScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(
      std::vector<at::Tensor>& outputs,
      std::vector<std::vector<at::Tensor>>& inputs,
      const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(
      at::Tensor& output, at::Tensor& input,
      const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(
      at::Tensor& output, at::Tensor& input,
      std::vector<int64_t>& outputSplitSizes,
      std::vector<int64_t>& inputSplitSizes,
      const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall(
      std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
      const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> barrier(
      const c10d::BarrierOptions& opts) override;
#if TORCH_VERSION_MAJOR >= 2
  void startCoalescing() override;
  c10::intrusive_ptr<c10d::Work> endCoalescing() override;
  c10::intrusive_ptr<c10d::Work> allgather_into_tensor_coalesced(
      std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
      const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter_tensor_coalesced(
      std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
      const c10d::ReduceScatterOptions& opts) override;
#endif

  // Point-to-point and the monitored barrier: the Python engine's
  // (backend_p2p.cpp).
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors,
                                      int dstRank, int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors,
                                      int srcRank, int tag) override;
  c10::intrusive_ptr<c10d::Work> recvAnysource(std::vector<at::Tensor>& tensors,
                                               int tag) override;
  void monitoredBarrier(const c10d::BarrierOptions& opts,
                        bool waitAllRanks) override;

 private:
  // A work issued while coalescing joins the batch endCoalescing returns.
  c10::intrusive_ptr<c10d::Work> tracked(c10::intrusive_ptr<c10d::Work> work);
  // Queues an operation; callerWaits as the options say.
  c10::intrusive_ptr<c10d::Work> enqueue(c10d::OpType type,
                                         OrderedWork::Body body,
                                         bool callerWaits);
  // The communicator, or the error of a closed group.
  mclComm_t comm(const char* what) const;
  // Throws the backend error for a failed mcl call `what`.
  void check(mclResult_t result, const char* what) const;
  void checkRoot(int64_t root, const char* what) const;
  // Runs mcl's point-to-point calls as one group (ends it on failure).
  void inGroup(const char* what, const std::function<void()>& calls) const;
  // Reduce-scatter of `input` (already checked, host or device) into
  // `output`.
  c10::intrusive_ptr<c10d::Work> reduceScatterInto(
      const at::Tensor& output, const at::Tensor& input,
      const c10d::ReduceScatterOptions& opts, const char* what);
  // All-to-all of blocks of any size, as one group of sends and receives;
  // `before` runs first (copies in), `finish` last (copies back).
  c10::intrusive_ptr<c10d::Work> exchange(std::vector<at::Tensor> sends,
                                          std::vector<at::Tensor> receives,
                                          std::vector<at::Tensor> outputs,
                                          const char* what,
                                          std::function<void()> before,
                                          std::function<void()> finish,
                                          bool callerWaits);

  const int timeoutSeconds_;
  mclComm_t comm_ = nullptr;
  pybind11::object helper_;
  std::shared_ptr<HostBuffers> buffers_;
  // Shared with the works, which may outlive the group; stopped (queued
  // work finished) by close(), before the communicator goes.
  std::shared_ptr<OperationQueue> queue_;
  // Between startCoalescing and endCoalescing (PyTorch 2's coalescing
  // manager, batch_isend_irecv on CUDA): the works issued, for one handle.
  bool coalescing_ = false;
  std::vector<c10::intrusive_ptr<c10d::Work>> coalesced_;
};

}  // namespace mcl::torch_backend
