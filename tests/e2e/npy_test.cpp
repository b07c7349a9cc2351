// The .npy reader/writer of oaax-run (tools/oaax_run/npy.h): round trips of
// every OAAX type, byte-exact agreement with numpy in both directions, and a
// specific error for every malformed header or data section; and the
// conversions of npy_tensor.h (float16 / bfloat16 rounding, 4-bit packing).
// tests/e2e/oaax_run_types.sh checks the ml_dtypes forms against ml_dtypes.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "npy.h"
#include "npy_tensor.h"

namespace {

using oaaxvk::npy::Array;

std::string TmpDir() {
  static std::string dir = [] {
    char tmpl[] = "/tmp/oaaxvk-npy-test-XXXXXX";
    return std::string(mkdtemp(tmpl));
  }();
  return dir;
}

std::vector<uint8_t> Pattern(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 37 + 11);
  return v;
}

std::vector<uint8_t> Bytes(const std::string& s) { return std::vector<uint8_t>(s.begin(), s.end()); }

// A v1.0 file with `header` verbatim (plus '\n') and `data`.
std::vector<uint8_t> Raw(const std::string& header, size_t data_bytes, uint8_t major = 1) {
  std::string h = header + "\n";
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', major, 0, static_cast<uint8_t>(h.size() & 0xff),
                              static_cast<uint8_t>(h.size() >> 8)};
  out.insert(out.end(), h.begin(), h.end());
  out.resize(out.size() + data_bytes, 0);
  return out;
}

std::string ParseError(const std::vector<uint8_t>& bytes) {
  Array a;
  oaaxvk::Status s = oaaxvk::npy::Parse(bytes.data(), bytes.size(), "t.npy", &a);
  EXPECT_FALSE(s.ok());
  return s.message();
}

TEST(Npy, RoundTripsEveryTypeAndOddShapes) {
  size_t count;
  const oaaxvk::npy::DType* types = oaaxvk::npy::DTypes(&count);
  const std::vector<std::vector<uint64_t>> shapes = {{}, {0}, {1}, {13}, {3, 0, 2}, {2, 3, 5}, {1, 3, 48, 13}};
  for (size_t t = 0; t < count; ++t) {
    for (const auto& shape : shapes) {
      uint64_t numel = 1;
      for (uint64_t d : shape) numel *= d;
      std::vector<uint8_t> data = Pattern(numel * types[t].size);
      std::vector<uint8_t> file = oaaxvk::npy::Encode(types[t], shape, data.data(), data.size());
      // Header of a v1.0 file: the data starts at a multiple of 64 bytes.
      EXPECT_EQ((file.size() - data.size()) % 64, 0u);
      Array a;
      oaaxvk::Status s = oaaxvk::npy::Parse(file.data(), file.size(), "x.npy", &a);
      ASSERT_TRUE(s.ok()) << types[t].name << " " << oaaxvk::npy::ShapeString(shape) << ": " << s.ToString();
      EXPECT_EQ(a.dtype, &types[t]);
      EXPECT_EQ(a.shape, shape);
      EXPECT_EQ(a.data, data);
    }
  }
}

TEST(Npy, WriteAndReadFiles) {
  const std::string path = TmpDir() + "/f.npy";
  std::vector<float> v = {1.5f, -2.0f, 3.25f};
  ASSERT_TRUE(oaaxvk::npy::Write(path, *oaaxvk::npy::FindDType(DATA_TYPE_FLOAT), {3}, v.data(), 12).ok());
  Array a;
  ASSERT_TRUE(oaaxvk::npy::Read(path, &a).ok());
  ASSERT_EQ(a.data.size(), 12u);
  EXPECT_EQ(memcmp(a.data.data(), v.data(), 12), 0);
  // Wrong byte count for the shape is refused by the writer.
  EXPECT_FALSE(oaaxvk::npy::Write(path, *oaaxvk::npy::FindDType(DATA_TYPE_FLOAT), {4}, v.data(), 12).ok());
  oaaxvk::Status s = oaaxvk::npy::Read(TmpDir() + "/missing.npy", &a);
  EXPECT_NE(s.message().find("missing.npy: cannot open"), std::string::npos) << s.message();
}

