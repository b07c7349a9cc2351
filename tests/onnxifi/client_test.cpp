// An ONNXIFI client of libonnxifi-vulkan.so for what ONNX's own test driver
// does not exercise: both event orders (the input event signalled before
// onnxRunGraph, as Caffe2 does, and after it, as the ONNX driver does),
// onnxGetEventState polling, repeated onnxSetGraphIO with changed buffers,
// two graphs on one backend, runs from several threads, weights passed as
// descriptors, the compiled-bundle cache, and every error status of every
// function. Models are built here with the ONNX protobuf API.
#include <onnx/onnxifi.h>

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "onnx/onnx_pb.h"

namespace {

using Clock = std::chrono::steady_clock;

// The Vulkan loader unloads drivers at vkDestroyInstance; memory lavapipe keeps
// in its globals then looks leaked to LeakSanitizer (the ASan build). A real
// client keeps its instance; these tests create many, so the driver is pinned
// once (as tests/runtime does).
const bool g_drivers_pinned = [] {
  for (const char* lib : {"libvulkan_lvp.so", "libVkLayer_khronos_validation.so"})
    dlopen(lib, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  return true;
}();

// ---------------------------------------------------------------- models --

onnx::ValueInfoProto* AddValue(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list,
                               const std::string& name, int elem, const std::vector<int64_t>& dims,
                               const std::vector<std::string>& symbolic = {}) {
  onnx::ValueInfoProto* v = list->Add();
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem);
  auto* shape = tt->mutable_shape();
  for (size_t i = 0; i < dims.size(); ++i) {
    auto* d = shape->add_dim();
    if (i < symbolic.size() && !symbolic[i].empty()) d->set_dim_param(symbolic[i]);
    else d->set_dim_value(dims[i]);
  }
  return v;
}

onnx::ModelProto NewModel(int64_t opset = 13) {
  onnx::ModelProto m;
  m.set_ir_version(7);
  m.set_producer_name("onnxifi_client_test");
  auto* os = m.add_opset_import();
  os->set_domain("");
  os->set_version(opset);
  m.mutable_graph()->set_name("g");
  return m;
}

onnx::NodeProto* AddNode(onnx::ModelProto* m, const std::string& op, const std::vector<std::string>& in,
                         const std::vector<std::string>& out, const std::string& domain = "") {
  onnx::NodeProto* n = m->mutable_graph()->add_node();
  n->set_op_type(op);
  n->set_name(op + "_" + std::to_string(m->graph().node_size()));
  if (!domain.empty()) n->set_domain(domain);
  for (const auto& s : in) n->add_input(s);
  for (const auto& s : out) n->add_output(s);
  return n;
}

void AddInitializer(onnx::ModelProto* m, const std::string& name, const std::vector<int64_t>& dims,
                    const std::vector<float>& values) {
  onnx::TensorProto* t = m->mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  t->set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
}

std::string Serialize(const onnx::ModelProto& m) {
  std::string s;
  EXPECT_TRUE(m.SerializeToString(&s));
  return s;
}

constexpr int kN = 2, kC = 8;

std::vector<float> Weights(float scale) {
  std::vector<float> w(kC);
  for (int i = 0; i < kC; ++i) w[i] = scale * static_cast<float>(i - 3);
  return w;
}

// y = Relu(x * w) + x, x and y float[2, 8], w float[8] (an initializer, or a
// graph input without one when `w_as_input`).
std::string MulReluModel(bool w_as_input = false, float scale = 0.5f) {
  onnx::ModelProto m = NewModel();
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {kN, kC});
  if (w_as_input) AddValue(g->mutable_input(), "w", onnx::TensorProto::FLOAT, {kC});
  else AddInitializer(&m, "w", {kC}, Weights(scale));
  AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {kN, kC});
  AddNode(&m, "Mul", {"x", "w"}, {"xw"});
  AddNode(&m, "Relu", {"xw"}, {"r"});
  AddNode(&m, "Add", {"r", "x"}, {"y"});
  return Serialize(m);
}

std::vector<float> MulReluReference(const std::vector<float>& x, const std::vector<float>& w) {
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = std::max(0.0f, x[i] * w[i % kC]) + x[i];
  return y;
}

// z = a - b, float[3]: a second, different graph.
std::string SubModel() {
  onnx::ModelProto m = NewModel();
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "a", onnx::TensorProto::FLOAT, {3});
  AddValue(g->mutable_input(), "b", onnx::TensorProto::FLOAT, {3});
  AddValue(g->mutable_output(), "z", onnx::TensorProto::FLOAT, {3});
  AddNode(&m, "Sub", {"a", "b"}, {"z"});
  return Serialize(m);
}

// ------------------------------------------------------------- fixtures --

onnxTensorDescriptorV1 Desc(const char* name, onnxEnum dtype, const std::vector<uint64_t>& shape, void* buffer) {
  onnxTensorDescriptorV1 d{};
  d.tag = ONNXIFI_TAG_TENSOR_DESCRIPTOR_V1;
  d.name = name;
  d.dataType = dtype;
  d.memoryType = ONNXIFI_MEMORY_TYPE_CPU;
  d.dimensions = static_cast<uint32_t>(shape.size());
  d.shape = shape.empty() ? nullptr : shape.data();
  d.buffer = reinterpret_cast<onnxPointer>(buffer);
  return d;
}

onnxMemoryFenceV1 Fence(onnxEvent e = nullptr) {
  onnxMemoryFenceV1 f{};
  f.tag = ONNXIFI_TAG_MEMORY_FENCE_V1;
  f.type = ONNXIFI_SYNCHRONIZATION_EVENT;
  f.event = e;
  return f;
}

const std::vector<uint64_t> kShape{kN, kC};

class Onnxifi : public ::testing::Test {
 protected:
  void SetUp() override {
    size_t n = 0;
    ASSERT_EQ(onnxGetBackendIDs(nullptr, &n), ONNXIFI_STATUS_FALLBACK);
    if (n == 0) GTEST_SKIP() << "no Vulkan device: no ONNXIFI backend";
    ids_.resize(n);
    ASSERT_EQ(onnxGetBackendIDs(ids_.data(), &n), ONNXIFI_STATUS_SUCCESS);
    id_ = ids_[0];
    ASSERT_EQ(onnxInitBackend(id_, nullptr, &backend_), ONNXIFI_STATUS_SUCCESS);
  }
  void TearDown() override {
    if (backend_) {
      EXPECT_EQ(onnxReleaseBackend(backend_), ONNXIFI_STATUS_SUCCESS);
    }
    for (onnxBackendID id : ids_) EXPECT_EQ(onnxReleaseBackendID(id), ONNXIFI_STATUS_SUCCESS);
  }
  onnxGraph InitGraph(const std::string& model) {
    onnxGraph g = nullptr;
    EXPECT_EQ(onnxInitGraph(backend_, nullptr, model.size(), model.data(), 0, nullptr, &g), ONNXIFI_STATUS_SUCCESS);
    return g;
  }
  // One run (input event signalled before onnxRunGraph when `signal_first`).
  onnxStatus Run(onnxGraph g, bool signal_first = true) {
    onnxMemoryFenceV1 in = Fence(), out = Fence();
    EXPECT_EQ(onnxInitEvent(backend_, &in.event), ONNXIFI_STATUS_SUCCESS);
    if (signal_first) {
      EXPECT_EQ(onnxSignalEvent(in.event), ONNXIFI_STATUS_SUCCESS);
    }
    onnxStatus s = onnxRunGraph(g, &in, &out);
    if (s == ONNXIFI_STATUS_SUCCESS) {
      if (!signal_first) {
        EXPECT_EQ(onnxSignalEvent(in.event), ONNXIFI_STATUS_SUCCESS);
      }
      s = onnxWaitEvent(out.event);
      EXPECT_EQ(onnxReleaseEvent(out.event), ONNXIFI_STATUS_SUCCESS);
    }
    EXPECT_EQ(onnxReleaseEvent(in.event), ONNXIFI_STATUS_SUCCESS);
    return s;
  }

  std::vector<onnxBackendID> ids_;
  onnxBackendID id_ = nullptr;
  onnxBackend backend_ = nullptr;
};

