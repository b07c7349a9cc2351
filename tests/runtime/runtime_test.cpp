// Tests of libRuntimeLibrary.so through dlopen/dlsym, as an OAAX host uses it.
// Every test runs with the Khronos validation layer on (when installed):
// runtime_destruction fails when the layer reported anything.
#include <dirent.h>
#include <dlfcn.h>
#include <spawn.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <vulkan/vulkan.h>

#include "oaax_vulkan/interface.h"
#include "oaax_vulkan/tensors_util.h"
#include "test_bundles.h"

namespace {

using oaaxvk::test::BundleSpec;

struct Api {
  void* handle = nullptr;
  int (*init)(void) = nullptr;
  int (*init_args)(int, const char**, const void**) = nullptr;
  int (*load)(const char*) = nullptr;
  int (*send)(tensors_struct*) = nullptr;
  int (*receive)(tensors_struct**) = nullptr;
  int (*destroy)(void) = nullptr;
  const char* (*error)(void) = nullptr;
  const char* (*version)(void) = nullptr;
  const char* (*name)(void) = nullptr;
};

Api* g_api = nullptr;
std::string g_skip_reason;  // non-empty: no usable Vulkan device
std::string g_tmpdir;

template <typename F>
void Sym(void* h, const char* name, F* out) {
  *out = reinterpret_cast<F>(dlsym(h, name));
  if (!*out) {
    fprintf(stderr, "dlsym(%s) failed: %s\n", name, dlerror());
    abort();
  }
}

int FramesFromEnv() {
  const char* e = getenv("OAAXVK_TEST_FRAMES");
  return e && atoi(e) > 0 ? atoi(e) : 1000;
}

// A malloc'ed tensors_struct of float32 tensors, as a host builds it
// (nullptr when host memory ran out).
tensors_struct* MakeTensors(const std::vector<std::string>& names, const std::vector<std::vector<size_t>>& shapes,
                            const std::vector<std::vector<float>>& data) {
  tensors_struct* t = oaaxvk::AllocTensors(names.size());
  for (size_t i = 0; t && i < names.size(); ++i) {
    if (!oaaxvk::SetTensor(t, i, names[i].c_str(), DATA_TYPE_FLOAT, shapes[i].data(), shapes[i].size(),
                           data[i].data(), data[i].size() * sizeof(float))) {
      oaaxvk::FreeTensors(t);
      return nullptr;
    }
  }
  return t;
}

// The host's deep free (what OAAX hosts do with outputs).
void DeepFree(tensors_struct* t) { oaaxvk::FreeTensors(t); }

std::vector<float> Random(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-2.0f, 2.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

std::vector<float> AffineRelu(const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& b) {
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    volatile float p = x[i] * w[i];  // separate dispatches: no fused multiply-add
    volatile float s = p + b[i];
    y[i] = std::max(static_cast<float>(s), 0.0f);
  }
  return y;
}

class RuntimeEnv : public ::testing::Environment {
 public:
  void SetUp() override {
    g_api = new Api();
    g_api->handle = dlopen(OAAXVK_RUNTIME_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(g_api->handle, nullptr) << dlerror();
    void* h = g_api->handle;
    Sym(h, "runtime_initialization", &g_api->init);
    Sym(h, "runtime_initialization_with_args", &g_api->init_args);
    Sym(h, "runtime_model_loading", &g_api->load);
    Sym(h, "send_input", &g_api->send);
    Sym(h, "receive_output", &g_api->receive);
    Sym(h, "runtime_destruction", &g_api->destroy);
    Sym(h, "runtime_error_message", &g_api->error);
    Sym(h, "runtime_version", &g_api->version);
    Sym(h, "runtime_name", &g_api->name);
    // The Vulkan loader dlcloses drivers and layers at vkDestroyInstance and
    // reloads them at the next vkCreateInstance. Buffers that lavapipe/LLVM,
    // SwiftShader or the validation layer keep in their own globals become
    // unreachable when the module is unmapped, and LeakSanitizer reports them
    // (as "<unknown module>" frames, so no suppression can name them). A host
    // keeps one instance for its lifetime; these tests create ~30, so the
    // libraries are pinned (RTLD_NODELETE) once. With that, the ASan build
    // reports no leak at all and no suppression file is needed.
    for (const char* lib : {"libvulkan_lvp.so", "libVkLayer_khronos_validation.so", OAAXVK_SWIFTSHADER_LIBRARY}) {
      dlopen(lib, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    }
    char tmpl[] = "/tmp/oaaxvk-runtime-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    g_tmpdir = tmpl;
    if (g_api->init() != 0) {
      g_skip_reason = std::string("no usable Vulkan device: ") + g_api->error();
    } else {
      g_api->destroy();
    }
  }
  void TearDown() override {
    std::string cmd = "rm -rf '" + g_tmpdir + "'";
    if (system(cmd.c_str()) != 0) fprintf(stderr, "could not remove %s\n", g_tmpdir.c_str());
    // The library stays loaded: unloading Vulkan drivers at exit is not what hosts test.
    delete g_api;
  }
};

class Runtime : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!g_skip_reason.empty()) GTEST_SKIP() << g_skip_reason;
  }
  void TearDown() override {
    if (initialized_) {
      EXPECT_EQ(g_api->destroy(), 0) << g_api->error();
      initialized_ = false;
    }
  }

  // Initializes with validation on plus `extra` key/value pairs.
  int Init(std::vector<std::pair<std::string, std::string>> extra = {}) {
    // The persistent pipeline cache (on by default) goes to the test's
    // directory, not the user's.
    std::vector<std::pair<std::string, std::string>> kv = {
        {"validation", "1"}, {"log_level", "5"}, {"pipeline_cache_dir", g_tmpdir + "/pipeline-cache"}};
    for (auto& e : extra) kv.push_back(e);
    std::vector<const char*> keys;
    std::vector<const void*> values;
    for (auto& e : kv) {
      keys.push_back(e.first.c_str());
      values.push_back(e.second.c_str());
    }
    int rc = g_api->init_args(static_cast<int>(keys.size()), keys.data(), values.data());
    if (rc == 0) initialized_ = true;
    return rc;
  }
  int Destroy() {
    initialized_ = false;
    return g_api->destroy();
  }

  std::string Write(const BundleSpec& spec, const std::string& name) {
    std::string path = g_tmpdir + "/" + name + ".oinf";
    oaaxvk::Status s = spec.Write(path);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return path;
  }

  // Loads AffineRelu(n) with seeded weights; returns w, b.
  void LoadAffine(uint32_t n, std::vector<float>* w, std::vector<float>* b) {
    *w = Random(n, 100 + n);
    *b = Random(n, 200 + n);
    std::string path = Write(oaaxvk::test::AffineReluBundle(n, *w, *b), "affine" + std::to_string(n));
    ASSERT_EQ(g_api->load(path.c_str()), 0) << g_api->error();
  }

  void RunAffineOnce(uint32_t n, const std::vector<float>& w, const std::vector<float>& b, uint32_t seed) {
    std::vector<float> x = Random(n, seed);
    ASSERT_EQ(g_api->send(MakeTensors({"x"}, {{1, n}}, {x})), 0) << g_api->error();
    tensors_struct* out = nullptr;
    ASSERT_EQ(g_api->receive(&out), 0) << g_api->error();
    ASSERT_NE(out, nullptr);
    ASSERT_EQ(out->num_tensors, 1u);
    EXPECT_STREQ(out->names[0], "y");
    EXPECT_EQ(out->data_types[0], DATA_TYPE_FLOAT);
    ASSERT_EQ(out->ranks[0], 2u);
    EXPECT_EQ(out->shapes[0][0], 1u);
    EXPECT_EQ(out->shapes[0][1], n);
    std::vector<float> ref = AffineRelu(x, w, b);
    const float* y = static_cast<const float*>(out->data[0]);
    for (uint32_t i = 0; i < n; ++i) ASSERT_NEAR(y[i], ref[i], 1e-6f) << "element " << i << " of " << n;
    DeepFree(out);
  }

  // Expects `rc` != 0 and the error message to contain every fragment.
  void ExpectError(int rc, std::initializer_list<const char*> fragments) {
    EXPECT_NE(rc, 0);
    std::string msg = g_api->error();
    for (const char* f : fragments) EXPECT_NE(msg.find(f), std::string::npos) << "'" << f << "' not in: " << msg;
  }

  bool initialized_ = false;
};

// ---------------------------------------------------------------- exports

TEST(Symbols, ExactlyTheNineOaaxFunctionsAreExported) {
  std::string cmd = std::string("nm -D --defined-only '") + OAAXVK_RUNTIME_LIBRARY + "'";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::set<std::string> got;
  char line[1024];
  while (fgets(line, sizeof line, p)) {
    std::istringstream ss(line);
    std::string a, b, c;
    ss >> a >> b >> c;
    got.insert(c.empty() ? b : c);
  }
  ASSERT_EQ(pclose(p), 0);
  std::set<std::string> want = {"runtime_initialization", "runtime_initialization_with_args", "runtime_model_loading",
                                "send_input", "receive_output", "runtime_destruction", "runtime_error_message",
                                "runtime_version", "runtime_name"};
  EXPECT_EQ(got, want);
}

TEST_F(Runtime, NameAndVersion) {
  EXPECT_STREQ(g_api->name(), "OAAX Vulkan Runtime");
  EXPECT_EQ(std::string(g_api->version()).rfind(OAAXVK_PROJECT_VERSION " (", 0), 0u) << g_api->version();
  ASSERT_EQ(Init(), 0) << g_api->error();
  std::string v = g_api->version();
  EXPECT_EQ(v.rfind(OAAXVK_PROJECT_VERSION " (", 0), 0u) << v;
  EXPECT_EQ(v.find("no device"), std::string::npos) << v;
}

// ---------------------------------------------------------------- correctness

TEST_F(Runtime, ThreeDispatchGraphMatchesCpuReference) {
  for (uint32_t n : {13u, 127u, 1000u}) {
    SCOPED_TRACE(n);
    ASSERT_EQ(Init(), 0) << g_api->error();
    std::vector<float> w, b;
    LoadAffine(n, &w, &b);
    for (uint32_t seed = 1; seed <= 3; ++seed) RunAffineOnce(n, w, b, seed);
    ASSERT_EQ(Destroy(), 0) << g_api->error();
  }
}

TEST_F(Runtime, StagedIoMatchesCpuReference) {
  ASSERT_EQ(Init({{"force_staging", "1"}}), 0) << g_api->error();
  std::vector<float> w, b;
  LoadAffine(127, &w, &b);
  for (uint32_t seed = 1; seed <= 3; ++seed) RunAffineOnce(127, w, b, seed);
}

// A discrete GPU with a resizable BAR maps the inputs directly and stages the
// outputs (host-cached memory for the host's reads): each direction's copy is
// recorded on its own, with two frames in flight.
TEST_F(Runtime, StagedOutputsWithDirectInputsMatchCpuReference) {
  ASSERT_EQ(Init({{"force_staging", "outputs"}, {"frames_in_flight", "2"}}), 0) << g_api->error();
  std::vector<float> w, b;
  LoadAffine(127, &w, &b);
  for (uint32_t seed = 1; seed <= 4; ++seed) RunAffineOnce(127, w, b, seed);
  ASSERT_EQ(Destroy(), 0) << g_api->error();
  ExpectError(Init({{"force_staging", "inputs"}}), {"force_staging"});
}

// 4-bit types cross the API packed two elements per byte (interface.h): an
// odd count of n elements takes (n + 1) / 2 bytes at send_input and at
// receive_output, and the bytes come back unchanged.
TEST_F(Runtime, FourBitTensorsTakeHalfAByteAnElement) {
  EXPECT_EQ(oaaxvk::TensorByteSize(DATA_TYPE_INT4, 5), 3u);
  EXPECT_EQ(oaaxvk::TensorByteSize(DATA_TYPE_FLOAT4E2M1, 6), 3u);
  EXPECT_EQ(oaaxvk::TensorByteSize(DATA_TYPE_FLOAT8E4M3FN, 5), 5u);
  EXPECT_EQ(oaaxvk::TensorMaxElements(DATA_TYPE_UINT4, 3), 6u);
  for (tensor_data_type dtype : {DATA_TYPE_UINT4, DATA_TYPE_INT4, DATA_TYPE_FLOAT4E2M1}) {
    for (uint32_t n : {5u, 8u}) {
      SCOPED_TRACE(std::to_string(dtype) + " [" + std::to_string(n) + "]");
      if (initialized_) {
        ASSERT_EQ(Destroy(), 0) << g_api->error();
      }
      ASSERT_EQ(Init(), 0) << g_api->error();
      const std::string path =
          Write(oaaxvk::test::Packed4CopyBundle(dtype, n), "packed4_" + std::to_string(dtype) + "_" + std::to_string(n));
      ASSERT_EQ(g_api->load(path.c_str()), 0) << g_api->error();
      const size_t bytes = (n + 1) / 2, shape[1] = {n};
      // Element 2i in the low nibble: 0x21 is elements 1, 2; the last high
      // nibble of an odd count is 0.
      const uint8_t q[4] = {0x21, 0x43, n == 5 ? uint8_t{0x05} : uint8_t{0x65}, 0x87};
      tensors_struct* t = oaaxvk::AllocTensors(1);
      ASSERT_TRUE(oaaxvk::SetTensor(t, 0, "q", dtype, shape, 1, q, bytes));
      ASSERT_EQ(g_api->send(t), 0) << g_api->error();
      tensors_struct* out = nullptr;
      ASSERT_EQ(g_api->receive(&out), 0) << g_api->error();
      ASSERT_EQ(out->num_tensors, 1u);
      EXPECT_EQ(out->data_types[0], dtype);
      ASSERT_EQ(out->ranks[0], 1u);
      EXPECT_EQ(out->shapes[0][0], n);
      EXPECT_EQ(std::memcmp(out->data[0], q, bytes), 0);
      DeepFree(out);
    }
  }
}

TEST_F(Runtime, TwoInputsTwoOutputsByNameInAnyOrder) {
  const uint32_t n = 1000;
  ASSERT_EQ(Init(), 0) << g_api->error();
  std::string path = Write(oaaxvk::test::TwoInTwoOutBundle(n), "two");
  ASSERT_EQ(g_api->load(path.c_str()), 0) << g_api->error();
  std::vector<float> a = Random(n, 7), c = Random(n, 8);
  // Reverse order relative to the model's inputs.
  ASSERT_EQ(g_api->send(MakeTensors({"\xe7\x94\xbb\xe5\x83\x8f", "input:0"}, {{n}, {1, n}}, {c, a})), 0) << g_api->error();
  tensors_struct* out = nullptr;
  ASSERT_EQ(g_api->receive(&out), 0) << g_api->error();
  ASSERT_EQ(out->num_tensors, 2u);
  EXPECT_STREQ(out->names[0], "sum/out");
  EXPECT_STREQ(out->names[1], "prod:0");
  ASSERT_EQ(out->ranks[0], 1u);
  ASSERT_EQ(out->ranks[1], 2u);
  EXPECT_EQ(out->shapes[0][0], n);
  EXPECT_EQ(out->shapes[1][1], n);
  const float* sum = static_cast<const float*>(out->data[0]);
  const float* prod = static_cast<const float*>(out->data[1]);
  for (uint32_t i = 0; i < n; ++i) {
    ASSERT_EQ(sum[i], a[i] + c[i]) << i;
    ASSERT_EQ(prod[i], a[i] * c[i]) << i;
  }
  DeepFree(out);
}

// ---------------------------------------------------------------- bad inputs

class BadInput : public Runtime {
 protected:
  void SetUp() override {
    Runtime::SetUp();
    if (IsSkipped()) return;
    ASSERT_EQ(Init(), 0) << g_api->error();
    LoadAffine(13, &w_, &b_);
  }
  tensors_struct* Good() { return MakeTensors({"x"}, {{1, 13}}, {std::vector<float>(13, 1.0f)}); }
  // send must fail, leave the struct to the caller (freed here) and keep the runtime usable.
  void ExpectRejected(tensors_struct* t, std::initializer_list<const char*> fragments) {
    ExpectError(g_api->send(t), fragments);
    DeepFree(t);
  }
  std::vector<float> w_, b_;
};

TEST_F(BadInput, NullStruct) { ExpectError(g_api->send(nullptr), {"send_input", "input_tensors is NULL"}); }

TEST_F(BadInput, WrongCount) {
  ExpectRejected(MakeTensors({"x", "z"}, {{1, 13}, {1, 13}}, {std::vector<float>(13), std::vector<float>(13)}),
                 {"expected 1 input tensor", "got num_tensors = 2"});
}

TEST_F(BadInput, UnknownName) { ExpectRejected(MakeTensors({"nope"}, {{1, 13}}, {std::vector<float>(13)}), {"unknown input tensor 'nope'", "'x'"}); }

TEST_F(BadInput, NullName) {
  tensors_struct* t = Good();
  char* saved = t->names[0];
  t->names[0] = nullptr;
  ExpectError(g_api->send(t), {"NULL name"});
  t->names[0] = saved;
  DeepFree(t);
}

TEST_F(BadInput, WrongDtype) {
  tensors_struct* t = Good();
  t->data_types[0] = DATA_TYPE_INT32;
  ExpectRejected(t, {"'x'", "data type INT32", "expects FLOAT"});
}

TEST_F(BadInput, WrongRank) {
  tensors_struct* t = Good();
  t->ranks[0] = 1;
  ExpectRejected(t, {"'x'", "rank 1", "expects rank 2"});
}

TEST_F(BadInput, WrongShape) {
  tensors_struct* t = Good();
  t->shapes[0][1] = 12;
  ExpectRejected(t, {"'x'", "shape [1, 12]", "expects [1, 13]"});
}

TEST_F(BadInput, NullData) {
  tensors_struct* t = Good();
  void* saved = t->data[0];
  t->data[0] = nullptr;
  ExpectError(g_api->send(t), {"'x'", "data[0] is NULL"});
  t->data[0] = saved;
  DeepFree(t);
}

TEST_F(BadInput, NullArray) {
  tensors_struct* t = Good();
  size_t* saved = t->ranks;
  t->ranks = nullptr;
  ExpectError(g_api->send(t), {"ranks is NULL"});
  t->ranks = saved;
  DeepFree(t);
}

TEST_F(BadInput, RuntimeStillWorksAfterRejections) {
  ExpectRejected(MakeTensors({"nope"}, {{1, 13}}, {std::vector<float>(13)}), {"unknown"});
  RunAffineOnce(13, w_, b_, 5);
}

TEST_F(BadInput, ReceiveWithNothingPending) {
  tensors_struct* out = reinterpret_cast<tensors_struct*>(0x1);
  ExpectError(g_api->receive(&out), {"receive_output", "no pending input"});
  EXPECT_EQ(out, reinterpret_cast<tensors_struct*>(0x1));  // untouched
}

TEST_F(BadInput, SecondModelLoad) {
  std::string path = g_tmpdir + "/affine13.oinf";
  ExpectError(g_api->load(path.c_str()), {"runtime_model_loading", "already loaded"});
}

TEST_F(Runtime, LoadBeforeInit) {
  ExpectError(g_api->load("/nonexistent.oinf"), {"runtime_model_loading", "not initialized"});
}

TEST_F(Runtime, SendAndReceiveBeforeLoad) {
  ASSERT_EQ(Init(), 0) << g_api->error();
  tensors_struct* t = MakeTensors({"x"}, {{1, 13}}, {std::vector<float>(13)});
  ExpectError(g_api->send(t), {"send_input", "no model is loaded"});
  DeepFree(t);
  tensors_struct* out = nullptr;
  ExpectError(g_api->receive(&out), {"no model is loaded"});
}

TEST_F(Runtime, InitTwiceAndBadArguments) {
  ASSERT_EQ(Init(), 0) << g_api->error();
  ExpectError(g_api->init(), {"already initialized"});
  ASSERT_EQ(Destroy(), 0) << g_api->error();
  ExpectError(Init({{"frames_in_flight", "0"}}), {"frames_in_flight", "[1, 16]"});
  ExpectError(Init({{"log_level", "9"}}), {"log_level"});
  ExpectError(Init({{"load_warmup", "maybe"}}), {"load_warmup", "expected 0 or 1"});
  ExpectError(Init({{"device", "no-such-gpu"}}), {"no Vulkan device name contains 'no-such-gpu'"});
  ExpectError(g_api->destroy(), {"not initialized"});
  // Unknown keys are ignored; a device picked by index and by name substring.
  ASSERT_EQ(Init({{"some_unknown_key", "whatever"}, {"device", "0"}}), 0) << g_api->error();
  std::string v = g_api->version();
  ASSERT_EQ(Destroy(), 0) << g_api->error();
  std::string dev = v.substr(v.find('(') + 1, 6);
  for (char& c : dev) c = static_cast<char>(toupper(static_cast<unsigned char>(c)));
  ASSERT_EQ(Init({{"device", dev}}), 0) << g_api->error();
}

// ---------------------------------------------------------------- host compatibility
// What independent OAAX hosts do that the spec leaves open.

TEST_F(Runtime, VersionBeforeInitializationSaysNoDevice) {
  // Chosen behaviour: usable before runtime_initialization (hosts print it
  // first): "<version> (no device)", and again after runtime_destruction.
  ASSERT_NE(g_api->version(), nullptr);
  EXPECT_EQ(std::string(g_api->version()), OAAXVK_PROJECT_VERSION " (no device)");
  ASSERT_EQ(Init(), 0) << g_api->error();
  EXPECT_EQ(std::string(g_api->version()).find("no device"), std::string::npos) << g_api->version();
  ASSERT_EQ(Destroy(), 0) << g_api->error();
  EXPECT_EQ(std::string(g_api->version()), OAAXVK_PROJECT_VERSION " (no device)");
}

TEST_F(Runtime, ErrorMessageKeepsTheLastFailureAcrossSuccesses) {
  // Chosen behaviour (errno-like): runtime_error_message() is the calling
  // thread's last failure; a later successful call does not clear it, so
  // hosts check return codes first. Each thread has its own.
  ExpectError(g_api->load("nowhere.oinf"), {"runtime_model_loading", "not initialized"});
  const std::string first = g_api->error();
  ASSERT_EQ(Init(), 0) << g_api->error();
  EXPECT_EQ(g_api->error(), first);
  std::string other;
  std::thread([&] { other = g_api->error(); }).join();
  EXPECT_EQ(other, "");
  ExpectError(g_api->init(), {"already initialized"});
  EXPECT_NE(g_api->error(), first);  // the next failure replaces it
}

TEST_F(Runtime, ReceiveWithNothingPendingLogsNoError) {
  // Polling receive_output is normal for hosts: non-zero and a meaningful
  // runtime_error_message(), but only a debug line in the log.
  const std::string log = g_tmpdir + "/receive_poll.log";
  ASSERT_EQ(Init({{"log_level", "1"}, {"log_file", log}}), 0) << g_api->error();
  std::vector<float> w, b;
  LoadAffine(13, &w, &b);
  tensors_struct* out = nullptr;
  for (int i = 0; i < 3; ++i) ExpectError(g_api->receive(&out), {"receive_output", "no pending input"});
  EXPECT_EQ(out, nullptr);
  ExpectError(g_api->send(nullptr), {"send_input"});  // a real failure still logs an error
  ASSERT_EQ(Destroy(), 0) << g_api->error();
  std::ifstream f(log);
  std::string line;
  int debug_polls = 0, errors = 0;
  while (std::getline(f, line)) {
    if (line.find("[error]") != std::string::npos) {
      ++errors;
      EXPECT_EQ(line.find("no pending input"), std::string::npos) << line;
    }
    if (line.find("[debug]") != std::string::npos && line.find("no pending input") != std::string::npos) ++debug_polls;
  }
  EXPECT_EQ(debug_polls, 3);
  EXPECT_EQ(errors, 1);  // the send_input(NULL)
}

