// The collectives and point-to-point calls: each takes its buffers from
// Python objects, checks that their types and sizes fit together (naming
// the argument that does not), and hands the call to the communicator.
#include <array>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "arguments.h"
#include "buffer_view.h"
#include "communicator.h"
#include "errors.h"

namespace py = pybind11;

namespace mcl::python {
namespace {

using Access = BufferView::Access;
using Dtype = std::optional<std::string>;

// How a reduction sees a buffer: mcl's type and the count in that type.
struct Reduced {
  mclDataType_t type;
  size_t count;
};

Reduced reducedForm(const BufferView& view, mclRedOp_t op) {
  const ElementType& t = view.type();
  if (!t.reduceAs)
    invalidArgument("x: mcl cannot reduce " + t.name +
                    " elements (int8, uint8, int32, uint32, int64, uint64, "
                    "float16, bfloat16, float32, float64, float8_e4m3, "
                    "float8_e5m2; complex64 and complex128 for sum and "
                    "avg; bool for max and min); convert the array");
  if (t.lanes > 1 && op != mclSum && op != mclAvg)
    invalidArgument("op: " + t.name +
                    " reduces with sum or avg only (max, min and prod have "
                    "no element-wise meaning for it)");
  // As bytes 0 and 1, max is "any" and min is "all"; a sum would leave
  // the booleans' range.
  if (t.name == "bool" && op != mclMax && op != mclMin)
    invalidArgument("op: bool reduces with max (any) or min (all) only");
  return Reduced{*t.reduceAs, view.elements() * t.lanes};
}

void requireBytes(const BufferView& view, const char* argument, size_t want,
                  const std::string& why) {
  if (view.bytes() != want)
    invalidArgument(std::string(argument) + " has " +
                    std::to_string(view.bytes()) + " bytes; " + why +
                    " needs " + std::to_string(want));
}

// Divides x into `parts` whole blocks of elements, or says why not.
size_t blockBytes(const BufferView& x, int parts, const char* what) {
  if (x.elements() % static_cast<size_t>(parts) != 0)
    invalidArgument("x has " + std::to_string(x.elements()) +
                    " elements, not a multiple of the " +
                    std::to_string(parts) + " ranks (" + what + ")");
  return x.bytes() / static_cast<size_t>(parts);
}

std::vector<BufferView> one(BufferView a) {
  std::vector<BufferView> v;
  v.push_back(std::move(a));
  return v;
}

// An operation's input and output, of one element type.
struct InOut {
  BufferView x;
  BufferView out;
};

InOut acquireInOut(py::handle xObj, py::handle outObj, const Dtype& dtype) {
  InOut b{BufferView::acquire(xObj, Access::Read, "x", dtype),
          BufferView::acquire(outObj, Access::Write, "out", dtype)};
  if (b.x.type().name != b.out.type().name)
    invalidArgument("out holds " + b.out.type().name + " but x holds " +
                    b.x.type().name + ": they must match");
  return b;
}

// Hands `call` the two buffers' memory; the buffers stay alive until it
// is done.
template <typename Call>
py::object runInOut(Communicator& c, const char* name, InOut b, bool async,
                    Call call) {
  const void* send = b.x.data();
  void* recv = b.out.data();
  std::vector<BufferView> buffers;
  buffers.push_back(std::move(b.x));
  buffers.push_back(std::move(b.out));
  return c.run(
      name, std::move(buffers),
      [=](mclComm_t h) { return call(send, recv, h); }, async);
}

py::object allReduce(Communicator& c, py::handle xObj, py::handle outObj,
                     py::handle opName, const Dtype& dtype, bool async) {
  const mclRedOp_t op = reduceOpFromName(textArgument(opName, "op"));
  InOut b = acquireInOut(xObj, outObj, dtype);
  requireBytes(b.out, "out", b.x.bytes(), "all_reduce of x");
  const Reduced r = reducedForm(b.x, op);
  return runInOut(c, "all_reduce", std::move(b), async,
                  [=](const void* send, void* recv, mclComm_t h) {
                    return mclAllReduce(send, recv, r.count, r.type, op, h,
                                        nullptr);
                  });
}

// Data that only moves goes as bytes: any element type works.
py::object allGather(Communicator& c, py::handle xObj, py::handle outObj,
                     const Dtype& dtype, bool async) {
  InOut b = acquireInOut(xObj, outObj, dtype);
  requireBytes(b.out, "out", b.x.bytes() * static_cast<size_t>(c.size()),
               "all_gather of x from " + std::to_string(c.size()) + " ranks");
  const size_t bytes = b.x.bytes();
  return runInOut(c, "all_gather", std::move(b), async,
                  [=](const void* send, void* recv, mclComm_t h) {
                    return mclAllGather(send, recv, bytes, mclUint8, h,
                                        nullptr);
                  });
}

py::object broadcast(Communicator& c, py::handle xObj, py::handle outObj,
                     py::handle rootObj, const Dtype& dtype, bool async) {
  const int root = rankArgument(rootObj, c.size(), "root");
  InOut b = acquireInOut(xObj, outObj, dtype);
  requireBytes(b.out, "out", b.x.bytes(), "broadcast of x");
  const size_t bytes = b.x.bytes();
  return runInOut(c, "broadcast", std::move(b), async,
                  [=](const void* send, void* recv, mclComm_t h) {
                    return mclBroadcast(send, recv, bytes, mclUint8, root, h,
                                        nullptr);
                  });
}

py::object reduce(Communicator& c, py::handle xObj, py::handle outObj,
                  py::handle rootObj, py::handle opName, const Dtype& dtype,
                  bool async) {
  const int root = rankArgument(rootObj, c.size(), "root");
  const mclRedOp_t op = reduceOpFromName(textArgument(opName, "op"));
  if (outObj.is_none()) {
    // Off the root nothing is written: x alone.
    if (c.rank() == root)
      invalidArgument("out is None on the root (rank " + std::to_string(root) +
                      "): it receives the result");
    BufferView x = BufferView::acquire(xObj, Access::Read, "x", dtype);
    const Reduced r = reducedForm(x, op);
    const void* send = x.data();
    return c.run(
        "reduce", one(std::move(x)),
        [=](mclComm_t h) {
          return mclReduce(send, nullptr, r.count, r.type, op, root, h,
                           nullptr);
        },
        async);
  }
  InOut b = acquireInOut(xObj, outObj, dtype);
  requireBytes(b.out, "out", b.x.bytes(), "reduce of x");
  const Reduced r = reducedForm(b.x, op);
  return runInOut(c, "reduce", std::move(b), async,
                  [=](const void* send, void* recv, mclComm_t h) {
                    return mclReduce(send, recv, r.count, r.type, op, root, h,
                                     nullptr);
                  });
}

py::object reduceScatter(Communicator& c, py::handle xObj, py::handle outObj,
                         py::handle opName, const Dtype& dtype, bool async) {
  const mclRedOp_t op = reduceOpFromName(textArgument(opName, "op"));
  InOut b = acquireInOut(xObj, outObj, dtype);
  const size_t block = blockBytes(b.x, c.size(), "reduce_scatter");
  requireBytes(
      b.out, "out", block,
      "one block of x (x's size / " + std::to_string(c.size()) + " ranks)");
  const Reduced r = reducedForm(b.out, op);
  return runInOut(c, "reduce_scatter", std::move(b), async,
                  [=](const void* send, void* recv, mclComm_t h) {
                    return mclReduceScatter(send, recv, r.count, r.type, op, h,
                                            nullptr);
                  });
}

py::object allToAll(Communicator& c, py::handle xObj, py::handle outObj,
                    const Dtype& dtype, bool async) {
  InOut b = acquireInOut(xObj, outObj, dtype);
  const size_t block = blockBytes(b.x, c.size(), "all_to_all");
  requireBytes(b.out, "out", b.x.bytes(), "all_to_all of x");
  return runInOut(c, "all_to_all", std::move(b), async,
                  [=](const void* send, void* recv, mclComm_t h) {
                    return mclAlltoAll(send, recv, block, mclUint8, h, nullptr);
                  });
}

py::object barrier(Communicator& c, bool async) {
  return c.run(
      "barrier", {}, [](mclComm_t h) { return mclBarrier(h, nullptr); }, async);
}

py::object send(Communicator& c, py::handle xObj, py::handle peerObj,
                const Dtype& dtype, bool async) {
  const int peer = rankArgument(peerObj, c.size(), "peer");
  BufferView x = BufferView::acquire(xObj, Access::Read, "x", dtype);
  const void* data = x.data();
  const size_t bytes = x.bytes();
  return c.run(
      "send", one(std::move(x)),
      [=](mclComm_t h) {
        return mclSend(data, bytes, mclUint8, peer, h, nullptr);
      },
      async);
}

py::object recv(Communicator& c, py::handle outObj, py::handle peerObj,
                const Dtype& dtype, bool async) {
  const int peer = rankArgument(peerObj, c.size(), "peer");
  BufferView out = BufferView::acquire(outObj, Access::Write, "out", dtype);
  void* data = out.data();
  const size_t bytes = out.bytes();
  return c.run(
      "recv", one(std::move(out)),
      [=](mclComm_t h) {
        return mclRecv(data, bytes, mclUint8, peer, h, nullptr);
      },
      async);
}

// Both at once, in one group: a rank that sends to and receives from its
// neighbours (a ring exchange) cannot wait on a peer that waits on it,
// whatever the sizes.
py::object sendRecv(Communicator& c, py::handle xObj, py::handle destObj,
                    py::handle outObj, py::handle sourceObj, const Dtype& dtype,
                    bool async) {
  const int dest = rankArgument(destObj, c.size(), "dest");
  const int source = rankArgument(sourceObj, c.size(), "source");
  BufferView x = BufferView::acquire(xObj, Access::Read, "x", dtype);
  BufferView out = BufferView::acquire(outObj, Access::Write, "out", dtype);
  const void* sendData = x.data();
  const size_t sendBytes = x.bytes();
  void* recvData = out.data();
  const size_t recvBytes = out.bytes();
  std::vector<BufferView> buffers;
  buffers.push_back(std::move(x));
  buffers.push_back(std::move(out));
  return c.run(
      "sendrecv", std::move(buffers),
      [=](mclComm_t h) {
        mclResult_t rc = mclGroupStart();
        if (rc != mclSuccess) return rc;
        const mclResult_t sent =
            mclSend(sendData, sendBytes, mclUint8, dest, h, nullptr);
        const mclResult_t received =
            sent != mclSuccess
                ? sent
                : mclRecv(recvData, recvBytes, mclUint8, source, h, nullptr);
        // The group must close even after a refusal (it runs what it holds).
        rc = mclGroupEnd();
        return sent != mclSuccess       ? sent
               : received != mclSuccess ? received
                                        : rc;
      },
      async);
}

mclFunc_t funcFromName(const std::string& name) {
  static constexpr std::array<std::pair<const char*, mclFunc_t>, 6> kFuncs = {
      {{"all_reduce", mclFuncAllReduce},
       {"all_gather", mclFuncAllGather},
       {"broadcast", mclFuncBroadcast},
       {"reduce", mclFuncReduce},
       {"reduce_scatter", mclFuncReduceScatter},
       {"all_to_all", mclFuncAlltoAll}}};
  for (const auto& [text, func] : kFuncs)
    if (name == text) return func;
  invalidArgument("collective: unknown \"" + name +
                  "\" (all_reduce, all_gather, broadcast, reduce, "
                  "reduce_scatter or all_to_all)");
}

}  // namespace

std::string Communicator::algorithm(const std::string& collective,
                                    py::handle countObj,
                                    const std::string& dtype) {
  const size_t count = countArgument(countObj, "count");
  const mclFunc_t func = funcFromName(collective);
  const ElementType type = elementTypeNamed(dtype, "dtype");
  if (!type.reduceAs) invalidArgument("dtype: mcl has no type " + dtype);
  const char* name = nullptr;
  check(mclCommGetAlgorithm(handleOrThrow(), func, count * type.lanes,
                            *type.reduceAs, &name));
  return name;
}

std::optional<int> timeoutArgument(py::handle t) {
  if (t.is_none()) return std::nullopt;
  return intArgument(t, "timeout");
}

void registerCommunicator(py::module_& m) {
  auto a = [](const char* n) { return py::arg(n); };
  py::class_<Communicator, std::shared_ptr<Communicator>>(m, "Comm")
      .def_static(
          "init_rank",
          [](py::handle size, const std::string& id, py::handle rank,
             py::handle t, Dtype transport, Dtype name, Dtype algorithms) {
            return Communicator::initRank(
                intArgument(size, "size"), id, intArgument(rank, "rank"),
                {timeoutArgument(t), transport, name, algorithms});
          },
          a("size"), a("unique_id"), a("rank"), py::kw_only(),
          a("timeout") = py::none(), a("transport") = py::none(),
          a("name") = py::none(), a("algorithms") = py::none())
      .def_static(
          "init_from_env",
          [](py::handle t, Dtype transport, Dtype name, Dtype algorithms) {
            return Communicator::initFromEnv(
                {timeoutArgument(t), transport, name, algorithms});
          },
          py::kw_only(), a("timeout") = py::none(), a("transport") = py::none(),
          a("name") = py::none(), a("algorithms") = py::none())
      .def_property_readonly("rank", &Communicator::rank)
      .def_property_readonly("size", &Communicator::size)
      .def_property_readonly("closed", &Communicator::closed)
      .def("all_reduce", &allReduce)
      .def("all_gather", &allGather)
      .def("broadcast", &broadcast)
      .def("reduce", &reduce)
      .def("reduce_scatter", &reduceScatter)
      .def("all_to_all", &allToAll)
      .def("barrier", &barrier)
      .def("send", &send)
      .def("recv", &recv)
      .def("sendrecv", &sendRecv)
      .def("split",
           [](Communicator& c, py::handle color, py::handle key) {
             return c.split(intArgument(color, "color"),
                            intArgument(key, "key"));
           })
      .def("abort", &Communicator::abort)
      .def("close", &Communicator::close)
      .def("topology", &Communicator::topology)
      .def("algorithm", &Communicator::algorithm)
      .def("async_error", &Communicator::asyncError);
}

}  // namespace mcl::python