std::vector<float> Iota(size_t n, float start, float step) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + step * static_cast<float>(i);
  return v;
}

void ExpectNear(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5f) << "element " << i;
}

// ---------------------------------------------------------- discovery ----

TEST(OnnxifiDiscovery, BackendIdsFallbackThenSuccess) {
  EXPECT_EQ(onnxGetBackendIDs(nullptr, nullptr), ONNXIFI_STATUS_INVALID_POINTER);
  size_t n = 0;
  EXPECT_EQ(onnxGetBackendIDs(nullptr, &n), ONNXIFI_STATUS_FALLBACK);
  if (n == 0) GTEST_SKIP() << "no Vulkan device";
  size_t small = n - 1;
  std::vector<onnxBackendID> ids(n + 1, nullptr);
  EXPECT_EQ(onnxGetBackendIDs(ids.data(), &small), ONNXIFI_STATUS_FALLBACK);
  EXPECT_EQ(small, n);
  for (onnxBackendID id : ids) EXPECT_EQ(id, nullptr);  // nothing written on FALLBACK
  size_t big = n + 1;
  ASSERT_EQ(onnxGetBackendIDs(ids.data(), &big), ONNXIFI_STATUS_SUCCESS);
  EXPECT_EQ(big, n);
  for (size_t i = 0; i < n; ++i) {
    ASSERT_NE(ids[i], nullptr);
    EXPECT_EQ(onnxReleaseBackendID(ids[i]), ONNXIFI_STATUS_SUCCESS);
    EXPECT_EQ(onnxReleaseBackendID(ids[i]), ONNXIFI_STATUS_INVALID_ID);  // released
  }
  int bogus = 0;
  EXPECT_EQ(onnxReleaseBackendID(&bogus), ONNXIFI_STATUS_INVALID_ID);
}

TEST_F(Onnxifi, BackendInfoEveryRequiredQuery) {
  auto u64 = [&](onnxBackendInfo q) {
    uint64_t v = 0xdeadbeef;
    size_t size = sizeof v;
    EXPECT_EQ(onnxGetBackendInfo(id_, q, &v, &size), ONNXIFI_STATUS_SUCCESS) << "query " << q;
    EXPECT_EQ(size, sizeof(uint64_t)) << "query " << q;
    return v;
  };
  auto str = [&](onnxBackendInfo q) {
    size_t size = 0;
    EXPECT_EQ(onnxGetBackendInfo(id_, q, nullptr, &size), ONNXIFI_STATUS_FALLBACK) << "query " << q;
    EXPECT_GE(size, 1u);
    std::vector<char> buf(size, 'x');
    if (size > 1) {
      size_t small = size - 1;
      EXPECT_EQ(onnxGetBackendInfo(id_, q, buf.data(), &small), ONNXIFI_STATUS_FALLBACK);
      EXPECT_EQ(small, size);
    }
    EXPECT_EQ(onnxGetBackendInfo(id_, q, buf.data(), &size), ONNXIFI_STATUS_SUCCESS) << "query " << q;
    EXPECT_EQ(buf.back(), '\0') << "strings include their NUL";
    return std::string(buf.data());
  };
  EXPECT_EQ(u64(ONNXIFI_BACKEND_ONNXIFI_VERSION), UINT64_C(0x0000000100000000));
  EXPECT_EQ(str(ONNXIFI_BACKEND_NAME), "oaax-vulkan");
  EXPECT_LT(str(ONNXIFI_BACKEND_NAME).size() + 1, 50u) << "the ONNX driver reads the name into 50 bytes";
  EXPECT_FALSE(str(ONNXIFI_BACKEND_VENDOR).empty());
  EXPECT_FALSE(str(ONNXIFI_BACKEND_VERSION).empty());
  EXPECT_EQ(str(ONNXIFI_BACKEND_EXTENSIONS), "");
  EXPECT_FALSE(str(ONNXIFI_BACKEND_DEVICE).empty());
  const uint64_t type = u64(ONNXIFI_BACKEND_DEVICE_TYPE);
  EXPECT_TRUE(type == ONNXIFI_DEVICE_TYPE_CPU || type == ONNXIFI_DEVICE_TYPE_GPU) << type;
  const std::string ir = str(ONNXIFI_BACKEND_ONNX_IR_VERSION);
  EXPECT_NE(ir.find('8'), std::string::npos) << ir;
  EXPECT_EQ(str(ONNXIFI_BACKEND_OPSET_VERSION).rfind("ai.onnx:", 0), 0u);
  EXPECT_EQ(u64(ONNXIFI_BACKEND_CAPABILITIES), static_cast<uint64_t>(ONNXIFI_CAPABILITY_THREAD_SAFE));
  EXPECT_EQ(u64(ONNXIFI_BACKEND_INIT_PROPERTIES), 0u);
  EXPECT_EQ(u64(ONNXIFI_BACKEND_MEMORY_TYPES), static_cast<uint64_t>(ONNXIFI_MEMORY_TYPE_CPU));
  EXPECT_EQ(u64(ONNXIFI_BACKEND_GRAPH_INIT_PROPERTIES), 0u);
  EXPECT_EQ(u64(ONNXIFI_BACKEND_SYNCHRONIZATION_TYPES), static_cast<uint64_t>(ONNXIFI_SYNCHRONIZATION_EVENT));
  EXPECT_GT(u64(ONNXIFI_BACKEND_MEMORY_SIZE), 0u);
  EXPECT_GT(u64(ONNXIFI_BACKEND_MAX_GRAPH_SIZE), 0u);
  EXPECT_LE(u64(ONNXIFI_BACKEND_MAX_GRAPH_SIZE), u64(ONNXIFI_BACKEND_MEMORY_SIZE));
  EXPECT_GT(u64(ONNXIFI_BACKEND_MAX_GRAPH_COUNT), 0u);

  uint64_t v = 0;
  size_t size = sizeof v;
  EXPECT_EQ(onnxGetBackendInfo(id_, 9999, &v, &size), ONNXIFI_STATUS_UNSUPPORTED_ATTRIBUTE);
  EXPECT_EQ(onnxGetBackendInfo(id_, ONNXIFI_BACKEND_MACS_FP32, &v, &size), ONNXIFI_STATUS_UNSUPPORTED_ATTRIBUTE);
  size = 3;
  EXPECT_EQ(onnxGetBackendInfo(id_, ONNXIFI_BACKEND_MEMORY_SIZE, &v, &size), ONNXIFI_STATUS_FALLBACK);
  EXPECT_EQ(size, sizeof(uint64_t));
  EXPECT_EQ(onnxGetBackendInfo(id_, ONNXIFI_BACKEND_NAME, &v, nullptr), ONNXIFI_STATUS_INVALID_POINTER);
  int bogus = 0;
  EXPECT_EQ(onnxGetBackendInfo(&bogus, ONNXIFI_BACKEND_NAME, &v, &size), ONNXIFI_STATUS_INVALID_ID);
}

// -------------------------------------------------------- compatibility --