TEST_F(Runtime, NonStringArgumentValuesAreRefusedNamingTheKey) {
  // Values are NUL-terminated strings; some older hosts pass int*. The bytes
  // of a small int are control characters (or "" for 0): refused, naming the key.
  const int two = 2, zero = 0, one = 1;
  const char* keys[] = {"frames_in_flight"};
  const void* values[] = {&two};
  ExpectError(g_api->init_args(1, keys, values), {"frames_in_flight", "not a text string", "int*"});
  values[0] = &zero;
  ExpectError(g_api->init_args(1, keys, values), {"frames_in_flight", "empty value", "strings"});
  const char* bool_key[] = {"validation"};
  const void* bool_value[] = {&one};
  ExpectError(g_api->init_args(1, bool_key, bool_value), {"validation", "not a text string"});
  const char* log_key[] = {"log_level"};
  const void* log_value[] = {&two};
  ExpectError(g_api->init_args(1, log_key, log_value), {"log_level", "control byte 0x02"});
  // Keys the runtime does not know are ignored whatever their values point to.
  const char* unknown[] = {"some_host_specific_key"};
  const void* unknown_value[] = {&two};
  ASSERT_EQ(g_api->init_args(1, unknown, unknown_value), 0) << g_api->error();
  initialized_ = true;
}

TEST_F(Runtime, MissingAndCorruptBundles) {
  ASSERT_EQ(Init(), 0) << g_api->error();
  ExpectError(g_api->load((g_tmpdir + "/missing.oinf").c_str()), {"runtime_model_loading", "missing.oinf"});
  // Corrupt: a valid bundle with one byte of its header flipped, and truncated.
  std::vector<float> w(13, 1.0f), b(13, 0.0f);
  std::string good = Write(oaaxvk::test::AffineReluBundle(13, w, b), "good");
  std::ifstream in(good, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<char> flipped = bytes;
  flipped[0] ^= 0x55;
  std::string bad1 = g_tmpdir + "/flipped.oinf", bad2 = g_tmpdir + "/truncated.oinf";
  std::ofstream(bad1, std::ios::binary).write(flipped.data(), static_cast<std::streamsize>(flipped.size()));
  std::ofstream(bad2, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size() / 2));
  ExpectError(g_api->load(bad1.c_str()), {"runtime_model_loading", "flipped.oinf"});
  ExpectError(g_api->load(bad2.c_str()), {"runtime_model_loading", "truncated.oinf"});
  // Still able to load a good one afterwards.
  ASSERT_EQ(g_api->load(good.c_str()), 0) << g_api->error();
}

TEST_F(Runtime, WrongFormatOrVersion) {
  ASSERT_EQ(Init(), 0) << g_api->error();
  std::vector<float> w(13, 1.0f), b(13, 0.0f);
  BundleSpec s = oaaxvk::test::AffineReluBundle(13, w, b);
  s.format_version = 2;
  ExpectError(g_api->load(Write(s, "v2").c_str()), {"version 2 is not supported", "'oaax-vulkan-bundle' version 1"});
  s.format_version = 1;
  s.format = "something-else";
  ExpectError(g_api->load(Write(s, "fmt").c_str()), {"format 'something-else'"});
}

TEST_F(Runtime, UnknownBundleFeatureIsRejectedAtLoad) {
  ASSERT_EQ(Init(), 0) << g_api->error();
  std::vector<float> w(13, 1.0f), b(13, 0.0f);
  BundleSpec s = oaaxvk::test::AffineReluBundle(13, w, b);
  s.features = "bound_inputs warp_drive";
  ExpectError(g_api->load(Write(s, "feature").c_str()),
              {"requires feature 'warp_drive'", "does not implement", "bound_inputs"});
  // A bound tensor without the feature is a contract violation, too.
  s.features = "";
  s.inputs[0].bound.assign(s.inputs[0].nbytes, 0);
  ExpectError(g_api->load(Write(s, "bound_nofeature").c_str()), {"io.input.0.bound", "bound_inputs"});
  s.features = "bound_inputs";
  s.inputs[0].bound.assign(s.inputs[0].nbytes - 4, 0);
  ExpectError(g_api->load(Write(s, "bound_short").c_str()), {"io.input.0.bound", "48 bytes"});
}

TEST_F(Runtime, BoundInputAcceptsOnlyItsConversionTimeValue) {
  ASSERT_EQ(Init(), 0) << g_api->error();
  const uint32_t n = 13;
  std::vector<float> w = Random(n, 7), b = Random(n, 8), x = Random(n, 9);
  BundleSpec s = oaaxvk::test::AffineReluBundle(n, w, b);
  s.features = "bound_inputs";
  s.inputs[0].bound.resize(4 * n);
  memcpy(s.inputs[0].bound.data(), x.data(), 4 * n);
  ASSERT_EQ(g_api->load(Write(s, "bound").c_str()), 0) << g_api->error();
  ASSERT_EQ(g_api->send(MakeTensors({"x"}, {{1, n}}, {x})), 0) << g_api->error();
  tensors_struct* out = nullptr;
  ASSERT_EQ(g_api->receive(&out), 0) << g_api->error();
  std::vector<float> ref = AffineRelu(x, w, b);
  for (uint32_t i = 0; i < n; ++i) EXPECT_NEAR(static_cast<const float*>(out->data[0])[i], ref[i], 1e-6f);
  DeepFree(out);
  std::vector<float> other = x;
  other[5] += 1.0f;
  tensors_struct* t = MakeTensors({"x"}, {{1, n}}, {other});
  ExpectError(g_api->send(t), {"'x'", "element 5", "bound at conversion by config.json input_values", "reconvert"});
  DeepFree(t);
}

TEST_F(Runtime, Int64AndUint32InputsMustFitInt32) {
  ASSERT_EQ(Init(), 0) << g_api->error();
  const uint32_t n = 13;
  std::vector<float> w(n, 1.0f), b(n, 0.0f);
  BundleSpec s = oaaxvk::test::AffineReluBundle(n, w, b);
  s.inputs[0].dtype = DATA_TYPE_INT64;
  s.inputs[0].nbytes = 8 * n;
  s.inputs_bytes = 8 * n;
  ASSERT_EQ(g_api->load(Write(s, "int64_in").c_str()), 0) << g_api->error();
  std::vector<int64_t> v(n, -2147483648LL);
  v[12] = 2147483647LL;
  auto make = [&](uint32_t dtype, const void* data, size_t bytes) {
    tensors_struct* t = oaaxvk::AllocTensors(1);
    const size_t shape[2] = {1, n};
    EXPECT_TRUE(oaaxvk::SetTensor(t, 0, "x", static_cast<tensor_data_type>(dtype), shape, 2, data, bytes));
    return t;
  };
  ASSERT_EQ(g_api->send(make(DATA_TYPE_INT64, v.data(), 8 * n)), 0) << g_api->error();  // in range: accepted
  tensors_struct* out = nullptr;
  ASSERT_EQ(g_api->receive(&out), 0) << g_api->error();
  DeepFree(out);
  v[7] = 2147483648LL;
  tensors_struct* t = make(DATA_TYPE_INT64, v.data(), 8 * n);
  ExpectError(g_api->send(t), {"'x'", "INT64", "element 7 = 2147483648", "does not fit int32"});
  DeepFree(t);
  ASSERT_EQ(Destroy(), 0) << g_api->error();
  ASSERT_EQ(Init(), 0) << g_api->error();
  s.inputs[0].dtype = DATA_TYPE_UINT32;
  s.inputs[0].nbytes = 4 * n;
  s.inputs_bytes = 4 * n;
  ASSERT_EQ(g_api->load(Write(s, "uint32_in").c_str()), 0) << g_api->error();
  std::vector<uint32_t> u(n, 2147483647u);
  u[3] = 4000000000u;
  t = make(DATA_TYPE_UINT32, u.data(), 4 * n);
  ExpectError(g_api->send(t), {"'x'", "UINT32", "element 3 = 4000000000", "does not fit int32"});
  DeepFree(t);
}