// The entries numpy itself names (not the ml_dtypes ones, not the read-only
// forms of np.save's ml_dtypes arrays).
std::vector<oaaxvk::npy::DType> NumpyTypes() {
  size_t n;
  const oaaxvk::npy::DType* d = oaaxvk::npy::DTypes(&n);
  std::vector<oaaxvk::npy::DType> out;
  for (size_t i = 0; i < n; ++i)
    if (oaaxvk::npy::FindDType(d[i].type) == &d[i] && !oaaxvk::npy::IsMlDtype(d[i])) out.push_back(d[i]);
  return out;
}

// numpy reads what we write and we read what numpy writes, byte for byte.
TEST(Npy, AgreesWithNumpy) {
  if (access(OAAXVK_PYTHON, X_OK) != 0) GTEST_SKIP() << OAAXVK_PYTHON << " not found (Debian's python3 with numpy)";
  const std::string dir = TmpDir();
  const std::vector<oaaxvk::npy::DType> numpy_types = NumpyTypes();
  const size_t count = numpy_types.size();
  const oaaxvk::npy::DType* types = numpy_types.data();
  for (size_t t = 0; t < count; ++t) {
    std::vector<uint8_t> data = Pattern(2 * 3 * 5 * types[t].size);
    if (types[t].type == DATA_TYPE_BOOL)
      for (uint8_t& b : data) b &= 1;
    const std::string name = dir + "/ours_" + types[t].name + ".npy";
    ASSERT_TRUE(oaaxvk::npy::Write(name, types[t], {2, 3, 5}, data.data(), data.size()).ok());
  }
  // numpy: load ours and check dtype/shape/bytes; save its own versions of the same arrays.
  const std::string script = dir + "/check.py";
  std::ofstream(script) << R"(import sys, numpy as np
d = sys.argv[1]
for name in sys.argv[2:]:
    a = np.load(f"{d}/ours_{name}.npy")
    assert a.dtype == np.dtype(name), (name, a.dtype)
    assert a.shape == (2, 3, 5), (name, a.shape)
    n = a.nbytes
    want = (np.arange(n, dtype=np.uint64) * 37 + 11).astype(np.uint8)
    if name == "bool": want &= 1
    assert a.tobytes() == want.tobytes(), name
    np.save(f"{d}/numpy_{name}.npy", a)
    np.save(f"{d}/numpy_{name}_T.npy", np.ascontiguousarray(a.transpose(2, 0, 1)))
    np.save(f"{d}/numpy_{name}_scalar.npy", a.reshape(-1)[0])
)";
  std::string cmd = std::string(OAAXVK_PYTHON) + " " + script + " " + dir;
  for (size_t t = 0; t < count; ++t) cmd += std::string(" ") + types[t].name;
  ASSERT_EQ(system(cmd.c_str()), 0) << cmd;
  for (size_t t = 0; t < count; ++t) {
    SCOPED_TRACE(types[t].name);
    Array ours, theirs, transposed, scalar;
    ASSERT_TRUE(oaaxvk::npy::Read(dir + "/ours_" + types[t].name + ".npy", &ours).ok());
    oaaxvk::Status s = oaaxvk::npy::Read(dir + "/numpy_" + types[t].name + ".npy", &theirs);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(theirs.dtype, oaaxvk::npy::FindDType(types[t].type));
    EXPECT_EQ(theirs.shape, (std::vector<uint64_t>{2, 3, 5}));
    EXPECT_EQ(theirs.data, ours.data);
    s = oaaxvk::npy::Read(dir + "/numpy_" + types[t].name + "_T.npy", &transposed);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(transposed.shape, (std::vector<uint64_t>{5, 2, 3}));
    s = oaaxvk::npy::Read(dir + "/numpy_" + types[t].name + "_scalar.npy", &scalar);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_TRUE(scalar.shape.empty());
    EXPECT_EQ(scalar.data.size(), types[t].size);
  }
}