TEST_F(Onnxifi, CompatibilityStatuses) {
  const std::string good = MulReluModel();
  EXPECT_EQ(onnxGetBackendCompatibility(id_, good.size(), good.data()), ONNXIFI_STATUS_SUCCESS);
  EXPECT_EQ(onnxGetBackendCompatibility(id_, good.size(), nullptr), ONNXIFI_STATUS_INVALID_POINTER);
  EXPECT_EQ(onnxGetBackendCompatibility(id_, 0, good.data()), ONNXIFI_STATUS_INVALID_SIZE);
  int bogus = 0;
  EXPECT_EQ(onnxGetBackendCompatibility(&bogus, good.size(), good.data()), ONNXIFI_STATUS_INVALID_ID);
  const std::string garbage = "\xff\xff\xff\xff not a protobuf";
  EXPECT_EQ(onnxGetBackendCompatibility(id_, garbage.size(), garbage.data()), ONNXIFI_STATUS_INVALID_PROTOBUF);

  {  // an operator of an unknown domain
    onnx::ModelProto m = NewModel();
    auto* os = m.add_opset_import();
    os->set_domain("com.example");
    os->set_version(1);
    AddValue(m.mutable_graph()->mutable_input(), "x", onnx::TensorProto::FLOAT, {4});
    AddValue(m.mutable_graph()->mutable_output(), "y", onnx::TensorProto::FLOAT, {4});
    AddNode(&m, "Frobnicate", {"x"}, {"y"}, "com.example");
    const std::string s = Serialize(m);
    EXPECT_EQ(onnxGetBackendCompatibility(id_, s.size(), s.data()), ONNXIFI_STATUS_UNSUPPORTED_OPERATOR);
  }
  {  // an opset newer than ONNX 1.12 knows
    onnx::ModelProto m = NewModel(99);
    AddValue(m.mutable_graph()->mutable_input(), "x", onnx::TensorProto::FLOAT, {4});
    AddValue(m.mutable_graph()->mutable_output(), "y", onnx::TensorProto::FLOAT, {4});
    AddNode(&m, "Relu", {"x"}, {"y"});
    const std::string s = Serialize(m);
    EXPECT_EQ(onnxGetBackendCompatibility(id_, s.size(), s.data()), ONNXIFI_STATUS_UNSUPPORTED_VERSION);
    m.set_ir_version(99);
    m.mutable_opset_import(0)->set_version(13);
    const std::string t = Serialize(m);
    EXPECT_EQ(onnxGetBackendCompatibility(id_, t.size(), t.data()), ONNXIFI_STATUS_UNSUPPORTED_VERSION);
  }
  {  // string tensors
    onnx::ModelProto m = NewModel();
    AddValue(m.mutable_graph()->mutable_input(), "x", onnx::TensorProto::STRING, {4});
    AddValue(m.mutable_graph()->mutable_output(), "y", onnx::TensorProto::STRING, {4});
    AddNode(&m, "Identity", {"x"}, {"y"});
    const std::string s = Serialize(m);
    EXPECT_EQ(onnxGetBackendCompatibility(id_, s.size(), s.data()), ONNXIFI_STATUS_UNSUPPORTED_DATATYPE);
  }
  {  // a symbolic non-batch dimension (SYMBOLIC_SIZE_TENSORS is not offered)
    onnx::ModelProto m = NewModel();
    AddValue(m.mutable_graph()->mutable_input(), "x", onnx::TensorProto::FLOAT, {1, 4}, {"", "W"});
    AddValue(m.mutable_graph()->mutable_output(), "y", onnx::TensorProto::FLOAT, {1, 4}, {"", "W"});
    AddNode(&m, "Relu", {"x"}, {"y"});
    const std::string s = Serialize(m);
    EXPECT_EQ(onnxGetBackendCompatibility(id_, s.size(), s.data()), ONNXIFI_STATUS_UNSUPPORTED_SHAPE);
  }
  {  // a Constant given as a sparse tensor: an attribute value the importer does not take
    onnx::ModelProto m = NewModel();
    AddValue(m.mutable_graph()->mutable_output(), "y", onnx::TensorProto::FLOAT, {4});
    onnx::NodeProto* n = AddNode(&m, "Constant", {}, {"y"});
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name("sparse_value");
    a->set_type(onnx::AttributeProto::SPARSE_TENSOR);
    auto* sp = a->mutable_sparse_tensor();
    sp->add_dims(4);
    auto* vals = sp->mutable_values();
    vals->set_data_type(onnx::TensorProto::FLOAT);
    vals->add_dims(1);
    vals->add_float_data(1.0f);
    auto* idx = sp->mutable_indices();
    idx->set_data_type(onnx::TensorProto::INT64);
    idx->add_dims(1);
    idx->add_int64_data(2);
    const std::string s = Serialize(m);
    EXPECT_EQ(onnxGetBackendCompatibility(id_, s.size(), s.data()), ONNXIFI_STATUS_UNSUPPORTED_ATTRIBUTE);
  }
  {  // a model the ONNX checker rejects (a node reads an undefined tensor)
    onnx::ModelProto m = NewModel();
    AddValue(m.mutable_graph()->mutable_input(), "x", onnx::TensorProto::FLOAT, {4});
    AddValue(m.mutable_graph()->mutable_output(), "y", onnx::TensorProto::FLOAT, {4});
    AddNode(&m, "Add", {"x", "nowhere"}, {"y"});
    const std::string s = Serialize(m);
    EXPECT_EQ(onnxGetBackendCompatibility(id_, s.size(), s.data()), ONNXIFI_STATUS_INVALID_MODEL);
  }
}

// ----------------------------------------------------------------- events --

TEST_F(Onnxifi, EventLifecycleAndErrors) {
  onnxEvent e = nullptr;
  ASSERT_EQ(onnxInitEvent(backend_, &e), ONNXIFI_STATUS_SUCCESS);
  onnxEventState st = 0;
  EXPECT_EQ(onnxGetEventState(e, &st), ONNXIFI_STATUS_SUCCESS);
  EXPECT_EQ(st, ONNXIFI_EVENT_STATE_NONSIGNALLED);
  EXPECT_EQ(onnxSignalEvent(e), ONNXIFI_STATUS_SUCCESS);
  EXPECT_EQ(onnxGetEventState(e, &st), ONNXIFI_STATUS_SUCCESS);
  EXPECT_EQ(st, ONNXIFI_EVENT_STATE_SIGNALLED);
  EXPECT_EQ(onnxSignalEvent(e), ONNXIFI_STATUS_INVALID_STATE);
  EXPECT_EQ(onnxWaitEvent(e), ONNXIFI_STATUS_SUCCESS);
  EXPECT_EQ(onnxWaitEvent(e), ONNXIFI_STATUS_SUCCESS);  // stays signalled
  EXPECT_EQ(onnxGetEventState(e, nullptr), ONNXIFI_STATUS_INVALID_POINTER);
  EXPECT_EQ(onnxReleaseEvent(e), ONNXIFI_STATUS_SUCCESS);
  // A released handle is no event any more.
  EXPECT_EQ(onnxSignalEvent(e), ONNXIFI_STATUS_INVALID_EVENT);
  EXPECT_EQ(onnxGetEventState(e, &st), ONNXIFI_STATUS_INVALID_EVENT);
  EXPECT_EQ(st, ONNXIFI_EVENT_STATE_INVALID);
  EXPECT_EQ(onnxWaitEvent(e), ONNXIFI_STATUS_INVALID_EVENT);
  EXPECT_EQ(onnxReleaseEvent(e), ONNXIFI_STATUS_INVALID_EVENT);
  EXPECT_EQ(onnxReleaseEvent(nullptr), ONNXIFI_STATUS_INVALID_EVENT);
  EXPECT_EQ(onnxInitEvent(backend_, nullptr), ONNXIFI_STATUS_INVALID_POINTER);
  int bogus = 0;
  EXPECT_EQ(onnxInitEvent(&bogus, &e), ONNXIFI_STATUS_INVALID_BACKEND);
  EXPECT_EQ(e, nullptr);
}