TEST_F(Runtime, InvalidProgramsAreRejectedBeforeAllocation) {
  ASSERT_EQ(Init(), 0) << g_api->error();
  std::vector<float> w(13, 1.0f), b(13, 0.0f);
  const BundleSpec base = oaaxvk::test::AffineReluBundle(13, w, b);
  struct Case {
    const char* name;
    void (*mutate)(BundleSpec*);
    const char* expect;
  };
  const Case cases[] = {
      {"kernel", [](BundleSpec* s) { s->dispatch[1][0] = 7; }, "dispatch 1: kernel 7 out of range"},
      {"groups", [](BundleSpec* s) { s->dispatch[0][2] = 0; }, "dispatch 0: group count"},
      {"nbind", [](BundleSpec* s) { s->dispatch[2][5] = 3; }, "n_bindings 3 != kernel 2 ('relu') bindings 2"},
      {"bindrange", [](BundleSpec* s) { s->dispatch[2][4] = 7; }, "exceed program.bindings"},
      {"outside", [](BundleSpec* s) { s->bindings[7][1] = 256; }, "program.bindings row 7"},
      {"align", [](BundleSpec* s) { s->bindings[0][1] = 4; }, "not a multiple of 256"},
      {"kind", [](BundleSpec* s) { s->bindings[0][0] = 9; }, "buffer_kind 9"},
      {"nspec", [](BundleSpec* s) { s->dispatch[0][7] = 0; }, "n_spec 0 != kernel 0"},
      {"specrange", [](BundleSpec* s) { s->dispatch[0][6] = 3; }, "exceed program.spec"},
      {"barrier", [](BundleSpec* s) { s->barrier[1] = 2; }, "program.barrier[1] = 2"},
      {"spirv", [](BundleSpec* s) { s->kernels[0].spirv = {1, 2, 3, 4, 5}; }, "not a SPIR-V module"},
      {"nbytes", [](BundleSpec* s) { s->inputs[0].nbytes = 8; }, "input 'x': nbytes 8"},
      {"dtype", [](BundleSpec* s) { s->outputs[0].dtype = 8; }, "output 'y': unsupported data type 8"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    BundleSpec s = base;
    c.mutate(&s);
    ExpectError(g_api->load(Write(s, std::string("bad_") + c.name).c_str()), {c.expect});
  }
}

// Validate before allocate: buffer sizes near 2^64 once wrapped to 16 bytes
// when rounded up for the allocation (a segfault in the load's warm-up, heap
// corruption in send_input). They are refused at load naming the field; a
// size under the bundle cap but beyond the device is refused naming the limit.
TEST_F(Runtime, BufferSizesBeyondAnyDeviceAreRejectedBeforeAllocation) {
  ASSERT_EQ(Init(), 0) << g_api->error();
  std::vector<float> w(13, 1.0f), b(13, 0.0f);
  const BundleSpec base = oaaxvk::test::AffineReluBundle(13, w, b);
  struct Case {
    const char* name;
    void (*mutate)(BundleSpec*);
    const char* expect;
  };
  const Case cases[] = {
      {"arena_max", [](BundleSpec* s) { s->arena_bytes = UINT64_MAX; },
       "metadata 'arena.bytes' = 18446744073709551615 exceeds the largest buffer a bundle may declare"},
      {"arena_wraps", [](BundleSpec* s) { s->arena_bytes = UINT64_MAX - 7; }, "metadata 'arena.bytes' = 18446744073709551608"},
      {"inputs_wraps", [](BundleSpec* s) { s->inputs_bytes = UINT64_MAX - 15; },
       "metadata 'io.inputs_bytes' = 18446744073709551600 exceeds"},
      {"outputs_wraps", [](BundleSpec* s) { s->outputs_bytes = UINT64_MAX - 3; }, "metadata 'io.outputs_bytes'"},
      // 2^47: within the cap, beyond any test device's allocation limit and
      // heap. (An arena that large whose bindings are small loads: only the
      // bound bytes get memory, buffer_blocks.h.)
      {"inputs_beyond_device", [](BundleSpec* s) { s->inputs_bytes = uint64_t{1} << 47; },
       "metadata 'io.inputs_bytes' is 140737488355328 bytes, but device"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    BundleSpec s = base;
    c.mutate(&s);
    ExpectError(g_api->load(Write(s, std::string("huge_") + c.name).c_str()), {"runtime_model_loading", c.expect});
  }
  // Still usable.
  ASSERT_EQ(g_api->load(Write(base, "huge_none").c_str()), 0) << g_api->error();
  RunAffineOnce(13, w, b, 5);
}

// Feature value_symbols belongs to dynamic_shapes: without it, nothing checks
// the outputs the symbols size ([1, 1048576] came back with 52 bytes of data).
TEST_F(Runtime, ValueSymbolsWithoutDynamicShapesAreRejectedAtLoad) {
  ASSERT_EQ(Init(), 0) << g_api->error();
  std::vector<float> w(13, 1.0f), b(13, 0.0f);
  BundleSpec s = oaaxvk::test::AffineReluBundle(13, w, b);
  s.features = "value_symbols";
  s.outputs[0].shape = {1, 1048576};
  ExpectError(g_api->load(Write(s, "value_no_dynamic").c_str()),
              {"runtime_model_loading", "bundle.features lists 'value_symbols' but not 'dynamic_shapes'"});
}

// Feature kernel_variants: AffineRelu whose CPU table runs `mul` instead of
// `add` in dispatch 1 (same bindings), so the output shows which table ran:
// relu(x * w + b) with the default table, relu(x * w * b) with the CPU one.
BundleSpec AffineReluWithCpuVariant(uint32_t n, const std::vector<float>& w, const std::vector<float>& b) {
  BundleSpec s = oaaxvk::test::AffineReluBundle(n, w, b);
  s.features = "kernel_variants";
  s.dispatch_cpu = s.dispatch;
  s.dispatch_cpu[1][0] = 0;  // kernel 0 = mul
  return s;
}

// The properties (type, limits) of the device the runtime runs on (named in
// its version string, "<version> (<device name>)"), asked of Vulkan directly;
// false when Vulkan cannot say. Needs an initialized runtime.
// Calls fn with the physical device the runtime chose (found by the name in
// its version string) on a temporary instance asking for Vulkan 1.1 (for
// vkGetPhysicalDeviceProperties2); false when Vulkan cannot say.
bool WithRuntimePhysicalDevice(const std::function<void(VkPhysicalDevice, const VkPhysicalDeviceProperties&)>& fn) {
  const std::string v = g_api->version();
  const std::string name = v.substr(v.find('(') + 1, v.rfind(')') - v.find('(') - 1);
  VkApplicationInfo app{};
  app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  app.apiVersion = VK_API_VERSION_1_1;
  VkInstanceCreateInfo ici{};
  ici.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  ici.pApplicationInfo = &app;
  VkInstance instance = VK_NULL_HANDLE;
  if (vkCreateInstance(&ici, nullptr, &instance) != VK_SUCCESS) return false;
  uint32_t count = 0;
  vkEnumeratePhysicalDevices(instance, &count, nullptr);
  std::vector<VkPhysicalDevice> devices(count);
  vkEnumeratePhysicalDevices(instance, &count, devices.data());
  bool found = false;
  for (VkPhysicalDevice d : devices) {
    VkPhysicalDeviceProperties p;
    vkGetPhysicalDeviceProperties(d, &p);
    if (found || name != p.deviceName) continue;
    fn(d, p);
    found = true;
  }
  vkDestroyInstance(instance, nullptr);
  return found;
}

bool RuntimeDeviceProperties(VkPhysicalDeviceProperties* out) {
  return WithRuntimePhysicalDevice([&](VkPhysicalDevice, const VkPhysicalDeviceProperties& p) { *out = p; });
}

// Whether the runtime's device is a CPU implementation (lavapipe, SwiftShader).
bool RuntimeDeviceIsCpu() {
  VkPhysicalDeviceProperties p{};
  return RuntimeDeviceProperties(&p) && p.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
}

// Whether the Khronos validation layer is installed (setup.sh installs it
// here; a GPU machine may not have it, and the runtime then warns once).
bool ValidationLayerInstalled() {
  uint32_t n = 0;
  if (vkEnumerateInstanceLayerProperties(&n, nullptr) != VK_SUCCESS) return false;
  std::vector<VkLayerProperties> props(n);
  if (vkEnumerateInstanceLayerProperties(&n, props.data()) != VK_SUCCESS) return false;
  for (const VkLayerProperties& p : props) {
    if (std::string(p.layerName) == "VK_LAYER_KHRONOS_validation") return true;
  }
  return false;
}

// The runtime's device's VkPhysicalDeviceFloatControlsProperties and name;
// false when Vulkan cannot say (or the device lacks
// VK_KHR_shader_float_controls). Needs an initialized runtime.
bool RuntimeDeviceFloatControls(VkPhysicalDeviceFloatControlsProperties* out, std::string* name) {
  bool listed = false;
  const bool found = WithRuntimePhysicalDevice([&](VkPhysicalDevice d, const VkPhysicalDeviceProperties& p) {
    *name = p.deviceName;
    uint32_t n = 0;
    vkEnumerateDeviceExtensionProperties(d, nullptr, &n, nullptr);
    std::vector<VkExtensionProperties> ext(n);
    vkEnumerateDeviceExtensionProperties(d, nullptr, &n, ext.data());
    listed = std::any_of(ext.begin(), ext.end(), [](const VkExtensionProperties& e) {
      return strcmp(e.extensionName, VK_KHR_SHADER_FLOAT_CONTROLS_EXTENSION_NAME) == 0;
    });
    if (!listed) return;
    *out = {};
    out->sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FLOAT_CONTROLS_PROPERTIES;
    VkPhysicalDeviceProperties2 p2{};
    p2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
    p2.pNext = out;
    vkGetPhysicalDeviceProperties2(d, &p2);
  });
  return found && listed;
}

// The runtime declares SignedZeroInfNanPreserve in every kernel where the
// device supports it (both CPU drivers do): results a compiler would
// otherwise fold (`c ? -1.0 : 0.0` into -float(c), `x + 0` into x, `x * 0`
// into 0, `0 - x` into -x, `x - x` into 0) keep their IEEE sign of zero,
// infinities and NaN. Without the mode SwiftShader gets 8 of these 40
// results wrong and lavapipe 18; with it SwiftShader none. lavapipe (Mesa
// 22.3) advertises the mode, but its compiler still folds the first four
// forms (14 results, the same with and without the mode); only `x - x` of
// an infinity or NaN follows the mode there, so on lavapipe only that form
// is checked.
TEST_F(Runtime, SignedZerosInfinitiesAndNanAreIeeeWhereTheDeviceCanPreserveThem) {
  ASSERT_EQ(Init(), 0) << g_api->error();
  VkPhysicalDeviceFloatControlsProperties fc{};
  std::string device;
  if (!RuntimeDeviceFloatControls(&fc, &device) || !fc.shaderSignedZeroInfNanPreserveFloat32)
    GTEST_SKIP() << "the device '" << device << "' cannot preserve signed zeros, infinities and NaN "
                 << "(shaderSignedZeroInfNanPreserveFloat32)";
  const bool lavapipe = device.rfind("llvmpipe", 0) == 0;
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> x = {0.0f, -0.0f, 1.5f, -2.0f, inf, -inf, nan, -nan};
  const uint32_t n = static_cast<uint32_t>(x.size());
  const std::string path = Write(oaaxvk::test::SignedZerosBundle(n), "signed_zeros");
  ASSERT_EQ(g_api->load(path.c_str()), 0) << g_api->error();
  ASSERT_EQ(g_api->send(MakeTensors({"x"}, {{1, n}}, {x})), 0) << g_api->error();
  tensors_struct* out = nullptr;
  ASSERT_EQ(g_api->receive(&out), 0) << g_api->error();
  ASSERT_EQ(out->num_tensors, 1u);
  ASSERT_EQ(out->ranks[0], 2u);
  ASSERT_EQ(out->shapes[0][1], 5u * n);
  const float* y = static_cast<const float*>(out->data[0]);
  const char* what[5] = {"x < 0 ? -1 : 0", "x + 0", "x * 0", "0 - x", "x - x"};
  for (uint32_t i = 0; i < n; ++i) {
    volatile float v = x[i], zero = 0.0f;  // volatile: the host's compiler folds nothing either
    const float ref[5] = {v < 0.0f ? -1.0f : 0.0f, v + zero, v * zero, zero - v, v - v};
    for (int j = lavapipe ? 4 : 0; j < 5; ++j) {
      const float got = y[5 * i + j];
      // NaN: any NaN (its sign and payload are not specified); otherwise the same value and sign.
      if (std::isnan(ref[j])) {
        EXPECT_TRUE(std::isnan(got)) << what[j] << " for x = " << x[i] << ": " << got << " on " << device;
      } else {
        EXPECT_EQ(got, ref[j]) << what[j] << " for x = " << x[i] << " on " << device;
        EXPECT_EQ(std::signbit(got), std::signbit(ref[j])) << what[j] << " for x = " << x[i] << ": " << got
                                                           << " on " << device;
      }
    }
  }
  DeepFree(out);
}

TEST_F(Runtime, KernelVariantTableIsChosenByDeviceTypeOrArgument) {
  const uint32_t n = 127;
  std::vector<float> w = Random(n, 7), b = Random(n, 8), x = Random(n, 9);
  // auto = cpu on a CPU implementation (lavapipe, SwiftShader), gpu elsewhere.
  // The bundle has no program.dispatch.gpu, so gpu runs program.dispatch like default.
  ASSERT_EQ(Init(), 0) << g_api->error();
  const bool device_is_cpu = RuntimeDeviceIsCpu();
  ASSERT_EQ(Destroy(), 0) << g_api->error();
  for (const char* variant : {"default", "gpu", "cpu", "auto"}) {
    SCOPED_TRACE(variant);
    ASSERT_EQ(Init({{"kernel_variant", variant}}), 0) << g_api->error();
    ASSERT_EQ(g_api->load(Write(AffineReluWithCpuVariant(n, w, b), "variants").c_str()), 0) << g_api->error();
    ASSERT_EQ(g_api->send(MakeTensors({"x"}, {{1, n}}, {x})), 0) << g_api->error();
    tensors_struct* out = nullptr;
    ASSERT_EQ(g_api->receive(&out), 0) << g_api->error();
    ASSERT_NE(out, nullptr);
    const float* y = static_cast<const float*>(out->data[0]);
    const bool cpu = std::string(variant) == "cpu" || (std::string(variant) == "auto" && device_is_cpu);
    for (uint32_t i = 0; i < n; ++i) {
      float ref = cpu ? std::max(0.0f, x[i] * w[i] * b[i]) : std::max(0.0f, x[i] * w[i] + b[i]);
      ASSERT_NEAR(y[i], ref, 1e-6f) << "element " << i;
    }
    DeepFree(out);
    ASSERT_EQ(Destroy(), 0) << g_api->error();
  }
  ExpectError(Init({{"kernel_variant", "fast"}}), {"kernel_variant is 'fast' (expected auto, default, gpu or cpu)"});
}

TEST_F(Runtime, InvalidKernelVariantTablesAreRejected) {
  ASSERT_EQ(Init(), 0) << g_api->error();
  std::vector<float> w(13, 1.0f), b(13, 0.0f);
  struct Case {
    const char* name;
    void (*mutate)(BundleSpec*);
    const char* expect;
  };
  const Case cases[] = {
      {"missing", [](BundleSpec* s) { s->dispatch_cpu.clear(); }, "tensor 'program.dispatch.cpu' is missing"},
      {"rows", [](BundleSpec* s) { s->dispatch_cpu.pop_back(); }, "'program.dispatch.cpu' must be u32[3, 8]"},
      {"bindings", [](BundleSpec* s) { s->dispatch_cpu[1][4] = 0; },
       "program.dispatch.cpu row 1 binds rows [0, +3) but program.dispatch binds [3, +3)"},
      {"kernel", [](BundleSpec* s) { s->dispatch_cpu[2][0] = 9; }, "program.dispatch.cpu row 2: kernel 9 out of range"},
      {"nspec", [](BundleSpec* s) { s->dispatch_cpu[0][7] = 2; }, "program.dispatch.cpu row 0: n_spec 2"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    BundleSpec s = AffineReluWithCpuVariant(13, w, b);
    c.mutate(&s);
    ExpectError(g_api->load(Write(s, std::string("badvar_") + c.name).c_str()), {c.expect});
  }
  // Without the feature the table is not read (an older toolchain never writes it).
  BundleSpec s = AffineReluWithCpuVariant(13, w, b);
  s.features.clear();
  s.dispatch_cpu[2][0] = 9;
  EXPECT_EQ(g_api->load(Write(s, "novar").c_str()), 0) << g_api->error();
}

std::string ReadFile(const std::string& path);  // defined with the profile tests
std::vector<std::string> LinesWith(const std::string& text, const std::string& needle);  // likewise

// Feature texel_bindings: AffineRelu whose multiply reads x through an
// R32G32B32A32_SFLOAT view and w through an R32_SFLOAT view (mul_texel,
// binding types "vfs"). n = 127 is not a multiple of 4, so the 'v' view of x
// covers the binding rounded up to 16 bytes.
BundleSpec AffineReluWithTexelMul(uint32_t n, const std::vector<float>& w, const std::vector<float>& b) {
  BundleSpec s = oaaxvk::test::AffineReluBundle(n, w, b);
  s.features = "texel_bindings";
  s.kernels[0] = {"mul_texel", oaaxvk::test::ReadSpirv("mul_texel"), 3, 1, "vfs"};
  return s;
}

bool OnSwiftShader() {
  const char* icd = getenv("VK_ICD_FILENAMES");
  return icd && strstr(icd, "swiftshader");
}

TEST_F(Runtime, TexelBufferBindingsRunThroughBufferViews) {
  const uint32_t n = 127;
  std::vector<float> w = Random(n, 17), b = Random(n, 18);
  ASSERT_EQ(Init(), 0) << g_api->error();
  ASSERT_EQ(g_api->load(Write(AffineReluWithTexelMul(n, w, b), "texel").c_str()), 0) << g_api->error();
  for (int frame = 0; frame < 3; ++frame) {  // every frame slot's views
    std::vector<float> x = Random(n, 30 + frame);
    ASSERT_EQ(g_api->send(MakeTensors({"x"}, {{1, n}}, {x})), 0) << g_api->error();
    tensors_struct* out = nullptr;
    ASSERT_EQ(g_api->receive(&out), 0) << g_api->error();
    ASSERT_NE(out, nullptr);
    const float* y = static_cast<const float*>(out->data[0]);
    for (uint32_t i = 0; i < n; ++i) ASSERT_NEAR(y[i], std::max(0.0f, x[i] * w[i] + b[i]), 1e-6f) << "element " << i;
    DeepFree(out);
  }
}

// Views are created per (binding row, format): three dispatches viewing rows
// in two formats need more views than there are rows; the descriptor writes
// point at views that must stay where they are while more are created.
TEST_F(Runtime, BindingRowsViewedInTwoFormatsGetAViewForEach) {
  const uint32_t n = 127;
  std::vector<float> w = Random(n, 41);
  ASSERT_EQ(Init({{"frames_in_flight", "3"}}), 0) << g_api->error();
  ASSERT_EQ(g_api->load(Write(oaaxvk::test::SharedRowTexelBundle(n, w), "texel_shared").c_str()), 0)
      << g_api->error();
  for (int frame = 0; frame < 4; ++frame) {
    std::vector<float> x = Random(n, 50 + frame);
    ASSERT_EQ(g_api->send(MakeTensors({"x"}, {{1, n}}, {x})), 0) << g_api->error();
    tensors_struct* out = nullptr;
    ASSERT_EQ(g_api->receive(&out), 0) << g_api->error();
    const float* y = static_cast<const float*>(out->data[0]);
    for (uint32_t i = 0; i < n; ++i) {
      volatile float t = x[i] + w[i];
      ASSERT_NEAR(y[i], w[i] * t, 1e-5f) << "element " << i;
    }
    DeepFree(out);
  }
}

TEST_F(Runtime, InvalidBindingTypesAreRejected) {
  ASSERT_EQ(Init(), 0) << g_api->error();
  std::vector<float> w(13, 1.0f), b(13, 0.0f);
  struct Case {
    const char* name;
    void (*mutate)(BundleSpec*);
    const char* expect;
  };
  const Case cases[] = {
      {"length", [](BundleSpec* s) { s->kernels[0].binding_types = "vf"; },
       "metadata 'kernel.0.binding_types' is 'vf'; expected 3 letters, each s, v, f or u"},
      {"letter", [](BundleSpec* s) { s->kernels[0].binding_types = "vxs"; }, "is 'vxs'; expected 3 letters"},
      {"feature", [](BundleSpec* s) { s->features.clear(); },
       "has texel-buffer bindings but bundle.features does not list 'texel_bindings'"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    BundleSpec s = AffineReluWithTexelMul(13, w, b);
    c.mutate(&s);
    ExpectError(g_api->load(Write(s, std::string("badtexel_") + c.name).c_str()), {c.expect});
  }
}

// A CPU-table row whose texel view would exceed maxTexelBufferElements keeps
// its default row (SwiftShader: 65536 texels; lavapipe: 2^27): 70000 floats
// through an R32_SFLOAT view. The output is the same either way; the log says
// which rows kept the default kernel.
TEST_F(Runtime, CpuRowsBeyondTexelLimitsKeepTheDefaultKernel) {
  const uint32_t n = 70000;
  std::vector<float> w = Random(n, 21), b = Random(n, 22), x = Random(n, 23);
  const std::string log = g_tmpdir + "/texel_fallback.log";
  ASSERT_EQ(Init({{"kernel_variant", "cpu"}, {"log_level", "2"}, {"log_file", log}}), 0) << g_api->error();
  BundleSpec s = oaaxvk::test::AffineReluBundle(n, w, b);
  s.features = "kernel_variants texel_bindings";
  s.kernels.push_back({"mul_texel", oaaxvk::test::ReadSpirv("mul_texel"), 3, 1, "vfs"});
  s.dispatch_cpu = s.dispatch;
  s.dispatch_cpu[0][0] = 3;  // mul_texel instead of mul, same bindings
  ASSERT_EQ(g_api->load(Write(s, "texel_fallback").c_str()), 0) << g_api->error();
  ASSERT_EQ(g_api->send(MakeTensors({"x"}, {{1, n}}, {x})), 0) << g_api->error();
  tensors_struct* out = nullptr;
  ASSERT_EQ(g_api->receive(&out), 0) << g_api->error();
  ASSERT_NE(out, nullptr);
  const float* y = static_cast<const float*>(out->data[0]);
  for (uint32_t i = 0; i < n; ++i) ASSERT_NEAR(y[i], std::max(0.0f, x[i] * w[i] + b[i]), 1e-6f) << "element " << i;
  DeepFree(out);
  ASSERT_EQ(Destroy(), 0) << g_api->error();
  const std::string text = ReadFile(log);
  EXPECT_NE(text.find("running the cpu kernel variants"), std::string::npos) << text;
  const bool kept = text.find("1 of 3 rows keep the default kernel") != std::string::npos;
  EXPECT_EQ(kept, OnSwiftShader()) << text;
  if (OnSwiftShader()) {
    // The default table itself may not hold a binding the device cannot view.
    BundleSpec g = AffineReluWithTexelMul(n, w, b);
    ASSERT_EQ(Init(), 0) << g_api->error();
    ExpectError(g_api->load(Write(g, "texel_too_big").c_str()),
                {"dispatch 0 (kernel 'mul_texel', binding types 'vfs') has a texel-buffer binding", "maxTexelBufferElements 65536"});
  }
}

// ---------------------------------------------------------------- device variants

// Runs one frame of a single-input, single-output float32 model and returns
// the output (empty after a failed assertion).
std::vector<float> RunOneFrame(const std::string& input, const std::vector<size_t>& shape, const std::vector<float>& x) {
  std::vector<float> y;
  tensors_struct* in = MakeTensors({input}, {shape}, {x});
  EXPECT_NE(in, nullptr);
  if (!in) return y;
  if (g_api->send(in) != 0) {
    ADD_FAILURE() << g_api->error();
    DeepFree(in);
    return y;
  }
  tensors_struct* out = nullptr;
  if (g_api->receive(&out) != 0 || !out) {
    ADD_FAILURE() << g_api->error();
    return y;
  }
  EXPECT_EQ(out->num_tensors, 1u);
  EXPECT_EQ(out->data_types[0], DATA_TYPE_FLOAT);
  size_t numel = 1;
  for (size_t a = 0; a < out->ranks[0]; ++a) numel *= out->shapes[0][a];
  const float* p = static_cast<const float*>(out->data[0]);
  y.assign(p, p + numel);
  DeepFree(out);
  return y;
}

// The driver's storageBuffer16BitAccess: lavapipe has it, SwiftShader not
// (docs/bundle-format.md, "Device-specific variants").
bool DriverHas16BitStorage() { return !OnSwiftShader(); }

// Feature device_variants (docs/bundle-format.md, "Device-specific
// variants"): one bundle with all three tables (AffineReluWithDeviceVariants)
// under every kernel_variant value. The GPU row reads the binary16 copy of w
// and gives relu(x * fp16(w) + b) exactly where the device has
// storageBuffer16BitAccess (lavapipe); on SwiftShader it keeps its default
// row and says why. default and cpu (and auto, = cpu on CPU-type devices,
// = gpu without the opt-in on GPUs) never upload weights_f16.
TEST_F(Runtime, Fp16WeightRowsRunWhereTheDeviceHas16BitStorage) {
  ASSERT_EQ(Init(), 0) << g_api->error();
  const bool device_is_cpu = RuntimeDeviceIsCpu();
  ASSERT_EQ(Destroy(), 0) << g_api->error();
  const uint32_t n = 127;
  std::vector<float> w = Random(n, 41), b = Random(n, 42), x = Random(n, 43);
  std::vector<float> ref_default(n), ref_f16(n), ref_cpu(n);
  size_t differ = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const float w16 = oaaxvk::oinf::HalfToFloat(oaaxvk::test::FloatToHalfBits(w[i]));
    ASSERT_LE(std::fabs(w16 - w[i]), std::ldexp(std::fabs(w[i]), -11)) << "fp16 rounding of w[" << i << "]";
    volatile float p = x[i] * w[i], p16 = x[i] * w16, q = p * b[i];  // separate dispatches: no FMA
    volatile float s = p + b[i], s16 = p16 + b[i];
    ref_default[i] = std::max(static_cast<float>(s), 0.0f);
    ref_f16[i] = std::max(static_cast<float>(s16), 0.0f);
    ref_cpu[i] = std::max(static_cast<float>(q), 0.0f);
    differ += ref_f16[i] != ref_default[i];
  }
  // About half the outputs are clamped to 0 by the relu; most others differ.
  ASSERT_GT(differ, n / 4) << "the fp16 rounding of w must be observable in the output";
  const std::string path = Write(oaaxvk::test::AffineReluWithDeviceVariants(n, w, b, true), "device_variants");
  // "gpu_fp16": kernel_variant=gpu with the opt-in fp16_weights=1; plain
  // "gpu" keeps fp16-weight rows on their default kernel (results stay fp32).
  for (const char* variant : {"default", "gpu", "gpu_fp16", "cpu", "auto"}) {
    SCOPED_TRACE(variant);
    const std::string v = variant;
    const std::string log = g_tmpdir + "/device_variants_" + v + ".log";
    const bool gpu_arg = v.rfind("gpu", 0) == 0, opt_in = v == "gpu_fp16";
    const bool gpu = gpu_arg || (v == "auto" && !device_is_cpu);
    ASSERT_EQ(Init({{"kernel_variant", gpu_arg ? "gpu" : variant}, {"fp16_weights", opt_in ? "1" : "0"},
                    {"log_level", "2"}, {"log_file", log}}),
              0)
        << g_api->error();
    ASSERT_EQ(g_api->load(path.c_str()), 0) << g_api->error();
    const std::vector<float> y = RunOneFrame("x", {1, n}, x);
    ASSERT_EQ(Destroy(), 0) << g_api->error();
    const bool f16 = opt_in && DriverHas16BitStorage(), cpu = v == "cpu" || (v == "auto" && device_is_cpu);
    const std::vector<float>& ref = f16 ? ref_f16 : cpu ? ref_cpu : ref_default;
    ASSERT_EQ(y.size(), n);
    for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(y[i], ref[i]) << "element " << i;
    const std::string text = ReadFile(log);
    const std::string table = gpu ? "gpu" : cpu ? "cpu" : "default";
    EXPECT_NE(text.find("running the " + table + " kernel variants on '"), std::string::npos) << text;
    EXPECT_EQ(text.find("fp16 weight copies uploaded") != std::string::npos, f16) << text;
    // The device's missing capability is the reason first; with it present,
    // the missing opt-in.
    const bool kept_capability = text.find("(1 of 3 rows keep the default kernel: 1 for capabilities the device "
                                           "lacks: storageBuffer16BitAccess (1 row))") != std::string::npos;
    EXPECT_EQ(kept_capability, gpu && !DriverHas16BitStorage()) << text;
    const bool kept_opt_in = text.find("(1 of 3 rows keep the default kernel: 1 for fp16 weights, which need the "
                                       "runtime argument fp16_weights=1)") != std::string::npos;
    EXPECT_EQ(kept_opt_in, gpu && !opt_in && DriverHas16BitStorage()) << text;
    if (!gpu || f16) {
      EXPECT_EQ(text.find("keep the default kernel"), std::string::npos) << text;
    }
    const std::vector<std::string> caps = LinesWith(text, "capabilities: ");
    ASSERT_FALSE(caps.empty()) << text;
    EXPECT_EQ(caps[0].find("storageBuffer16BitAccess") != std::string::npos, DriverHas16BitStorage()) << text;
    // Both drivers have 32 KiB of shared memory (the GPU-class GEMM tiles').
    EXPECT_NE(caps[0].find("sharedMemory32KiB"), std::string::npos) << text;
  }
  // Without a CPU table, auto runs program.dispatch on CPU-type devices; on a
  // GPU the gpu table, whose only fp16 row keeps its default kernel.
  const std::string log = g_tmpdir + "/device_variants_auto_nocpu.log";
  ASSERT_EQ(Init({{"log_level", "2"}, {"log_file", log}}), 0) << g_api->error();
  ASSERT_EQ(g_api->load(Write(oaaxvk::test::AffineReluWithDeviceVariants(n, w, b, false), "gpu_only").c_str()), 0)
      << g_api->error();
  const std::vector<float> y = RunOneFrame("x", {1, n}, x);
  ASSERT_EQ(Destroy(), 0) << g_api->error();
  ASSERT_EQ(y, ref_default);
  const std::string text = ReadFile(log);
  EXPECT_NE(text.find(device_is_cpu ? "running the default kernel variants" : "running the gpu kernel variants"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("fp16 weight copies uploaded"), std::string::npos) << text;
}

// kernel.<j>.fp32_kernel (docs/bundle-format.md, "Device-specific
// variants"): the GPU row of a binary16-weight kernel with an fp32 form runs
// that form, on the default row's fp32 weights, when fp16 weights are not
// allowed or the device lacks 16-bit storage, instead of falling back to the
// default row; with the opt-in on a device with 16-bit storage it runs the
// binary16 kernel. A form whose bindings differ is refused at load.
TEST_F(Runtime, Fp16WeightRowsRunTheirFp32FormWithoutTheOptIn) {
  const uint32_t n = 127;
  std::vector<float> w = Random(n, 41), b = Random(n, 42), x = Random(n, 43);
  std::vector<float> ref(n), ref_f16(n);
  for (uint32_t i = 0; i < n; ++i) {
    const float w16 = oaaxvk::oinf::HalfToFloat(oaaxvk::test::FloatToHalfBits(w[i]));
    volatile float p = x[i] * w[i], p16 = x[i] * w16;  // separate dispatches: no FMA
    volatile float s = p + b[i], s16 = p16 + b[i];
    ref[i] = std::max(static_cast<float>(s), 0.0f);
    ref_f16[i] = std::max(static_cast<float>(s16), 0.0f);
  }
  oaaxvk::test::BundleSpec spec = oaaxvk::test::AffineReluWithDeviceVariants(n, w, b, false);
  ASSERT_EQ(spec.kernels[3].name, "mul_f16w");
  ASSERT_EQ(spec.kernels[0].name, "mul");
  spec.kernels[3].fp32_kernel = 0;  // mul: same bindings and spec constants, w from the weights buffer
  const std::string path = Write(spec, "fp32_form");
  for (const bool opt_in : {false, true}) {
    SCOPED_TRACE(opt_in ? "fp16_weights=1" : "fp16_weights=0");
    const std::string log = g_tmpdir + "/fp32_form_" + (opt_in ? "1" : "0") + ".log";
    ASSERT_EQ(Init({{"kernel_variant", "gpu"}, {"fp16_weights", opt_in ? "1" : "0"}, {"log_level", "2"},
                    {"log_file", log}}),
              0)
        << g_api->error();
    ASSERT_EQ(g_api->load(path.c_str()), 0) << g_api->error();
    const std::vector<float> y = RunOneFrame("x", {1, n}, x);
    ASSERT_EQ(Destroy(), 0) << g_api->error();
    const bool f16 = opt_in && DriverHas16BitStorage();
    ASSERT_EQ(y, f16 ? ref_f16 : ref);
    const std::string text = ReadFile(log);
    EXPECT_EQ(text.find("keep the default kernel"), std::string::npos) << text;
    EXPECT_EQ(text.find("(1 row of fp16-weight kernels run their fp32 form: ") != std::string::npos, !f16) << text;
    EXPECT_EQ(text.find("fp16 weight copies uploaded") != std::string::npos, f16) << text;
  }
  spec.kernels[3].fp32_kernel = 2;  // relu: 2 bindings
  ASSERT_EQ(Init(), 0) << g_api->error();
  EXPECT_NE(g_api->load(Write(spec, "fp32_form_bad").c_str()), 0);
  EXPECT_NE(std::string(g_api->error()).find("is not an fp32 form of 'mul_f16w'"), std::string::npos)
      << g_api->error();
  ASSERT_EQ(Destroy(), 0) << g_api->error();
}

// kernel.<j>.fp16_kernel / matrix_kernel (docs/bundle-format.md,
// "Device-specific variants"): a form must have its kernel's bindings,
// binding types and spec constants, and may not name the kernel itself; the
// load fails naming the entry otherwise.
TEST_F(Runtime, PrecisionFormsWithAnotherInterfaceAreRefused) {
  const uint32_t n = 7;
  oaaxvk::test::BundleSpec spec =
      oaaxvk::test::AffineReluWithDeviceVariants(n, Random(n, 51), Random(n, 52), false);
  ASSERT_EQ(spec.kernels[0].name, "mul");
  ASSERT_EQ(spec.kernels[2].name, "relu");
  struct Case {
    const char* key;
    int64_t form;
    const char* want;
  };
  for (const Case& c : {Case{"fp16_kernel", 2, "'kernel.0.fp16_kernel' = 2: kernel 'relu' (2 bindings"},
                        Case{"matrix_kernel", 2, "'kernel.0.matrix_kernel' = 2: kernel 'relu'"},
                        Case{"fp16_kernel", 0, "'kernel.0.fp16_kernel' names the kernel itself"}}) {
    SCOPED_TRACE(std::string(c.key) + " = " + std::to_string(c.form));
    oaaxvk::test::BundleSpec bad = spec;
    (std::string(c.key) == "fp16_kernel" ? bad.kernels[0].fp16_kernel : bad.kernels[0].matrix_kernel) = c.form;
    ASSERT_EQ(Init(), 0) << g_api->error();
    EXPECT_NE(g_api->load(Write(bad, "precision_form_bad").c_str()), 0);
    EXPECT_NE(std::string(g_api->error()).find(c.want), std::string::npos) << g_api->error();
    ASSERT_EQ(Destroy(), 0) << g_api->error();
  }
}

// Integer-valued x in 1..8, so every summation order gives the exact sum and
// any element summed twice or missed shows.
std::vector<float> SmallIntegers(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(1, 8);
  std::vector<float> v(n);
  for (float& e : v) e = static_cast<float>(d(rng));
  return v;
}

// A GPU row requiring subgroupArithmetic (row_sum_sg: subgroupAdd, any
// subgroup size) runs on both drivers (lavapipe: subgroups of 8, SwiftShader:
// 4) and sums every row exactly; the debug log names the kernel that ran.
TEST_F(Runtime, SubgroupArithmeticRowsRunOnBothDrivers) {
  const uint32_t rows = 5, len = 1000;  // len is not a multiple of the workgroup size
  std::vector<float> x = SmallIntegers(static_cast<size_t>(rows) * len, 51);
  std::vector<float> ref(rows, 0.0f);
  for (uint32_t r = 0; r < rows; ++r)
    for (uint32_t k = 0; k < len; ++k) ref[r] += x[static_cast<size_t>(r) * len + k];
  const std::string path = Write(oaaxvk::test::RowSumBundle(rows, len, "subgroupArithmetic"), "row_sum_sg");
  for (const char* variant : {"gpu", "default"}) {
    SCOPED_TRACE(variant);
    const std::string log = g_tmpdir + "/row_sum_" + variant + ".log";
    ASSERT_EQ(Init({{"kernel_variant", variant}, {"log_level", "1"}, {"log_file", log}}), 0) << g_api->error();
    ASSERT_EQ(g_api->load(path.c_str()), 0) << g_api->error();
    for (int frame = 0; frame < 2; ++frame) ASSERT_EQ(RunOneFrame("x", {rows, len}, x), ref);
    ASSERT_EQ(Destroy(), 0) << g_api->error();
    const std::string text = ReadFile(log);
    const bool gpu = std::string(variant) == "gpu";
    EXPECT_NE(text.find(std::string("running the ") + variant + " kernel variants"), std::string::npos) << text;
    EXPECT_EQ(text.find("keep the default kernel"), std::string::npos) << text;
    EXPECT_NE(text.find(gpu ? "kernel 'row_sum_sg' groups (5, 1, 1)" : "kernel 'row_sum' groups (1, 1, 1)"),
              std::string::npos) << text;
    EXPECT_NE(text.find("capabilities: "), std::string::npos) << text;
    EXPECT_NE(LinesWith(text, "capabilities: ").at(0).find("subgroupArithmetic"), std::string::npos) << text;
    EXPECT_NE(text.find("subgroup operations {basic"), std::string::npos) << text;  // debug: what was queried
  }
}

// A capability name this runtime does not know counts as missing: the row
// keeps its default kernel, with a warning naming the capability, even when
// the row's other capability (subgroupArithmetic; names joined by '-') is
// present on both drivers.
TEST_F(Runtime, UnknownCapabilityKeepsTheDefaultRowWithAWarning) {
  const uint32_t rows = 3, len = 100;
  std::vector<float> x = SmallIntegers(static_cast<size_t>(rows) * len, 52);
  std::vector<float> ref(rows, 0.0f);
  for (uint32_t r = 0; r < rows; ++r)
    for (uint32_t k = 0; k < len; ++k) ref[r] += x[static_cast<size_t>(r) * len + k];
  const std::string log = g_tmpdir + "/unknown_capability.log";
  ASSERT_EQ(Init({{"kernel_variant", "gpu"}, {"log_level", "1"}, {"log_file", log}}), 0) << g_api->error();
  ASSERT_EQ(g_api->load(Write(oaaxvk::test::RowSumBundle(rows, len, "subgroupArithmetic-warpDrive"), "warp").c_str()),
            0) << g_api->error();
  ASSERT_EQ(RunOneFrame("x", {rows, len}, x), ref);
  ASSERT_EQ(Destroy(), 0) << g_api->error();
  const std::string text = ReadFile(log);
  const std::vector<std::string> warnings = LinesWith(text, "capability 'warpDrive'");
  ASSERT_EQ(warnings.size(), 1u) << text;
  EXPECT_NE(warnings[0].find("does not know"), std::string::npos) << warnings[0];
  EXPECT_NE(text.find("running the gpu kernel variants on '"), std::string::npos) << text;
  EXPECT_NE(text.find("(1 of 1 rows keep the default kernel: 1 for capabilities the device lacks: warpDrive (1 row))"),
            std::string::npos) << text;
  EXPECT_NE(text.find("kernel 'row_sum' groups (1, 1, 1)"), std::string::npos) << text;
  EXPECT_EQ(text.find("kernel 'row_sum_sg'"), std::string::npos) << text;
  // A program.dispatch row has no fallback: a kernel it runs must be runnable.
  BundleSpec s = oaaxvk::test::RowSumBundle(rows, len, "subgroupArithmetic");
  s.kernels[0].required = "warpDrive";
  ASSERT_EQ(Init({{"kernel_variant", "default"}}), 0) << g_api->error();
  ExpectError(g_api->load(Write(s, "warp_default").c_str()),
              {"dispatch 0 (kernel 'row_sum') requires warpDrive, which device '"});
}

TEST_F(Runtime, InvalidDeviceVariantTablesAreRejected) {
  ASSERT_EQ(Init(), 0) << g_api->error();
  const std::vector<float> w(13, 1.5f), b(13, 0.0f);
  struct Case {
    const char* name;
    void (*mutate)(BundleSpec*);
    const char* expect;
  };
  const Case cases[] = {
      {"missing_table", [](BundleSpec* s) { s->dispatch_gpu.clear(); },
       "feature device_variants is required but tensor 'program.dispatch.gpu' is missing"},
      {"missing_f16", [](BundleSpec* s) { s->weights_f16.reset(); },
       "feature device_variants is required but tensor 'weights_f16' is missing"},
      {"rows", [](BundleSpec* s) { s->dispatch_gpu.pop_back(); }, "'program.dispatch.gpu' must be u32[3, 8]"},
      {"kernel", [](BundleSpec* s) { s->dispatch_gpu[2][0] = 9; }, "program.dispatch.gpu row 2: kernel 9 out of range"},
      {"n_bindings",  // relu (2 bindings) for the 3-binding mul
       [](BundleSpec* s) { s->dispatch_gpu[0] = {2, 1, 1, 1, 6, 2, 2, 1}; },
       "program.dispatch.gpu row 0 has 2 bindings but program.dispatch row 0 has 3"},
      {"range",  // the output t1 moved within the arena
       [](BundleSpec* s) { s->bindings[10][1] = 256; },
       "program.dispatch.gpu row 0 binding 2 is buffer kind 1 bytes [256, +52) but program.dispatch row 0 binding 2 "
       "is buffer kind 1 bytes [0, +52)"},
      {"f16_for_input",  // kind 4 only replaces a weights range, not the input x
       [](BundleSpec* s) { s->bindings[8] = {4, 0, 52}; },
       "program.dispatch.gpu row 0 binding 0 is buffer kind 4 bytes [0, +52) but program.dispatch row 0 binding 0 is "
       "buffer kind 2"},
      {"default_binds_f16", [](BundleSpec* s) { s->bindings[1] = {4, 256, 26}; },
       "dispatch 0: binding 1 (program.bindings row 1) is in weights_f16 (buffer kind 4), which only "
       "program.dispatch.gpu rows may bind"},
      {"f16_outside", [](BundleSpec* s) { s->bindings[9][2] = 512; },
       "program.bindings row 9: bytes [256, +512) lie outside buffer kind 4 (282 bytes)"},
      {"no_feature_kind4",
       [](BundleSpec* s) {
         s->features = "kernel_variants";
         s->kernels[3].required.clear();
       },
       "program.bindings row 9: buffer_kind 4 (weights_f16) but bundle.features does not list 'device_variants'"},
      {"no_feature_requires", [](BundleSpec* s) { s->features = "kernel_variants"; },
       "metadata 'kernel.3.requires' ('storageBuffer16BitAccess') is present but bundle.features does not list "
       "'device_variants'"},
      {"kind5", [](BundleSpec* s) { s->bindings[9][0] = 5; }, "program.bindings row 9: buffer_kind 5 is not 0-4"},
      {"empty_capability", [](BundleSpec* s) { s->kernels[3].required = "storageBuffer16BitAccess-"; },
       "metadata 'kernel.3.requires' is 'storageBuffer16BitAccess-': an empty capability name (names are joined by "
       "'-')"},
      {"empty_capability_first", [](BundleSpec* s) { s->kernels[3].required = "-storageBuffer16BitAccess"; },
       "an empty capability name"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    BundleSpec s = oaaxvk::test::AffineReluWithDeviceVariants(13, w, b, true);
    c.mutate(&s);
    ExpectError(g_api->load(Write(s, std::string("baddev_") + c.name).c_str()), {c.expect});
  }
  // The unmodified bundle loads (the cases above fail for their own reason only).
  EXPECT_EQ(g_api->load(Write(oaaxvk::test::AffineReluWithDeviceVariants(13, w, b, true), "gooddev").c_str()), 0)
      << g_api->error();
}

TEST_F(Runtime, DeviceLimitsAreChecked) {
  ASSERT_EQ(Init(), 0) << g_api->error();
  std::vector<float> w(13, 1.0f), b(13, 0.0f);
  BundleSpec s = oaaxvk::test::AffineReluBundle(13, w, b);
  s.max_invocations = 1u << 30;
  ExpectError(g_api->load(Write(s, "invocations").c_str()),
              {"device.max_workgroup_invocations = 1073741824", "maxComputeWorkGroupInvocations"});
  // One workgroup more than the device allows in dimension 0 (lavapipe 65535,
  // NVIDIA 2^31 - 1); a device allowing every u32 count cannot be exceeded.
  VkPhysicalDeviceProperties props{};
  ASSERT_TRUE(RuntimeDeviceProperties(&props));
  const uint32_t max_groups = props.limits.maxComputeWorkGroupCount[0];
  if (max_groups == UINT32_MAX) GTEST_SKIP() << "the device allows 2^32 - 1 workgroups in dimension 0";
  s = oaaxvk::test::AffineReluBundle(13, w, b);
  s.dispatch[0][1] = max_groups + 1;
  ExpectError(g_api->load(Write(s, "groups").c_str()), {"workgroups in dimension 0", "maxComputeWorkGroupCount"});
}

// A kernel no chosen row uses gets no descriptor-set or pipeline layout: one
// with 64 storage-buffer bindings exceeds maxPerStageDescriptorStorageBuffers
// on both test drivers (32 and 30), which creating its layout would violate
// (the validation layer would make runtime_destruction fail).
TEST_F(Runtime, KernelsNoRowUsesGetNoLayouts) {
  ASSERT_EQ(Init(), 0) << g_api->error();
  std::vector<float> w = Random(13, 3), b = Random(13, 4);
  BundleSpec s = oaaxvk::test::AffineReluBundle(13, w, b);
  s.kernels.push_back({"wide", oaaxvk::test::ReadSpirv("relu"), 64, 1});
  ASSERT_EQ(g_api->load(Write(s, "unused_wide_kernel").c_str()), 0) << g_api->error();
  RunAffineOnce(13, w, b, 6);
  ASSERT_EQ(Destroy(), 0) << g_api->error();  // no validation message
}

// ---------------------------------------------------------------- queueing

TEST_F(Runtime, FifoOrderOverManyQueuedInputs) {
  const int frames = FramesFromEnv();
  ASSERT_EQ(Init(), 0) << g_api->error();
  const uint32_t n = 13;
  std::vector<float> w(n, 1.0f), b(n, 0.0f);
  ASSERT_EQ(g_api->load(Write(oaaxvk::test::AffineReluBundle(n, w, b), "fifo").c_str()), 0) << g_api->error();
  for (int f = 0; f < frames; ++f)
    ASSERT_EQ(g_api->send(MakeTensors({"x"}, {{1, n}}, {std::vector<float>(n, static_cast<float>(f))})), 0)
        << "frame " << f << ": " << g_api->error();
  for (int f = 0; f < frames; ++f) {
    tensors_struct* out = nullptr;
    ASSERT_EQ(g_api->receive(&out), 0) << "frame " << f << ": " << g_api->error();
    const float* y = static_cast<const float*>(out->data[0]);
    for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(y[i], static_cast<float>(f)) << "frame " << f;
    DeepFree(out);
  }
  tensors_struct* out = nullptr;
  ExpectError(g_api->receive(&out), {"no pending input"});
}

TEST_F(Runtime, ProducerAndConsumerThreads) {
  const int frames = FramesFromEnv();
  ASSERT_EQ(Init({{"frames_in_flight", "3"}}), 0) << g_api->error();
  const uint32_t n = 127;
  std::vector<float> w(n, 2.0f), b(n, 1.0f);
  ASSERT_EQ(g_api->load(Write(oaaxvk::test::AffineReluBundle(n, w, b), "threads").c_str()), 0) << g_api->error();
  std::atomic<bool> producer_failed{false};
  std::string producer_error;
  std::thread producer([&] {
    for (int f = 0; f < frames; ++f) {
      if (g_api->send(MakeTensors({"x"}, {{1, n}}, {std::vector<float>(n, static_cast<float>(f))})) != 0) {
        producer_error = g_api->error();
        producer_failed = true;
        return;
      }
    }
  });
  int received = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (received < frames && !producer_failed && std::chrono::steady_clock::now() < deadline) {
    tensors_struct* out = nullptr;
    if (g_api->receive(&out) != 0) {
      std::string e = g_api->error();
      ASSERT_NE(e.find("no pending input"), std::string::npos) << e;
      std::this_thread::yield();
      continue;
    }
    const float* y = static_cast<const float*>(out->data[0]);
    const float want = 2.0f * static_cast<float>(received) + 1.0f;
    for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(y[i], want) << "frame " << received;
    DeepFree(out);
    ++received;
  }
  producer.join();
  ASSERT_FALSE(producer_failed) << producer_error;
  EXPECT_EQ(received, frames);
}

// receive_timeout_ms bounds every wait: with a frame that takes far longer
// than 1 ms, receive_output and a send_input that needs a busy slot fail
// quickly with a clear message, and the frame is still received afterwards.
TEST_F(Runtime, ReceiveTimeoutExpiresQuicklyAndFrameIsReceivedLater) {
  using Clock = std::chrono::steady_clock;
  auto ms_since = [](Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
  };
  // No warm-up at load: it would cost one more slow frame (and on lavapipe the
  // first frame then also includes shader compilation: slower still, which is fine).
  ASSERT_EQ(Init({{"receive_timeout_ms", "1"}, {"frames_in_flight", "1"}, {"load_warmup", "0"}}), 0) << g_api->error();
  const uint32_t n = 4096;
  // 200000 dependent multiply-adds per element take seconds on a CPU driver
  // and well under a millisecond on a GPU (64 workgroups): 1000 times more there.
  const uint32_t iterations = RuntimeDeviceIsCpu() ? 200000u : 200000000u;
  const auto load_start = Clock::now();
  ASSERT_EQ(g_api->load(Write(oaaxvk::test::SpinBundle(n, iterations), "spin").c_str()), 0) << g_api->error();
  const double load_ms = ms_since(load_start);
  std::vector<float> x = Random(n, 21);
  const auto sent = Clock::now();
  ASSERT_EQ(g_api->send(MakeTensors({"x"}, {{1, n}}, {x})), 0) << g_api->error();

  // The only slot is busy: a second send waits 1 ms, fails, and leaves the input to the caller.
  tensors_struct* second = MakeTensors({"x"}, {{1, n}}, {x});
  auto t0 = Clock::now();
  ExpectError(g_api->send(second), {"send_input", "every frame slot is busy", "receive_timeout_ms = 1"});
  const double send_ms = ms_since(t0);
  DeepFree(second);

  t0 = Clock::now();
  tensors_struct* out = nullptr;
  ExpectError(g_api->receive(&out), {"receive_output", "did not finish within receive_timeout_ms = 1",
                                     "call receive_output again"});
  const double receive_ms = ms_since(t0);
  EXPECT_EQ(out, nullptr);
  // "Quickly": far below a frame's duration (generous for sanitizers and busy CI hosts).
  EXPECT_LT(send_ms, 250.0);
  EXPECT_LT(receive_ms, 250.0);

  int timeouts = 1;
  const auto deadline = Clock::now() + std::chrono::seconds(120);
  while (g_api->receive(&out) != 0) {
    ASSERT_NE(std::string(g_api->error()).find("did not finish within"), std::string::npos) << g_api->error();
    ASSERT_LT(Clock::now(), deadline) << "frame never finished";
    ++timeouts;
  }
  const double frame_ms = ms_since(sent);
  ASSERT_NE(out, nullptr);
  const float* y = static_cast<const float*>(out->data[0]);
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(y[i], x[i]) << i;
  DeepFree(out);
  EXPECT_GT(timeouts, 1);
  // The frame was slow enough for the test to mean something.
  EXPECT_GT(frame_ms, 3.0 * std::max(send_ms, receive_ms)) << "load " << load_ms << " ms";
  RecordProperty("frame_ms", std::to_string(frame_ms));
  fprintf(stderr, "spin frame %.0f ms (load %.0f ms); timed-out send %.2f ms, receive %.2f ms; %d timeouts\n",
          frame_ms, load_ms, send_ms, receive_ms, timeouts);
  // The runtime is usable afterwards (a fresh send and receive).
  ASSERT_EQ(g_api->send(MakeTensors({"x"}, {{1, n}}, {x})), 0) << g_api->error();
  while (g_api->receive(&out) != 0) ASSERT_LT(Clock::now(), deadline) << g_api->error();
  DeepFree(out);
}

// A receive_output and a send_input that found every slot busy, both timing
// out while harvesting at once, put their frames back in sequence order: once
// the device is idle, both frames are received, in order. Repeated, as the
// two threads' timeouts race.
TEST_F(Runtime, ConcurrentTimedOutReceiveAndSendKeepTheFrameOrder) {
  using Clock = std::chrono::steady_clock;
  ASSERT_EQ(Init({{"receive_timeout_ms", "5"}, {"frames_in_flight", "2"}, {"load_warmup", "0"}}), 0)
      << g_api->error();
  const uint32_t n = 1024;
  ASSERT_EQ(g_api->load(Write(oaaxvk::test::SpinBundle(n, 100000), "spin_race").c_str()), 0) << g_api->error();
  int next = 0;  // the next frame's value
  int expect = 0;
  for (int round = 0; round < 4; ++round) {
    SCOPED_TRACE(round);
    for (int k = 0; k < 2; ++k)
      ASSERT_EQ(g_api->send(MakeTensors({"x"}, {{1, n}}, {std::vector<float>(n, static_cast<float>(next++))})), 0)
          << g_api->error();
    tensors_struct* extra = MakeTensors({"x"}, {{1, n}}, {std::vector<float>(n, static_cast<float>(next))});
    int send_rc = -1;
    std::thread sender([&] { send_rc = g_api->send(extra); });
    tensors_struct* early = nullptr;
    const int early_rc = g_api->receive(&early);
    sender.join();
    if (send_rc == 0) ++next; else DeepFree(extra);
    if (early_rc == 0) {
      EXPECT_EQ(static_cast<const float*>(early->data[0])[0], static_cast<float>(expect++));
      DeepFree(early);
    }
    // Drain: every queued frame arrives, in order, once the device is done.
    const auto deadline = Clock::now() + std::chrono::seconds(120);
    while (expect < next) {
      tensors_struct* out = nullptr;
      if (g_api->receive(&out) != 0) {
        ASSERT_NE(std::string(g_api->error()).find("did not finish within"), std::string::npos) << g_api->error();
        ASSERT_LT(Clock::now(), deadline) << "frame " << expect << " never arrived";
        continue;
      }
      ASSERT_EQ(static_cast<const float*>(out->data[0])[0], static_cast<float>(expect)) << "frame out of order";
      ++expect;
      DeepFree(out);
    }
  }
}

// Several producers and consumers at once: every output arrives exactly once,
// and each consumer sees each producer's frames in the order they were sent.
TEST_F(Runtime, SeveralProducersAndConsumersReceiveEveryFrameOnceInOrder) {
  const int per_producer = std::max(10, FramesFromEnv() / 4);
  constexpr int kProducers = 3, kConsumers = 3;
  ASSERT_EQ(Init({{"frames_in_flight", "3"}}), 0) << g_api->error();
  const uint32_t n = 13;
  std::vector<float> w(n, 1.0f), b(n, 0.0f);
  ASSERT_EQ(g_api->load(Write(oaaxvk::test::AffineReluBundle(n, w, b), "many_threads").c_str()), 0) << g_api->error();
  std::atomic<int> failures{0};
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p)
    producers.emplace_back([&, p] {
      for (int k = 0; k < per_producer; ++k) {
        const float v = static_cast<float>(p * 100000 + k);
        if (g_api->send(MakeTensors({"x"}, {{1, n}}, {std::vector<float>(n, v)})) != 0) {
          fprintf(stderr, "producer %d: %s\n", p, g_api->error());
          ++failures;
          return;
        }
      }
    });
  const int total = kProducers * per_producer;
  std::atomic<int> received{0};
  std::mutex mu;
  std::vector<int> seen(total, 0);
  std::vector<std::thread> consumers;
  for (int c = 0; c < kConsumers; ++c)
    consumers.emplace_back([&] {
      std::vector<int> last(kProducers, -1);
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(120);
      while (received < total && failures == 0 && std::chrono::steady_clock::now() < give_up) {
        tensors_struct* out = nullptr;
        if (g_api->receive(&out) != 0) {
          std::this_thread::yield();
          continue;
        }
        const int v = static_cast<int>(static_cast<const float*>(out->data[0])[0]);
        DeepFree(out);
        const int p = v / 100000, k = v % 100000;
        if (p >= kProducers || k >= per_producer || k <= last[p]) {
          fprintf(stderr, "unexpected frame value %d after %d\n", v, p < kProducers ? last[p] : -1);
          ++failures;
          return;
        }
        last[p] = k;
        std::lock_guard<std::mutex> lk(mu);
        ++seen[p * per_producer + k];
        ++received;
      }
    });
  for (std::thread& t : producers) t.join();
  for (std::thread& t : consumers) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(received.load(), total);
  for (int i = 0; i < total; ++i) ASSERT_EQ(seen[i], 1) << "frame value " << (i / per_producer) * 100000 + i % per_producer;
}

// runtime_destruction with frames still running and others harvested but not
// received: it waits for the device, frees everything (the validation layer
// and LeakSanitizer check), and a new runtime works.
TEST_F(Runtime, DestructionWithFramesInFlight) {
  ASSERT_EQ(Init({{"frames_in_flight", "2"}, {"load_warmup", "0"}}), 0) << g_api->error();
  const uint32_t n = 1024;
  ASSERT_EQ(g_api->load(Write(oaaxvk::test::SpinBundle(n, 20000), "spin_destroy").c_str()), 0) << g_api->error();
  for (int f = 0; f < 4; ++f)  // the third and fourth harvest the first two for the receiver
    ASSERT_EQ(g_api->send(MakeTensors({"x"}, {{1, n}}, {std::vector<float>(n, 1.0f)})), 0) << g_api->error();
  ASSERT_EQ(Destroy(), 0) << g_api->error();
  ASSERT_EQ(Init(), 0) << g_api->error();
  std::vector<float> w, b;
  LoadAffine(13, &w, &b);
  RunAffineOnce(13, w, b, 3);
}

#ifdef OAAXVK_FAULT_INJECTION_TESTS
// A lost device, injected (libRuntimeLibraryFaultInjection.so reads
// OAAXVK_INJECT_FAULT): every later call fails at once with a clear
// message, nothing hangs, and runtime_destruction then a new runtime recover.
class DeviceLoss : public Runtime {
 protected:
  void TearDown() override {
    unsetenv("OAAXVK_INJECT_FAULT");
    Runtime::TearDown();
  }
  // "<call>:<result>": "submit:lost", "wait:oom", ...
  void Inject(const char* fault) { setenv("OAAXVK_INJECT_FAULT", fault, 1); }
  void StopInjecting() { unsetenv("OAAXVK_INJECT_FAULT"); }
  // Every call after the loss fails quickly, naming the loss.
  void ExpectEveryCallFails() {
    using Clock = std::chrono::steady_clock;
    const auto t0 = Clock::now();
    // A refused input stays the caller's (OAAX: ownership passes on success only).
    tensors_struct* in = MakeTensors({"x"}, {{1, 13}}, {std::vector<float>(13, 1.0f)});
    const int sent = g_api->send(in);
    ExpectError(sent, {"send_input", "VK_ERROR_DEVICE_LOST", "the Vulkan device was lost"});
    if (sent != 0) DeepFree(in);
    tensors_struct* out = nullptr;
    ExpectError(g_api->receive(&out), {"receive_output", "VK_ERROR_DEVICE_LOST"});
    EXPECT_EQ(out, nullptr);
    ExpectError(g_api->load("/nonexistent.oinf"), {"runtime_model_loading", "the Vulkan device was lost",
                                                   "runtime_destruction"});
    EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 2.0);  // receive_timeout_ms is 5000
  }
  void Recover() {
    ASSERT_EQ(Destroy(), 0) << g_api->error();
    ASSERT_EQ(Init(), 0) << g_api->error();
    std::vector<float> w, b;
    LoadAffine(13, &w, &b);
    RunAffineOnce(13, w, b, 9);
  }
};

TEST_F(DeviceLoss, AtSubmit) {
  ASSERT_EQ(Init(), 0) << g_api->error();
  std::vector<float> w, b;
  LoadAffine(13, &w, &b);
  ASSERT_EQ(g_api->send(MakeTensors({"x"}, {{1, 13}}, {std::vector<float>(13, 1.0f)})), 0) << g_api->error();
  Inject("submit:lost");
  tensors_struct* in = MakeTensors({"x"}, {{1, 13}}, {std::vector<float>(13, 1.0f)});
  ExpectError(g_api->send(in), {"send_input", "vkQueueSubmit failed: VK_ERROR_DEVICE_LOST"});
  DeepFree(in);  // a failed send leaves the input to the caller
  StopInjecting();
  ExpectEveryCallFails();  // sticky: the device stays lost
  Recover();
}

TEST_F(DeviceLoss, AtWait) {
  ASSERT_EQ(Init(), 0) << g_api->error();
  std::vector<float> w, b;
  LoadAffine(13, &w, &b);
  for (int f = 0; f < 2; ++f)
    ASSERT_EQ(g_api->send(MakeTensors({"x"}, {{1, 13}}, {std::vector<float>(13, 1.0f)})), 0) << g_api->error();
  Inject("wait:lost");
  tensors_struct* out = nullptr;
  ExpectError(g_api->receive(&out), {"receive_output", "vkWaitForFences failed: VK_ERROR_DEVICE_LOST",
                                     "call runtime_destruction"});
  StopInjecting();
  ExpectEveryCallFails();
  Recover();
}

TEST_F(DeviceLoss, WhileSendWaitsForABusySlot) {
  ASSERT_EQ(Init({{"frames_in_flight", "1"}}), 0) << g_api->error();
  std::vector<float> w, b;
  LoadAffine(13, &w, &b);
  ASSERT_EQ(g_api->send(MakeTensors({"x"}, {{1, 13}}, {std::vector<float>(13, 1.0f)})), 0) << g_api->error();
  Inject("wait:lost");
  tensors_struct* in = MakeTensors({"x"}, {{1, 13}}, {std::vector<float>(13, 1.0f)});
  ExpectError(g_api->send(in), {"send_input", "VK_ERROR_DEVICE_LOST"});
  DeepFree(in);
  StopInjecting();
  ExpectEveryCallFails();
  Recover();
}

TEST_F(DeviceLoss, DuringLoadAndDestructionWithFramesInFlight) {
  ASSERT_EQ(Init(), 0) << g_api->error();
  std::vector<float> w(13, 1.0f), b(13, 0.0f);
  const std::string path = Write(oaaxvk::test::AffineReluBundle(13, w, b), "loss_load");
  Inject("submit:lost");  // the weights upload's submit
  ExpectError(g_api->load(path.c_str()), {"runtime_model_loading", "VK_ERROR_DEVICE_LOST", "uploading weights"});
  // The upload's wait failing with an error that says nothing about the
  // copy: the load fails and frees only what the device no longer reads (the
  // validation layer checks at destruction). (An injected loss is not used
  // here: the device is not really lost, so the copy may still be running.)
  Inject("wait:oom");
  ExpectError(g_api->load(path.c_str()), {"runtime_model_loading", "uploading weights", "VK_ERROR_OUT_OF_HOST_MEMORY"});
  StopInjecting();
  ASSERT_EQ(g_api->load(path.c_str()), 0) << g_api->error();  // nothing of the failed load stays
  for (int f = 0; f < 2; ++f)
    ASSERT_EQ(g_api->send(MakeTensors({"x"}, {{1, 13}}, {std::vector<float>(13, 1.0f)})), 0) << g_api->error();
  Inject("all:lost");
  ExpectEveryCallFails();
  StopInjecting();
  Recover();
}
// Errors that are not a device loss fail one call or one frame, never the runtime.
TEST_F(DeviceLoss, OtherErrorsFailOneFrameOnly) {
  ASSERT_EQ(Init(), 0) << g_api->error();
  std::vector<float> w, b;
  LoadAffine(13, &w, &b);
  // A failed submit: the input stays the host's, the slot is free again.
  Inject("submit:oom");
  for (int k = 0; k < 3; ++k) {  // more failures than slots: none keeps its slot
    tensors_struct* in = MakeTensors({"x"}, {{1, 13}}, {std::vector<float>(13, 1.0f)});
    ExpectError(g_api->send(in), {"send_input", "vkQueueSubmit failed: VK_ERROR_OUT_OF_HOST_MEMORY"});
    DeepFree(in);
  }
  StopInjecting();
  tensors_struct* out = nullptr;
  ExpectError(g_api->receive(&out), {"no pending input"});  // nothing was queued
  RunAffineOnce(13, w, b, 1);
  // A failed wait: that frame fails, the next one arrives, and its slot is
  // reused once the failed frame's fence is seen signaled.
  std::vector<std::vector<float>> xs = {Random(13, 61), Random(13, 62), Random(13, 63)};
  for (int f = 0; f < 2; ++f) ASSERT_EQ(g_api->send(MakeTensors({"x"}, {{1, 13}}, {xs[f]})), 0) << g_api->error();
  Inject("wait:oom");
  ExpectError(g_api->receive(&out), {"receive_output", "frame #", "vkWaitForFences failed: VK_ERROR_OUT_OF_HOST_MEMORY"});
  StopInjecting();
  for (int f = 1; f <= 2; ++f) {
    if (f == 2) {  // takes the slot of the failed frame
      ASSERT_EQ(g_api->send(MakeTensors({"x"}, {{1, 13}}, {xs[f]})), 0) << g_api->error();
    }
    ASSERT_EQ(g_api->receive(&out), 0) << g_api->error();
    const std::vector<float> ref = AffineRelu(xs[f], w, b);
    for (int i = 0; i < 13; ++i) ASSERT_NEAR(static_cast<const float*>(out->data[0])[i], ref[i], 1e-6f) << f;
    DeepFree(out);
  }
}
// Host memory running out in send_input once it holds a frame slot: the
// call fails, the input stays the host's, and the slot is free again (with
// one slot, a held slot would make every later send_input time out).
TEST_F(DeviceLoss, AnExceptionInSendGivesTheSlotBack) {
  ASSERT_EQ(Init({{"frames_in_flight", "1"}, {"receive_timeout_ms", "200"}}), 0) << g_api->error();
  std::vector<float> w, b;
  LoadAffine(13, &w, &b);
  Inject("send:throw");
  for (int k = 0; k < 2; ++k) {
    tensors_struct* in = MakeTensors({"x"}, {{1, 13}}, {std::vector<float>(13, 1.0f)});
    ExpectError(g_api->send(in), {"send_input", "out of host memory"});
    DeepFree(in);
  }
  StopInjecting();
  RunAffineOnce(13, w, b, 2);
}

// Buffers beyond the device's allocation limit (OAAXVK_INJECT_MAX_ALLOCATION
// lowers maxMemoryAllocationSize as the runtime sees it): the weights and the
// arena are cut between bindings into several VkBuffers (buffer_blocks.h).
class SplitBuffers : public Runtime {
 protected:
  void TearDown() override {
    unsetenv("OAAXVK_INJECT_MAX_ALLOCATION");
    Runtime::TearDown();
  }
};

// AffineRelu(1000): w at weights [0, 4000), b at [4096, 8096); t1 at arena
// [0, 4000), t2 at [4096, 8096). With 4096 bytes per allocation each of the
// two buffers takes two allocations, and every binding still reads its data.
TEST_F(SplitBuffers, WeightsAndArenaInSeveralAllocationsMatchTheReference) {
  setenv("OAAXVK_INJECT_MAX_ALLOCATION", "4096", 1);
  const std::string log = g_tmpdir + "/split_buffers.log";
  ASSERT_EQ(Init({{"frames_in_flight", "2"}, {"log_level", "2"}, {"log_file", log}}), 0) << g_api->error();
  std::vector<float> w, b;
  LoadAffine(1000, &w, &b);
  for (uint32_t seed = 1; seed <= 3; ++seed) RunAffineOnce(1000, w, b, seed);
  ASSERT_EQ(Destroy(), 0) << g_api->error();
  std::ifstream in(log);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("weights (8096 bytes) in 2 buffers of at most 4096 bytes"), std::string::npos) << text;
  EXPECT_NE(text.find("arena (8096 bytes) in 2 buffers of at most 4096 bytes"), std::string::npos) << text;
}

// One binding (w, 4000 bytes) over the limit: no cut fits it, refused at load
// naming the buffer, the bytes, the limit and the device limit behind it.
TEST_F(SplitBuffers, ABindingOverTheAllocationLimitIsRefusedAtLoad) {
  setenv("OAAXVK_INJECT_MAX_ALLOCATION", "2048", 1);
  ASSERT_EQ(Init(), 0) << g_api->error();
  std::vector<float> w(1000, 1.0f), b(1000, 0.0f);
  const std::string path = Write(oaaxvk::test::AffineReluBundle(1000, w, b), "split_refused");
  ExpectError(g_api->load(path.c_str()),
              {"runtime_model_loading", "tensor 'weights'", "(maxMemoryAllocationSize)", "bytes [0, 4000)",
               "4000 bytes are over the 2048 bytes one buffer may take"});
}
#endif  // OAAXVK_FAULT_INJECTION_TESTS

// ---------------------------------------------------------------- lifecycle

TEST_F(Runtime, DestroyInitLoadRunTwice) {
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(round);
    ASSERT_EQ(Init({{"frames_in_flight", round ? "1" : "2"}}), 0) << g_api->error();
    std::vector<float> w, b;
    LoadAffine(127, &w, &b);
    // Leave a frame pending: destruction must discard it without leaking.
    RunAffineOnce(127, w, b, 11);
    ASSERT_EQ(g_api->send(MakeTensors({"x"}, {{1, 127}}, {Random(127, 12)})), 0) << g_api->error();
    ASSERT_EQ(Destroy(), 0) << g_api->error();
  }
}

TEST_F(Runtime, LogFileAndPipelineCache) {
  const std::string log = g_tmpdir + "/runtime.log", cache = g_tmpdir + "/pipelines.bin";
  for (int round = 0; round < 2; ++round) {
    ASSERT_EQ(Init({{"log_level", "1"}, {"log_file", log}, {"pipeline_cache", cache}}), 0) << g_api->error();
    std::vector<float> w, b;
    LoadAffine(13, &w, &b);
    RunAffineOnce(13, w, b, 3);
    ASSERT_EQ(Destroy(), 0) << g_api->error();
    EXPECT_EQ(access(cache.c_str(), F_OK), 0) << "pipeline cache not written";
  }
  std::ifstream in(log);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("using Vulkan device"), std::string::npos) << text;
  EXPECT_NE(text.find("3 pipelines"), std::string::npos) << text;
  // Installed here by setup.sh; where it is not, the runtime says so and goes on.
  EXPECT_NE(text.find(ValidationLayerInstalled() ? "validation layer enabled"
                                                 : "validation requested but VK_LAYER_KHRONOS_validation is not installed"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("[validation]"), std::string::npos) << text;
  // The cache goes through a temporary file of the process's own, renamed
  // over it: none is left behind.
  std::string listing;
  FILE* p = popen(("ls -a '" + g_tmpdir + "'").c_str(), "r");
  ASSERT_NE(p, nullptr);
  char line[512];
  while (fgets(line, sizeof line, p)) listing += line;
  pclose(p);
  EXPECT_EQ(listing.find(".tmp"), std::string::npos) << listing;
}

// A pipeline cache that cannot be written is a warning naming the path and
// the reason, not a failure.
TEST_F(Runtime, UnwritablePipelineCacheIsAWarningWithTheReason) {
  const std::string log = g_tmpdir + "/cache-warning.log", cache = g_tmpdir + "/no-such-dir/pipelines.bin";
  ASSERT_EQ(Init({{"log_level", "3"}, {"log_file", log}, {"pipeline_cache", cache}}), 0) << g_api->error();
  std::vector<float> w, b;
  LoadAffine(13, &w, &b);
  ASSERT_EQ(Destroy(), 0) << g_api->error();
  std::ifstream in(log);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("pipeline cache '" + cache + "': cannot create"), std::string::npos) << text;
  EXPECT_NE(text.find("No such file or directory (the cache is not saved)"), std::string::npos) << text;
}

