// The .npy reader/writer of oaax-run (tools/oaax_run/npy.h): round trips of
// every OAAX type, byte-exact agreement with numpy in both directions, and a
// specific error for every malformed header or data section.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "npy.h"

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

// numpy reads what we write and we read what numpy writes, byte for byte.
TEST(Npy, AgreesWithNumpy) {
  if (access(OAAXVK_PYTHON, X_OK) != 0) GTEST_SKIP() << OAAXVK_PYTHON << " not found (Debian's python3 with numpy)";
  const std::string dir = TmpDir();
  size_t count;
  const oaaxvk::npy::DType* types = oaaxvk::npy::DTypes(&count);
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
    EXPECT_EQ(theirs.dtype, &types[t]);
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
      {Raw("{'descr': '<f2', 'fortran_order': False, 'shape': (2,), }", 4), "unsupported dtype '<f2'"},
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