TEST_F(Onnxifi, WaitFromAnotherThreadWakesOnSignal) {
  onnxEvent e = nullptr;
  ASSERT_EQ(onnxInitEvent(backend_, &e), ONNXIFI_STATUS_SUCCESS);
  std::atomic<bool> woke{false};
  std::thread waiter([&] {
    EXPECT_EQ(onnxWaitEvent(e), ONNXIFI_STATUS_SUCCESS);
    woke = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(woke.load());
  EXPECT_EQ(onnxSignalEvent(e), ONNXIFI_STATUS_SUCCESS);
  waiter.join();
  EXPECT_TRUE(woke.load());
  EXPECT_EQ(onnxReleaseEvent(e), ONNXIFI_STATUS_SUCCESS);
}

// ------------------------------------------------------------------- runs --

TEST_F(Onnxifi, RunBeforeSignalPollsThenCompletes) {
  onnxGraph g = InitGraph(MulReluModel());
  ASSERT_NE(g, nullptr);
  std::vector<float> x = Iota(kN * kC, -4.0f, 0.75f), y(kN * kC, -1.0f);
  onnxTensorDescriptorV1 in = Desc("x", ONNXIFI_DATATYPE_FLOAT32, kShape, x.data());
  onnxTensorDescriptorV1 out = Desc("y", ONNXIFI_DATATYPE_FLOAT32, kShape, y.data());
  ASSERT_EQ(onnxSetGraphIO(g, 1, &in, 1, &out), ONNXIFI_STATUS_SUCCESS);

  onnxMemoryFenceV1 fin = Fence(), fout = Fence();
  ASSERT_EQ(onnxInitEvent(backend_, &fin.event), ONNXIFI_STATUS_SUCCESS);
  // The driver's order: run first (which must not block), then signal.
  const auto t0 = Clock::now();
  ASSERT_EQ(onnxRunGraph(g, &fin, &fout), ONNXIFI_STATUS_SUCCESS);
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(2)) << "onnxRunGraph blocked";
  ASSERT_NE(fout.event, nullptr);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  onnxEventState st = 0;
  ASSERT_EQ(onnxGetEventState(fout.event, &st), ONNXIFI_STATUS_SUCCESS);
  EXPECT_EQ(st, ONNXIFI_EVENT_STATE_NONSIGNALLED) << "the run must wait for its input event";
  EXPECT_EQ(y[0], -1.0f) << "outputs written before the input event";
  ASSERT_EQ(onnxSignalEvent(fin.event), ONNXIFI_STATUS_SUCCESS);
  // Poll the output event instead of waiting.
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  do {
    ASSERT_EQ(onnxGetEventState(fout.event, &st), ONNXIFI_STATUS_SUCCESS);
    if (st == ONNXIFI_EVENT_STATE_SIGNALLED) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  } while (Clock::now() < deadline);
  ASSERT_EQ(st, ONNXIFI_EVENT_STATE_SIGNALLED);
  EXPECT_EQ(onnxWaitEvent(fout.event), ONNXIFI_STATUS_SUCCESS);
  ExpectNear(y, MulReluReference(x, Weights(0.5f)));
  EXPECT_EQ(onnxReleaseEvent(fout.event), ONNXIFI_STATUS_SUCCESS);
  EXPECT_EQ(onnxReleaseEvent(fin.event), ONNXIFI_STATUS_SUCCESS);
  EXPECT_EQ(onnxReleaseGraph(g), ONNXIFI_STATUS_SUCCESS);
}

TEST_F(Onnxifi, SignalBeforeRunAndFreshOutputEvent) {
  onnxGraph g = InitGraph(MulReluModel());
  ASSERT_NE(g, nullptr);
  std::vector<float> x = Iota(kN * kC, 3.0f, -0.5f), y(kN * kC, 0.0f);
  onnxTensorDescriptorV1 in = Desc("x", ONNXIFI_DATATYPE_FLOAT32, kShape, x.data());
  onnxTensorDescriptorV1 out = Desc("y", ONNXIFI_DATATYPE_FLOAT32, kShape, y.data());
  ASSERT_EQ(onnxSetGraphIO(g, 1, &in, 1, &out), ONNXIFI_STATUS_SUCCESS);
  onnxMemoryFenceV1 fin = Fence(), fout = Fence();
  ASSERT_EQ(onnxInitEvent(backend_, &fin.event), ONNXIFI_STATUS_SUCCESS);
  ASSERT_EQ(onnxSignalEvent(fin.event), ONNXIFI_STATUS_SUCCESS);  // Caffe2's order
  // A client-made event in the output fence is replaced by a fresh one.
  onnxEvent mine = nullptr;
  ASSERT_EQ(onnxInitEvent(backend_, &mine), ONNXIFI_STATUS_SUCCESS);
  fout.event = mine;
  ASSERT_EQ(onnxRunGraph(g, &fin, &fout), ONNXIFI_STATUS_SUCCESS);
  ASSERT_NE(fout.event, nullptr);
  EXPECT_NE(fout.event, mine);
  EXPECT_EQ(onnxWaitEvent(fout.event), ONNXIFI_STATUS_SUCCESS);
  ExpectNear(y, MulReluReference(x, Weights(0.5f)));
  onnxEventState st = 0;
  EXPECT_EQ(onnxGetEventState(mine, &st), ONNXIFI_STATUS_SUCCESS);
  EXPECT_EQ(st, ONNXIFI_EVENT_STATE_NONSIGNALLED) << "the client's own event is left alone";
  EXPECT_EQ(onnxReleaseEvent(mine), ONNXIFI_STATUS_SUCCESS);
  EXPECT_EQ(onnxReleaseEvent(fout.event), ONNXIFI_STATUS_SUCCESS);
  // The input event may be released before the run's output is waited for.
  EXPECT_EQ(onnxReleaseEvent(fin.event), ONNXIFI_STATUS_SUCCESS);
  // A NULL output event in the fence (what Debian's wrapper passes) works too,
  // and the input event may be released right after it was signalled.
  fout.event = nullptr;
  std::fill(y.begin(), y.end(), 0.0f);
  ASSERT_EQ(onnxInitEvent(backend_, &fin.event), ONNXIFI_STATUS_SUCCESS);
  ASSERT_EQ(onnxRunGraph(g, &fin, &fout), ONNXIFI_STATUS_SUCCESS);
  ASSERT_NE(fout.event, nullptr);
  EXPECT_EQ(onnxSignalEvent(fin.event), ONNXIFI_STATUS_SUCCESS);
  EXPECT_EQ(onnxReleaseEvent(fin.event), ONNXIFI_STATUS_SUCCESS);
  EXPECT_EQ(onnxWaitEvent(fout.event), ONNXIFI_STATUS_SUCCESS);
  ExpectNear(y, MulReluReference(x, Weights(0.5f)));
  EXPECT_EQ(onnxReleaseEvent(fout.event), ONNXIFI_STATUS_SUCCESS);
  EXPECT_EQ(onnxReleaseGraph(g), ONNXIFI_STATUS_SUCCESS);
}

TEST_F(Onnxifi, RepeatedSetGraphIOWithChangedBuffers) {
  onnxGraph g = InitGraph(MulReluModel());
  ASSERT_NE(g, nullptr);
  std::vector<float> x1 = Iota(kN * kC, -2.0f, 0.25f), y1(kN * kC, 0.0f);
  std::vector<float> x2 = Iota(kN * kC, 5.0f, -1.0f), y2(kN * kC, 0.0f);
  for (int round = 0; round < 3; ++round) {
    onnxTensorDescriptorV1 in1 = Desc("x", ONNXIFI_DATATYPE_FLOAT32, kShape, x1.data());
    onnxTensorDescriptorV1 out1 = Desc("y", ONNXIFI_DATATYPE_FLOAT32, kShape, y1.data());
    ASSERT_EQ(onnxSetGraphIO(g, 1, &in1, 1, &out1), ONNXIFI_STATUS_SUCCESS);
    ASSERT_EQ(Run(g, round % 2 == 0), ONNXIFI_STATUS_SUCCESS);
    ExpectNear(y1, MulReluReference(x1, Weights(0.5f)));
    std::fill(y2.begin(), y2.end(), 0.0f);
    onnxTensorDescriptorV1 in2 = Desc("x", ONNXIFI_DATATYPE_FLOAT32, kShape, x2.data());
    onnxTensorDescriptorV1 out2 = Desc("y", ONNXIFI_DATATYPE_FLOAT32, kShape, y2.data());
    ASSERT_EQ(onnxSetGraphIO(g, 1, &in2, 1, &out2), ONNXIFI_STATUS_SUCCESS);
    std::vector<float> y1_before = y1;
    ASSERT_EQ(Run(g, round % 2 == 1), ONNXIFI_STATUS_SUCCESS);
    ExpectNear(y2, MulReluReference(x2, Weights(0.5f)));
    EXPECT_EQ(y1, y1_before) << "the previous output buffer was written after onnxSetGraphIO changed it";
    for (float& v : x1) v += 1.0f;  // new input values in the same buffer
  }
  EXPECT_EQ(onnxReleaseGraph(g), ONNXIFI_STATUS_SUCCESS);
}

TEST_F(Onnxifi, TwoGraphsOnOneBackend) {
  onnxGraph g1 = InitGraph(MulReluModel());
  onnxGraph g2 = InitGraph(SubModel());
  ASSERT_NE(g1, nullptr);
  ASSERT_NE(g2, nullptr);
  std::vector<float> x = Iota(kN * kC, -1.0f, 0.5f), y(kN * kC);
  std::vector<float> a{1, 2, 3}, b{0.5f, 4, -1}, z(3);
  onnxTensorDescriptorV1 i1 = Desc("x", ONNXIFI_DATATYPE_FLOAT32, kShape, x.data());
  onnxTensorDescriptorV1 o1 = Desc("y", ONNXIFI_DATATYPE_FLOAT32, kShape, y.data());
  const std::vector<uint64_t> s3{3};
  onnxTensorDescriptorV1 i2[2] = {Desc("b", ONNXIFI_DATATYPE_FLOAT32, s3, b.data()),
                                  Desc("a", ONNXIFI_DATATYPE_FLOAT32, s3, a.data())};  // any order
  onnxTensorDescriptorV1 o2 = Desc("z", ONNXIFI_DATATYPE_FLOAT32, s3, z.data());
  ASSERT_EQ(onnxSetGraphIO(g1, 1, &i1, 1, &o1), ONNXIFI_STATUS_SUCCESS);
  ASSERT_EQ(onnxSetGraphIO(g2, 2, i2, 1, &o2), ONNXIFI_STATUS_SUCCESS);
  // Both in flight at once, the second started first.
  onnxMemoryFenceV1 f1 = Fence(), f2 = Fence(), r1 = Fence(), r2 = Fence();
  ASSERT_EQ(onnxInitEvent(backend_, &f1.event), ONNXIFI_STATUS_SUCCESS);
  ASSERT_EQ(onnxInitEvent(backend_, &f2.event), ONNXIFI_STATUS_SUCCESS);
  ASSERT_EQ(onnxRunGraph(g1, &f1, &r1), ONNXIFI_STATUS_SUCCESS);
  ASSERT_EQ(onnxRunGraph(g2, &f2, &r2), ONNXIFI_STATUS_SUCCESS);
  ASSERT_EQ(onnxSignalEvent(f2.event), ONNXIFI_STATUS_SUCCESS);
  EXPECT_EQ(onnxWaitEvent(r2.event), ONNXIFI_STATUS_SUCCESS);
  ASSERT_EQ(onnxSignalEvent(f1.event), ONNXIFI_STATUS_SUCCESS);
  EXPECT_EQ(onnxWaitEvent(r1.event), ONNXIFI_STATUS_SUCCESS);
  ExpectNear(y, MulReluReference(x, Weights(0.5f)));
  ExpectNear(z, {0.5f, -2.0f, 4.0f});
  for (onnxEvent e : {f1.event, f2.event, r1.event, r2.event}) EXPECT_EQ(onnxReleaseEvent(e), ONNXIFI_STATUS_SUCCESS);
  EXPECT_EQ(onnxReleaseGraph(g2), ONNXIFI_STATUS_SUCCESS);
  EXPECT_EQ(onnxReleaseGraph(g1), ONNXIFI_STATUS_SUCCESS);
}

TEST_F(Onnxifi, RunsFromSeveralThreads) {
  constexpr int kThreads = 4, kRuns = 5;
  // Each thread its own graph (on the shared backend and queue) ...
  std::vector<onnxGraph> graphs;
  for (int t = 0; t < kThreads; ++t) graphs.push_back(InitGraph(MulReluModel()));
  // ... plus one graph all threads run at once with the same bindings.
  onnxGraph shared = InitGraph(MulReluModel());
  ASSERT_NE(shared, nullptr);
  std::vector<float> sx = Iota(kN * kC, -3.0f, 0.5f), sy(kN * kC);
  onnxTensorDescriptorV1 si = Desc("x", ONNXIFI_DATATYPE_FLOAT32, kShape, sx.data());
  onnxTensorDescriptorV1 so = Desc("y", ONNXIFI_DATATYPE_FLOAT32, kShape, sy.data());
  ASSERT_EQ(onnxSetGraphIO(shared, 1, &si, 1, &so), ONNXIFI_STATUS_SUCCESS);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      onnxGraph g = graphs[static_cast<size_t>(t)];
      std::vector<float> x(kN * kC), y(kN * kC);
      for (int r = 0; r < kRuns; ++r) {
        x = Iota(kN * kC, static_cast<float>(t) - 2.0f, 0.1f * static_cast<float>(r + 1));
        onnxTensorDescriptorV1 in = Desc("x", ONNXIFI_DATATYPE_FLOAT32, kShape, x.data());
        onnxTensorDescriptorV1 out = Desc("y", ONNXIFI_DATATYPE_FLOAT32, kShape, y.data());
        if (onnxSetGraphIO(g, 1, &in, 1, &out) != ONNXIFI_STATUS_SUCCESS) { ++failures; return; }
        if (Run(g, r % 2 == 0) != ONNXIFI_STATUS_SUCCESS) { ++failures; return; }
        const std::vector<float> want = MulReluReference(x, Weights(0.5f));
        for (size_t i = 0; i < y.size(); ++i)
          if (std::fabs(y[i] - want[i]) > 1e-5f) { ++failures; return; }
        if (Run(shared, r % 2 == 1) != ONNXIFI_STATUS_SUCCESS) { ++failures; return; }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  ExpectNear(sy, MulReluReference(sx, Weights(0.5f)));
  for (onnxGraph g : graphs) EXPECT_EQ(onnxReleaseGraph(g), ONNXIFI_STATUS_SUCCESS);
  EXPECT_EQ(onnxReleaseGraph(shared), ONNXIFI_STATUS_SUCCESS);
}

TEST_F(Onnxifi, ReleaseGraphWaitsForRunsInFlight) {
  onnxGraph g = InitGraph(MulReluModel());
  ASSERT_NE(g, nullptr);
  std::vector<float> x = Iota(kN * kC, 0.0f, 1.0f), y(kN * kC, 0.0f);
  onnxTensorDescriptorV1 in = Desc("x", ONNXIFI_DATATYPE_FLOAT32, kShape, x.data());
  onnxTensorDescriptorV1 out = Desc("y", ONNXIFI_DATATYPE_FLOAT32, kShape, y.data());
  ASSERT_EQ(onnxSetGraphIO(g, 1, &in, 1, &out), ONNXIFI_STATUS_SUCCESS);
  onnxMemoryFenceV1 fin = Fence(), fout = Fence();
  ASSERT_EQ(onnxInitEvent(backend_, &fin.event), ONNXIFI_STATUS_SUCCESS);
  ASSERT_EQ(onnxRunGraph(g, &fin, &fout), ONNXIFI_STATUS_SUCCESS);
  std::thread signaller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_EQ(onnxSignalEvent(fin.event), ONNXIFI_STATUS_SUCCESS);
  });
  const auto t0 = Clock::now();
  EXPECT_EQ(onnxReleaseGraph(g), ONNXIFI_STATUS_SUCCESS);
  EXPECT_GE(Clock::now() - t0, std::chrono::milliseconds(150)) << "onnxReleaseGraph did not wait for the run";
  signaller.join();
  onnxEventState st = 0;
  EXPECT_EQ(onnxGetEventState(fout.event, &st), ONNXIFI_STATUS_SUCCESS);
  EXPECT_EQ(st, ONNXIFI_EVENT_STATE_SIGNALLED);
  EXPECT_EQ(onnxWaitEvent(fout.event), ONNXIFI_STATUS_SUCCESS);
  ExpectNear(y, MulReluReference(x, Weights(0.5f)));
  EXPECT_EQ(onnxReleaseEvent(fin.event), ONNXIFI_STATUS_SUCCESS);
  EXPECT_EQ(onnxReleaseEvent(fout.event), ONNXIFI_STATUS_SUCCESS);
  // A released graph is no graph any more.
  EXPECT_EQ(onnxReleaseGraph(g), ONNXIFI_STATUS_INVALID_GRAPH);
  EXPECT_EQ(onnxSetGraphIO(g, 1, &in, 1, &out), ONNXIFI_STATUS_INVALID_GRAPH);
}