// The files of `dir` (none when it does not exist).
std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d))
      if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) out.push_back(e->d_name);
    closedir(d);
  }
  return out;
}

// Loads `bundle` with the pipeline cache `cache` (a file), runs it once and
// destroys: the child process of PipelineCacheIsSharedByProcessesLoadingAtOnce
// (runtime_tests --pipeline-cache-child BUNDLE CACHE). 0 on success.
int PipelineCacheChild(const char* bundle, const char* cache) {
  void* h = dlopen(OAAXVK_RUNTIME_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  if (!h) return 2;
  Api api;
  Sym(h, "runtime_initialization_with_args", &api.init_args);
  Sym(h, "runtime_model_loading", &api.load);
  Sym(h, "send_input", &api.send);
  Sym(h, "receive_output", &api.receive);
  Sym(h, "runtime_destruction", &api.destroy);
  Sym(h, "runtime_error_message", &api.error);
  const char* keys[] = {"pipeline_cache", "log_level"};
  const void* values[] = {cache, "5"};
  tensors_struct* out = nullptr;
  if (api.init_args(2, keys, values) != 0 || api.load(bundle) != 0 ||
      api.send(MakeTensors({"x"}, {{1, 13}}, {Random(13, 5)})) != 0 || api.receive(&out) != 0) {
    fprintf(stderr, "pipeline cache child: %s\n", api.error());
    return 1;
  }
  DeepFree(out);
  return api.destroy() == 0 ? 0 : 1;
}

// The pipeline cache is on by default: one file per bundle, device and
// driver under $XDG_CACHE_HOME/oaax-vulkan, written by the first load and
// read by the second.
TEST_F(Runtime, PipelineCacheIsOnByDefaultAndReadByTheSecondLoad) {
  const std::string xdg = g_tmpdir + "/xdg";
  const char* old = getenv("XDG_CACHE_HOME");
  const std::string saved = old ? old : "";
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(round);
    // pipeline_cache_dir "" = the default directory; XDG_CACHE_HOME only
    // around the load (the driver reads it for its own cache at initialization).
    const std::string log = g_tmpdir + "/cache-default-" + std::to_string(round) + ".log";
    ASSERT_EQ(Init({{"pipeline_cache_dir", ""}, {"log_level", "2"}, {"log_file", log}}), 0) << g_api->error();
    setenv("XDG_CACHE_HOME", xdg.c_str(), 1);
    std::vector<float> w, b;
    LoadAffine(13, &w, &b);
    if (old) setenv("XDG_CACHE_HOME", saved.c_str(), 1); else unsetenv("XDG_CACHE_HOME");
    RunAffineOnce(13, w, b, 3);
    ASSERT_EQ(Destroy(), 0) << g_api->error();
    const std::vector<std::string> files = ListDir(xdg + "/oaax-vulkan");
    ASSERT_EQ(files.size(), 1u) << "one cache file, no temporary left";
    EXPECT_NE(files[0].find(".vkpc"), std::string::npos) << files[0];
  }
  const std::string file = xdg + "/oaax-vulkan/" + ListDir(xdg + "/oaax-vulkan")[0];
  const std::string first = ReadFile(g_tmpdir + "/cache-default-0.log");
  EXPECT_EQ(LinesWith(first, "pipeline cache '" + file + "': starting empty").size(), 1u) << first;
  EXPECT_EQ(LinesWith(first, "pipeline cache '" + file + "': saved ").size(), 1u) << first;
  EXPECT_EQ(LinesWith(first, "3 pipelines created in ").size(), 1u) << first;
  const std::string second = ReadFile(g_tmpdir + "/cache-default-1.log");
  EXPECT_EQ(LinesWith(second, "pipeline cache '" + file + "': read ").size(), 1u) << second;
  EXPECT_EQ(LinesWith(second, "3 pipelines created in ").size(), 1u) << second;
  EXPECT_EQ(second.find("ignored"), std::string::npos) << second;
}

