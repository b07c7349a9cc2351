#include "onnx_mutator.h"

#include <limits>
#include <vector>

#include "onnx/onnx_pb.h"

namespace oaaxvk::fuzz {

namespace {

using Rng = std::mt19937_64;

size_t Pick(Rng* rng, size_t n) { return n == 0 ? 0 : static_cast<size_t>((*rng)() % n); }

// Values that break size arithmetic: zero, negatives, int32 and int64 edges,
// and powers of two that overflow products.
int64_t SpecialInt(Rng* rng) {
  static const int64_t kValues[] = {0,
                                    -1,
                                    1,
                                    2,
                                    3,
                                    7,
                                    -2,
                                    255,
                                    65535,
                                    65536,
                                    131072,
                                    (int64_t{1} << 31) - 1,
                                    int64_t{1} << 31,
                                    int64_t{1} << 32,
                                    int64_t{1} << 40,
                                    int64_t{1} << 62,
                                    std::numeric_limits<int64_t>::max(),
                                    std::numeric_limits<int64_t>::min()};
  const size_t n = sizeof(kValues) / sizeof(kValues[0]);
  if ((*rng)() % 4 == 0) return static_cast<int64_t>((*rng)() % 64) - 16;
  return kValues[Pick(rng, n)];
}

float SpecialFloat(Rng* rng) {
  static const float kValues[] = {0.0f,
                                  -0.0f,
                                  1.0f,
                                  -1.0f,
                                  0.5f,
                                  1e-30f,
                                  1e30f,
                                  std::numeric_limits<float>::infinity(),
                                  -std::numeric_limits<float>::infinity(),
                                  std::numeric_limits<float>::quiet_NaN(),
                                  std::numeric_limits<float>::denorm_min(),
                                  std::numeric_limits<float>::max()};
  return kValues[Pick(rng, sizeof(kValues) / sizeof(kValues[0]))];
}

// Every TypeProto-bearing value of the graph (inputs, outputs, value_info).
std::vector<onnx::ValueInfoProto*> Values(onnx::GraphProto* g) {
  std::vector<onnx::ValueInfoProto*> v;
  for (auto& x : *g->mutable_input()) v.push_back(&x);
  for (auto& x : *g->mutable_output()) v.push_back(&x);
  for (auto& x : *g->mutable_value_info()) v.push_back(&x);
  return v;
}

// Every tensor name a node or the graph mentions.
std::vector<std::string> Names(const onnx::GraphProto& g) {
  std::vector<std::string> names;
  for (const auto& x : g.input()) names.push_back(x.name());
  for (const auto& x : g.initializer()) names.push_back(x.name());
  for (const auto& n : g.node())
    for (const auto& o : n.output()) names.push_back(o);
  return names;
}

bool MutateDim(onnx::GraphProto* g, Rng* rng) {
  std::vector<onnx::ValueInfoProto*> values = Values(g);
  if (values.empty()) return false;
  onnx::ValueInfoProto* v = values[Pick(rng, values.size())];
  onnx::TypeProto_Tensor* t = v->mutable_type()->mutable_tensor_type();
  onnx::TensorShapeProto* s = t->mutable_shape();
  switch ((*rng)() % 5) {
    case 0:  // a dimension's value
      if (s->dim_size() == 0) s->add_dim();
      s->mutable_dim(static_cast<int>(Pick(rng, static_cast<size_t>(s->dim_size()))))->set_dim_value(SpecialInt(rng));
      break;
    case 1:  // a symbolic dimension
      if (s->dim_size() == 0) s->add_dim();
      s->mutable_dim(static_cast<int>(Pick(rng, static_cast<size_t>(s->dim_size()))))
          ->set_dim_param((*rng)() % 2 ? "N" : "");
      break;
    case 2:  // rank change
      if (s->dim_size() > 0 && (*rng)() % 2) s->mutable_dim()->RemoveLast();
      else s->add_dim()->set_dim_value(SpecialInt(rng));
      break;
    case 3:  // no shape at all
      t->clear_shape();
      break;
    default:  // another element type (including invalid numbers)
      t->set_elem_type(static_cast<int32_t>((*rng)() % 26) - 1);
      break;
  }
  return true;
}

onnx::TensorProto* AnyInitializer(onnx::GraphProto* g, Rng* rng) {
  if (g->initializer_size() == 0) return nullptr;
  return g->mutable_initializer(static_cast<int>(Pick(rng, static_cast<size_t>(g->initializer_size()))));
}

bool MutateInitializerShape(onnx::GraphProto* g, Rng* rng) {
  onnx::TensorProto* t = AnyInitializer(g, rng);
  if (!t) return false;
  if (t->dims_size() == 0 || (*rng)() % 3 == 0) t->add_dims(SpecialInt(rng));
  else t->set_dims(static_cast<int>(Pick(rng, static_cast<size_t>(t->dims_size()))), SpecialInt(rng));
  return true;
}

bool MutateInitializerType(onnx::GraphProto* g, Rng* rng) {
  onnx::TensorProto* t = AnyInitializer(g, rng);
  if (!t) return false;
  t->set_data_type(static_cast<int32_t>((*rng)() % 26) - 1);
  return true;
}

bool MutateInitializerData(onnx::GraphProto* g, Rng* rng) {
  onnx::TensorProto* t = AnyInitializer(g, rng);
  if (!t) return false;
  switch ((*rng)() % 5) {
    case 0:  // truncated raw data
      if (t->has_raw_data() && !t->raw_data().empty())
        t->mutable_raw_data()->resize(Pick(rng, t->raw_data().size()));
      else
        t->set_raw_data(std::string(Pick(rng, 9), '\x7f'));
      break;
    case 1:  // extra raw data
      t->mutable_raw_data()->append(std::string(1 + Pick(rng, 16), '\x01'));
      break;
    case 2:  // data moved from raw_data to the typed field (and both present)
      t->add_float_data(SpecialFloat(rng));
      break;
    case 3:
      t->add_int64_data(SpecialInt(rng));
      break;
    default:  // special values in the raw data
      if (t->raw_data().size() >= 4) {
        float f = SpecialFloat(rng);
        const size_t at = Pick(rng, t->raw_data().size() / 4) * 4;
        t->mutable_raw_data()->replace(at, 4, reinterpret_cast<const char*>(&f), 4);
      } else {
        t->clear_raw_data();
      }
      break;
  }
  return true;
}

onnx::NodeProto* AnyNode(onnx::GraphProto* g, Rng* rng) {
  if (g->node_size() == 0) return nullptr;
  return g->mutable_node(static_cast<int>(Pick(rng, static_cast<size_t>(g->node_size()))));
}

bool MutateAttribute(onnx::GraphProto* g, Rng* rng) {
  onnx::NodeProto* n = AnyNode(g, rng);
  if (!n) return false;
  if (n->attribute_size() == 0 || (*rng)() % 5 == 0) {
    // An attribute the operator may or may not know.
    static const char* kNames[] = {"axis", "axes", "keepdims", "perm", "pads", "strides", "kernel_shape", "group",
                                   "dilations", "ceil_mode", "to", "value", "mode", "alpha", "k", "largest",
                                   "num_outputs", "exclusive", "reverse", "layout", "direction", "hidden_size"};
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name(kNames[Pick(rng, sizeof(kNames) / sizeof(kNames[0]))]);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(SpecialInt(rng));
    return true;
  }
  onnx::AttributeProto* a = n->mutable_attribute(static_cast<int>(Pick(rng, static_cast<size_t>(n->attribute_size()))));
  switch ((*rng)() % 7) {
    case 0:
      a->set_i(SpecialInt(rng));
      break;
    case 1:
      a->set_f(SpecialFloat(rng));
      break;
    case 2:  // a list entry changed, added or removed
      if (a->ints_size() > 0 && (*rng)() % 2)
        a->set_ints(static_cast<int>(Pick(rng, static_cast<size_t>(a->ints_size()))), SpecialInt(rng));
      else if (a->ints_size() > 0 && (*rng)() % 2)
        a->mutable_ints()->RemoveLast();
      else
        a->add_ints(SpecialInt(rng));
      break;
    case 3:  // the declared type no longer matches the field set
      a->set_type(static_cast<onnx::AttributeProto::AttributeType>(1 + Pick(rng, 14)));
      break;
    case 4:
      a->add_floats(SpecialFloat(rng));
      break;
    case 5:  // a tensor attribute whose data disagrees with its dims
      a->mutable_t()->add_dims(SpecialInt(rng));
      break;
    default:
      n->mutable_attribute()->DeleteSubrange(static_cast<int>(Pick(rng, static_cast<size_t>(n->attribute_size()))),
                                              1);
      break;
  }
  return true;
}

bool MutateDanglingName(onnx::GraphProto* g, Rng* rng) {
  onnx::NodeProto* n = AnyNode(g, rng);
  if (!n) return false;
  if (n->input_size() > 0 && (*rng)() % 3)
    n->set_input(static_cast<int>(Pick(rng, static_cast<size_t>(n->input_size()))), "dangling_tensor");
  else if (g->output_size() > 0)
    g->mutable_output(static_cast<int>(Pick(rng, static_cast<size_t>(g->output_size()))))->set_name("dangling_out");
  else
    n->add_input("dangling_tensor");
  return true;
}

// A node reads the output of itself or of a later node.
bool MutateCycle(onnx::GraphProto* g, Rng* rng) {
  if (g->node_size() == 0) return false;
  const int i = static_cast<int>(Pick(rng, static_cast<size_t>(g->node_size())));
  const int j = i + static_cast<int>(Pick(rng, static_cast<size_t>(g->node_size() - i)));
  onnx::NodeProto* a = g->mutable_node(i);
  const onnx::NodeProto& b = g->node(j);
  if (b.output_size() == 0) return false;
  const std::string& name = b.output(static_cast<int>(Pick(rng, static_cast<size_t>(b.output_size()))));
  if (a->input_size() == 0) a->add_input(name);
  else a->set_input(static_cast<int>(Pick(rng, static_cast<size_t>(a->input_size()))), name);
  return true;
}

bool MutateDuplicateOutput(onnx::GraphProto* g, Rng* rng) {
  std::vector<std::string> names = Names(*g);
  onnx::NodeProto* n = AnyNode(g, rng);
  if (!n || names.empty() || n->output_size() == 0) return false;
  const std::string name = names[Pick(rng, names.size())];
  if ((*rng)() % 2) n->set_output(static_cast<int>(Pick(rng, static_cast<size_t>(n->output_size()))), name);
  else if (g->output_size() > 0) *g->add_output() = g->output(0);
  return true;
}

bool MutateOpset(onnx::ModelProto* m, Rng* rng) {
  static const int64_t kVersions[] = {1, 6, 7, 9, 11, 13, 15, 17, 18, 19, 21, 23, 24, 99, 1000000, -1, 0};
  if (m->opset_import_size() == 0 || (*rng)() % 4 == 0) {
    onnx::OperatorSetIdProto* o = m->add_opset_import();
    o->set_domain((*rng)() % 2 ? "ai.onnx.ml" : "com.example");
    o->set_version(kVersions[Pick(rng, sizeof(kVersions) / sizeof(kVersions[0]))]);
    return true;
  }
  onnx::OperatorSetIdProto* o =
      m->mutable_opset_import(static_cast<int>(Pick(rng, static_cast<size_t>(m->opset_import_size()))));
  if ((*rng)() % 5 == 0) o->set_domain("com.microsoft");
  else o->set_version(kVersions[Pick(rng, sizeof(kVersions) / sizeof(kVersions[0]))]);
  return true;
}

bool MutateExternalData(onnx::GraphProto* g, Rng* rng) {
  onnx::TensorProto* t = AnyInitializer(g, rng);
  if (!t) return false;
  static const char* kLocations[] = {"weights.bin", "/etc/passwd", "../weights.bin", "a/../../weights.bin",
                                     "missing.bin", "", ".", "weights.bin\\x", "sub/dir/weights.bin"};
  t->clear_raw_data();
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  t->clear_external_data();
  auto add = [&](const char* k, const std::string& v) {
    onnx::StringStringEntryProto* e = t->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  add("location", kLocations[Pick(rng, sizeof(kLocations) / sizeof(kLocations[0]))]);
  if ((*rng)() % 2) add("offset", std::to_string(SpecialInt(rng)));
  if ((*rng)() % 2) add("length", std::to_string(SpecialInt(rng)));
  if ((*rng)() % 8 == 0) add("offset", "not a number");
  return true;
}

bool MutateOpType(onnx::GraphProto* g, Rng* rng) {
  static const char* kOps[] = {"Add",     "Relu",      "Conv",        "MatMul",  "Reshape",         "Transpose",
                               "Concat",  "Slice",     "Gather",      "Softmax", "ReduceSum",       "CumSum",
                               "TopK",    "Resize",    "Pad",         "Expand",  "ConstantOfShape", "Cast",
                               "MaxPool", "LSTM",      "If",          "Loop",    "Shape",           "Range",
                               "Where",   "NonZero",   "Unique",      "Split",   "Squeeze",         "Unsqueeze",
                               "Tile",    "OneHot",    "ScatterND",   "Einsum",  "NoSuchOp",        ""};
  onnx::NodeProto* n = AnyNode(g, rng);
  if (!n) return false;
  n->set_op_type(kOps[Pick(rng, sizeof(kOps) / sizeof(kOps[0]))]);
  return true;
}

bool RemoveNode(onnx::GraphProto* g, Rng* rng) {
  if (g->node_size() == 0) return false;
  g->mutable_node()->DeleteSubrange(static_cast<int>(Pick(rng, static_cast<size_t>(g->node_size()))), 1);
  return true;
}

bool DuplicateNode(onnx::GraphProto* g, Rng* rng) {
  onnx::NodeProto* n = AnyNode(g, rng);
  if (!n) return false;
  onnx::NodeProto copy = *n;
  if ((*rng)() % 2)
    for (auto& o : *copy.mutable_output()) o += "_dup";
  *g->add_node() = copy;
  return true;
}

}  // namespace

const char* MutationKindName(MutationKind kind) {
  switch (kind) {
    case MutationKind::kDim: return "dim";
    case MutationKind::kInitializerShape: return "initializer_shape";
    case MutationKind::kInitializerType: return "initializer_type";
    case MutationKind::kInitializerData: return "initializer_data";
    case MutationKind::kAttribute: return "attribute";
    case MutationKind::kDanglingName: return "dangling_name";
    case MutationKind::kCycle: return "cycle";
    case MutationKind::kDuplicateOutput: return "duplicate_output";
    case MutationKind::kOpset: return "opset";
    case MutationKind::kExternalData: return "external_data";
    case MutationKind::kOpType: return "op_type";
    case MutationKind::kRemoveNode: return "remove_node";
    case MutationKind::kDuplicateNode: return "duplicate_node";
    case MutationKind::kIrVersion: return "ir_version";
    case MutationKind::kCount: break;
  }
  return "?";
}

MutationKind MutateModel(onnx::ModelProto* model, Rng* rng, MutationKind kind) {
  onnx::GraphProto* g = model->mutable_graph();
  const int n = static_cast<int>(MutationKind::kCount);
  for (int attempt = 0; attempt < n; ++attempt) {
    const MutationKind k = static_cast<MutationKind>((static_cast<int>(kind) + attempt) % n);
    bool done = false;
    switch (k) {
      case MutationKind::kDim: done = MutateDim(g, rng); break;
      case MutationKind::kInitializerShape: done = MutateInitializerShape(g, rng); break;
      case MutationKind::kInitializerType: done = MutateInitializerType(g, rng); break;
      case MutationKind::kInitializerData: done = MutateInitializerData(g, rng); break;
      case MutationKind::kAttribute: done = MutateAttribute(g, rng); break;
      case MutationKind::kDanglingName: done = MutateDanglingName(g, rng); break;
      case MutationKind::kCycle: done = MutateCycle(g, rng); break;
      case MutationKind::kDuplicateOutput: done = MutateDuplicateOutput(g, rng); break;
      case MutationKind::kOpset: done = MutateOpset(model, rng); break;
      case MutationKind::kExternalData: done = MutateExternalData(g, rng); break;
      case MutationKind::kOpType: done = MutateOpType(g, rng); break;
      case MutationKind::kRemoveNode: done = RemoveNode(g, rng); break;
      case MutationKind::kDuplicateNode: done = DuplicateNode(g, rng); break;
      case MutationKind::kIrVersion:
        model->set_ir_version(static_cast<int64_t>((*rng)() % 12) - 1);
        done = true;
        break;
      case MutationKind::kCount: break;
    }
    if (done) return k;
  }
  return kind;
}

bool MutateModelBytes(const std::string& in, uint64_t seed, std::string* out) {
  onnx::ModelProto m;
  if (!m.ParseFromString(in)) return false;
  Rng rng(seed);
  const size_t count = 1 + Pick(&rng, 3);
  for (size_t i = 0; i < count; ++i)
    MutateModel(&m, &rng, static_cast<MutationKind>(Pick(&rng, static_cast<size_t>(MutationKind::kCount))));
  return m.SerializeToString(out);
}

}  // namespace oaaxvk::fuzz