TEST_F(Onnxifi, RunFailureIsTheOutputEventStatus) {
  // int64 data the device computes as int32: a value outside int32 fails the
  // run (not onnxRunGraph), and onnxWaitEvent returns that failure.
  onnx::ModelProto m = NewModel();
  AddValue(m.mutable_graph()->mutable_input(), "a", onnx::TensorProto::INT64, {2});
  AddValue(m.mutable_graph()->mutable_input(), "b", onnx::TensorProto::INT64, {2});
  AddValue(m.mutable_graph()->mutable_output(), "c", onnx::TensorProto::INT64, {2});
  AddNode(&m, "Add", {"a", "b"}, {"c"});
  onnxGraph g = InitGraph(Serialize(m));
  ASSERT_NE(g, nullptr);
  std::vector<int64_t> a{1, 2}, b{10, 20}, c{0, 0};
  const std::vector<uint64_t> s2{2};
  onnxTensorDescriptorV1 in[2] = {Desc("a", ONNXIFI_DATATYPE_INT64, s2, a.data()),
                                  Desc("b", ONNXIFI_DATATYPE_INT64, s2, b.data())};
  onnxTensorDescriptorV1 out = Desc("c", ONNXIFI_DATATYPE_INT64, s2, c.data());
  ASSERT_EQ(onnxSetGraphIO(g, 2, in, 1, &out), ONNXIFI_STATUS_SUCCESS);
  ASSERT_EQ(Run(g), ONNXIFI_STATUS_SUCCESS);
  EXPECT_EQ(c, (std::vector<int64_t>{11, 22}));
  a[0] = int64_t{1} << 40;
  const onnxStatus s = Run(g, false);
  EXPECT_EQ(s, ONNXIFI_STATUS_UNSUPPORTED_DATATYPE);
  // The graph keeps working after a failed run.
  a[0] = -5;
  ASSERT_EQ(Run(g), ONNXIFI_STATUS_SUCCESS);
  EXPECT_EQ(c, (std::vector<int64_t>{5, 22}));
  EXPECT_EQ(onnxReleaseGraph(g), ONNXIFI_STATUS_SUCCESS);
}