// A corrupt, truncated or foreign cache file is ignored with a warning that
// says why, never a failure, and replaced by a good one.
TEST_F(Runtime, UnusablePipelineCacheFilesAreIgnoredAndReplaced) {
  const std::string cache = g_tmpdir + "/unusable.vkpc";
  std::vector<float> w, b;
  auto load = [&](const std::string& log) {
    ASSERT_EQ(Init({{"pipeline_cache", cache}, {"log_level", "2"}, {"log_file", log}}), 0) << g_api->error();
    LoadAffine(13, &w, &b);
    RunAffineOnce(13, w, b, 4);
    ASSERT_EQ(Destroy(), 0) << g_api->error();
  };
  {  // not a cache at all
    std::ofstream(cache, std::ios::binary) << "garbage that no driver should ever see";
    load(g_tmpdir + "/unusable-0.log");
    const std::string text = ReadFile(g_tmpdir + "/unusable-0.log");
    EXPECT_EQ(LinesWith(text, "pipeline cache '" + cache + "' ignored: not a pipeline cache of this runtime").size(), 1u)
        << text;
    // (plus one saying the validation layer is missing, where it is)
    EXPECT_EQ(LinesWith(text, "[warn]").size(), ValidationLayerInstalled() ? 1u : 2u) << text;
  }
  const std::string good = ReadFile(cache);
  ASSERT_GT(good.size(), 64u) << "a header and the driver's data";
  struct Case {
    const char* name;
    std::string bytes;
    const char* expect;
  };
  std::string flipped = good, truncated = good.substr(0, good.size() - 1), extended = good + "x";
  flipped[good.size() - 1] = static_cast<char>(flipped[good.size() - 1] ^ 0x5a);
  std::string other_bundle = good;
  other_bundle[40] = static_cast<char>(other_bundle[40] ^ 1);  // the header's bundle hash
  std::string other_driver = good;
  other_driver[20] = static_cast<char>(other_driver[20] ^ 1);  // the header's driver version
  const Case cases[] = {
      {"corrupt", flipped, "corrupt (its data does not match the header's checksum)"},
      {"truncated", truncated, "truncated or extended"},
      {"extended", extended, "truncated or extended"},
      {"other bundle", other_bundle, "written for other kernels"},
      {"other driver", other_driver, "written for device "},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    const Case& c = cases[i];
    SCOPED_TRACE(c.name);
    std::ofstream(cache, std::ios::binary | std::ios::trunc) << c.bytes;
    const std::string log = g_tmpdir + "/unusable-" + std::to_string(i + 1) + ".log";
    load(log);
    const std::string text = ReadFile(log);
    EXPECT_EQ(LinesWith(text, "pipeline cache '" + cache + "' ignored: " + c.expect).size(), 1u) << text;
    const std::string replaced = ReadFile(cache);
    EXPECT_EQ(replaced.compare(0, 8, "OAXVKPC1"), 0) << "the file is replaced by a cache";
    EXPECT_NE(replaced, c.bytes);
  }
  load(g_tmpdir + "/unusable-last.log");  // the replaced file is read, not ignored
  const std::string text = ReadFile(g_tmpdir + "/unusable-last.log");
  EXPECT_EQ(LinesWith(text, "pipeline cache '" + cache + "': read ").size(), 1u) << text;
  EXPECT_EQ(text.find("ignored"), std::string::npos) << text;
}

// pipeline_cache=off: no file is read or written anywhere.
TEST_F(Runtime, DisabledPipelineCacheWritesNothing) {
  const std::string dir = g_tmpdir + "/cache-off", log = g_tmpdir + "/cache-off.log";
  for (const char* off : {"off", "0"}) {
    SCOPED_TRACE(off);
    ASSERT_EQ(Init({{"pipeline_cache", off}, {"pipeline_cache_dir", dir}, {"log_level", "2"}, {"log_file", log}}), 0)
        << g_api->error();
    std::vector<float> w, b;
    LoadAffine(13, &w, &b);
    RunAffineOnce(13, w, b, 5);
    ASSERT_EQ(Destroy(), 0) << g_api->error();
    EXPECT_EQ(access(dir.c_str(), F_OK), -1) << "nothing created";
  }
  const std::string text = ReadFile(log);
  EXPECT_EQ(LinesWith(text, "no pipeline cache: pipeline_cache=off").size(), 1u) << text;
  EXPECT_EQ(LinesWith(text, "no pipeline cache: pipeline_cache=0").size(), 1u) << text;
  EXPECT_EQ(LinesWith(text, "3 pipelines created in ").size(), 2u) << text;
  EXPECT_EQ(text.find("through the pipeline cache"), std::string::npos) << text;
}

// Two processes loading one bundle at once with one cache file: both load
// and run, and the file left is a whole cache that the next load reads.
TEST_F(Runtime, PipelineCacheIsSharedByProcessesLoadingAtOnce) {
  std::vector<float> w = Random(13, 113), b = Random(13, 213);
  const std::string bundle = Write(oaaxvk::test::AffineReluBundle(13, w, b), "shared-cache");
  const std::string dir = g_tmpdir + "/shared-cache", cache = dir + "/pipelines.vkpc";
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  ASSERT_GT(n, 0);
  self[n] = '\0';
  // The children check the file sharing; memory is checked by this process's
  // tests. Under ASan their leak check is off: lavapipe's ICD, unloaded by
  // the loader at vkDestroyInstance, leaves an allocation that LeakSanitizer
  // can only attribute to an unknown module (so no suppression can name it).
  std::vector<std::string> env_strings;
  bool asan_options = false;
  for (char** e = environ; *e != nullptr; ++e) {
    env_strings.emplace_back(*e);
    if (env_strings.back().rfind("ASAN_OPTIONS=", 0) == 0) {
      env_strings.back() += ":detect_leaks=0";
      asan_options = true;
    }
  }
  if (!asan_options) env_strings.emplace_back("ASAN_OPTIONS=detect_leaks=0");
  std::vector<char*> child_env;
  for (std::string& e : env_strings) child_env.push_back(e.data());
  child_env.push_back(nullptr);
  for (int round = 0; round < 2; ++round) {  // round 0: no file yet; round 1: both read it
    SCOPED_TRACE(round);
    pid_t pids[2];
    for (pid_t& pid : pids) {
      char* argv[] = {self, const_cast<char*>("--pipeline-cache-child"), const_cast<char*>(bundle.c_str()),
                      const_cast<char*>(cache.c_str()), nullptr};
      ASSERT_EQ(posix_spawn(&pid, self, nullptr, nullptr, argv, child_env.data()), 0);
    }
    for (pid_t pid : pids) {
      int status = 0;
      ASSERT_EQ(waitpid(pid, &status, 0), pid);
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
    }
    EXPECT_EQ(ListDir(dir), std::vector<std::string>{"pipelines.vkpc"}) << "no temporary file left";
  }
  const std::string log = g_tmpdir + "/shared-cache.log";
  ASSERT_EQ(Init({{"pipeline_cache", cache}, {"log_level", "2"}, {"log_file", log}}), 0) << g_api->error();
  ASSERT_EQ(g_api->load(bundle.c_str()), 0) << g_api->error();
  RunAffineOnce(13, w, b, 6);
  ASSERT_EQ(Destroy(), 0) << g_api->error();
  const std::string text = ReadFile(log);
  EXPECT_EQ(LinesWith(text, "pipeline cache '" + cache + "': read ").size(), 1u) << text;
  EXPECT_EQ(text.find("ignored"), std::string::npos) << text;
}

// Identical pipelines are created once: a dispatch repeated with the same
// kernel and specialization values, and a kernel whose SPIR-V and binding
// types equal another's, share one pipeline. relu(relu(relu(t))) = relu(t).
TEST_F(Runtime, IdenticalPipelinesAreCreatedOnceAndShared) {
  const uint32_t n = 13;
  std::vector<float> w = Random(n, 114), b = Random(n, 214);
  BundleSpec s = oaaxvk::test::AffineReluBundle(n, w, b);
  const uint64_t bytes = 4ull * n, a = oaaxvk::test::Align256(bytes);
  s.kernels.push_back({"relu_copy", oaaxvk::test::ReadSpirv("relu"), 2, 1});  // kernel 3 = kernel 2
  s.arena_bytes = 3 * a + bytes;
  // relu: t2 -> t3; relu_copy: t3 -> t4; relu: t4 -> y.
  s.bindings.resize(6);
  s.bindings.push_back({1, a, bytes});
  s.bindings.push_back({1, 2 * a, bytes});
  s.bindings.push_back({1, 2 * a, bytes});
  s.bindings.push_back({1, 3 * a, bytes});
  s.bindings.push_back({1, 3 * a, bytes});
  s.bindings.push_back({3, 0, bytes});
  s.spec = {n, n, n, n, n};
  const uint32_t g = s.dispatch[0][1];
  s.dispatch.resize(2);
  s.dispatch.push_back({2, g, 1, 1, 6, 2, 2, 1});
  s.dispatch.push_back({3, g, 1, 1, 8, 2, 3, 1});
  s.dispatch.push_back({2, g, 1, 1, 10, 2, 4, 1});
  s.barrier = {0, 1, 1, 1, 1};
  const std::string log = g_tmpdir + "/dedupe.log";
  ASSERT_EQ(Init({{"log_level", "2"}, {"log_file", log}}), 0) << g_api->error();
  ASSERT_EQ(g_api->load(Write(s, "dedupe").c_str()), 0) << g_api->error();
  RunAffineOnce(n, w, b, 7);  // checks against relu(x * w + b)
  ASSERT_EQ(Destroy(), 0) << g_api->error();
  const std::string text = ReadFile(log);
  EXPECT_EQ(LinesWith(text, "3 pipelines created in ").size(), 1u) << text;
  EXPECT_EQ(LinesWith(text, "(1 kernels identical to another share its pipelines)").size(), 1u) << text;
  EXPECT_EQ(LinesWith(text, "4 kernels, 5 dispatches, 3 pipelines").size(), 1u) << text;
  EXPECT_EQ(LinesWith(text, "each of 3 pipelines dispatched once").size(), 1u) << text;
}

// runtime_version may be called from any thread at any time: while another
// thread initializes and destroys, every text it returns is whole.
TEST_F(Runtime, VersionIsWholeWhileAnotherThreadInitializesAndDestroys) {
  std::atomic<bool> stop{false};
  std::atomic<int> torn{0};
  std::thread reader([&] {
    while (!stop) {
      const std::string v = g_api->version();
      if (v.rfind(OAAXVK_PROJECT_VERSION " (", 0) != 0 || v.back() != ')') ++torn;
    }
  });
  for (int round = 0; round < 3; ++round) {
    ASSERT_EQ(Init(), 0) << g_api->error();
    ASSERT_EQ(Destroy(), 0) << g_api->error();
  }
  stop = true;
  reader.join();
  EXPECT_EQ(torn.load(), 0);
}


// ---------------------------------------------------------------- profile

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The log lines containing `needle`.
std::vector<std::string> LinesWith(const std::string& text, const std::string& needle) {
  std::vector<std::string> out;
  std::istringstream ss(text);
  std::string line;
  while (std::getline(ss, line))
    if (line.find(needle) != std::string::npos) out.push_back(line);
  return out;
}

// "... dispatch 2: 12.5 us kernel ..." → 12.5 (-1 when malformed).
double MicrosecondsOf(const std::string& line) {
  const size_t colon = line.find(": ", line.find(" dispatch "));
  if (colon == std::string::npos) return -1;
  char* end = nullptr;
  const double v = strtod(line.c_str() + colon + 2, &end);
  return end && strncmp(end, " us ", 4) == 0 ? v : -1;
}