TEST(Npy, AcceptsHeaderVariants) {
  Array a;
  // Double quotes, keys in another order, no trailing comma, Python 2 'L', version 2.0.
  for (const auto& bytes :
       {Raw("{\"shape\": (2,3), \"fortran_order\": False, \"descr\": \"<f4\"}", 24),
        Raw("{'descr': '<i8', 'fortran_order': False, 'shape': (3L,), }", 24),
        Raw("{'descr': '|u1', 'fortran_order': False, 'shape': (), }", 1)}) {
    oaaxvk::Status s = oaaxvk::npy::Parse(bytes.data(), bytes.size(), "t.npy", &a);
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
  std::string h = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n";
  std::vector<uint8_t> v2 = {0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0, static_cast<uint8_t>(h.size()), 0, 0, 0};
  v2.insert(v2.end(), h.begin(), h.end());
  v2.resize(v2.size() + 8);
  oaaxvk::Status s = oaaxvk::npy::Parse(v2.data(), v2.size(), "t.npy", &a);
  EXPECT_TRUE(s.ok()) << s.ToString();
}

TEST(Npy, RejectsMalformedFilesWithSpecificErrors) {
  const std::string ok = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  struct Case {
    std::vector<uint8_t> bytes;
    const char* expect;
  };
  std::vector<uint8_t> truncated_header = Raw(ok, 0);
  truncated_header.resize(30);
  std::vector<uint8_t> no_newline = Raw(ok, 8);
  no_newline[10 + ok.size()] = ' ';
  const Case cases[] = {
      {Bytes("not numpy at all"), "no \\x93NUMPY magic"},
      {Bytes("\x93NUMPY"), "no \\x93NUMPY magic"},
      {Raw(ok, 8, 3), "format version 3.0"},
      {truncated_header, "truncated .npy header"},
      {no_newline, "does not end with"},
      {Raw("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", 8), "fortran_order is True"},
      {Raw("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8), "big-endian dtype '>f4'"},
      {Raw("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", 16), "unsupported dtype '<c8'"},
      {Raw("{'descr': '<U8', 'fortran_order': False, 'shape': (2,), }", 64), "unsupported dtype '<U8'"},
      {Raw("{'descr': '<f4', 'shape': (2,), }", 8), "no 'fortran_order'"},
      {Raw("{'descr': '<f4', 'fortran_order': False, }", 8), "no 'shape'"},
      {Raw("{'fortran_order': False, 'shape': (2,), }", 8), "no 'descr'"},
      {Raw("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 8), "duplicate key 'descr'"},
      {Raw("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}", 8), "unknown header key 'extra'"},
      {Raw("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", 8), "non-negative integer dimension"},
      {Raw("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", 8), "overflows 64 bits"},
      {Raw("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), }", 8),
       "more elements than 64 bits"},
      {Raw("{'descr': '<f4', 'fortran_order': False, 'shape': [2], }", 8), "expected '(' starting the shape"},
      {Raw("{'descr': '<f4', 'fortran_order': False, 'shape': (2,) } junk", 8), "unexpected characters"},
      {Raw("{'descr' '<f4', 'fortran_order': False, 'shape': (2,), }", 8), "expected ':'"},
      {Raw(ok, 7), "data section has 7 bytes"},
      {Raw(ok, 9), "data section has 9 bytes"},
      {Raw("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), '\x01': 0}", 8), "control byte"},
  };
  for (const Case& c : cases) {
    std::string msg = ParseError(c.bytes);
    EXPECT_NE(msg.find(c.expect), std::string::npos) << "'" << c.expect << "' not in: " << msg;
    EXPECT_EQ(msg.rfind("t.npy: ", 0), 0u) << msg;  // every message names the file
  }
}

}  // namespace

namespace {

// float16 and bfloat16 rounding: every finite code round-trips, ties go to
// even, overflow goes to Inf, subnormals round on their own grid.
TEST(NpyTensor, HalfAndBfloat16Rounding) {
  using namespace oaaxvk::npy;
  for (uint32_t h = 0; h < 0x10000u; ++h) {
    if ((h & 0x7c00u) == 0x7c00u) continue;  // Inf, NaN
    ASSERT_EQ(FloatToHalf(HalfToFloat(static_cast<uint16_t>(h))), h) << std::hex << h;
    ASSERT_EQ(FloatToBfloat16(Bfloat16ToFloat(static_cast<uint16_t>(h))), h) << std::hex << h;
  }
  EXPECT_EQ(FloatToHalf(1.0f + 0x1p-11f), 0x3c00);      // tie -> even (1.0)
  EXPECT_EQ(FloatToHalf(1.0f + 3 * 0x1p-11f), 0x3c02);  // tie -> even (up)
  EXPECT_EQ(FloatToHalf(65519.0f), 0x7bff);
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7c00);
  EXPECT_EQ(FloatToHalf(-1e9f), 0xfc00);
  EXPECT_EQ(FloatToHalf(0x1p-25f), 0x0000);      // subnormal tie -> even (0)
  EXPECT_EQ(FloatToHalf(3 * 0x1p-25f), 0x0002);  // subnormal tie -> even (up)
  EXPECT_EQ(FloatToHalf(0x1p-14f - 0x1p-26f), 0x0400);  // rounds up into the smallest normal
  EXPECT_EQ(FloatToHalf(std::nanf("")) & 0x7e00, 0x7e00);
  EXPECT_EQ(FloatToBfloat16(1.0f + 0x1p-8f), 0x3f80);      // tie -> even
  EXPECT_EQ(FloatToBfloat16(1.0f + 3 * 0x1p-8f), 0x3f82);  // tie -> even (up)
  EXPECT_EQ(FloatToBfloat16(3.4e38f), 0x7f80);             // rounds past the largest finite
  EXPECT_EQ(FloatToBfloat16(std::nanf("")) & 0x7fc0, 0x7fc0);
}

// 4-bit arrays: one byte per element in the .npy (ml_dtypes), packed two per
// byte in the tensor, element 2i in the low nibble; a set high nibble in the
// .npy is refused; the void and named forms give the same tensor.
TEST(NpyTensor, PacksAndUnpacksFourBitTypes) {
  using namespace oaaxvk::npy;
  Array a;
  a.dtype = FindDType(std::string("|V1"));
  ASSERT_NE(a.dtype, nullptr);
  a.shape = {5};
  a.data = {0x1, 0xf, 0x8, 0x0, 0x7};
  std::vector<uint8_t> t;
  ASSERT_TRUE(ArrayToTensorData(a, DATA_TYPE_INT4, false, "x", "x.npy", &t).ok());
  EXPECT_EQ(t, (std::vector<uint8_t>{0xf1, 0x08, 0x07}));
  EXPECT_EQ(TensorToArrayData(DATA_TYPE_INT4, t.data(), 5), a.data);
  EXPECT_EQ(TensorToFloat32(DATA_TYPE_INT4, t.data(), 5), (std::vector<float>{1, -1, -8, 0, 7}));
  a.dtype = FindDType(DATA_TYPE_INT4);
  std::vector<uint8_t> named;
  ASSERT_TRUE(ArrayToTensorData(a, DATA_TYPE_INT4, false, "x", "x.npy", &named).ok());
  EXPECT_EQ(named, t);
  a.data[3] = 0x10;
  oaaxvk::Status s = ArrayToTensorData(a, DATA_TYPE_INT4, false, "x", "x.npy", &t);
  EXPECT_NE(s.message().find("x.npy element 3 is 0x10"), std::string::npos) << s.message();
  // A uint4 array does not feed an int4 input, cast or not.
  a.dtype = FindDType(DATA_TYPE_UINT4);
  s = ArrayToTensorData(a, DATA_TYPE_INT4, true, "x", "x.npy", &t);
  EXPECT_NE(s.message().find("has dtype uint4, the model expects int4"), std::string::npos) << s.message();
}

}  // namespace