// --------------------------------------------------------------- weights --

TEST_F(Onnxifi, WeightsFromDescriptors) {
  const std::string model = MulReluModel(/*w_as_input=*/true);
  std::vector<float> w = Weights(-1.5f);
  const std::vector<uint64_t> ws{kC};
  onnxTensorDescriptorV1 wd = Desc("w", ONNXIFI_DATATYPE_FLOAT32, ws, w.data());
  onnxGraph g = nullptr;
  ASSERT_EQ(onnxInitGraph(backend_, nullptr, model.size(), model.data(), 1, &wd, &g), ONNXIFI_STATUS_SUCCESS);
  w.assign(w.size(), 1000.0f);  // copied at init: later changes do not matter
  std::vector<float> x = Iota(kN * kC, -2.0f, 0.3f), y(kN * kC);
  onnxTensorDescriptorV1 in = Desc("x", ONNXIFI_DATATYPE_FLOAT32, kShape, x.data());
  onnxTensorDescriptorV1 out = Desc("y", ONNXIFI_DATATYPE_FLOAT32, kShape, y.data());
  ASSERT_EQ(onnxSetGraphIO(g, 1, &in, 1, &out), ONNXIFI_STATUS_SUCCESS);
  ASSERT_EQ(Run(g), ONNXIFI_STATUS_SUCCESS);
  ExpectNear(y, MulReluReference(x, Weights(-1.5f)));
  EXPECT_EQ(onnxReleaseGraph(g), ONNXIFI_STATUS_SUCCESS);

  // A descriptor replaces the initializer of its name (same type and shape).
  const std::string with_init = MulReluModel(false, 0.5f);
  std::vector<float> w2 = Weights(2.0f);
  onnxTensorDescriptorV1 wd2 = Desc("w", ONNXIFI_DATATYPE_FLOAT32, ws, w2.data());
  ASSERT_EQ(onnxInitGraph(backend_, nullptr, with_init.size(), with_init.data(), 1, &wd2, &g), ONNXIFI_STATUS_SUCCESS);
  ASSERT_EQ(onnxSetGraphIO(g, 1, &in, 1, &out), ONNXIFI_STATUS_SUCCESS);
  ASSERT_EQ(Run(g), ONNXIFI_STATUS_SUCCESS);
  ExpectNear(y, MulReluReference(x, Weights(2.0f)));
  EXPECT_EQ(onnxReleaseGraph(g), ONNXIFI_STATUS_SUCCESS);
}

TEST_F(Onnxifi, InitGraphErrorStatuses) {
  const std::string model = MulReluModel(true);
  std::vector<float> w = Weights(1.0f);
  const std::vector<uint64_t> ws{kC}, wrong{kC + 1}, zero{0};
  onnxGraph g = reinterpret_cast<onnxGraph>(0x1);
  auto init = [&](const onnxTensorDescriptorV1& d) {
    onnxStatus s = onnxInitGraph(backend_, nullptr, model.size(), model.data(), 1, &d, &g);
    EXPECT_EQ(g, nullptr) << "a failed onnxInitGraph sets *graph to NULL";
    return s;
  };
  onnxTensorDescriptorV1 d = Desc("w", ONNXIFI_DATATYPE_FLOAT32, ws, w.data());
  d.tag = 0x1234;
  EXPECT_EQ(init(d), ONNXIFI_STATUS_UNSUPPORTED_TAG);
  d = Desc("w", ONNXIFI_DATATYPE_FLOAT32, ws, nullptr);
  EXPECT_EQ(init(d), ONNXIFI_STATUS_INVALID_MEMORY_LOCATION);
  d = Desc("w", ONNXIFI_DATATYPE_FLOAT32, ws, w.data());
  d.memoryType = ONNXIFI_MEMORY_TYPE_CUDA_BUFFER;
  EXPECT_EQ(init(d), ONNXIFI_STATUS_UNSUPPORTED_MEMORY_TYPE);
  d.memoryType = 77;
  EXPECT_EQ(init(d), ONNXIFI_STATUS_INVALID_MEMORY_TYPE);
  d = Desc("w", 99, ws, w.data());
  EXPECT_EQ(init(d), ONNXIFI_STATUS_INVALID_DATATYPE);
  d = Desc("w", ONNXIFI_DATATYPE_FLOAT32, zero, w.data());
  EXPECT_EQ(init(d), ONNXIFI_STATUS_INVALID_SHAPE);
  d = Desc("w", ONNXIFI_DATATYPE_FLOAT32, wrong, w.data());
  EXPECT_EQ(init(d), ONNXIFI_STATUS_MISMATCHING_SHAPE);
  d = Desc("w", ONNXIFI_DATATYPE_INT32, ws, w.data());
  EXPECT_EQ(init(d), ONNXIFI_STATUS_MISMATCHING_DATATYPE);
  d = Desc("nope", ONNXIFI_DATATYPE_FLOAT32, ws, w.data());
  EXPECT_EQ(init(d), ONNXIFI_STATUS_INVALID_NAME);
  d = Desc("w", ONNXIFI_DATATYPE_FLOAT32, ws, w.data());
  onnxTensorDescriptorV1 twice[2] = {d, d};
  EXPECT_EQ(onnxInitGraph(backend_, nullptr, model.size(), model.data(), 2, twice, &g), ONNXIFI_STATUS_INVALID_NAME);
  EXPECT_EQ(onnxInitGraph(backend_, nullptr, model.size(), model.data(), 1, nullptr, &g),
            ONNXIFI_STATUS_INVALID_POINTER);
  EXPECT_EQ(onnxInitGraph(backend_, nullptr, model.size(), nullptr, 0, nullptr, &g), ONNXIFI_STATUS_INVALID_POINTER);
  EXPECT_EQ(onnxInitGraph(backend_, nullptr, 0, model.data(), 0, nullptr, &g), ONNXIFI_STATUS_INVALID_SIZE);
  EXPECT_EQ(onnxInitGraph(backend_, nullptr, model.size(), model.data(), 1, &d, nullptr),
            ONNXIFI_STATUS_INVALID_POINTER);
  const std::string garbage = "\xff\xff\xff\xff";
  EXPECT_EQ(onnxInitGraph(backend_, nullptr, garbage.size(), garbage.data(), 0, nullptr, &g),
            ONNXIFI_STATUS_INVALID_PROTOBUF);
  const uint64_t props[] = {12345, ONNXIFI_GRAPH_PROPERTY_NONE};
  EXPECT_EQ(onnxInitGraph(backend_, props, model.size(), model.data(), 1, &d, &g), ONNXIFI_STATUS_UNSUPPORTED_PROPERTY);
  int bogus = 0;
  EXPECT_EQ(onnxInitGraph(&bogus, nullptr, model.size(), model.data(), 1, &d, &g), ONNXIFI_STATUS_INVALID_BACKEND);
  // Unsupported models fail with the compatibility query's status.
  const std::string unsupported = [] {
    onnx::ModelProto m = NewModel();
    AddValue(m.mutable_graph()->mutable_input(), "x", onnx::TensorProto::FLOAT, {4});
    AddValue(m.mutable_graph()->mutable_output(), "y", onnx::TensorProto::FLOAT, {4});
    AddNode(&m, "Frobnicate", {"x"}, {"y"}, "com.example");
    auto* os = m.add_opset_import();
    os->set_domain("com.example");
    os->set_version(1);
    return Serialize(m);
  }();
  EXPECT_EQ(onnxInitGraph(backend_, nullptr, unsupported.size(), unsupported.data(), 0, nullptr, &g),
            ONNXIFI_STATUS_UNSUPPORTED_OPERATOR);
}