TEST_F(Runtime, ProfileLogsEveryDispatchAndLeavesResultsUnchanged) {
  const std::string log = g_tmpdir + "/profile.log";
  ASSERT_EQ(Init({{"profile", "1"}, {"log_level", "2"}, {"log_file", log}}), 0) << g_api->error();
  std::vector<float> w, b;
  LoadAffine(127, &w, &b);
  for (uint32_t seed = 1; seed <= 2; ++seed) RunAffineOnce(127, w, b, seed);  // checks against the CPU reference
  ASSERT_EQ(Destroy(), 0) << g_api->error();
  const std::string text = ReadFile(log);
  if (text.find("profiling is unavailable") != std::string::npos) {
    // A driver without timestamps on its compute queue: the warning is the contract.
    GTEST_SKIP() << "the device has no timestamps on its compute queue; the runtime said so: " << text;
  }
  EXPECT_NE(text.find("profiling every dispatch"), std::string::npos) << text;
  const char* kernels[] = {"mul", "add", "relu"};
  for (int frame = 0; frame < 2; ++frame) {
    SCOPED_TRACE(frame);
    const std::string prefix = "profile frame #" + std::to_string(frame);
    std::vector<std::string> lines = LinesWith(text, prefix + " dispatch ");
    ASSERT_EQ(lines.size(), 3u) << text;  // one line per dispatch, not the warm-up's
    for (int i = 0; i < 3; ++i) {
      const std::string& l = lines[i];
      EXPECT_NE(l.find("[info]"), std::string::npos) << l;
      EXPECT_NE(l.find(" dispatch " + std::to_string(i) + ": "), std::string::npos) << l;
      EXPECT_NE(l.find(std::string("kernel '") + kernels[i] + "' (#" + std::to_string(i) + ")"), std::string::npos) << l;
      EXPECT_NE(l.find("groups (2, 1, 1)"), std::string::npos) << l;
      EXPECT_NE(l.find("op '/node/" + std::to_string(i) + "'"), std::string::npos) << l;
      EXPECT_GE(MicrosecondsOf(l), 0.0) << l;
    }
    EXPECT_EQ(LinesWith(text, prefix + ": 3 dispatches").size(), 1u) << text;
    EXPECT_EQ(LinesWith(text, prefix + " top ").size(), 3u) << text;     // min(15, dispatches)
    EXPECT_EQ(LinesWith(text, prefix + " kernel '").size(), 3u) << text;  // one total per kernel
  }
  EXPECT_TRUE(LinesWith(text, "profile frame #2").empty()) << text;
}

TEST_F(Runtime, ProfileTimeOfASlowDispatchIsWithinTheFrameWallTime) {
  using Clock = std::chrono::steady_clock;
  const std::string log = g_tmpdir + "/profile-spin.log";
  ASSERT_EQ(Init({{"profile", "1"}, {"log_level", "2"}, {"log_file", log}, {"receive_timeout_ms", "60000"}}), 0)
      << g_api->error();
  const uint32_t n = 1024;
  ASSERT_EQ(g_api->load(Write(oaaxvk::test::SpinBundle(n, 20000), "spin-profile").c_str()), 0) << g_api->error();
  const auto sent = Clock::now();
  ASSERT_EQ(g_api->send(MakeTensors({"x"}, {{1, n}}, {Random(n, 5)})), 0) << g_api->error();
  tensors_struct* out = nullptr;
  ASSERT_EQ(g_api->receive(&out), 0) << g_api->error();
  const double wall_us = std::chrono::duration<double, std::micro>(Clock::now() - sent).count();
  DeepFree(out);
  ASSERT_EQ(Destroy(), 0) << g_api->error();
  const std::string text = ReadFile(log);
  if (text.find("profiling is unavailable") != std::string::npos)
    GTEST_SKIP() << "the device has no timestamps on its compute queue; the runtime said so: " << text;
  std::vector<std::string> lines = LinesWith(text, "profile frame #0 dispatch ");
  ASSERT_EQ(lines.size(), 1u) << text;
  const double us = MicrosecondsOf(lines[0]);
  // 20000 dependent multiply-adds per element: far from zero, and it ran
  // between send_input and receive_output.
  EXPECT_GT(us, 0.0) << lines[0];
  EXPECT_LE(us, wall_us) << lines[0];
}

TEST_F(Runtime, ProfileOffLogsNoProfileAndBadValueIsRejected) {
  const std::string log = g_tmpdir + "/no-profile.log";
  ASSERT_EQ(Init({{"log_level", "2"}, {"log_file", log}}), 0) << g_api->error();
  std::vector<float> w, b;
  LoadAffine(13, &w, &b);
  RunAffineOnce(13, w, b, 1);
  ASSERT_EQ(Destroy(), 0) << g_api->error();
  const std::string text = ReadFile(log);
  EXPECT_NE(text.find("loaded '"), std::string::npos) << text;  // info lines are there
  EXPECT_EQ(text.find("profil"), std::string::npos) << text;
  ExpectError(Init({{"profile", "2"}}), {"runtime_initialization_with_args", "'profile'", "'2'", "expected 0 or 1"});
}


// ---------------------------------------------------------------- dynamic shapes
//
// Bundle feature dynamic_shapes (docs/bundle-format.md, "Dynamic shapes"):
// test bundles from test_bundles.h (DynamicAffineBundle: x, y [1, N];
// DynamicRowSumBundle: x [R, L] -> y [R]) and variations built here.

using oaaxvk::test::DynamicAffineBundle;
using oaaxvk::test::DynamicRowSumBundle;
using oaaxvk::test::kOpAdd;
using oaaxvk::test::kOpCeilDiv;
using oaaxvk::test::kOpConst;
using oaaxvk::test::kOpFloorDiv;
using oaaxvk::test::kOpMul;
using oaaxvk::test::kOpSub;
using oaaxvk::test::kOpSymbol;
using oaaxvk::test::kRefGuard;
using oaaxvk::test::kRefGroups;
using oaaxvk::test::kRefInput;
using oaaxvk::test::kRefOutput;
using oaaxvk::test::kRefSpec;
using oaaxvk::test::kRefParam;

// One received output: its name, shape and float32 values.
struct Output {
  std::string name;
  std::vector<size_t> shape;
  std::vector<float> values;
};

// Receives one frame (empty after a failed assertion).
std::vector<Output> ReceiveOutputs() {
  std::vector<Output> outs;
  tensors_struct* out = nullptr;
  if (g_api->receive(&out) != 0 || !out) {
    ADD_FAILURE() << g_api->error();
    return outs;
  }
  for (size_t i = 0; i < out->num_tensors; ++i) {
    Output o;
    o.name = out->names[i];
    o.shape.assign(out->shapes[i], out->shapes[i] + out->ranks[i]);
    size_t numel = 1;
    for (size_t d : o.shape) numel *= d;
    EXPECT_EQ(out->data_types[i], DATA_TYPE_FLOAT);
    const float* p = static_cast<const float*>(out->data[i]);
    o.values.assign(p, p + numel);
    outs.push_back(std::move(o));
  }
  DeepFree(out);
  return outs;
}

// relu(x * w + b) over the first x.size() weights.
std::vector<float> AffineReluPrefix(const std::vector<float>& x, const std::vector<float>& w,
                                    const std::vector<float>& b) {
  return AffineRelu(x, std::vector<float>(w.begin(), w.begin() + x.size()),
                    std::vector<float>(b.begin(), b.begin() + x.size()));
}

// Sends x [1, n] to a loaded DynamicAffineBundle (asserting success).
void SendAffine(const std::vector<float>& x) {
  const size_t n = x.size();
  ASSERT_EQ(g_api->send(MakeTensors({"x"}, {{1, n}}, {x})), 0) << "N = " << n << ": " << g_api->error();
}

// Receives one frame of a DynamicAffineBundle and checks it against the
// reference for x.
void ExpectAffineOutput(const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& b) {
  const size_t n = x.size();
  std::vector<Output> outs = ReceiveOutputs();
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_EQ(outs[0].name, "y");
  ASSERT_EQ(outs[0].shape, (std::vector<size_t>{1, n}));
  const std::vector<float> ref = AffineReluPrefix(x, w, b);
  for (size_t i = 0; i < n; ++i) ASSERT_NEAR(outs[0].values[i], ref[i], 1e-6f) << "element " << i << " at N = " << n;
}

class DynamicShapes : public Runtime {
 protected:
  void ExpectRejected(tensors_struct* t, std::initializer_list<const char*> fragments) {
    ASSERT_NE(t, nullptr);
    ExpectError(g_api->send(t), fragments);
    // Still the host's: the struct is intact (names, shapes, data).
    EXPECT_NE(t->names[0], nullptr);
    DeepFree(t);
  }
  void LoadDynamicAffine(uint32_t min, uint32_t max, uint32_t multiple, const std::string& name) {
    w_ = Random(max, 11);
    b_ = Random(max, 12);
    ASSERT_EQ(g_api->load(Write(DynamicAffineBundle(min, max, multiple, w_, b_), name).c_str()), 0) << g_api->error();
  }
  void RoundTrip(size_t n, uint32_t seed) {
    std::vector<float> x = Random(n, seed);
    SendAffine(x);
    ExpectAffineOutput(x, w_, b_);
  }
  std::vector<float> w_, b_;
};

TEST_F(DynamicShapes, OutputsHaveTheActualShapeAtMinMaxAndOddShapes) {
  ASSERT_EQ(Init(), 0) << g_api->error();
  LoadDynamicAffine(1, 1000, 1, "dyn_affine");
  for (size_t n : {size_t{1}, size_t{1000}, size_t{13}, size_t{999}, size_t{64}, size_t{65}, size_t{1}, size_t{1000}}) {
    SCOPED_TRACE(n);
    RoundTrip(n, static_cast<uint32_t>(n));
  }
}

// A symbol whose range holds 0: at N = 0 the input travels in 0 bytes (a NULL
// data pointer), the dispatch (0 groups) does not run, and the output comes
// back as [1, 0] in 0 bytes; frames of other sizes before and after are exact.
TEST_F(DynamicShapes, AZeroExtentTravelsInZeroBytes) {
  ASSERT_EQ(Init(), 0) << g_api->error();
  LoadDynamicAffine(0, 128, 1, "dyn_affine_zero");
  RoundTrip(5, 5);
  for (int k = 0; k < 2; ++k) {
    tensors_struct* t = MakeTensors({"x"}, {{1, 0}}, {std::vector<float>()});
    ASSERT_NE(t, nullptr);
    std::free(t->data[0]);
    t->data[0] = nullptr;  // 0 bytes: no data is needed
    ASSERT_EQ(g_api->send(t), 0) << g_api->error();
    std::vector<Output> outs = ReceiveOutputs();
    ASSERT_EQ(outs.size(), 1u);
    EXPECT_EQ(outs[0].name, "y");
    EXPECT_EQ(outs[0].shape, (std::vector<size_t>{1, 0}));
    EXPECT_TRUE(outs[0].values.empty());
  }
  RoundTrip(128, 128);
  RoundTrip(1, 1);
}

TEST_F(DynamicShapes, TwoSymbolsWithMultipleOfAndAnOutputExpression) {
  ASSERT_EQ(Init(), 0) << g_api->error();
  ASSERT_EQ(g_api->load(Write(DynamicRowSumBundle(1, 200, 4, 64, 4), "dyn_rowsum").c_str()), 0) << g_api->error();
  for (auto [r, l] : std::vector<std::pair<size_t, size_t>>{{1, 4}, {200, 64}, {37, 28}, {65, 60}, {1, 64}}) {
    SCOPED_TRACE(std::to_string(r) + " x " + std::to_string(l));
    std::vector<float> x = SmallIntegers(r * l, static_cast<uint32_t>(r * 1000 + l));
    ASSERT_EQ(g_api->send(MakeTensors({"x"}, {{r, l}}, {x})), 0) << g_api->error();
    std::vector<Output> outs = ReceiveOutputs();
    ASSERT_EQ(outs.size(), 1u);
    ASSERT_EQ(outs[0].shape, std::vector<size_t>{r});
    for (size_t i = 0; i < r; ++i) {
      float sum = 0;
      for (size_t k = 0; k < l; ++k) sum += x[i * l + k];
      ASSERT_EQ(outs[0].values[i], sum) << "row " << i;
    }
  }
  ExpectRejected(MakeTensors({"x"}, {{8, 30}}, {std::vector<float>(240)}),
                 {"input tensor 'x': dimension 1 (L) is 30, not a multiple of 4 (L's range [4, 64] (multiple of 4))"});
  ExpectRejected(MakeTensors({"x"}, {{8, 68}}, {std::vector<float>(8 * 68)}),
                 {"input tensor 'x': dimension 1 (L) is 68, outside L's range [4, 64] (multiple of 4)"});
  ExpectRejected(MakeTensors({"x"}, {{0, 8}}, {std::vector<float>()}),
                 {"input tensor 'x': dimension 0 (R) is 0, outside R's range [1, 200]"});
}

TEST_F(DynamicShapes, InputShapesAreCheckedAgainstRangesAndStaticDimensions) {
  ASSERT_EQ(Init(), 0) << g_api->error();
  LoadDynamicAffine(32, 960, 32, "dyn_affine_32");
  ExpectRejected(MakeTensors({"x"}, {{1, 1000}}, {std::vector<float>(1000)}),
                 {"send_input", "input tensor 'x': dimension 1 (N) is 1000, outside N's range [32, 960] (multiple of 32)"});
  ExpectRejected(MakeTensors({"x"}, {{1, 16}}, {std::vector<float>(16)}),
                 {"input tensor 'x': dimension 1 (N) is 16, outside N's range [32, 960] (multiple of 32)"});
  ExpectRejected(MakeTensors({"x"}, {{1, 100}}, {std::vector<float>(100)}),
                 {"input tensor 'x': dimension 1 (N) is 100, not a multiple of 32 (N's range [32, 960] (multiple of 32))"});
  ExpectRejected(MakeTensors({"x"}, {{2, 64}}, {std::vector<float>(128)}),
                 {"input tensor 'x': shape [2, 64], the model expects [1, N] (dimension 0 must be 1)"});
  ExpectRejected(MakeTensors({"x"}, {{1, 64, 1}}, {std::vector<float>(64)}),
                 {"input tensor 'x': rank 3, the model expects rank 2 (shape [1, N])"});
  // Nothing was queued: the next frame is the first.
  tensors_struct* out = nullptr;
  ExpectError(g_api->receive(&out), {"no pending input"});
  RoundTrip(32, 1);
  RoundTrip(960, 2);
  RoundTrip(352, 3);
}

TEST_F(DynamicShapes, ASymbolMustBeEqualWhereverItOccurs) {
  ASSERT_EQ(Init(), 0) << g_api->error();
  ASSERT_EQ(g_api->load(Write(oaaxvk::test::DynamicTwoInTwoOutBundle(100), "dyn_two").c_str()), 0) << g_api->error();
  const std::string img = "\xe7\x94\xbb\xe5\x83\x8f";
  ExpectRejected(MakeTensors({"input:0", img}, {{1, 7}, {5}}, {std::vector<float>(7), std::vector<float>(5)}),
                 {"input tensor '\xe7\x94\xbb\xe5\x83\x8f': dimension 0 (N) is 5, but input tensor 'input:0' dimension 1 "
                  "gives N = 7; every occurrence of N must be equal"});
  for (size_t n : {size_t{7}, size_t{100}, size_t{1}}) {
    SCOPED_TRACE(n);
    std::vector<float> a = Random(n, 1), c = Random(n, 2);
    ASSERT_EQ(g_api->send(MakeTensors({img, "input:0"}, {{n}, {1, n}}, {c, a})), 0) << g_api->error();
    std::vector<Output> outs = ReceiveOutputs();
    ASSERT_EQ(outs.size(), 2u);
    EXPECT_EQ(outs[0].name, "sum/out");
    EXPECT_EQ(outs[1].name, "prod:0");
    ASSERT_EQ(outs[0].shape, std::vector<size_t>{n});
    ASSERT_EQ(outs[1].shape, (std::vector<size_t>{1, n}));
    for (size_t i = 0; i < n; ++i) {
      ASSERT_EQ(outs[0].values[i], a[i] + c[i]);
      ASSERT_EQ(outs[1].values[i], a[i] * c[i]);
    }
  }
}

