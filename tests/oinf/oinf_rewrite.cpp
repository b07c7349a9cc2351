// Test helper: `oinf_rewrite IN OUT` reads IN with the C++ reader and writes
// its whole content again with the C++ writer (used to check that both
// writers produce the same bytes for the same content);
// `oinf_rewrite --sample OUT` writes a file with every value type.
#include <cstdio>
#include <cstring>
#include <string>

#include "oaax_vulkan/oinf.h"
#include "test_util.h"

using namespace oaaxvk::oinf;

static std::vector<uint8_t> Copy(const ByteView& v) { return std::vector<uint8_t>(v.data, v.data + v.size); }

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: oinf_rewrite IN OUT | oinf_rewrite --sample OUT\n");
    return 2;
  }
  Writer w;
  if (std::strcmp(argv[1], "--sample") == 0) {
    using testing::Bytes;
    w.AddSizeVar("N", 17);
    w.AddMetadata("m.i8", MetadataValue::Scalar<int8_t>(-3));
    w.AddMetadata("m.u64", MetadataValue::Scalar<uint64_t>(18446744073709551615ull));
    w.AddMetadata("m.f16", MetadataValue::F16Bits(0x3555));
    w.AddMetadata("m.f64", MetadataValue::Scalar<double>(-1.0 / 3.0));
    w.AddMetadata("m.bool", MetadataValue::Bool(false));
    w.AddMetadata("m.str", MetadataValue::String("relu6"));
    std::vector<bool> bits(70);
    for (size_t i = 0; i < bits.size(); ++i) bits[i] = (i * 7) % 3 == 0;
    w.AddMetadata("m.bits", MetadataValue::Bitset(bits));
    w.AddMetadata("m.nd", MetadataValue::NdArray(ValueType::kF32, {2, 3}, Bytes<float>({1, 2.5f, -3, 4, 5, 6})));
    std::vector<float> f(127);
    for (size_t i = 0; i < f.size(); ++i) f[i] = static_cast<float>(i % 13) * 0.37f - 1.1f;
    w.AddTensor("t.f32", ValueType::kF32, {127}, Bytes<float>(f));
    std::vector<int64_t> i64(26);
    for (size_t i = 0; i < i64.size(); ++i) i64[i] = static_cast<int64_t>(i * i) - 100;
    w.AddTensor("t.i64", ValueType::kI64, {13, 2}, Bytes<int64_t>(i64));
    w.AddTensor("t.f16", ValueType::kF16, {4}, Bytes<uint16_t>({0x3C00, 0xBC00, 0x0001, 0x7BFF}));
    w.AddTensor("t.bool", ValueType::kBool, {2, 2, 3}, Bytes<uint8_t>({1, 0, 0, 1, 1, 1, 0, 0, 1, 0, 1, 0}));
    w.AddTensor("t.u16", ValueType::kU16, {1}, Bytes<uint16_t>({65535}));
    w.AddTensor("t.empty", ValueType::kI32, {3, 0}, std::vector<uint8_t>{});
    w.AddUninitializedTensor("t.later", ValueType::kU32, {1, 3});
  } else {
    auto in = File::Open(argv[1]);
    if (!in.ok()) {
      std::fprintf(stderr, "%s\n", in.status().message().c_str());
      return 1;
    }
    for (const SizeVar& sv : in->sizevars()) w.AddSizeVar(std::string(sv.name), sv.value);
    for (const Metadata& m : in->metadata()) {
      MetadataValue v = MetadataValue::Bool(false);
      switch (m.type) {
        case ValueType::kString: v = MetadataValue::String(std::string(m.string_value)); break;
        case ValueType::kBitset: {
          std::vector<bool> bits(m.bitset.bit_count);
          for (uint32_t i = 0; i < m.bitset.bit_count; ++i) bits[i] = m.bitset.Get(i);
          v = MetadataValue::Bitset(bits);
          break;
        }
        case ValueType::kNdArray:
          v = MetadataValue::NdArray(m.ndarray.element_type, m.ndarray.dims, Copy(m.ndarray.data));
          break;
        case ValueType::kBool: v = MetadataValue::Bool(m.payload.data[0] != 0); break;
        default: {
          // Same bytes, same tag: go through the u64/u32/… scalar of that width.
          uint64_t raw = 0;
          std::memcpy(&raw, m.payload.data, m.payload.size);
          switch (m.payload.size) {
            case 1: v = MetadataValue::Scalar<uint8_t>(static_cast<uint8_t>(raw)); break;
            case 2: v = MetadataValue::Scalar<uint16_t>(static_cast<uint16_t>(raw)); break;
            case 4: v = MetadataValue::Scalar<uint32_t>(static_cast<uint32_t>(raw)); break;
            default: v = MetadataValue::Scalar<uint64_t>(raw); break;
          }
          v = MetadataValue::Retagged(v, m.type);
        }
      }
      w.AddMetadata(std::string(m.key), v);
    }
    for (const Tensor& t : in->tensors()) {
      if (t.has_data) {
        w.AddTensor(std::string(t.name), t.dtype, t.dims, Copy(t.data));
      } else {
        w.AddUninitializedTensor(std::string(t.name), t.dtype, t.dims);
      }
    }
  }
  oaaxvk::Status s = w.WriteFile(argv[2]);
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return 1;
  }
  return 0;
}