TEST_F(Onnxifi, SecondInitOfTheSameModelComesFromTheCache) {
  const char* log = std::getenv("OAAXVK_ONNXIFI_LOG_FILE");
  if (!log) GTEST_SKIP() << "OAAXVK_ONNXIFI_LOG_FILE is not set (ctest sets it)";
  // A model no other test compiles: weights of their own.
  const std::string model = MulReluModel(false, 0.125f);
  auto count = [&](const char* what) {
    std::ifstream f(log);
    std::stringstream ss;
    ss << f.rdbuf();
    const std::string text = ss.str();
    size_t n = 0;
    for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
    return n;
  };
  // The backend property LOG_LEVEL = INFO makes onnxInitGraph log where its
  // bundle came from ("compiled in N ms" or "from the cache").
  onnxBackend b = nullptr;
  const uint64_t info[] = {ONNXIFI_BACKEND_PROPERTY_LOG_LEVEL, ONNXIFI_LOG_LEVEL_INFO, ONNXIFI_BACKEND_PROPERTY_NONE};
  ASSERT_EQ(onnxInitBackend(id_, info, &b), ONNXIFI_STATUS_SUCCESS);
  const size_t compiled0 = count("ms)"), cached0 = count("(from the cache)");
  onnxGraph g1 = nullptr, g2 = nullptr;
  const auto t0 = Clock::now();
  ASSERT_EQ(onnxInitGraph(b, nullptr, model.size(), model.data(), 0, nullptr, &g1), ONNXIFI_STATUS_SUCCESS);
  const auto t1 = Clock::now();
  EXPECT_EQ(count("ms)"), compiled0 + 1) << "the first init compiles";
  ASSERT_EQ(onnxInitGraph(b, nullptr, model.size(), model.data(), 0, nullptr, &g2), ONNXIFI_STATUS_SUCCESS);
  const auto t2 = Clock::now();
  std::printf("first onnxInitGraph %.1f ms, second %.1f ms\n",
              std::chrono::duration<double, std::milli>(t1 - t0).count(),
              std::chrono::duration<double, std::milli>(t2 - t1).count());
  EXPECT_EQ(count("ms)"), compiled0 + 1) << "the second init compiled again";
  EXPECT_EQ(count("(from the cache)"), cached0 + 1);
  EXPECT_EQ(onnxReleaseGraph(g1), ONNXIFI_STATUS_SUCCESS);
  EXPECT_EQ(onnxReleaseGraph(g2), ONNXIFI_STATUS_SUCCESS);
  EXPECT_EQ(onnxReleaseBackend(b), ONNXIFI_STATUS_SUCCESS);
  const uint64_t warn[] = {ONNXIFI_BACKEND_PROPERTY_LOG_LEVEL, ONNXIFI_LOG_LEVEL_WARNING, ONNXIFI_BACKEND_PROPERTY_NONE};
  ASSERT_EQ(onnxInitBackend(id_, warn, &b), ONNXIFI_STATUS_SUCCESS);
  EXPECT_EQ(onnxReleaseBackend(b), ONNXIFI_STATUS_SUCCESS);
}

// ---------------------------------------------------------- set / run IO --

TEST_F(Onnxifi, SetGraphIOErrorStatuses) {
  onnxGraph g = InitGraph(MulReluModel());
  ASSERT_NE(g, nullptr);
  std::vector<float> x(kN * kC), y(kN * kC);
  const std::vector<uint64_t> zero{kN, 0}, wrong{kN, kC + 1};
  auto set = [&](onnxTensorDescriptorV1 in, onnxTensorDescriptorV1 out) { return onnxSetGraphIO(g, 1, &in, 1, &out); };
  const onnxTensorDescriptorV1 gi = Desc("x", ONNXIFI_DATATYPE_FLOAT32, kShape, x.data());
  const onnxTensorDescriptorV1 go = Desc("y", ONNXIFI_DATATYPE_FLOAT32, kShape, y.data());
  onnxTensorDescriptorV1 d = gi;
  d.tag = 7;
  EXPECT_EQ(set(d, go), ONNXIFI_STATUS_UNSUPPORTED_TAG);
  d = go;
  d.tag = 7;
  EXPECT_EQ(set(gi, d), ONNXIFI_STATUS_UNSUPPORTED_TAG);
  EXPECT_EQ(set(Desc("nope", ONNXIFI_DATATYPE_FLOAT32, kShape, x.data()), go), ONNXIFI_STATUS_INVALID_NAME);
  EXPECT_EQ(set(gi, Desc("x", ONNXIFI_DATATYPE_FLOAT32, kShape, y.data())), ONNXIFI_STATUS_INVALID_NAME);
  onnxTensorDescriptorV1 two[2] = {gi, gi};
  EXPECT_EQ(onnxSetGraphIO(g, 2, two, 1, &go), ONNXIFI_STATUS_INVALID_NAME);  // the same name twice
  d = gi;
  d.name = nullptr;
  EXPECT_EQ(set(d, go), ONNXIFI_STATUS_INVALID_NAME);
  EXPECT_EQ(set(Desc("x", ONNXIFI_DATATYPE_FLOAT32, zero, x.data()), go), ONNXIFI_STATUS_INVALID_SHAPE);
  EXPECT_EQ(set(gi, Desc("y", 99, kShape, y.data())), ONNXIFI_STATUS_INVALID_DATATYPE);
  EXPECT_EQ(set(gi, Desc("y", ONNXIFI_DATATYPE_COMPLEX64, kShape, y.data())), ONNXIFI_STATUS_INVALID_DATATYPE);
  d = gi;
  d.memoryType = 77;
  EXPECT_EQ(set(d, go), ONNXIFI_STATUS_INVALID_MEMORY_TYPE);
  d.memoryType = ONNXIFI_MEMORY_TYPE_OPENCL_BUFFER;
  EXPECT_EQ(set(d, go), ONNXIFI_STATUS_UNSUPPORTED_MEMORY_TYPE);
  EXPECT_EQ(set(Desc("x", ONNXIFI_DATATYPE_FLOAT32, kShape, nullptr), go), ONNXIFI_STATUS_INVALID_MEMORY_LOCATION);
  EXPECT_EQ(set(Desc("x", ONNXIFI_DATATYPE_FLOAT32, wrong, x.data()), go), ONNXIFI_STATUS_MISMATCHING_SHAPE);
  EXPECT_EQ(set(Desc("x", ONNXIFI_DATATYPE_INT32, kShape, x.data()), go), ONNXIFI_STATUS_MISMATCHING_DATATYPE);
  EXPECT_EQ(onnxSetGraphIO(g, 0, nullptr, 1, &go), ONNXIFI_STATUS_UNIDENTIFIED_NAME);  // input 'x' missing
  EXPECT_EQ(onnxSetGraphIO(g, 1, &gi, 0, &go), ONNXIFI_STATUS_UNIDENTIFIED_NAME);      // output 'y' missing
  EXPECT_EQ(onnxSetGraphIO(g, 1, nullptr, 1, &go), ONNXIFI_STATUS_INVALID_POINTER);
  EXPECT_EQ(onnxSetGraphIO(g, 1, &gi, 1, nullptr), ONNXIFI_STATUS_INVALID_POINTER);
  int bogus = 0;
  EXPECT_EQ(onnxSetGraphIO(&bogus, 1, &gi, 1, &go), ONNXIFI_STATUS_INVALID_GRAPH);
  // After a failed onnxSetGraphIO the graph has no locations.
  EXPECT_EQ(Run(g), ONNXIFI_STATUS_UNIDENTIFIED_NAME);
  ASSERT_EQ(set(gi, go), ONNXIFI_STATUS_SUCCESS);
  EXPECT_EQ(Run(g), ONNXIFI_STATUS_SUCCESS);
  EXPECT_EQ(onnxReleaseGraph(g), ONNXIFI_STATUS_SUCCESS);
}