TEST_F(DynamicShapes, InvalidShapeProgramsAreRejectedAtLoad) {
  ASSERT_EQ(Init(), 0) << g_api->error();
  std::vector<float> w(128, 1.0f), b(128, 0.0f);
  const BundleSpec base = DynamicAffineBundle(1, 128, 1, w, b);
  struct Case {
    const char* name;
    void (*mutate)(BundleSpec*);
    const char* expect;
  };
  const Case cases[] = {
      {"no_feature", [](BundleSpec* s) { s->features = ""; },
       "metadata 'shape.symbols' is present but bundle.features does not list 'dynamic_shapes'"},
      {"operand_not_earlier", [](BundleSpec* s) { s->shape_program[2] = {kOpCeilDiv, 0, 2}; },
       "shape.program row 2 (ceildiv): operand b = 2 is not an earlier instruction (must be in [0, 2))"},
      {"unknown_opcode", [](BundleSpec* s) { s->shape_program[1] = {12, 0, 0}; },
       "shape.program row 1: unknown opcode 12"},
      {"symbol_out_of_range", [](BundleSpec* s) { s->shape_program[0] = {kOpSymbol, 1, 0}; },
       "shape.program row 0 (symbol): symbol 1 out of range (shape.symbols = 1)"},
      {"dispatch_row_out_of_range", [](BundleSpec* s) { s->shape_refs[2] = {kRefGroups, 3, 0, 2}; },
       "shape.refs row 2 (kind 0, index 3, sub 0, expr 2): dispatch row out of range (program.dispatch has 3 rows)"},
      {"table_missing", [](BundleSpec* s) { s->shape_refs[2] = {kRefGroups, 0, 3, 2}; },
       "shape.refs row 2 (kind 0, index 0, sub 3, expr 2): the bundle has no program.dispatch.cpu"},
      {"sub_out_of_range", [](BundleSpec* s) { s->shape_refs[2] = {kRefGroups, 0, 9, 2}; },
       "sub must be table * 3 + axis, in [0, 9)"},
      {"input_dim_out_of_range", [](BundleSpec* s) { s->shape_refs[0] = {kRefInput, 0, 2, 0}; },
       "shape.refs row 0 (kind 2, index 0, sub 2, expr 0): input 'x' has rank 2"},
      {"output_out_of_range", [](BundleSpec* s) { s->shape_refs[1] = {kRefOutput, 1, 0, 0}; },
       "output out of range (io.outputs = 1)"},
      {"spec_out_of_range", [](BundleSpec* s) { s->shape_refs[3] = {kRefSpec, 3, 0, 0}; },
       "index out of range (program.spec has 3 values)"},
      {"spec_sub", [](BundleSpec* s) { s->shape_refs[3] = {kRefSpec, 0, 1, 0}; },
       "sub must be 0 for a specialization value"},
      {"expr_out_of_range", [](BundleSpec* s) { s->shape_refs[1] = {kRefOutput, 0, 1, 7}; },
       "shape.refs row 1 (kind 3, index 0, sub 1, expr 7): instruction out of range (shape.program has 3)"},
      {"unknown_kind", [](BundleSpec* s) { s->shape_refs[1] = {6, 0, 0, 0}; }, "unknown kind"},
      {"guard_without_value_symbols", [](BundleSpec* s) { s->shape_refs[1] = {5, 0, 0, 0}; },
       "guard out of range (shape.guards = 0)"},
      {"duplicate", [](BundleSpec* s) { s->shape_refs.push_back({kRefSpec, 0, 0, 0}); },
       "shape.refs row 8 (kind 1, index 0, sub 0, expr 0): program.spec[0] is already referenced by row 3"},
      {"input_dim_not_symbol", [](BundleSpec* s) { s->shape_refs[0] = {kRefInput, 0, 1, 2}; },
       "input 'x' dimension 1 must evaluate a symbol instruction, but instruction 2 is ceildiv"},
      {"symbol_undetermined", [](BundleSpec* s) { s->shape_refs.erase(s->shape_refs.begin()); },
       "symbol 0 ('N') is no input dimension (no shape.refs row of kind 2 evaluates it), so the input shapes cannot "
       "determine it"},
      {"stored_groups", [](BundleSpec* s) { s->dispatch[1][1] = 3; },
       "group count x of program.dispatch row 1 evaluates to 2 (instruction 2) at the maximum shape (N = 128) but the "
       "bundle stores 3"},
      {"stored_spec", [](BundleSpec* s) { s->spec[2] = 5; },
       "program.spec[2] evaluates to 128 (instruction 0) at the maximum shape (N = 128) but the bundle stores 5"},
      {"stored_output_dim",
       [](BundleSpec* s) {
         s->outputs[0].shape = {1, 64};
         s->outputs[0].nbytes = 256;
       },
       "output 'y' dimension 1 evaluates to 128 (instruction 0) at the maximum shape (N = 128) but the bundle stores 64"},
      {"symbol_range", [](BundleSpec* s) { s->symbols[0].min = 129; },
       "symbol 0 ('N'): range [129, 128] with multiple_of 1 is invalid"},
      {"symbol_multiple", [](BundleSpec* s) { s->symbols[0].multiple_of = 3; },
       "symbol 0 ('N'): range [1, 128] with multiple_of 3 is invalid"},
      {"sizevar_value",
       [](BundleSpec* s) { s->sizevars = std::vector<std::pair<std::string, uint64_t>>{{"N", 100}}; },
       "symbol 0 ('N'): sizevar 'N' = 100 but shape.symbol.0.max = 128"},
      {"sizevar_missing", [](BundleSpec* s) { s->sizevars = std::vector<std::pair<std::string, uint64_t>>{}; },
       "symbol 0 ('N'): sizevar 'N' is missing"},
      {"overflow_at_max",
       [](BundleSpec* s) {
         s->shape_program.push_back({kOpConst, int64_t{1} << 62, 0});
         s->shape_program.push_back({kOpMul, 0, 3});
       },
       "at the maximum shape: shape program instruction 4 (mul of v[0] = 128 and v[3] = 4611686018427387904): the "
       "result overflows signed 64 bits, at N = 128"},
      {"divisor_at_max",
       [](BundleSpec* s) {
         s->shape_program.push_back({kOpConst, 0, 0});
         s->shape_program.push_back({kOpFloorDiv, 0, 3});
       },
       "shape program instruction 4 (floordiv of v[0] = 128 and v[3] = 0): the divisor is not positive, at N = 128"},
      {"bound_symbolic_input",
       [](BundleSpec* s) {
         s->features = "dynamic_shapes bound_inputs";
         s->inputs[0].bound.assign(s->inputs[0].nbytes, 0);
       },
       "input 'x' is bound at conversion (io.input.0.bound), so its dimensions are static"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    BundleSpec s = base;
    c.mutate(&s);
    const std::string path = Write(s, std::string("dyn_bad_") + c.name);
    ExpectError(g_api->load(path.c_str()), {"runtime_model_loading", path.c_str(), c.expect});
  }
  // The feature is known: the valid bundle loads, and so does a bundle that
  // lists dynamic_shapes without any symbol (a static program).
  ASSERT_EQ(g_api->load(Write(base, "dyn_good").c_str()), 0) << g_api->error();
}

// Feature parameter_buffer: sizes read from the frame's parameter buffer
// need one pipeline for every shape, and two frames in flight at different
// shapes each read their own values.
TEST_F(DynamicShapes, SizesFromTheParameterBufferNeedOnePipelineForEveryShape) {
  const std::string log = g_tmpdir + "/dyn-params.log";
  ASSERT_EQ(Init({{"frames_in_flight", "2"}, {"shape_cache_size", "2"}, {"profile", "1"}, {"log_level", "2"},
                  {"log_file", log}}),
            0)
      << g_api->error();
  ASSERT_EQ(g_api->load(Write(oaaxvk::test::DynamicRowSumParamsBundle(1, 200, 4, 64, 4), "dyn_params").c_str()), 0)
      << g_api->error();
  auto check = [](const std::vector<float>& x, size_t r, size_t l, const Output& out) {
    ASSERT_EQ(out.shape, std::vector<size_t>{r});
    for (size_t i = 0; i < r; ++i) {
      float sum = 0;
      for (size_t k = 0; k < l; ++k) sum += x[i * l + k];
      ASSERT_EQ(out.values[i], sum) << "row " << i << " of " << r << " x " << l;
    }
  };
  const std::vector<std::pair<size_t, size_t>> shapes = {{37, 28}, {200, 64}, {1, 4}, {65, 60}, {37, 28}, {3, 64}};
  // Pairs of frames in flight at once, of different shapes.
  for (size_t i = 0; i + 1 < shapes.size(); i += 2) {
    const auto [r0, l0] = shapes[i];
    const auto [r1, l1] = shapes[i + 1];
    std::vector<float> x0 = SmallIntegers(r0 * l0, static_cast<uint32_t>(i)),
                       x1 = SmallIntegers(r1 * l1, static_cast<uint32_t>(i + 1));
    ASSERT_EQ(g_api->send(MakeTensors({"x"}, {{r0, l0}}, {x0})), 0) << g_api->error();
    ASSERT_EQ(g_api->send(MakeTensors({"x"}, {{r1, l1}}, {x1})), 0) << g_api->error();
    std::vector<Output> o0 = ReceiveOutputs();
    ASSERT_EQ(o0.size(), 1u);
    check(x0, r0, l0, o0[0]);
    std::vector<Output> o1 = ReceiveOutputs();
    ASSERT_EQ(o1.size(), 1u);
    check(x1, r1, l1, o1[0]);
  }
  ASSERT_EQ(Destroy(), 0) << g_api->error();
  const std::string text = ReadFile(log);
  EXPECT_NE(text.find("dynamic shapes: R [1, 200], L [4, 64] (multiple of 4); 0 of 1 dispatches specialized per "
                      "shape, 2 sizes in the parameter buffer"),
            std::string::npos)
      << text;
  // Shapes are still recorded per slot, but every recording uses the one pipeline.
  EXPECT_EQ(LinesWith(text, "1 pipelines alive, at most 1").size(), 1u) << text;
}

TEST_F(DynamicShapes, InvalidParameterSlotsAreRejectedAtLoad) {
  ASSERT_EQ(Init(), 0) << g_api->error();
  const BundleSpec base = oaaxvk::test::DynamicRowSumParamsBundle(1, 200, 4, 64, 4);
  struct Case {
    const char* name;
    void (*mutate)(BundleSpec*);
    const char* expect;
  };
  const Case cases[] = {
      {"params_without_feature", [](BundleSpec* s) { s->features = "dynamic_shapes"; },
       "metadata 'shape.params' is present but bundle.features does not list 'parameter_buffer'"},
      {"slot_out_of_range", [](BundleSpec* s) { s->shape_refs[5] = {kRefParam, 2, 0, 1}; },
       "shape.refs row 5 (kind 4, index 2, sub 0, expr 1): parameter slot out of range (shape.params = 2)"},
      {"slot_sub", [](BundleSpec* s) { s->shape_refs[5] = {kRefParam, 1, 1, 1}; },
       "sub must be 0 for a parameter slot"},
      {"slot_without_ref", [](BundleSpec* s) { s->shape_refs.pop_back(); },
       "parameter slot 1 of shape.params = 2 has no shape.refs row of kind 4"},
      {"too_many_slots", [](BundleSpec* s) { s->shape_params = 4097; },
       "shape.params = 4097 exceeds the parameter buffer's 4096 slots"},
      {"duplicate_slot", [](BundleSpec* s) { s->shape_refs.push_back({kRefParam, 0, 0, 1}); },
       "parameter slot 0 is already referenced by row 4"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    BundleSpec s = base;
    c.mutate(&s);
    const std::string path = Write(s, std::string("dyn_param_bad_") + c.name);
    ExpectError(g_api->load(path.c_str()), {"runtime_model_loading", path.c_str(), c.expect});
  }
  ASSERT_EQ(g_api->load(Write(base, "dyn_param_good").c_str()), 0) << g_api->error();
}

// Sends x (6 floats) and the int64 target shape to a ValueShapedAffineBundle.
tensors_struct* ValueShapedInputs(const std::vector<float>& x, const std::vector<int64_t>& shape) {
  tensors_struct* t = oaaxvk::AllocTensors(2);
  const size_t xs[2] = {1, 6}, ss[1] = {2};
  EXPECT_TRUE(oaaxvk::SetTensor(t, 0, "x", DATA_TYPE_FLOAT, xs, 2, x.data(), 24));
  EXPECT_TRUE(oaaxvk::SetTensor(t, 1, "shape", DATA_TYPE_INT64, ss, 1, shape.data(), 16));
  return t;
}

TEST_F(DynamicShapes, ValueSymbolsAreReadFromInputDataAndGuarded) {
  ASSERT_EQ(Init(), 0) << g_api->error();
  const std::vector<float> w = Random(6, 21), b = Random(6, 22);
  ASSERT_EQ(g_api->load(Write(oaaxvk::test::ValueShapedAffineBundle(w, b), "value_shaped").c_str()), 0)
      << g_api->error();
  const std::vector<float> x = Random(6, 23);
  const std::vector<float> ref = AffineRelu(x, w, b);
  // Every valid target, twice (the second time from the recording cache), and
  // the output comes back at the shape the values give.
  for (int round = 0; round < 2; ++round) {
    for (const std::vector<int64_t>& shape : std::vector<std::vector<int64_t>>{{2, 3}, {3, 2}, {6, 1}, {1, 6}}) {
      SCOPED_TRACE(std::to_string(shape[0]) + "x" + std::to_string(shape[1]));
      ASSERT_EQ(g_api->send(ValueShapedInputs(x, shape)), 0) << g_api->error();
      std::vector<Output> outs = ReceiveOutputs();
      ASSERT_EQ(outs.size(), 1u);
      ASSERT_EQ(outs[0].shape, (std::vector<size_t>{static_cast<size_t>(shape[0]), static_cast<size_t>(shape[1])}));
      for (size_t i = 0; i < 6; ++i) ASSERT_NEAR(outs[0].values[i], ref[i], 1e-6f) << "element " << i;
    }
  }
  // A value outside its range, or one breaking the guard, is refused before anything is queued.
  ExpectRejected(ValueShapedInputs(x, {7, 1}), {"input tensor 'shape': element 0 (shape[0]) is 7, outside shape[0]'s range [1, 6]"});
  ExpectRejected(ValueShapedInputs(x, {2, 2}), {"input values shape[0] = 2, shape[1] = 2: the target shape must hold 6 elements"});
  ExpectRejected(ValueShapedInputs(x, {6, 0}), {"element 1 (shape[1]) is 0, outside shape[1]'s range [1, 6]"});
  // Still usable afterwards.
  ASSERT_EQ(g_api->send(ValueShapedInputs(x, {3, 2})), 0) << g_api->error();
  EXPECT_EQ(ReceiveOutputs().at(0).shape, (std::vector<size_t>{3, 2}));
}

TEST_F(DynamicShapes, InvalidValueSymbolsAreRejectedAtLoad) {
  ASSERT_EQ(Init(), 0) << g_api->error();
  const BundleSpec base = oaaxvk::test::ValueShapedAffineBundle(Random(6, 1), Random(6, 2));
  struct Case {
    const char* name;
    void (*mutate)(BundleSpec*);
    const char* expect;
  };
  const Case cases[] = {
      // (without the feature, an output's stored shape must hold its bytes: [6, 1] here)
      {"without_feature", [](BundleSpec* s) { s->features = "dynamic_shapes"; s->outputs[0].shape = {6, 1}; },
       "metadata 'shape.symbol.0.input' is present but bundle.features does not list 'value_symbols'"},
      {"float_input", [](BundleSpec* s) { s->symbols[0].input = 0; },
       "symbol 0 ('shape[0]'): input 'x' has data type 1; a value symbol reads an int32, int64 or bool input"},
      {"element_out_of_range", [](BundleSpec* s) { s->symbols[1].element = 2; },
       "symbol 1 ('shape[1]'): element 2 of input 'shape', which has 2 elements"},
      {"input_out_of_range", [](BundleSpec* s) { s->symbols[1].input = 5; },
       "symbol 1 ('shape[1]'): shape.symbol.1.input = 5, but io.inputs = 2"},
      {"guard_without_ref", [](BundleSpec* s) { s->shape_refs.pop_back(); },
       "guard 0 of shape.guards = 1 has no shape.refs row of kind 5"},
      {"guard_out_of_range", [](BundleSpec* s) { s->shape_refs.back() = {kRefGuard, 1, 0, 4}; },
       "guard out of range (shape.guards = 1)"},
      {"value_symbol_as_dimension", [](BundleSpec* s) { s->shape_refs.push_back({kRefInput, 0, 1, 0}); },
       "input 'x' dimension 1 evaluates symbol 'shape[0]', which is a value symbol"},
      {"dimension_symbol_above_max", [](BundleSpec* s) { s->symbols[0].input = -1; s->symbols[0].min = 7; },
       "range [7, 6] with multiple_of 1 is invalid"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    BundleSpec s = base;
    c.mutate(&s);
    const std::string path = Write(s, std::string("value_bad_") + c.name);
    ExpectError(g_api->load(path.c_str()), {"runtime_model_loading", path.c_str(), c.expect});
  }
  // eq / lt need the feature too.
  BundleSpec no_feature = base;
  no_feature.features = "dynamic_shapes";
  no_feature.outputs[0].shape = {6, 1};  // without the feature its stored shape must hold nbytes
  for (auto& y : no_feature.symbols) y.input = -1;
  const std::string path = Write(no_feature, "value_bad_eq_without_feature");
  ExpectError(g_api->load(path.c_str()), {"opcode eq needs feature 'value_symbols' in bundle.features"});
  ASSERT_EQ(g_api->load(Write(base, "value_good").c_str()), 0) << g_api->error();
}

// An input that is a value source and has a symbolic dimension: element 1
// exists at the maximum shape [2] but not in a tensor sent as [1]; reading it
// would read past the host's data.
TEST_F(DynamicShapes, AValueSymbolBeyondTheInputAsSentIsRefused) {
  ASSERT_EQ(Init(), 0) << g_api->error();
  const std::vector<float> w = Random(6, 21), b = Random(6, 22);
  ASSERT_EQ(g_api->load(Write(oaaxvk::test::ValueShapedSymbolicLengthBundle(w, b), "value_short").c_str()), 0)
      << g_api->error();
  const std::vector<float> x = Random(6, 23);
  tensors_struct* t = oaaxvk::AllocTensors(2);
  const size_t xs[2] = {1, 6}, ss[1] = {1};
  const int64_t shape[1] = {6};
  ASSERT_TRUE(oaaxvk::SetTensor(t, 0, "x", DATA_TYPE_FLOAT, xs, 2, x.data(), 24));
  ASSERT_TRUE(oaaxvk::SetTensor(t, 1, "shape", DATA_TYPE_INT64, ss, 1, shape, 8));
  ExpectRejected(t, {"input tensor 'shape': value symbol shape[1] is its element 1, but the tensor as sent has 1 "
                     "element(s)"});
  // The full tensor works.
  ASSERT_EQ(g_api->send(ValueShapedInputs(x, {2, 3})), 0) << g_api->error();
  EXPECT_EQ(ReceiveOutputs().at(0).shape, (std::vector<size_t>{2, 3}));
}

// Sends x (6 floats) and the two factors, as float32, float16 or float64, to a
// ScaledValueAffineBundle.
tensors_struct* ScaledValueInputs(const std::vector<float>& x, const std::vector<double>& f, tensor_data_type dtype) {
  tensors_struct* t = oaaxvk::AllocTensors(2);
  const size_t xs[2] = {1, 6}, fs[1] = {2};
  EXPECT_TRUE(oaaxvk::SetTensor(t, 0, "x", DATA_TYPE_FLOAT, xs, 2, x.data(), 24));
  if (dtype == DATA_TYPE_DOUBLE) {
    EXPECT_TRUE(oaaxvk::SetTensor(t, 1, "factors", dtype, fs, 1, f.data(), 16));
  } else if (dtype == DATA_TYPE_FLOAT16) {
    uint16_t h[2];
    for (size_t k = 0; k < 2; ++k)
      h[k] = std::isnan(f[k]) ? 0x7E00 : std::isinf(f[k]) ? (f[k] > 0 ? 0x7C00 : 0xFC00)
                                                          : oaaxvk::test::FloatToHalfBits(static_cast<float>(f[k]));
    EXPECT_TRUE(oaaxvk::SetTensor(t, 1, "factors", dtype, fs, 1, h, 4));
  } else {
    const float v[2] = {static_cast<float>(f[0]), static_cast<float>(f[1])};
    EXPECT_TRUE(oaaxvk::SetTensor(t, 1, "factors", dtype, fs, 1, v, 8));
  }
  return t;
}

TEST_F(DynamicShapes, FloatValueSymbolsAreTheFloorOfTheElementTimesItsScale) {
  const std::vector<float> w = Random(6, 31), b = Random(6, 32), x = Random(6, 33);
  const std::vector<float> ref = AffineRelu(x, w, b);
  struct Valid {
    std::vector<double> f;
    size_t r, c;  // floor(f[0] x 2), floor(f[1] x 3)
  };
  for (tensor_data_type dtype : {DATA_TYPE_FLOAT, DATA_TYPE_FLOAT16, DATA_TYPE_DOUBLE}) {
    SCOPED_TRACE(dtype == DATA_TYPE_FLOAT ? "float32" : dtype == DATA_TYPE_FLOAT16 ? "float16" : "float64");
    if (initialized_) {
      ASSERT_EQ(Destroy(), 0) << g_api->error();
    }
    ASSERT_EQ(Init(), 0) << g_api->error();
    const std::string path =
        Write(oaaxvk::test::ScaledValueAffineBundle(w, b, dtype), "scaled_value_" + std::to_string(dtype));
    ASSERT_EQ(g_api->load(path.c_str()), 0) << g_api->error();
    // Both ends of the ranges, fractions (2.33203125 x 3 = 6.996 gives 6; the
    // element as sent counts: float32(7 / 3) x 3 = 6.99999976, a float64 of
    // 3.4999999999 x 2 = 6.9999999998), every valid target twice (the second
    // time from the recording cache).
    std::vector<Valid> valid = {{{1.0, 1.0}, 2, 3}, {{1.7, 0.7}, 3, 2},      {{3.2, 0.34}, 6, 1},
                                {{0.5, 2.0}, 1, 6}, {{0.9, 2.33203125}, 1, 6}, {{3.0, 0.5}, 6, 1}};
    if (dtype == DATA_TYPE_FLOAT) valid.push_back({{0.75, static_cast<double>(7.0f / 3.0f)}, 1, 6});
    if (dtype == DATA_TYPE_DOUBLE) valid.push_back({{3.4999999999, 0.34}, 6, 1});
    for (int round = 0; round < 2; ++round) {
      for (const Valid& v : valid) {
        SCOPED_TRACE(std::to_string(v.f[0]) + ", " + std::to_string(v.f[1]));
        ASSERT_EQ(g_api->send(ScaledValueInputs(x, v.f, dtype)), 0) << g_api->error();
        std::vector<Output> outs = ReceiveOutputs();
        ASSERT_EQ(outs.size(), 1u);
        ASSERT_EQ(outs[0].shape, (std::vector<size_t>{v.r, v.c}));
        for (size_t i = 0; i < 6; ++i) ASSERT_NEAR(outs[0].values[i], ref[i], 1e-6f) << "element " << i;
      }
    }
    // Out of range (above, below, negative, NaN, infinite), or breaking the guard.
    const double nan = std::nan(""), inf = HUGE_VAL;
    ExpectRejected(ScaledValueInputs(x, {3.5, 1.0}, dtype),
                   {"input tensor 'factors': element 0 (R) is 3.5, which gives floor(3.5 x 2) = 7, outside R's range [1, 6]"});
    ExpectRejected(ScaledValueInputs(x, {0.25, 3.0}, dtype),
                   {"input tensor 'factors': element 0 (R) is 0.25, which gives floor(0.25 x 2) = 0, outside R's range [1, 6]"});
    ExpectRejected(ScaledValueInputs(x, {-0.25, 3.0}, dtype),
                   {"element 0 (R) is -0.25, which gives floor(-0.25 x 2) = -1, outside R's range [1, 6]"});
    ExpectRejected(ScaledValueInputs(x, {nan, 1.0}, dtype),
                   {"element 0 (R) is nan, which gives floor(nan x 2) = nan, outside R's range [1, 6]"});
    ExpectRejected(ScaledValueInputs(x, {1.0, inf}, dtype),
                   {"element 1 (C) is inf, which gives floor(inf x 3) = inf, outside C's range [1, 6]"});
    ExpectRejected(ScaledValueInputs(x, {1.0, 0.7}, dtype),
                   {"input values R = 2, C = 2: the target shape must hold 6 elements"});
    // Still usable afterwards.
    ASSERT_EQ(g_api->send(ScaledValueInputs(x, {1.5, 0.67}, dtype)), 0) << g_api->error();
    EXPECT_EQ(ReceiveOutputs().at(0).shape, (std::vector<size_t>{3, 2}));
  }
}

// Feature exact_value_symbols (a float Range bound read at run time): e x
// scale must be an integer, else send_input refuses the element, naming the
// resolution; floor() then never rounds.
TEST_F(DynamicShapes, ExactValueSymbolsRefuseElementsOffTheirGrid) {
  ASSERT_EQ(Init(), 0) << g_api->error();
  const std::vector<float> w = Random(6, 1), b = Random(6, 2), x = Random(6, 3);  // x [1, 6]
  BundleSpec s = oaaxvk::test::ScaledValueAffineBundle(w, b);
  s.features += " exact_value_symbols";
  s.symbols[0].exact = 1;  // R = e0 x 2: e0 a multiple of 1/2
  const std::string path = Write(s, "exact_value");
  ASSERT_EQ(g_api->load(path.c_str()), 0) << g_api->error();
  ExpectRejected(ScaledValueInputs(x, {1.25, 3.0}, DATA_TYPE_FLOAT),
                 {"input tensor 'factors': element 0 (R) is 1.25, which is not a multiple of 2^-1"});
  // On the grid: accepted; the symbol without .exact still floors (0.67 x 3 = 2.01 gives 2).
  ASSERT_EQ(g_api->send(ScaledValueInputs(x, {1.5, 0.67}, DATA_TYPE_FLOAT)), 0) << g_api->error();
  EXPECT_EQ(ReceiveOutputs().at(0).shape, (std::vector<size_t>{3, 2}));
}

TEST_F(DynamicShapes, InvalidFloatValueSymbolsAreRejectedAtLoad) {
  ASSERT_EQ(Init(), 0) << g_api->error();
  const BundleSpec base = oaaxvk::test::ScaledValueAffineBundle(Random(6, 1), Random(6, 2));
  struct Case {
    const char* name;
    void (*mutate)(BundleSpec*);
    const char* expect;
  };
  const Case cases[] = {
      {"without_feature", [](BundleSpec* s) { s->features = "dynamic_shapes value_symbols"; },
       "metadata 'shape.symbol.0.scale' is present but bundle.features does not list 'float_value_symbols'"},
      {"int64_input",
       [](BundleSpec* s) {
         s->inputs[1].dtype = 7;
         s->inputs[1].nbytes = 16;
         s->inputs_bytes = s->inputs[1].offset + 16;
       },
       "symbol 0 ('R'): input 'factors' has data type 7; a scaled value symbol reads a float32, float16 or float64 "
       "input"},
      {"zero_scale", [](BundleSpec* s) { s->symbols[0].scale = 0; },
       "symbol 0 ('R'): shape.symbol.0.scale is 0 (must be >= 1)"},
      {"scale_too_large", [](BundleSpec* s) { s->symbols[1].scale = uint64_t{1} << 53; },
       "metadata 'shape.symbol.1.scale' = 9007199254740992 exceeds 4503599627370496"},
      // A float input's symbol without a scale is an integer value symbol.
      {"float_input_without_scale", [](BundleSpec* s) { s->symbols[1].scale.reset(); },
       "symbol 1 ('C'): input 'factors' has data type 1; a value symbol reads an int32, int64 or bool input"},
      {"exact_without_feature", [](BundleSpec* s) { s->symbols[0].exact = 1; },
       "metadata 'shape.symbol.0.exact' is present but bundle.features does not list 'exact_value_symbols'"},
      {"exact_not_one",
       [](BundleSpec* s) {
         s->features += " exact_value_symbols";
         s->symbols[0].exact = 2;
       },
       "metadata 'shape.symbol.0.exact' = 2 exceeds 1"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    BundleSpec s = base;
    c.mutate(&s);
    const std::string path = Write(s, std::string("scaled_value_bad_") + c.name);
    ExpectError(g_api->load(path.c_str()), {"runtime_model_loading", path.c_str(), c.expect});
  }
  ASSERT_EQ(g_api->load(Write(base, "scaled_value_good").c_str()), 0) << g_api->error();
}

TEST_F(DynamicShapes, ABundleListingTheFeatureWithoutSymbolsRunsAsStatic) {
  ASSERT_EQ(Init(), 0) << g_api->error();
  std::vector<float> w = Random(13, 3), b = Random(13, 4);
  BundleSpec s = oaaxvk::test::AffineReluBundle(13, w, b);
  s.features = "dynamic_shapes";
  s.write_shape = true;  // shape.symbols = 0, empty program and references
  ASSERT_EQ(g_api->load(Write(s, "dyn_none").c_str()), 0) << g_api->error();
  RunAffineOnce(13, w, b, 5);
  ExpectRejected(MakeTensors({"x"}, {{1, 12}}, {std::vector<float>(12)}),
                 {"input tensor 'x': shape [1, 12], the model expects [1, 13]"});
}

// DynamicAffineBundle(32, 128, 1) whose shape program has `extra`
// instructions appended (from index 3) and dispatch 0's group count taken
// from instruction `groups0`.
BundleSpec DynamicAffineWithProgram(const std::vector<float>& w, const std::vector<float>& b,
                                    const std::vector<std::array<int64_t, 3>>& extra, uint32_t groups0) {
  BundleSpec s = DynamicAffineBundle(32, 128, 1, w, b);
  for (const auto& in : extra) s.shape_program.push_back(in);
  for (auto& ref : s.shape_refs)
    if (ref[0] == kRefGroups && ref[1] == 0) ref[3] = groups0;
  return s;
}

TEST_F(DynamicShapes, EvaluationErrorsFailSendInputNamingTheShape) {
  std::vector<float> w(128, 1.0f), b(128, 0.0f);
  struct Case {
    const char* name;
    std::vector<std::array<int64_t, 3>> extra;
    uint32_t groups0;
    size_t n;  // a valid input shape at which evaluation fails
    const char* expect;
  };
  const int64_t big = int64_t{1} << 32;
  const Case cases[] = {
      // floordiv(N, 64): 0 groups below N = 64.
      {"zero_groups", {{kOpFloorDiv, 0, 1}}, 3, 63,
       "dispatch 0 (kernel 'mul', op '/node/0'): group count x evaluates to 0 (shape.program instruction 3) at N = 63; "
       "it must be in [1, "},
      // 2 + (128 - N) * 2^32: beyond every device's maxComputeWorkGroupCount below N = 128.
      {"too_many_groups",
       {{kOpConst, 128, 0}, {kOpSub, 3, 0}, {kOpConst, big, 0}, {kOpMul, 4, 5}, {kOpConst, 2, 0}, {kOpAdd, 6, 7}},
       8, 100, "dispatch 0 (kernel 'mul', op '/node/0'): group count x evaluates to 120259084290"},
      // 10 / (N - 32): unreferenced, still evaluated.
      {"divisor", {{kOpConst, 32, 0}, {kOpSub, 0, 3}, {kOpConst, 10, 0}, {kOpFloorDiv, 5, 4}}, 2, 32,
       "shape program instruction 6 (floordiv of v[5] = 10 and v[4] = 0): the divisor is not positive, at N = 32"},
      // (129 - N) * 2^62 overflows below N = 128.
      {"overflow", {{kOpConst, 129, 0}, {kOpSub, 3, 0}, {kOpConst, int64_t{1} << 62, 0}, {kOpMul, 4, 5}}, 2, 126,
       "shape program instruction 6 (mul of v[4] = 3 and v[5] = 4611686018427387904): the result overflows signed 64 "
       "bits, at N = 126"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ASSERT_EQ(Init(), 0) << g_api->error();
    w_ = w;
    b_ = b;
    ASSERT_EQ(g_api->load(Write(DynamicAffineWithProgram(w, b, c.extra, c.groups0), std::string("dyn_eval_") + c.name)
                              .c_str()),
              0)
        << g_api->error();
    ExpectRejected(MakeTensors({"x"}, {{1, c.n}}, {std::vector<float>(c.n)}), {"send_input", c.expect});
    tensors_struct* out = nullptr;
    ExpectError(g_api->receive(&out), {"no pending input"});
    RoundTrip(128, 7);  // the maximum shape still runs (recorded at load)
    ASSERT_EQ(Destroy(), 0) << g_api->error();
  }
}

// "frame #<k>: ... shape cache hit|miss" lines of a log, in order, as 'h' / 'm'.
std::string HitsAndMisses(const std::string& text) {
  std::string out;
  for (const std::string& l : LinesWith(text, "shape cache ")) {
    if (l.find("shape cache hit") != std::string::npos) out += 'h';
    else if (l.find("shape cache miss") != std::string::npos) out += 'm';
  }
  return out;
}

TEST_F(DynamicShapes, EachSlotKeepsTheMostRecentShapesInAnLruCache) {
  const std::string log = g_tmpdir + "/dyn-lru.log";
  ASSERT_EQ(Init({{"frames_in_flight", "1"}, {"shape_cache_size", "2"}, {"profile", "1"}, {"log_level", "2"},
                  {"log_file", log}}),
            0)
      << g_api->error();
  LoadDynamicAffine(1, 128, 1, "dyn_lru");
  // Slot 0 holds the maximum shape from load; capacity 2.
  const size_t sequence[] = {128, 32, 128, 64, 32, 64, 128};
  uint32_t seed = 0;
  for (size_t n : sequence) RoundTrip(n, ++seed);
  ASSERT_EQ(Destroy(), 0) << g_api->error();
  const std::string text = ReadFile(log);
  //            128  32   128  64   32   64   128
  EXPECT_EQ(HitsAndMisses(text), "hmhmmhm") << text;
  std::vector<std::string> lines = LinesWith(text, "profile frame #1: shape (N = 32), frame slot 0: shape cache miss, "
                                                   "recorded in ");
  ASSERT_EQ(lines.size(), 1u) << text;
  EXPECT_NE(lines[0].find(" ms"), std::string::npos) << lines[0];
  EXPECT_EQ(LinesWith(text, "profile frame #0: shape (N = 128), frame slot 0: shape cache hit").size(), 1u) << text;
  // 3 hits, 4 misses; one recording at load plus one per miss; each shape
  // holds 3 specialized pipelines and at most 2 shapes are cached.
  EXPECT_EQ(LinesWith(text, "shape cache: 3 hits, 4 misses; 5 command buffers recorded (1 at load); 6 pipelines alive, "
                            "at most 6").size(),
            1u)
      << text;
  EXPECT_NE(text.find("dynamic shapes: N [1, 128]; 3 of 3 dispatches specialized per shape, 0 sizes in the parameter buffer"), std::string::npos) << text;
  if (text.find("profiling is unavailable") == std::string::npos) {
    // The profile shows each frame's evaluated group counts.
    EXPECT_EQ(LinesWith(text, "profile frame #0 dispatch 0: ").size(), 1u) << text;
    EXPECT_NE(LinesWith(text, "profile frame #0 dispatch 0: ")[0].find("groups (2, 1, 1)"), std::string::npos);
    EXPECT_NE(LinesWith(text, "profile frame #1 dispatch 0: ")[0].find("groups (1, 1, 1)"), std::string::npos);
  }
}

TEST_F(DynamicShapes, FramesInFlightWithDifferentShapesUseTheirOwnRecordings) {
  ASSERT_EQ(Init({{"frames_in_flight", "2"}, {"shape_cache_size", "1"}}), 0) << g_api->error();
  LoadDynamicAffine(1, 300, 1, "dyn_inflight");
  // Two frames of different shapes in flight at once, then three queued
  // with two slots (send_input harvests the oldest itself).
  for (const std::vector<size_t>& batch : {std::vector<size_t>{32, 300}, std::vector<size_t>{300, 7},
                                          std::vector<size_t>{65, 128, 1}, std::vector<size_t>{1, 1, 299, 5}}) {
    std::vector<std::vector<float>> xs;
    for (size_t n : batch) {
      xs.push_back(Random(n, static_cast<uint32_t>(n + 17 * xs.size())));
      SendAffine(xs.back());
    }
    for (const auto& x : xs) ExpectAffineOutput(x, w_, b_);
  }
}

// Feature dynamic_shapes with kernel_variants and device_variants: the group
// count of dispatch 1 has a different expression per table, so the profile's
// evaluated counts show which row ran. program.dispatch: ceildiv(N, 64);
// program.dispatch.cpu row 1: mul instead of add (relu(x * w * b)) with
// ceildiv(N, 32); program.dispatch.gpu row 1: an 'add' twin requiring a
// capability no device has, with ceildiv(N, 16) -- it keeps its default row,
// whose expression must then apply.
BundleSpec DynamicAffineWithVariants(const std::vector<float>& w, const std::vector<float>& b) {
  BundleSpec s = DynamicAffineBundle(1, 128, 1, w, b);
  s.features = "dynamic_shapes kernel_variants device_variants";
  s.weights_f16 = std::vector<uint8_t>();
  s.kernels.push_back({"add", oaaxvk::test::ReadSpirv("add"), 3, 1, "", "warpDrive"});
  s.dispatch_cpu = s.dispatch;
  s.dispatch_cpu[1][0] = 0;  // mul
  s.dispatch_cpu[1][1] = 4;  // ceildiv(128, 32)
  s.dispatch_gpu = s.dispatch;
  s.dispatch_gpu[1][0] = 3;  // the add twin
  s.dispatch_gpu[1][1] = 8;  // ceildiv(128, 16)
  s.max_workgroup_count = 8;
  s.shape_program.push_back({kOpConst, 32, 0});    // 3
  s.shape_program.push_back({kOpCeilDiv, 0, 3});   // 4
  s.shape_program.push_back({kOpConst, 16, 0});    // 5
  s.shape_program.push_back({kOpCeilDiv, 0, 5});   // 6
  for (uint32_t row = 0; row < 3; ++row) {
    s.shape_refs.push_back({kRefGroups, row, 3, row == 1 ? 4u : 2u});  // cpu table, x
    s.shape_refs.push_back({kRefGroups, row, 6, row == 1 ? 6u : 2u});  // gpu table, x
  }
  return s;
}

TEST_F(DynamicShapes, GroupCountsFollowTheChosenRowOfEachDispatch) {
  const uint32_t n = 100;
  std::vector<float> w = Random(128, 21), b = Random(128, 22), x = Random(n, 23);
  std::vector<float> mul_mul(n);
  for (uint32_t i = 0; i < n; ++i) {
    volatile float p = x[i] * w[i];
    volatile float q = p * b[i];
    mul_mul[i] = std::max(static_cast<float>(q), 0.0f);
  }
  const std::string path = Write(DynamicAffineWithVariants(w, b), "dyn_variants");
  struct Variant {
    const char* table;
    const char* groups;  // dispatch 1's evaluated group count
    bool cpu_values;
  };
  for (const Variant& v : {Variant{"default", "groups (2, 1, 1)", false}, Variant{"cpu", "groups (4, 1, 1)", true},
                           Variant{"gpu", "groups (2, 1, 1)", false}}) {
    SCOPED_TRACE(v.table);
    const std::string log = g_tmpdir + "/dyn-variant-" + v.table + ".log";
    ASSERT_EQ(Init({{"kernel_variant", v.table}, {"profile", "1"}, {"log_level", "2"}, {"log_file", log}}), 0)
        << g_api->error();
    ASSERT_EQ(g_api->load(path.c_str()), 0) << g_api->error();
    SendAffine(x);
    std::vector<Output> outs = ReceiveOutputs();
    ASSERT_EQ(outs.size(), 1u);
    ASSERT_EQ(outs[0].shape, (std::vector<size_t>{1, n}));
    const std::vector<float> ref = v.cpu_values ? mul_mul : AffineReluPrefix(x, w, b);
    for (uint32_t i = 0; i < n; ++i) ASSERT_NEAR(outs[0].values[i], ref[i], 1e-6f) << "element " << i;
    ASSERT_EQ(Destroy(), 0) << g_api->error();
    const std::string text = ReadFile(log);
    if (text.find("profiling is unavailable") != std::string::npos) continue;
    std::vector<std::string> lines = LinesWith(text, "profile frame #0 dispatch 1: ");
    ASSERT_EQ(lines.size(), 1u) << text;
    EXPECT_NE(lines[0].find(v.groups), std::string::npos) << lines[0];
    EXPECT_NE(LinesWith(text, "profile frame #0 dispatch 0: ")[0].find("groups (2, 1, 1)"), std::string::npos) << text;
  }
}

// The number in `line` right after `key` (-1 when absent).
long long NumberAfter(const std::string& line, const std::string& key) {
  const size_t p = line.find(key);
  return p == std::string::npos ? -1 : atoll(line.c_str() + p + key.size());
}

TEST_F(DynamicShapes, TenThousandInferencesOverMixedShapesKeepPipelinesAndCacheFlat) {
  const std::string log = g_tmpdir + "/dyn-loop.log";
  ASSERT_EQ(Init({{"log_level", "1"}, {"log_file", log}}), 0) << g_api->error();  // misses at debug level
  LoadDynamicAffine(1, 128, 1, "dyn_loop");
  const size_t cycle[] = {1, 37, 64, 100, 128, 7, 65};
  const size_t nc = sizeof cycle / sizeof cycle[0];
  std::vector<std::vector<float>> xs, refs;
  for (size_t k = 0; k < nc; ++k) {
    xs.push_back(Random(cycle[k], static_cast<uint32_t>(k + 1)));
    refs.push_back(AffineReluPrefix(xs.back(), w_, b_));
  }
  const int frames = 10000;
  int received = 0;
  auto receive_one = [&]() {
    tensors_struct* out = nullptr;
    ASSERT_EQ(g_api->receive(&out), 0) << "frame " << received << ": " << g_api->error();
    const size_t k = static_cast<size_t>(received) % nc;
    ASSERT_EQ(out->ranks[0], 2u);
    ASSERT_EQ(out->shapes[0][1], cycle[k]) << "frame " << received;
    const float* y = static_cast<const float*>(out->data[0]);
    for (size_t i = 0; i < cycle[k]; ++i) ASSERT_NEAR(y[i], refs[k][i], 1e-6f) << "frame " << received;
    DeepFree(out);
    ++received;
  };
  for (int f = 0; f < frames; ++f) {  // two frames in flight
    const size_t k = static_cast<size_t>(f) % nc;
    ASSERT_EQ(g_api->send(MakeTensors({"x"}, {{1, cycle[k]}}, {xs[k]})), 0) << "frame " << f << ": " << g_api->error();
    if (f >= 1) {
      ASSERT_NO_FATAL_FAILURE(receive_one());
    }
  }
  ASSERT_NO_FATAL_FAILURE(receive_one());
  ASSERT_EQ(Destroy(), 0) << g_api->error();
  const std::string text = ReadFile(log);
  // Every recording happens while each slot first meets each shape: within
  // the first 2 * nc frames, at most once per (slot, shape).
  std::vector<std::string> misses = LinesWith(text, "shape cache miss");
  EXPECT_LE(misses.size(), 2 * nc) << text.substr(0, 4000);
  for (const std::string& l : misses) EXPECT_LT(NumberAfter(l, "frame #"), static_cast<long long>(2 * nc)) << l;
  std::vector<std::string> totals = LinesWith(text, "shape cache: ");
  ASSERT_EQ(totals.size(), 1u) << text.substr(text.size() > 4000 ? text.size() - 4000 : 0);
  const std::string& t = totals[0];
  EXPECT_EQ(NumberAfter(t, "shape cache: ") + NumberAfter(t, "hits, "), frames) << t;
  EXPECT_EQ(NumberAfter(t, "hits, "), static_cast<long long>(misses.size())) << t;
  // One recording per slot at load plus one per miss; 7 shapes x 3
  // specialized dispatches, never more.
  EXPECT_EQ(NumberAfter(t, "misses; "), static_cast<long long>(misses.size()) + 2) << t;
  EXPECT_NE(t.find("command buffers recorded (2 at load)"), std::string::npos) << t;
  EXPECT_NE(t.find("21 pipelines alive, at most 21"), std::string::npos) << t;
}

// Resident set size of this process in bytes (/proc/self/statm).
size_t ResidentBytes() {
  std::ifstream f("/proc/self/statm");
  size_t pages = 0, resident = 0;
  f >> pages >> resident;
  return resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

// Soak test, not in the default run (docs/runtime.md, "Soak test"):
// OAAXVK_SOAK_FRAMES inferences (default 200000) cycling through more shapes
// than the shape cache holds, so recordings and specialized pipelines are
// created and destroyed all along, three frames in flight. The resident set
// stays flat after the first tenth, every output is checked, and the
// validation layer stays silent (runtime_destruction fails otherwise).
TEST_F(DynamicShapes, DISABLED_SoakMixedShapesKeepResidentMemoryFlat) {
  const char* e = getenv("OAAXVK_SOAK_FRAMES");
  const int frames = e && atoi(e) > 0 ? atoi(e) : 200000;
  ASSERT_EQ(Init({{"frames_in_flight", "3"}, {"shape_cache_size", "4"}}), 0) << g_api->error();
  LoadDynamicAffine(1, 256, 1, "dyn_soak");
  const size_t cycle[] = {1, 37, 64, 100, 128, 7, 65, 256, 200};
  const size_t nc = sizeof cycle / sizeof cycle[0];
  std::vector<std::vector<float>> xs, refs;
  for (size_t k = 0; k < nc; ++k) {
    xs.push_back(Random(cycle[k], static_cast<uint32_t>(k + 1)));
    refs.push_back(AffineReluPrefix(xs.back(), w_, b_));
  }
  int received = 0;
  auto receive_one = [&]() {
    tensors_struct* out = nullptr;
    ASSERT_EQ(g_api->receive(&out), 0) << "frame " << received << ": " << g_api->error();
    const size_t k = static_cast<size_t>(received) % nc;
    ASSERT_EQ(out->shapes[0][1], cycle[k]) << "frame " << received;
    const float* y = static_cast<const float*>(out->data[0]);
    for (size_t i = 0; i < cycle[k]; ++i) ASSERT_NEAR(y[i], refs[k][i], 1e-6f) << "frame " << received;
    DeepFree(out);
    ++received;
  };
  size_t baseline = 0, peak = 0;
  for (int f = 0; f < frames; ++f) {
    const size_t k = static_cast<size_t>(f) % nc;
    ASSERT_EQ(g_api->send(MakeTensors({"x"}, {{1, cycle[k]}}, {xs[k]})), 0) << "frame " << f << ": " << g_api->error();
    if (f >= 2) {
      ASSERT_NO_FATAL_FAILURE(receive_one());
    }
    if (f == frames / 10) baseline = ResidentBytes();
    if (f > frames / 10 && f % 1000 == 0) peak = std::max(peak, ResidentBytes());
    if (f % 20000 == 0) fprintf(stderr, "soak: frame %d, resident %.1f MiB\n", f, ResidentBytes() / 1048576.0);
  }
  while (received < frames) ASSERT_NO_FATAL_FAILURE(receive_one());
  peak = std::max(peak, ResidentBytes());
  fprintf(stderr, "soak: %d frames; resident %.1f MiB after the first tenth, at most %.1f MiB later\n", frames,
          baseline / 1048576.0, peak / 1048576.0);
  EXPECT_LT(peak, baseline + 16 * 1048576) << "resident memory grew by " << (peak - baseline) / 1048576.0 << " MiB";
  ASSERT_EQ(Destroy(), 0) << g_api->error();
}

TEST_F(DynamicShapes, EvictedShapesReleaseTheirPipelines) {
  // Cache smaller than the cycle: nearly every frame records, and evicted
  // recordings' pipelines are destroyed, so the count stays bounded.
  const std::string log = g_tmpdir + "/dyn-evict.log";
  ASSERT_EQ(Init({{"shape_cache_size", "2"}, {"log_level", "2"}, {"log_file", log}}), 0) << g_api->error();
  LoadDynamicAffine(1, 128, 1, "dyn_evict");
  const size_t cycle[] = {1, 37, 64, 100, 128, 7, 65};
  const int frames = 210;
  std::vector<std::vector<float>> sent;
  for (int f = 0; f < frames; ++f) {
    const size_t n = cycle[static_cast<size_t>(f) % 7];
    sent.push_back(Random(n, static_cast<uint32_t>(f)));
    SendAffine(sent.back());
    if (f >= 1) ExpectAffineOutput(sent[static_cast<size_t>(f) - 1], w_, b_);
  }
  ExpectAffineOutput(sent.back(), w_, b_);
  ASSERT_EQ(Destroy(), 0) << g_api->error();
  const std::string text = ReadFile(log);
  std::vector<std::string> totals = LinesWith(text, "shape cache: ");
  ASSERT_EQ(totals.size(), 1u) << text;
  // 2 slots x 2 cached shapes x 3 pipelines at most.
  EXPECT_LE(NumberAfter(totals[0], "at most "), 12) << totals[0];
  EXPECT_LE(NumberAfter(totals[0], "at load); "), 12) << totals[0];  // pipelines alive
  EXPECT_EQ(NumberAfter(totals[0], "misses; "), NumberAfter(totals[0], "hits, ") + 2) << totals[0];
  EXPECT_GE(NumberAfter(totals[0], "hits, "), frames - 14) << totals[0];  // misses: nearly every frame
}

TEST_F(DynamicShapes, ShapeCacheSizeArgumentIsValidated) {
  ExpectError(Init({{"shape_cache_size", "0"}}),
              {"runtime_initialization_with_args", "argument 'shape_cache_size' = '0': expected an integer in [1, 1024]"});
  ExpectError(Init({{"shape_cache_size", "1025"}}), {"'shape_cache_size' = '1025'", "[1, 1024]"});
  ExpectError(Init({{"shape_cache_size", "eight"}}), {"'shape_cache_size' = 'eight'"});
  ASSERT_EQ(Init({{"shape_cache_size", "1024"}}), 0) << g_api->error();
}

// ---------------------------------------------------------------- segment program

// Sends x [1, 4] and the trip count t (int32 [1]) to a SegmentLoopBundle.
tensors_struct* SegmentLoopInputs(const std::vector<float>& x, int32_t t) {
  tensors_struct* tensors = oaaxvk::AllocTensors(2);
  const size_t xs[2] = {1, 4}, ts[1] = {1};
  EXPECT_TRUE(oaaxvk::SetTensor(tensors, 0, "x", DATA_TYPE_FLOAT, xs, 2, x.data(), 16));
  EXPECT_TRUE(oaaxvk::SetTensor(tensors, 1, "t", DATA_TYPE_INT32, ts, 1, &t, 4));
  return tensors;
}

TEST_F(DynamicShapes, SegmentProgramLoopsAsOftenAsTheDeviceSays) {
  ASSERT_EQ(Init(), 0) << g_api->error();
  ASSERT_EQ(g_api->load(Write(oaaxvk::test::SegmentLoopBundle(8, 8), "segment_loop").c_str()), 0) << g_api->error();
  const std::vector<float> x = {1.5f, -2.0f, 0.25f, 3.0f};
  // 0, 1 and many iterations, twice (the second time from the recordings);
  // z = the first M rows of 0, 1, 2, ..., [0, 4] when M = 0.
  for (int round = 0; round < 2; ++round) {
    for (int32_t m : {0, 1, 5, 8}) {
      SCOPED_TRACE("M = " + std::to_string(m));
      ASSERT_EQ(g_api->send(SegmentLoopInputs(x, m)), 0) << g_api->error();
      std::vector<Output> outs = ReceiveOutputs();
      ASSERT_EQ(outs.size(), 2u);
      ASSERT_EQ(outs[0].shape, (std::vector<size_t>{1, 4}));
      for (size_t i = 0; i < 4; ++i) EXPECT_EQ(outs[0].values[i], std::ldexp(x[i], m)) << "y element " << i;
      ASSERT_EQ(outs[1].shape, (std::vector<size_t>{static_cast<size_t>(m), 4}));
      for (size_t k = 0; k < outs[1].values.size(); ++k) EXPECT_EQ(outs[1].values[k], static_cast<float>(k));
    }
  }
  // A trip count beyond the cap the bundle was compiled for fails that frame, naming the node.
  // The host keeps its struct, as for any refused input.
  ExpectRejected(SegmentLoopInputs(x, 9), {"the trip count of Loop 'loop' is 9, outside [0, 8]"});
  ExpectRejected(SegmentLoopInputs(x, -1), {"the trip count of Loop 'loop' is -1, outside [0, 8]"});
  // Still usable afterwards.
  ASSERT_EQ(g_api->send(SegmentLoopInputs(x, 2)), 0) << g_api->error();
  EXPECT_EQ(ReceiveOutputs().at(1).shape, (std::vector<size_t>{2, 4}));
}

TEST_F(DynamicShapes, SegmentProgramJumpLimitEndsARunawayLoop) {
  ASSERT_EQ(Init(), 0) << g_api->error();
  // The backward jump may be taken 3 times: a trip count of 5 (within M's
  // range) still stops at the limit, with the loop's text.
  ASSERT_EQ(g_api->load(Write(oaaxvk::test::SegmentLoopBundle(8, 3), "segment_loop_limit").c_str()), 0)
      << g_api->error();
  const std::vector<float> x = {1, 2, 3, 4};
  ExpectRejected(SegmentLoopInputs(x, 5), {"Loop 'loop': more than 3 iterations"});
  ASSERT_EQ(g_api->send(SegmentLoopInputs(x, 3)), 0) << g_api->error();
  EXPECT_EQ(ReceiveOutputs().at(0).values, (std::vector<float>{8, 16, 24, 32}));
}

TEST_F(DynamicShapes, SegmentProgramTakesTheBranchTheDeviceDecidesWithItsOwnShape) {
  ASSERT_EQ(Init(), 0) << g_api->error();
  ASSERT_EQ(g_api->load(Write(oaaxvk::test::SegmentIfBundle(), "segment_if").c_str()), 0) << g_api->error();
  const std::vector<float> x = {1.5f, -2.0f, 0.25f, 3.0f};
  auto inputs = [&](int32_t c) {
    tensors_struct* t = oaaxvk::AllocTensors(2);
    const size_t xs[2] = {1, 4}, cs[1] = {1};
    EXPECT_TRUE(oaaxvk::SetTensor(t, 0, "x", DATA_TYPE_FLOAT, xs, 2, x.data(), 16));
    EXPECT_TRUE(oaaxvk::SetTensor(t, 1, "c", DATA_TYPE_INT32, cs, 1, &c, 4));
    return t;
  };
  auto send = [&](int32_t c) { return g_api->send(inputs(c)); };
  // Both ways, alternating (each branch's segment is recorded once per slot).
  for (int round = 0; round < 3; ++round) {
    ASSERT_EQ(send(1), 0) << g_api->error();
    std::vector<Output> then = ReceiveOutputs();
    ASSERT_EQ(then.at(0).shape, (std::vector<size_t>{4}));
    EXPECT_EQ(then[0].values, (std::vector<float>{15, -40, 7.5f, 120}));
    ASSERT_EQ(send(0), 0) << g_api->error();
    std::vector<Output> other = ReceiveOutputs();
    ASSERT_EQ(other.at(0).shape, (std::vector<size_t>{2}));
    EXPECT_EQ(other[0].values, (std::vector<float>{10, 20}));
  }
  ExpectRejected(inputs(2), {"the condition of If 'if' is 2, outside [0, 1]"});
}

TEST_F(DynamicShapes, InvalidSegmentProgramsAreRejectedAtLoad) {
  ASSERT_EQ(Init(), 0) << g_api->error();
  const BundleSpec base = oaaxvk::test::SegmentLoopBundle(8, 8);
  struct Case {
    const char* name;
    std::function<void(BundleSpec*)> edit;
    const char* expect;
  };
  const std::vector<Case> cases = {
      {"seg_gap", [](BundleSpec* s) { s->control_segments[1] = {3, 3}; }, "control.segments row 1 is [3, 3)"},
      {"seg_short", [](BundleSpec* s) { s->control_segments.pop_back(); },
       "control.segments end at dispatch row 3 but program.dispatch has 4 rows"},
      {"no_limit", [](BundleSpec* s) { s->control_program[6][2] = -1; }, "a backward jump needs a limit >= 0"},
      {"undecided", [](BundleSpec* s) { s->control_program[2][1] = 5; }, "row 2 (set): symbol 5 is not a decided symbol"},
      {"read_outside", [](BundleSpec* s) { s->control_reads[0][1] = 256; }, "do not lie aligned inside buffer kind 1"},
      {"no_feature", [](BundleSpec* s) { s->features = "dynamic_shapes"; },
       "'shape.symbol.0.decided' is present but bundle.features does not list 'segment_program'"},
      {"alone", [](BundleSpec* s) { s->features = "segment_program"; },
       "lists 'segment_program' but not 'dynamic_shapes'"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    BundleSpec s = base;
    c.edit(&s);
    const std::string path = Write(s, std::string("segment_bad_") + c.name);
    ExpectError(g_api->load(path.c_str()), {"runtime_model_loading", c.expect});
  }
  ASSERT_EQ(g_api->load(Write(base, "segment_good").c_str()), 0) << g_api->error();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && strcmp(argv[1], "--pipeline-cache-child") == 0) return PipelineCacheChild(argv[2], argv[3]);
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new RuntimeEnv());
  return RUN_ALL_TESTS();
}
