// Tests of libRuntimeLibrary.so through dlopen/dlsym, as an OAAX host uses it.
// Every test runs with the Khronos validation layer on (when installed):
// runtime_destruction fails when the layer reported anything.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

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
    std::vector<std::pair<std::string, std::string>> kv = {{"validation", "1"}, {"log_level", "5"}};
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

TEST_F(Runtime, KernelVariantTableIsChosenByDeviceTypeOrArgument) {
  const uint32_t n = 127;
  std::vector<float> w = Random(n, 7), b = Random(n, 8), x = Random(n, 9);
  // Both test drivers (lavapipe, SwiftShader) are VK_PHYSICAL_DEVICE_TYPE_CPU: auto = cpu.
  // The bundle has no program.dispatch.gpu, so gpu runs program.dispatch like default.
  for (const char* variant : {"default", "gpu", "cpu", "auto"}) {
    SCOPED_TRACE(variant);
    ASSERT_EQ(Init({{"kernel_variant", variant}}), 0) << g_api->error();
    ASSERT_EQ(g_api->load(Write(AffineReluWithCpuVariant(n, w, b), "variants").c_str()), 0) << g_api->error();
    ASSERT_EQ(g_api->send(MakeTensors({"x"}, {{1, n}}, {x})), 0) << g_api->error();
    tensors_struct* out = nullptr;
    ASSERT_EQ(g_api->receive(&out), 0) << g_api->error();
    ASSERT_NE(out, nullptr);
    const float* y = static_cast<const float*>(out->data[0]);
    const bool cpu = std::string(variant) == "cpu" || std::string(variant) == "auto";
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
// row and says why. default and cpu (and auto, = cpu on these CPU-type
// devices) never upload weights_f16.
TEST_F(Runtime, Fp16WeightRowsRunWhereTheDeviceHas16BitStorage) {
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
    const bool gpu = v.rfind("gpu", 0) == 0, opt_in = v == "gpu_fp16";
    ASSERT_EQ(Init({{"kernel_variant", gpu ? "gpu" : variant}, {"fp16_weights", opt_in ? "1" : "0"},
                    {"log_level", "2"}, {"log_file", log}}),
              0)
        << g_api->error();
    ASSERT_EQ(g_api->load(path.c_str()), 0) << g_api->error();
    const std::vector<float> y = RunOneFrame("x", {1, n}, x);
    ASSERT_EQ(Destroy(), 0) << g_api->error();
    const bool f16 = opt_in && DriverHas16BitStorage(), cpu = v == "cpu" || v == "auto";
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
    EXPECT_EQ(text.find("capabilities: storageBuffer16BitAccess") != std::string::npos, DriverHas16BitStorage())
        << text;
  }
  // Without a CPU table, auto on these CPU-type devices runs program.dispatch.
  const std::string log = g_tmpdir + "/device_variants_auto_nocpu.log";
  ASSERT_EQ(Init({{"log_level", "2"}, {"log_file", log}}), 0) << g_api->error();
  ASSERT_EQ(g_api->load(Write(oaaxvk::test::AffineReluWithDeviceVariants(n, w, b, false), "gpu_only").c_str()), 0)
      << g_api->error();
  const std::vector<float> y = RunOneFrame("x", {1, n}, x);
  ASSERT_EQ(Destroy(), 0) << g_api->error();
  ASSERT_EQ(y, ref_default);
  const std::string text = ReadFile(log);
  EXPECT_NE(text.find("running the default kernel variants"), std::string::npos) << text;
  EXPECT_EQ(text.find("fp16 weight copies uploaded"), std::string::npos) << text;
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
  s = oaaxvk::test::AffineReluBundle(13, w, b);
  s.dispatch[0][1] = 0x7fffffff;
  ExpectError(g_api->load(Write(s, "groups").c_str()), {"workgroups in dimension 0", "maxComputeWorkGroupCount"});
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
  const auto load_start = Clock::now();
  ASSERT_EQ(g_api->load(Write(oaaxvk::test::SpinBundle(n, 200000), "spin").c_str()), 0) << g_api->error();
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
  EXPECT_NE(text.find("validation layer enabled"), std::string::npos) << text;  // layer installed (setup.sh)
  EXPECT_EQ(text.find("[validation]"), std::string::npos) << text;
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

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new RuntimeEnv());
  return RUN_ALL_TESTS();
}