TEST_F(Onnxifi, RunGraphErrorStatuses) {
  onnxGraph g = InitGraph(MulReluModel());
  ASSERT_NE(g, nullptr);
  onnxMemoryFenceV1 in = Fence(), out = Fence();
  ASSERT_EQ(onnxInitEvent(backend_, &in.event), ONNXIFI_STATUS_SUCCESS);
  EXPECT_EQ(onnxRunGraph(g, &in, &out), ONNXIFI_STATUS_UNIDENTIFIED_NAME);  // no onnxSetGraphIO yet
  std::vector<float> x(kN * kC), y(kN * kC);
  onnxTensorDescriptorV1 gi = Desc("x", ONNXIFI_DATATYPE_FLOAT32, kShape, x.data());
  onnxTensorDescriptorV1 go = Desc("y", ONNXIFI_DATATYPE_FLOAT32, kShape, y.data());
  ASSERT_EQ(onnxSetGraphIO(g, 1, &gi, 1, &go), ONNXIFI_STATUS_SUCCESS);
  int bogus = 0;
  EXPECT_EQ(onnxRunGraph(&bogus, &in, &out), ONNXIFI_STATUS_INVALID_GRAPH);
  EXPECT_EQ(onnxRunGraph(g, nullptr, &out), ONNXIFI_STATUS_INVALID_POINTER);
  EXPECT_EQ(onnxRunGraph(g, &in, nullptr), ONNXIFI_STATUS_INVALID_POINTER);
  onnxMemoryFenceV1 bad = in;
  bad.tag = 3;
  EXPECT_EQ(onnxRunGraph(g, &bad, &out), ONNXIFI_STATUS_UNSUPPORTED_TAG);
  bad = out;
  bad.tag = 3;
  EXPECT_EQ(onnxRunGraph(g, &in, &bad), ONNXIFI_STATUS_UNSUPPORTED_TAG);
  bad = in;
  bad.type = 77;
  EXPECT_EQ(onnxRunGraph(g, &bad, &out), ONNXIFI_STATUS_INVALID_FENCE_TYPE);
  bad.type = ONNXIFI_SYNCHRONIZATION_IMPLICIT;
  EXPECT_EQ(onnxRunGraph(g, &bad, &out), ONNXIFI_STATUS_UNSUPPORTED_FENCE_TYPE);
  bad = out;
  bad.type = ONNXIFI_SYNCHRONIZATION_IMPLICIT;
  EXPECT_EQ(onnxRunGraph(g, &in, &bad), ONNXIFI_STATUS_UNSUPPORTED_FENCE_TYPE);
  bad = in;
  bad.event = &bogus;
  EXPECT_EQ(onnxRunGraph(g, &bad, &out), ONNXIFI_STATUS_INVALID_EVENT);
  bad.event = nullptr;
  EXPECT_EQ(onnxRunGraph(g, &bad, &out), ONNXIFI_STATUS_INVALID_EVENT);
  EXPECT_EQ(out.event, nullptr) << "no output event is made by a failed onnxRunGraph";
  EXPECT_EQ(onnxReleaseEvent(in.event), ONNXIFI_STATUS_SUCCESS);
  EXPECT_EQ(onnxReleaseGraph(g), ONNXIFI_STATUS_SUCCESS);
}

TEST_F(Onnxifi, BackendPropertiesAndReleasedHandles) {
  onnxBackend b = nullptr;
  const uint64_t good[] = {ONNXIFI_BACKEND_PROPERTY_LOG_LEVEL, ONNXIFI_LOG_LEVEL_WARNING,
                           ONNXIFI_BACKEND_PROPERTY_OPTIMIZATION, ONNXIFI_OPTIMIZATION_LOW_LATENCY,
                           ONNXIFI_BACKEND_PROPERTY_NONE};
  ASSERT_EQ(onnxInitBackend(id_, good, &b), ONNXIFI_STATUS_SUCCESS);
  const uint64_t bad_level[] = {ONNXIFI_BACKEND_PROPERTY_LOG_LEVEL, 42, ONNXIFI_BACKEND_PROPERTY_NONE};
  onnxBackend b2 = reinterpret_cast<onnxBackend>(0x1);
  EXPECT_EQ(onnxInitBackend(id_, bad_level, &b2), ONNXIFI_STATUS_INVALID_PROPERTY);
  EXPECT_EQ(b2, nullptr);
  const uint64_t unknown[] = {0x4000, 1, ONNXIFI_BACKEND_PROPERTY_NONE};
  EXPECT_EQ(onnxInitBackend(id_, unknown, &b2), ONNXIFI_STATUS_UNSUPPORTED_PROPERTY);
  EXPECT_EQ(onnxInitBackend(id_, nullptr, nullptr), ONNXIFI_STATUS_INVALID_POINTER);
  int bogus = 0;
  EXPECT_EQ(onnxInitBackend(&bogus, nullptr, &b2), ONNXIFI_STATUS_INVALID_ID);
  // A graph outlives the release of its backend handle (it keeps the device).
  const std::string model = SubModel();
  onnxGraph kept = nullptr, g = nullptr;
  ASSERT_EQ(onnxInitGraph(b, nullptr, model.size(), model.data(), 0, nullptr, &kept), ONNXIFI_STATUS_SUCCESS);
  EXPECT_EQ(onnxReleaseBackend(b), ONNXIFI_STATUS_SUCCESS);
  EXPECT_EQ(onnxReleaseBackend(b), ONNXIFI_STATUS_INVALID_BACKEND);
  onnxEvent e = nullptr;
  EXPECT_EQ(onnxInitEvent(b, &e), ONNXIFI_STATUS_INVALID_BACKEND);
  EXPECT_EQ(onnxInitGraph(b, nullptr, model.size(), model.data(), 0, nullptr, &g), ONNXIFI_STATUS_INVALID_BACKEND);
  EXPECT_EQ(g, nullptr);
  std::vector<float> a{1, 2, 3}, c{1, 1, 1}, z(3);
  const std::vector<uint64_t> s3{3};
  onnxTensorDescriptorV1 in[2] = {Desc("a", ONNXIFI_DATATYPE_FLOAT32, s3, a.data()),
                                  Desc("b", ONNXIFI_DATATYPE_FLOAT32, s3, c.data())};
  onnxTensorDescriptorV1 out = Desc("z", ONNXIFI_DATATYPE_FLOAT32, s3, z.data());
  ASSERT_EQ(onnxSetGraphIO(kept, 2, in, 1, &out), ONNXIFI_STATUS_SUCCESS);
  onnxMemoryFenceV1 fin = Fence(), fout = Fence();
  ASSERT_EQ(onnxInitEvent(backend_, &fin.event), ONNXIFI_STATUS_SUCCESS);  // an event of another backend works
  ASSERT_EQ(onnxSignalEvent(fin.event), ONNXIFI_STATUS_SUCCESS);
  ASSERT_EQ(onnxRunGraph(kept, &fin, &fout), ONNXIFI_STATUS_SUCCESS);
  EXPECT_EQ(onnxWaitEvent(fout.event), ONNXIFI_STATUS_SUCCESS);
  ExpectNear(z, {0, 1, 2});
  EXPECT_EQ(onnxReleaseEvent(fin.event), ONNXIFI_STATUS_SUCCESS);
  EXPECT_EQ(onnxReleaseEvent(fout.event), ONNXIFI_STATUS_SUCCESS);
  EXPECT_EQ(onnxReleaseGraph(kept), ONNXIFI_STATUS_SUCCESS);
}

}  // namespace
