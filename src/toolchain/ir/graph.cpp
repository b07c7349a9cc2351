#include "toolchain/ir/graph.h"

#include <cstring>
#include <set>

#include "oaax_vulkan/lowbit_types.h"

namespace oaaxvk::toolchain {

size_t DTypeSize(DType t) {
  switch (t) {
    case DType::kFloat: case DType::kInt32: case DType::kUint32: return 4;
    case DType::kUint8: case DType::kInt8: case DType::kBool: return 1;
    case DType::kUint16: case DType::kInt16: case DType::kFloat16: case DType::kBfloat16: return 2;
    case DType::kInt64: case DType::kDouble: case DType::kUint64: return 8;
    default: return IsLowBitDType(t) ? 1 : 0;
  }
}

bool IsLowBitDType(DType t) { return lowbit::IsLowBit(static_cast<uint32_t>(t)); }

Dim StorageBytes(DType t, const Dim& n) {
  if (lowbit::IsPacked4(static_cast<uint32_t>(t))) return CeilDiv(n, 2);
  return n * static_cast<int64_t>(DTypeSize(t));
}

const char* DTypeName(DType t) {
  switch (t) {
    case DType::kFloat: return "float32";
    case DType::kUint8: return "uint8";
    case DType::kInt8: return "int8";
    case DType::kUint16: return "uint16";
    case DType::kInt16: return "int16";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kBool: return "bool";
    case DType::kFloat16: return "float16";
    case DType::kDouble: return "float64";
    case DType::kUint32: return "uint32";
    case DType::kUint64: return "uint64";
    case DType::kBfloat16: return "bfloat16";
    default: {
      // ONNX TensorProto codes without a device representation, by their
      // ONNX names, so that a refusal names the type the model uses.
      switch (static_cast<int32_t>(t)) {
        case 8: return "string";
        case 14: return "complex64";
        case 15: return "complex128";
        default: {
          const char* low = oaaxvk::lowbit::LowBitTypeName(static_cast<uint32_t>(t));
          return low ? low : "undefined";
        }
      }
    }
  }
}

Dim NumElements(const Shape& s) {
  Dim n = 1;
  for (const Dim& d : s) n *= d;
  return n;
}

std::string ShapeToString(const Shape& s) {
  std::string r = "[";
  SymContext* c = SymContext::Current();
  for (size_t i = 0; i < s.size(); ++i) {
    r += (i ? ", " : "") + std::to_string(s[i].value());
    if (c != nullptr && s[i].is_symbolic()) r += " (" + c->ToString(s[i].expr()) + ")";
  }
  return r + "]";
}

template <typename T>
static T Load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

float HalfToFloat(uint16_t h) {
  uint32_t s = uint32_t{h & 0x8000u} << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, b;
  if (e == 31) {
    b = s | 0x7f800000u | (m << 13);
  } else if (e != 0) {
    b = s | ((e + 112) << 23) | (m << 13);
  } else if (m == 0) {
    b = s;
  } else {  // subnormal: normalize
    int ex = 113;
    while ((m & 0x400u) == 0) { m <<= 1; --ex; }
    b = s | (static_cast<uint32_t>(ex) << 23) | ((m & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

float BfloatToFloat(uint16_t h) {
  uint32_t b = uint32_t{h} << 16;
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

uint16_t FloatToHalf(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  uint32_t s = (b >> 16) & 0x8000u, e = (b >> 23) & 0xffu, m = b & 0x7fffffu;
  if (e == 255) return static_cast<uint16_t>(s | 0x7c00u | (m ? 0x200u | (m >> 13) : 0u));
  int ue = static_cast<int>(e) - 127 + 15;
  if (ue >= 31) return static_cast<uint16_t>(s | 0x7c00u);
  uint32_t mant, shift;
  if (ue <= 0) {  // subnormal half (or underflow to zero)
    if (ue < -10) return static_cast<uint16_t>(s);
    mant = m | 0x800000u;
    shift = static_cast<uint32_t>(14 - ue);
  } else {
    mant = m;
    shift = 13;
  }
  uint32_t r = mant >> shift, rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
  if (rem > half || (rem == half && (r & 1u))) ++r;  // round to nearest even; may carry into the exponent
  uint32_t out = ue <= 0 ? r : ((static_cast<uint32_t>(ue) << 10) + r);
  return static_cast<uint16_t>(s | out);
}

uint16_t FloatToBfloat(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  if ((b & 0x7f800000u) == 0x7f800000u && (b & 0x7fffffu)) return static_cast<uint16_t>((b >> 16) | 0x40u);
  uint32_t r = b + 0x7fffu + ((b >> 16) & 1u);  // round to nearest even (overflow carries into Inf)
  return static_cast<uint16_t>(r >> 16);
}

std::vector<double> Tensor::AsDoubles() const {
  std::vector<double> r;
  size_t es = DTypeSize(dtype);
  if (!is_const || es == 0) return r;
  size_t n = data.size() / es;
  r.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const uint8_t* p = data.data() + i * es;
    switch (dtype) {
      case DType::kFloat: r[i] = Load<float>(p); break;
      case DType::kDouble: r[i] = Load<double>(p); break;
      case DType::kInt64: r[i] = static_cast<double>(Load<int64_t>(p)); break;
      case DType::kInt32: r[i] = Load<int32_t>(p); break;
      case DType::kUint32: r[i] = Load<uint32_t>(p); break;
      case DType::kUint64: r[i] = static_cast<double>(Load<uint64_t>(p)); break;
      case DType::kInt16: r[i] = Load<int16_t>(p); break;
      case DType::kUint16: r[i] = Load<uint16_t>(p); break;
      case DType::kInt8: r[i] = Load<int8_t>(p); break;
      case DType::kUint8: case DType::kBool: r[i] = *p; break;
      case DType::kFloat16: r[i] = HalfToFloat(Load<uint16_t>(p)); break;
      case DType::kBfloat16: r[i] = BfloatToFloat(Load<uint16_t>(p)); break;
      default: r[i] = IsLowBitDType(dtype) ? lowbit::ToDouble(static_cast<uint32_t>(dtype), *p) : 0; break;
    }
  }
  return r;
}

std::vector<int64_t> Tensor::AsInts() const {
  if (dtype == DType::kInt64 && is_const) {
    std::vector<int64_t> r(data.size() / 8);
    if (!r.empty()) std::memcpy(r.data(), data.data(), r.size() * 8);
    return r;
  }
  std::vector<double> d = AsDoubles();
  std::vector<int64_t> r(d.size());
  for (size_t i = 0; i < d.size(); ++i) r[i] = static_cast<int64_t>(d[i]);
  return r;
}

Tensor MakeConstF32(const std::string& name, const Shape& shape, const std::vector<float>& v) {
  Tensor t;
  t.name = name; t.dtype = DType::kFloat; t.shape = shape; t.has_shape = true; t.is_const = true;
  t.data.resize(v.size() * 4);
  if (!v.empty()) std::memcpy(t.data.data(), v.data(), v.size() * 4);
  return t;
}

Tensor MakeConstI64(const std::string& name, const Shape& shape, const std::vector<int64_t>& v) {
  Tensor t;
  t.name = name; t.dtype = DType::kInt64; t.shape = shape; t.has_shape = true; t.is_const = true;
  t.data.resize(v.size() * 8);
  if (!v.empty()) std::memcpy(t.data.data(), v.data(), v.size() * 8);
  return t;
}

Tensor MakeConstDims(const std::string& name, const Shape& shape, const std::vector<Dim>& v) {
  Tensor t = MakeConstI64(name, shape, DimValues(v));
  if (AnySymbolic(v)) t.sym = v;
  return t;
}

std::vector<Dim> Tensor::AsDims() const {
  if (!sym.empty()) return sym;
  return ToDims(AsInts());
}

template <typename T>
static void Store(uint8_t* p, T v) { std::memcpy(p, &v, sizeof(T)); }

Tensor MakeConstFromDoubles(const std::string& name, DType dtype, const Shape& shape,
                            const std::vector<double>& v) {
  Tensor t;
  t.name = name; t.dtype = dtype; t.shape = shape; t.has_shape = true; t.is_const = true;
  size_t es = DTypeSize(dtype);
  t.data.resize(v.size() * es);
  for (size_t i = 0; i < v.size(); ++i) {
    uint8_t* p = t.data.data() + i * es;
    double x = v[i];
    switch (dtype) {
      case DType::kFloat: Store<float>(p, static_cast<float>(x)); break;
      case DType::kDouble: Store<double>(p, x); break;
      case DType::kInt64: Store<int64_t>(p, static_cast<int64_t>(x)); break;
      case DType::kInt32: Store<int32_t>(p, static_cast<int32_t>(x)); break;
      case DType::kUint32: Store<uint32_t>(p, static_cast<uint32_t>(x)); break;
      case DType::kUint64: Store<uint64_t>(p, static_cast<uint64_t>(x)); break;
      case DType::kInt16: Store<int16_t>(p, static_cast<int16_t>(x)); break;
      case DType::kUint16: Store<uint16_t>(p, static_cast<uint16_t>(x)); break;
      case DType::kInt8: Store<int8_t>(p, static_cast<int8_t>(x)); break;
      case DType::kUint8: Store<uint8_t>(p, static_cast<uint8_t>(x)); break;
      case DType::kBool: Store<uint8_t>(p, x != 0 ? 1 : 0); break;
      case DType::kFloat16: Store<uint16_t>(p, FloatToHalf(static_cast<float>(x))); break;
      case DType::kBfloat16: Store<uint16_t>(p, FloatToBfloat(static_cast<float>(x))); break;
      default:  // low-bit: Cast's default rounding (saturate = 1)
        if (IsLowBitDType(dtype)) *p = lowbit::FromDouble(static_cast<uint32_t>(dtype), static_cast<float>(x));
        break;
    }
  }
  return t;
}

int64_t Node::GetInt(const std::string& k, int64_t def) const {
  auto it = attrs.find(k);
  return it == attrs.end() ? def : it->second.i;
}
float Node::GetFloat(const std::string& k, float def) const {
  auto it = attrs.find(k);
  return it == attrs.end() ? def : it->second.f;
}
std::string Node::GetString(const std::string& k, const std::string& def) const {
  auto it = attrs.find(k);
  return it == attrs.end() ? def : it->second.s;
}
std::vector<int64_t> Node::GetInts(const std::string& k, const std::vector<int64_t>& def) const {
  auto it = attrs.find(k);
  return it == attrs.end() ? def : it->second.ints;
}
void Node::SetInt(const std::string& k, int64_t v) { Attr a; a.kind = Attr::kInt; a.i = v; attrs[k] = a; }
void Node::SetFloat(const std::string& k, float v) { Attr a; a.kind = Attr::kFloat; a.f = v; attrs[k] = a; }
void Node::SetInts(const std::string& k, std::vector<int64_t> v) {
  Attr a; a.kind = Attr::kInts; a.ints = std::move(v); attrs[k] = a;
}
void Node::SetString(const std::string& k, std::string v) {
  Attr a; a.kind = Attr::kString; a.s = std::move(v); attrs[k] = a;
}

Tensor* Graph::FindTensor(const std::string& n) {
  auto it = tensors.find(n);
  return it == tensors.end() ? nullptr : &it->second;
}
const Tensor* Graph::FindTensor(const std::string& n) const {
  auto it = tensors.find(n);
  return it == tensors.end() ? nullptr : &it->second;
}
bool Graph::IsConst(const std::string& n) const {
  const Tensor* t = FindTensor(n);
  return t && t->is_const;
}
size_t Graph::CountOps(const std::string& op) const {
  if (op.empty()) return nodes.size();
  size_t c = 0;
  for (const Node& n : nodes) c += n.op_type == op;
  return c;
}
std::map<std::string, std::vector<size_t>> Graph::Consumers() const {
  std::map<std::string, std::vector<size_t>> r;
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const std::string& in : nodes[i].inputs)
      if (!in.empty()) r[in].push_back(i);
  return r;
}
int Graph::Producer(const std::string& tensor) const {
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const std::string& o : nodes[i].outputs)
      if (o == tensor) return static_cast<int>(i);
  return -1;
}
std::map<std::string, size_t> Graph::Producers() const {
  std::map<std::string, size_t> r;
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const std::string& o : nodes[i].outputs) r.emplace(o, i);  // keeps the first
  return r;
}
bool Graph::IsGraphOutput(const std::string& tensor) const {
  for (const GraphIO& o : outputs) if (o.tensor == tensor) return true;
  return false;
}
bool Graph::IsGraphInput(const std::string& tensor) const {
  for (const GraphIO& o : inputs) if (o.tensor == tensor) return true;
  return false;
}
void Graph::ReplaceUses(const std::string& from, const std::string& to) {
  for (Node& n : nodes)
    for (std::string& in : n.inputs)
      if (in == from) in = to;
  for (GraphIO& o : outputs)
    if (o.tensor == from) o.tensor = to;
}
std::string Graph::UniqueName(const std::string& base) const {
  if (!tensors.count(base)) return base;
  for (int i = 1;; ++i) {
    std::string n = base + "_" + std::to_string(i);
    if (!tensors.count(n)) return n;
  }
}

Status Graph::Validate() const {
  std::set<std::string> defined;
  for (const auto& [name, t] : tensors)
    if (t.is_const) defined.insert(name);
  for (const GraphIO& in : inputs) {
    if (!tensors.count(in.tensor)) return Internal("graph input '" + in.name + "' has no tensor");
    defined.insert(in.tensor);
  }
  for (const Node& n : nodes) {
    for (const std::string& in : n.inputs)
      if (!in.empty() && !defined.count(in))
        return Internal("node '" + n.name + "' (" + n.op_type + ") reads '" + in +
                        "' before it is defined");
    for (const std::string& o : n.outputs) {
      if (o.empty()) continue;
      if (defined.count(o))
        return Internal("tensor '" + o + "' is defined twice (node '" + n.name + "')");
      if (!tensors.count(o)) return Internal("node '" + n.name + "' output '" + o + "' has no tensor entry");
      defined.insert(o);
    }
  }
  for (const GraphIO& o : outputs)
    if (!defined.count(o.tensor))
      return Internal("graph output '" + o.name + "' (tensor '" + o.tensor + "') is never defined");
  return Status::Ok();
}

}  // namespace oaaxvk::toolchain
