#include "toolchain/import/control_flow.h"

#include <onnx/defs/tensor_proto_util.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <vector>

namespace oaaxvk::toolchain {

namespace {

using onnx::GraphProto;
using onnx::NodeProto;
using onnx::TensorProto;

std::string NodeLabel(const NodeProto& n) { return (n.name().empty() ? "#" : n.name()) + "' (" + n.op_type(); }

Status Refuse(const NodeProto& n, const std::string& why) {
  return Unimplemented("node '" + NodeLabel(n) + "): " + why);
}

const onnx::AttributeProto* FindAttr(const NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

std::vector<int64_t> IntsAttr(const NodeProto& n, const std::string& name) {
  const onnx::AttributeProto* a = FindAttr(n, name);
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : std::vector<int64_t>{};
}

// The first element of a one-element constant as a double.
bool FirstElement(const TensorProto& t, double* v) {
  int64_t n = 1;
  for (int64_t d : t.dims()) n *= d;
  if (n != 1) return false;
  const std::string& raw = t.raw_data();
  switch (t.data_type()) {
    case TensorProto::BOOL: case TensorProto::INT32: case TensorProto::UINT8: case TensorProto::INT8:
    case TensorProto::INT16: case TensorProto::UINT16: {
      if (!raw.empty()) {
        // raw_data holds the element at its own width (little-endian).
        const int dt = t.data_type();
        const size_t es = dt == TensorProto::INT32 ? 4 : (dt == TensorProto::INT16 || dt == TensorProto::UINT16) ? 2 : 1;
        if (raw.size() < es) return false;
        uint32_t u = 0;
        std::memcpy(&u, raw.data(), es);
        int64_t x = u;
        if (dt == TensorProto::INT32) x = static_cast<int32_t>(u);
        if (dt == TensorProto::INT16) x = static_cast<int16_t>(u);
        if (dt == TensorProto::INT8) x = static_cast<int8_t>(u);
        *v = static_cast<double>(x);
        return true;
      }
      if (t.int32_data_size() < 1) return false;
      *v = t.int32_data(0);
      return true;
    }
    case TensorProto::INT64: {
      int64_t x = 0;
      if (!raw.empty()) {
        if (raw.size() < 8) return false;
        std::memcpy(&x, raw.data(), 8);
      } else if (t.int64_data_size() > 0) {
        x = t.int64_data(0);
      } else {
        return false;
      }
      *v = static_cast<double>(x);
      return true;
    }
    case TensorProto::FLOAT: {
      float x = 0;
      if (!raw.empty()) {
        if (raw.size() < 4) return false;
        std::memcpy(&x, raw.data(), 4);
      } else if (t.float_data_size() > 0) {
        x = t.float_data(0);
      } else {
        return false;
      }
      *v = x;
      return true;
    }
    default:
      return false;
  }
}

bool IsOnnxDomain(const NodeProto& n) { return n.domain().empty() || n.domain() == "ai.onnx"; }

const std::set<std::string>& SequenceOps() {
  static const std::set<std::string> kOps = {
      "SequenceEmpty", "SequenceConstruct", "SequenceInsert", "SequenceAt", "SequenceErase", "SequenceLength",
      "SplitToSequence", "ConcatFromSequence", "SequenceMap", "Optional", "OptionalHasElement",
      "OptionalGetElement"};
  return kOps;
}

bool IsControlFlow(const NodeProto& n) {
  return IsOnnxDomain(n) && (n.op_type() == "If" || n.op_type() == "Loop" || n.op_type() == "Scan");
}

// A sequence or an optional value, compiled away: the tensors it holds.
struct Compound {
  bool optional = false;  // an optional (else a sequence)
  bool present = true;    // an optional that holds its element
  bool sequence = true;   // the value (an optional's element) is a sequence
  std::vector<std::string> elems;
};

// The tensor type inside a sequence / optional type (nullptr: none).
const onnx::TypeProto* ElementTensorType(const onnx::TypeProto& t) {
  if (t.has_tensor_type()) return &t;
  if (t.has_sequence_type()) return ElementTensorType(t.sequence_type().elem_type());
  if (t.has_optional_type()) return ElementTensorType(t.optional_type().elem_type());
  return nullptr;
}

std::string ElementName(const std::string& name, size_t i) { return name + "[" + std::to_string(i) + "]"; }

class Inliner {
 public:
  Inliner(onnx::ModelProto& model, const InputValues& bound,
          const std::map<std::string, std::pair<int64_t, int64_t>>& run_time_values,
          const CompoundInputs& compound_inputs, std::set<std::string>* selects)
      : g_(*model.mutable_graph()),
        bound_(bound),
        run_time_values_(run_time_values),
        compound_inputs_(compound_inputs),
        selects_(selects) {
    for (const auto& os : model.opset_import())
      if (os.domain().empty() || os.domain() == "ai.onnx") opset_ = os.version();
    std::function<void(const GraphProto&)> collect = [&](const GraphProto& g) {
      for (const auto& t : g.initializer()) used_.insert(t.name());
      for (const auto& v : g.input()) used_.insert(v.name());
      for (const auto& v : g.output()) used_.insert(v.name());
      for (const auto& n : g.node()) {
        used_.insert(n.name());
        used_.insert(n.input().begin(), n.input().end());
        used_.insert(n.output().begin(), n.output().end());
        for (const auto& a : n.attribute()) {
          if (a.has_g()) collect(a.g());
          for (const auto& sg : a.graphs()) collect(sg);
        }
      }
    };
    collect(g_);
  }

  Status Run() {
    OAAXVK_RETURN_IF_ERROR(FlattenInputs());
    for (int round = 0; round < 64; ++round) {
      bool any = false;
      // Outputs of nodes rewritten this round (or waiting for such outputs):
      // their readers wait for the next round, when the rewritten nodes and
      // the sequences they build are known.
      std::set<std::string> pending;
      std::vector<NodeProto> out;
      for (const NodeProto& n : g_.node()) {
        const bool waits = std::any_of(n.input().begin(), n.input().end(),
                                       [&](const std::string& i) { return pending.count(i) > 0; });
        if (waits) {
          out.push_back(n);
          pending.insert(n.output().begin(), n.output().end());
          any = true;
        } else if (IsControlFlow(n)) {
          any = true;
          if (n.op_type() == "If") {
            OAAXVK_RETURN_IF_ERROR(If(n, &out));
          } else if (n.op_type() == "Loop") {
            OAAXVK_RETURN_IF_ERROR(Loop(n, &out));
          } else {
            OAAXVK_RETURN_IF_ERROR(Scan(n, &out));
          }
          pending.insert(n.output().begin(), n.output().end());
        } else if (IsSequenceOp(n) || std::any_of(n.input().begin(), n.input().end(), [&](const std::string& i) {
                     return compounds_.count(i) > 0;
                   })) {
          any = true;
          OAAXVK_RETURN_IF_ERROR(Sequence(n, &out));
        } else {
          out.push_back(n);
        }
        if (out.size() > kMaxInlinedNodes)
          return ResourceExhausted("control flow: inlining If/Loop/Scan gives more than " +
                                   std::to_string(kMaxInlinedNodes) + " nodes (at node '" + NodeLabel(n) + "))");
      }
      g_.clear_node();
      for (NodeProto& n : out) *g_.add_node() = std::move(n);
      if (!any) return FlattenOutputs();
    }
    return Unimplemented("control flow nested more than 64 levels deep");
  }

 private:
  std::string Fresh(const std::string& base) {
    std::string s = base;
    for (int k = 1; used_.count(s); ++k) s = base + "_" + std::to_string(k);
    used_.insert(s);
    return s;
  }

  // A scalar known at conversion: an initializer, a Constant node's output or
  // an input bound by config.json.
  bool Known(const std::string& name, double* v) const {
    if (name.empty()) return false;
    if (const TensorProto* t = ConstTensor(name, /*nodes=*/false)) return FirstElement(*t, v);
    for (const NodeProto& n : g_.node()) {
      if (n.output_size() != 1 || n.output(0) != name) continue;
      // Not / Identity of a known value (e.g. of an OptionalHasElement).
      if (n.op_type() == "Identity" && n.input_size() == 1) return Known(n.input(0), v);
      // A condition on a dimension ONNX shape inference knows statically
      // (torch.squeeze(x, 1) of a dynamic tensor exports as
      // If(Equal(Gather(Shape(x), 1), 1)); the branches may even have
      // different ranks, so only the taken one may be inlined).
      if ((n.op_type() == "Squeeze" || n.op_type() == "Unsqueeze") && n.input_size() >= 1) return Known(n.input(0), v);
      if (n.op_type() == "Cast" && n.input_size() == 1) {
        if (!Known(n.input(0), v)) return false;
        int64_t to = 0;
        for (const auto& a : n.attribute())
          if (a.name() == "to") to = a.i();
        if (to == TensorProto::BOOL) *v = *v != 0 ? 1 : 0;
        else if (to != TensorProto::FLOAT && to != TensorProto::DOUBLE && to != TensorProto::FLOAT16 &&
                 to != TensorProto::BFLOAT16)
          *v = std::trunc(*v);  // an integer type (in range for the sizes and flags met here)
        return true;
      }
      if (n.op_type() == "Equal" && n.input_size() == 2) {
        double a = 0, b = 0;
        if (!Known(n.input(0), &a) || !Known(n.input(1), &b)) return false;
        *v = a == b ? 1 : 0;
        return true;
      }
      if (n.op_type() == "Gather" && n.input_size() == 2) return KnownShapeElement(n, v);
      // The element count of a tensor whose shape is static (AffineGrid's
      // function body tests Size(size) == 4 for a 2-D grid).
      if (n.op_type() == "Size" && n.input_size() == 1) {
        std::vector<int64_t> shape;
        if (!ShapeOf(n.input(0), &shape)) return false;
        double count = 1;
        for (int64_t d : shape) count *= static_cast<double>(d);
        *v = count;
        return true;
      }
      if (n.op_type() == "Not" && n.input_size() == 1) {
        if (!Known(n.input(0), v)) return false;
        *v = *v != 0 ? 0 : 1;
        return true;
      }
      if (n.op_type() != "Constant") continue;
      for (const auto& a : n.attribute()) {
        if (a.name() == "value" && a.has_t()) return FirstElement(a.t(), v);
        if (a.name() == "value_int") { *v = static_cast<double>(a.i()); return true; }
        if (a.name() == "value_float") { *v = a.f(); return true; }
        if (a.name() == "value_ints" && a.ints_size() == 1) { *v = static_cast<double>(a.ints(0)); return true; }
        if (a.name() == "value_floats" && a.floats_size() == 1) { *v = a.floats(0); return true; }
      }
      return false;
    }
    auto b = bound_.find(name);
    if (b != bound_.end() && b->second.size() == 1 && !run_time_values_.count(name)) {
      *v = b->second[0].is_integer ? static_cast<double>(b->second[0].integer) : b->second[0].value;
      return true;
    }
    return false;
  }

  // Gather(Shape(x), c) (a scalar or one-element constant index c, Shape
  // without start / end) where dimension c of x is static in the shapes
  // ONNX inferred at import: that dimension.
  bool KnownShapeElement(const NodeProto& gather, double* v) const {
    for (const auto& a : gather.attribute())
      if (a.name() == "axis" && a.i() != 0) return false;
    double c = 0;
    if (!Known(gather.input(1), &c)) return false;
    for (const NodeProto& sh : g_.node()) {
      if (sh.output_size() != 1 || sh.output(0) != gather.input(0)) continue;
      if (sh.op_type() != "Shape" || sh.input_size() != 1 || sh.attribute_size() != 0) return false;
      const onnx::TensorShapeProto* shape = nullptr;
      auto inlined = body_shapes_.find(sh.input(0));
      if (inlined != body_shapes_.end()) shape = &inlined->second;
      for (const auto* list : {&g_.input(), &g_.value_info(), &g_.output()})
        for (const auto& vi : *list)
          if (shape == nullptr && vi.name() == sh.input(0) && vi.type().has_tensor_type() &&
              vi.type().tensor_type().has_shape())
            shape = &vi.type().tensor_type().shape();
      if (shape == nullptr) return false;
      const auto& dims = shape->dim();
      const int64_t r = dims.size();
      const int64_t k = static_cast<int64_t>(c) < 0 ? static_cast<int64_t>(c) + r : static_cast<int64_t>(c);
      if (k < 0 || k >= r || !dims[static_cast<int>(k)].has_dim_value()) return false;
      *v = static_cast<double>(dims[static_cast<int>(k)].dim_value());
      return true;
    }
    return false;
  }

  // Static shape of a main-graph tensor (inputs, value_info, outputs,
  // initializers); false when unknown.
  bool ShapeOf(const std::string& name, std::vector<int64_t>* s) const {
    for (const TensorProto& t : g_.initializer())
      if (t.name() == name) {
        s->assign(t.dims().begin(), t.dims().end());
        return true;
      }
    for (const auto* list : {&g_.input(), &g_.value_info(), &g_.output()})
      for (const auto& vi : *list) {
        if (vi.name() != name || !vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) continue;
        s->clear();
        for (const auto& d : vi.type().tensor_type().shape().dim()) {
          if (!d.has_dim_value()) return false;
          s->push_back(d.dim_value());
        }
        return true;
      }
    return false;
  }

  std::string ConstI64(const std::string& base, const std::vector<int64_t>& v, bool scalar) {
    TensorProto* t = g_.add_initializer();
    t->set_name(Fresh(base));
    t->set_data_type(TensorProto::INT64);
    if (!scalar) t->add_dims(static_cast<int64_t>(v.size()));
    for (int64_t x : v) t->add_int64_data(x);
    return t->name();
  }

  std::string ConstBool(const std::string& base, bool v) {
    TensorProto* t = g_.add_initializer();
    t->set_name(Fresh(base));
    t->set_data_type(TensorProto::BOOL);
    t->add_int32_data(v ? 1 : 0);
    return t->name();
  }

  NodeProto& Add(std::vector<NodeProto>* out, const std::string& op, const std::vector<std::string>& in,
                 const std::string& output, const std::string& name) {
    out->emplace_back();
    NodeProto& n = out->back();
    n.set_op_type(op);
    n.set_name(Fresh(name));
    for (const std::string& s : in) n.add_input(s);
    n.add_output(output);
    return n;
  }

  std::string Unsqueeze(std::vector<NodeProto>* out, const std::string& x, int64_t axis, const std::string& base) {
    const std::string y = Fresh(base);
    if (opset_ >= 13) {
      Add(out, "Unsqueeze", {x, ConstI64(base + "_axes", {axis}, false)}, y, base);
    } else {
      NodeProto& n = Add(out, "Unsqueeze", {x}, y, base);
      onnx::AttributeProto* a = n.add_attribute();
      a->set_name("axes");
      a->set_type(onnx::AttributeProto::INTS);
      a->add_ints(axis);
    }
    return y;
  }

  // Appends `body`'s nodes with every name local to it renamed under
  // `prefix`; `bind` maps the body's inputs to outer tensors. Returns the
  // outer names of the body's outputs.
  std::vector<std::string> InlineBody(const GraphProto& body, const std::string& prefix,
                                      const std::vector<std::string>& bind, std::vector<NodeProto>* out) {
    std::map<std::string, std::string> rename;
    for (int i = 0; i < body.input_size() && i < static_cast<int>(bind.size()); ++i)
      rename[body.input(i).name()] = bind[static_cast<size_t>(i)];
    for (const TensorProto& t : body.initializer()) {
      if (rename.count(t.name())) continue;  // IR < 4: an initializer listed as an input default
      TensorProto* c = g_.add_initializer();
      *c = t;
      c->set_name(Fresh(prefix + t.name()));
      rename[t.name()] = c->name();
    }
    for (const NodeProto& n : body.node())
      for (const std::string& o : n.output())
        if (!o.empty() && !rename.count(o)) rename[o] = Fresh(prefix + o);
    // The shapes ONNX inferred inside the body, under the inlined names, for
    // a nested If's condition on a static dimension (KnownShapeElement).
    for (const auto& vi : body.value_info()) {
      auto it = rename.find(vi.name());
      if (it != rename.end() && vi.type().has_tensor_type() && vi.type().tensor_type().has_shape())
        body_shapes_[it->second] = vi.type().tensor_type().shape();
    }
    std::function<void(GraphProto*)> rename_nested = [&](GraphProto* sg) {
      for (NodeProto& m : *sg->mutable_node()) {
        for (std::string& s : *m.mutable_input()) {
          auto it = rename.find(s);
          if (it != rename.end()) s = it->second;
        }
        for (auto& a : *m.mutable_attribute()) {
          if (a.has_g()) rename_nested(a.mutable_g());
          for (auto& gg : *a.mutable_graphs()) rename_nested(&gg);
        }
      }
      for (auto& o : *sg->mutable_output()) {
        auto it = rename.find(o.name());
        if (it != rename.end()) o.set_name(it->second);
      }
    };
    for (const NodeProto& n : body.node()) {
      NodeProto m = n;
      m.set_name(Fresh(prefix + (n.name().empty() ? n.op_type() : n.name())));
      for (std::string& s : *m.mutable_input()) {
        auto it = rename.find(s);
        if (it != rename.end()) s = it->second;
      }
      for (std::string& s : *m.mutable_output()) {
        auto it = rename.find(s);
        if (it != rename.end()) s = it->second;
      }
      for (auto& a : *m.mutable_attribute()) {
        if (a.has_g()) rename_nested(a.mutable_g());
        for (auto& gg : *a.mutable_graphs()) rename_nested(&gg);
      }
      out->push_back(std::move(m));
    }
    std::vector<std::string> outs;
    for (const auto& o : body.output()) {
      auto it = rename.find(o.name());
      outs.push_back(it != rename.end() ? it->second : o.name());  // an outer-scope value passed through
    }
    return outs;
  }

  Status If(const NodeProto& n, std::vector<NodeProto>* out) {
    const onnx::AttributeProto* tb = FindAttr(n, "then_branch");
    const onnx::AttributeProto* eb = FindAttr(n, "else_branch");
    if (!tb || !eb || n.input_size() < 1) return Refuse(n, "If needs a condition and both branches");
    if (tb->g().output_size() != n.output_size() || eb->g().output_size() != n.output_size())
      return Refuse(n, "the branches do not have one output per If output");
    const std::string base = (n.name().empty() ? "If" : n.name()) + "/";
    double c = 0;
    if (Known(n.input(0), &c)) {  // folded: only the taken branch
      const std::vector<std::string> outs =
          InlineBody(c != 0 ? tb->g() : eb->g(), base + (c != 0 ? "then/" : "else/"), {}, out);
      for (int k = 0; k < n.output_size(); ++k)
        if (!n.output(k).empty()) Add(out, "Identity", {outs[static_cast<size_t>(k)]}, n.output(k), base + "out");
      return Status::Ok();
    }
    const std::vector<std::string> t = InlineBody(tb->g(), base + "then/", {}, out);
    const std::vector<std::string> e = InlineBody(eb->g(), base + "else/", {}, out);
    for (int k = 0; k < n.output_size(); ++k) {
      if (n.output(k).empty()) continue;
      NodeProto& w = Add(out, "Where", {n.input(0), t[static_cast<size_t>(k)], e[static_cast<size_t>(k)]},
                         n.output(k), base + "select");
      selects_->insert(w.name());
    }
    return Status::Ok();
  }

  Status Loop(const NodeProto& n, std::vector<NodeProto>* out) {
    const onnx::AttributeProto* ba = FindAttr(n, "body");
    if (!ba || n.input_size() < 2) return Refuse(n, "Loop needs a body and the M and cond inputs");
    const GraphProto& body = ba->g();
    const int states = n.input_size() - 2;
    if (body.input_size() != 2 + states || body.output_size() < 1 + states)
      return Refuse(n, "the body's inputs and outputs do not match the loop-carried values");
    const int scans = body.output_size() - 1 - states;
    double m = 0, c = 1;
    // A trip count / condition read at run time with a range: unrolled to
    // the range's maximum, masked.
    const auto trip_range = RunTimeRange(n.input(0));
    const auto cond_range = n.input(1).empty() ? std::nullopt : RunTimeRange(n.input(1));
    // A run-time condition that may be false masks the iterations.
    const bool cond_may_stop = cond_range.has_value() && cond_range.value().first < 1;
    // The condition first: its range does not depend on the trip count's.
    // The body's condition output must stay true for unrolling: its
    // condition input passed through, or a constant true.
    const bool stays = ConditionStaysTrue(body);
    if (n.input(0).empty() && stays)
      return Refuse(n, "a Loop without a trip count whose body passes its condition through runs until a condition "
                       "only known at run time and never changes; give it a trip count");
    // Anything else unknown at conversion runs on the device, its body
    // compiled once (DeviceLoop).
    if (n.input(0).empty() || !stays || (!n.input(1).empty() && !cond_range && !Known(n.input(1), &c)) ||
        (!trip_range && !Known(n.input(0), &m)))
      return DeviceLoop(n, body, states, scans, out);
    // Scan outputs that may have no iteration take their slice shape from
    // the body, which unrolling never compiles then: such loops run on the
    // device too (with zero iterations, a [0, ...] result).
    if (cond_may_stop && scans > 0) return DeviceLoop(n, body, states, scans, out);
    if (trip_range) m = static_cast<double>(trip_range->second);
    const int64_t trips = c == 0 ? 0 : static_cast<int64_t>(m);
    if (scans > 0 && ((trip_range && trip_range->first < 1) || trips <= 0))
      return DeviceLoop(n, body, states, scans, out);
    if (trips > kMaxUnrolledIterations)
      return Refuse(n, "trip count " + std::to_string(trips) + " is above the unrolling limit of " +
                       std::to_string(kMaxUnrolledIterations));
    const std::string base = (n.name().empty() ? "Loop" : n.name()) + "/";
    std::vector<std::string> state(n.input().begin() + 2, n.input().end());
    std::vector<std::vector<std::string>> scanned(static_cast<size_t>(scans));
    const std::string cond = ConstBool(base + "cond", true);
    // Masked iterations: active_t = t < trip count (and the run-time
    // condition, which the body passes through unchanged).
    std::string trip_scalar, cond_scalar;
    if (trip_range) trip_scalar = Squeezed(out, n.input(0), base + "trip_count");
    if (cond_range) cond_scalar = Squeezed(out, n.input(1), base + "condition");
    for (int64_t t = 0; t < trips; ++t) {
      const std::string prefix = base + std::to_string(t) + "/";
      const std::string iteration = ConstI64(prefix + "iteration", {t}, true);
      std::vector<std::string> bind = {iteration, cond};
      bind.insert(bind.end(), state.begin(), state.end());
      const std::vector<std::string> outs = InlineBody(body, prefix, bind, out);
      std::string active;
      if (trip_range && t >= trip_range->first) {
        active = Fresh(prefix + "active");
        Add(out, "Less", {iteration, trip_scalar}, active, prefix + "active");
      }
      if (cond_may_stop) {
        if (active.empty()) {
          active = cond_scalar;
        } else {
          const std::string both = Fresh(prefix + "active_cond");
          Add(out, "And", {active, cond_scalar}, both, prefix + "active_cond");
          active = both;
        }
      }
      for (int k = 0; k < states; ++k) {
        std::string next = outs[static_cast<size_t>(1 + k)];
        if (!active.empty()) {  // an inactive iteration keeps the state
          const std::string kept = Fresh(prefix + "state");
          Add(out, "Where", {active, next, state[static_cast<size_t>(k)]}, kept, prefix + "keep");
          next = kept;
        }
        state[static_cast<size_t>(k)] = next;
      }
      for (int k = 0; k < scans; ++k)
        scanned[static_cast<size_t>(k)].push_back(
            Unsqueeze(out, outs[static_cast<size_t>(1 + states + k)], 0, prefix + "scan"));
    }
    if (!trip_range || trips == trip_range->first)
      return Finish(n, base, state, scanned, std::vector<int64_t>(static_cast<size_t>(scans), 0), out);
    // Scan outputs: the iterations that ran, the first (trip count) of the
    // stacked ones.
    const std::string ends = Fresh(base + "trip_count_1d");
    Add(out, "Reshape", {n.input(0), ConstI64(base + "shape_1d", {1}, false)}, ends, base + "trip_count_1d");
    NodeProto carried = n;
    std::vector<std::string> stacked;
    for (int k = 0; k < scans; ++k) {
      const int o = states + k;
      stacked.push_back(o < n.output_size() && !n.output(o).empty() ? Fresh(n.output(o) + "/all") : "");
      if (!stacked.back().empty()) carried.set_output(o, stacked.back());
    }
    OAAXVK_RETURN_IF_ERROR(
        Finish(carried, base, state, scanned, std::vector<int64_t>(static_cast<size_t>(scans), 0), out));
    for (int k = 0; k < scans; ++k) {
      if (stacked[static_cast<size_t>(k)].empty()) continue;
      Add(out, "Slice", {stacked[static_cast<size_t>(k)], ConstI64(base + "zero", {0}, false), ends,
                         ConstI64(base + "axis0", {0}, false)},
          n.output(states + k), base + "ran");
    }
    return Status::Ok();
  }

  // Whether a Loop body's condition output provably stays true: its
  // condition input passed through (directly or by an Identity), or a
  // constant true.
  static bool ConditionStaysTrue(const GraphProto& body) {
    const std::string& cond_out = body.output(0).name();
    bool stays = cond_out == body.input(1).name();
    for (const NodeProto& b : body.node()) {
      if (b.output_size() < 1 || b.output(0) != cond_out) continue;
      if (b.op_type() == "Identity" && b.input_size() == 1 && b.input(0) == body.input(1).name()) stays = true;
      if (b.op_type() == "Constant")
        for (const auto& a : b.attribute()) {
          double v = 0;
          if (a.name() == "value" && a.has_t() && FirstElement(a.t(), &v) && v != 0) stays = true;
        }
    }
    for (const TensorProto& t : body.initializer()) {
      double v = 0;
      if (t.name() == cond_out && FirstElement(t, &v) && v != 0) stays = true;
    }
    return stays;
  }

  // A Loop decided on the device (docs/toolchain.md "Control flow"): the
  // body inlined once between placeholder nodes that ir/loop_nodes.h merges
  // into _LoopBegin / _LoopEnd after import. Placeholders are plain ONNX
  // nodes, so ONNX shape inference types the body: Identity nodes for the
  // trip count, the iteration number (an int64 scalar), the condition and
  // each loop-carried value on the way in; Identity nodes for the body's
  // condition and each carried result, and an Unsqueeze per scan output (a
  // stack of at least one slice) on the way out. Each carries the
  // attributes _loop (the loop's name) and _loop_slot (ir/loop_nodes.h).
  Status DeviceLoop(const NodeProto& n, const GraphProto& body, int states, int scans, std::vector<NodeProto>* out) {
    const std::string name = n.name().empty() ? Fresh("Loop") : n.name();
    const std::string base = name + "/";
    auto mark = [&](NodeProto& p, int64_t slot) {
      onnx::AttributeProto* a = p.add_attribute();
      a->set_name("_loop");
      a->set_type(onnx::AttributeProto::STRING);
      a->set_s(name);
      onnx::AttributeProto* b = p.add_attribute();
      b->set_name("_loop_slot");
      b->set_type(onnx::AttributeProto::INT);
      b->set_i(slot);
    };
    auto pass = [&](const std::string& x, const std::string& what, int64_t slot) {
      const std::string y = Fresh(base + what);
      mark(Add(out, "Identity", {x}, y, base + what), slot);
      return y;
    };
    if (!n.input(0).empty()) pass(n.input(0), "trip_count", 0);
    std::vector<std::string> bind;
    bind.push_back(pass(ConstI64(base + "iteration_placeholder", {0}, true), "iteration", 1));
    bind.push_back(pass(n.input(1).empty() ? ConstBool(base + "cond_true", true) : n.input(1), "cond_in", 2));
    for (int k = 0; k < states; ++k) bind.push_back(pass(n.input(2 + k), "state_in", 10 + k));
    const std::vector<std::string> outs = InlineBody(body, base + "body/", bind, out);
    pass(outs[0], "cond_out", 1000);
    for (int k = 0; k < states + scans; ++k) {
      const bool scan = k >= states;
      const std::string y = k < n.output_size() && !n.output(k).empty() ? n.output(k)
                                                                         : Fresh(base + (scan ? "scan" : "state"));
      const int64_t slot = scan ? 3000 + (k - states) : 2000 + k;
      if (!scan) {
        mark(Add(out, "Identity", {outs[static_cast<size_t>(1 + k)]}, y, base + "state_out"), slot);
        continue;
      }
      // Unsqueeze into the output's own name (Unsqueeze() makes a fresh one).
      const std::string axes = ConstI64(base + "scan_axes", {0}, false);
      NodeProto& u = opset_ >= 13 ? Add(out, "Unsqueeze", {outs[static_cast<size_t>(1 + k)], axes}, y, base + "scan_out")
                                  : Add(out, "Unsqueeze", {outs[static_cast<size_t>(1 + k)]}, y, base + "scan_out");
      if (opset_ < 13) {
        onnx::AttributeProto* a = u.add_attribute();
        a->set_name("axes");
        a->set_type(onnx::AttributeProto::INTS);
        a->add_ints(0);
      }
      mark(u, slot);
      // The placeholder stacks one slice; the extent the first inference
      // gave (or a graph output declares) would contradict it: unknown.
      auto& infos = *g_.mutable_value_info();
      for (int j = infos.size(); j-- > 0;)
        if (infos.Get(j).name() == y) infos.DeleteSubrange(j, 1);
      for (onnx::ValueInfoProto& o : *g_.mutable_output())
        if (o.name() == y && o.type().tensor_type().shape().dim_size() > 0) {
          onnx::TensorShapeProto_Dimension* d = o.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0);
          d->clear_dim_value();
          d->clear_dim_param();
        }
    }
    return Status::Ok();
  }

  // The [min, max] of a single run-time value input (a trip count, a
  // condition); nullopt when `name` is not one.
  std::optional<std::pair<int64_t, int64_t>> RunTimeRange(const std::string& name) const {
    auto it = run_time_values_.find(name);
    if (it == run_time_values_.end() || it->second.first > it->second.second) return std::nullopt;
    return it->second;
  }

  // `x` (a one-element tensor) as a scalar.
  std::string Squeezed(std::vector<NodeProto>* out, const std::string& x, const std::string& base) {
    const std::string y = Fresh(base);
    Add(out, "Squeeze", {x}, y, base);  // no axes: every dimension of 1
    return y;
  }

  // Loop-carried results to the node's first outputs, then each scan output
  // as the Concat of its (unsqueezed) iterations along `axes`.
  Status Finish(const NodeProto& n, const std::string& base, const std::vector<std::string>& state,
                const std::vector<std::vector<std::string>>& scanned, const std::vector<int64_t>& axes,
                std::vector<NodeProto>* out) {
    for (size_t k = 0; k < state.size(); ++k)
      if (static_cast<int>(k) < n.output_size() && !n.output(static_cast<int>(k)).empty())
        Add(out, "Identity", {state[k]}, n.output(static_cast<int>(k)), base + "state");
    for (size_t k = 0; k < scanned.size(); ++k) {
      const int o = static_cast<int>(state.size() + k);
      if (o >= n.output_size() || n.output(o).empty()) continue;
      NodeProto& c = Add(out, "Concat", scanned[k], n.output(o), base + "stack");
      onnx::AttributeProto* a = c.add_attribute();
      a->set_name("axis");
      a->set_type(onnx::AttributeProto::INT);
      a->set_i(axes[k]);
    }
    return Status::Ok();
  }

  Status Scan(const NodeProto& n, std::vector<NodeProto>* out) {
    const onnx::AttributeProto* ba = FindAttr(n, "body");
    const onnx::AttributeProto* ns = FindAttr(n, "num_scan_inputs");
    if (!ba || !ns) return Refuse(n, "Scan needs a body and num_scan_inputs");
    const GraphProto& body = ba->g();
    const bool batched = opset_ < 9;  // opset 8: [batch, sequence, ...] and a sequence_lens input
    const int first = batched ? 1 : 0;
    if (batched && n.input_size() > 0 && !n.input(0).empty())
      return Refuse(n, "sequence_lens (opset 8) is not supported; leave it empty");
    const int m = static_cast<int>(ns->i()), ins = n.input_size() - first, states = ins - m;
    if (m < 1 || states < 0 || body.input_size() != ins || body.output_size() < states)
      return Refuse(n, "the body's inputs and outputs do not match the state and scan inputs");
    const int scans = body.output_size() - states;
    std::vector<int64_t> in_axes = IntsAttr(n, "scan_input_axes"), in_dirs = IntsAttr(n, "scan_input_directions"),
                         out_axes = IntsAttr(n, "scan_output_axes"), out_dirs = IntsAttr(n, "scan_output_directions");
    if (batched) in_dirs = IntsAttr(n, "directions");
    in_axes.resize(static_cast<size_t>(m), 0);
    in_dirs.resize(static_cast<size_t>(m), 0);
    out_axes.resize(static_cast<size_t>(scans), 0);
    out_dirs.resize(static_cast<size_t>(scans), 0);
    std::vector<int64_t> shape;
    const std::string& x0 = n.input(first + states);
    if (!ShapeOf(x0, &shape))
      return Refuse(n, "the scan input '" + x0 + "' has no static shape, so the number of iterations is unknown");
    const int64_t rank = static_cast<int64_t>(shape.size());
    int64_t axis0 = batched ? 1 : in_axes[0];
    if (axis0 < 0) axis0 += rank;
    if (axis0 < 0 || axis0 >= rank) return Refuse(n, "scan_input_axes[0] is out of range");
    const int64_t length = shape[static_cast<size_t>(axis0)];
    const int64_t batches = batched ? shape[0] : 1;
    if (length < 1) return Refuse(n, "the scan inputs are empty (zero-size tensors are not supported)");
    if (length * batches > kMaxUnrolledIterations)
      return Refuse(n, std::to_string(length * batches) + " iterations exceed the unrolling limit of " +
                       std::to_string(kMaxUnrolledIterations));
    const std::string base = (n.name().empty() ? "Scan" : n.name()) + "/";
    auto gather = [&](const std::string& x, int64_t index, int64_t axis, const std::string& name) {
      const std::string y = Fresh(name);
      NodeProto& gnode = Add(out, "Gather", {x, ConstI64(name + "_index", {index}, true)}, y, name);
      onnx::AttributeProto* a = gnode.add_attribute();
      a->set_name("axis");
      a->set_type(onnx::AttributeProto::INT);
      a->set_i(axis);
      return y;
    };
    std::vector<std::vector<std::string>> batch_state(static_cast<size_t>(states)),
        batch_scan(static_cast<size_t>(scans));
    for (int64_t b = 0; b < batches; ++b) {
      const std::string bp = batched ? base + "batch" + std::to_string(b) + "/" : base;
      std::vector<std::string> state;
      for (int k = 0; k < states; ++k)
        state.push_back(batched ? gather(n.input(first + k), b, 0, bp + "state_in") : n.input(first + k));
      std::vector<std::string> xs;
      for (int j = 0; j < m; ++j)
        xs.push_back(batched ? gather(n.input(first + states + j), b, 0, bp + "scan_in") : n.input(first + states + j));
      std::vector<std::vector<std::string>> scanned(static_cast<size_t>(scans));
      for (int64_t t = 0; t < length; ++t) {
        const std::string prefix = bp + std::to_string(t) + "/";
        std::vector<std::string> bind = state;
        for (int j = 0; j < m; ++j) {
          const int64_t idx = in_dirs[static_cast<size_t>(j)] ? length - 1 - t : t;
          bind.push_back(gather(xs[static_cast<size_t>(j)], idx, batched ? 0 : in_axes[static_cast<size_t>(j)],
                                prefix + "slice"));
        }
        const std::vector<std::string> outs = InlineBody(body, prefix, bind, out);
        for (int k = 0; k < states; ++k) state[static_cast<size_t>(k)] = outs[static_cast<size_t>(k)];
        for (int k = 0; k < scans; ++k) {
          auto& list = scanned[static_cast<size_t>(k)];
          const std::string u = Unsqueeze(out, outs[static_cast<size_t>(states + k)],
                                          batched ? 0 : out_axes[static_cast<size_t>(k)], prefix + "scan");
          if (out_dirs[static_cast<size_t>(k)]) list.insert(list.begin(), u); else list.push_back(u);
        }
      }
      if (!batched)
        return Finish(n, base, state, scanned, out_axes, out);
      for (int k = 0; k < states; ++k)
        batch_state[static_cast<size_t>(k)].push_back(Unsqueeze(out, state[static_cast<size_t>(k)], 0, bp + "state"));
      for (int k = 0; k < scans; ++k) {
        const std::string y = Fresh(bp + "stacked");
        NodeProto& c = Add(out, "Concat", scanned[static_cast<size_t>(k)], y, bp + "stack");
        onnx::AttributeProto* a = c.add_attribute();
        a->set_name("axis");
        a->set_type(onnx::AttributeProto::INT);
        a->set_i(0);
        batch_scan[static_cast<size_t>(k)].push_back(Unsqueeze(out, y, 0, bp + "scan_batch"));
      }
    }
    // Opset 8: the batches' results stacked along axis 0.
    std::vector<std::vector<std::string>> all = batch_state;
    all.insert(all.end(), batch_scan.begin(), batch_scan.end());
    return Finish(n, base, {}, all, std::vector<int64_t>(all.size(), 0), out);
  }

  // ---- Sequences and optionals (header comment) ----

  static bool IsSequenceOp(const NodeProto& n) { return IsOnnxDomain(n) && SequenceOps().count(n.op_type()) > 0; }

  // Sequence and optional graph inputs become tensor inputs: a sequence of
  // length L the inputs "x[0]" .. "x[L-1]" (shapes from config.json
  // "input_shapes"), an optional tensor that holds its element a tensor
  // input of its own name, an empty optional nothing.
  Status FlattenInputs() {
    std::set<std::string> inits;
    for (const TensorProto& t : g_.initializer()) inits.insert(t.name());
    std::vector<onnx::ValueInfoProto> inputs;
    for (const onnx::ValueInfoProto& vi : g_.input()) {
      if (vi.type().has_tensor_type() || inits.count(vi.name())) {
        inputs.push_back(vi);
        continue;
      }
      const std::string& name = vi.name();
      const onnx::TypeProto& ty = vi.type();
      Compound c;
      c.optional = ty.has_optional_type();
      const onnx::TypeProto& inner = c.optional ? ty.optional_type().elem_type() : ty;
      c.sequence = inner.has_sequence_type();
      const onnx::TypeProto* et = ElementTensorType(inner);
      if ((!c.sequence && !inner.has_tensor_type()) || et == nullptr)
        return Unimplemented("graph input '" + name + "' is not a tensor, a sequence of tensors or an optional of "
                             "either (maps are not supported)");
      auto length = compound_inputs_.lengths.find(name);
      const std::string example = c.sequence ? "[[2, 3], [4, 3]]" : "[2, 3]";
      if (length != compound_inputs_.lengths.end() && length->second < 0) {
        if (!c.optional)
          return InvalidArgument("config.json: input_shapes['" + name + "'] is null, but '" + name +
                                 "' is a sequence, not an optional; give its element shapes, e.g. " + example);
        c.present = false;
      } else if (c.sequence) {
        if (length == compound_inputs_.lengths.end())
          return InvalidArgument("graph input '" + name + "' is a " + (c.optional ? "optional " : "") +
                                 "sequence; give its length and element shapes in config.json, e.g. "
                                 "{\"input_shapes\": {\"" + name + "\": " + example + "}} for two elements sent as "
                                 "the inputs '" + ElementName(name, 0) + "' and '" + ElementName(name, 1) + "'" +
                                 (c.optional ? ", or null for an empty optional" : ""));
        for (int64_t i = 0; i < length->second; ++i) {
          const std::string e = ElementName(name, static_cast<size_t>(i));
          auto shape = compound_inputs_.shapes.find(e);
          if (shape == compound_inputs_.shapes.end()) return Internal("no shape for sequence element '" + e + "'");
          onnx::ValueInfoProto& x = inputs.emplace_back();
          OAAXVK_RETURN_IF_ERROR(ElementInput(e, *et, shape->second, /*own_name=*/false, &x));
          c.elems.push_back(e);
        }
      } else {
        if (length != compound_inputs_.lengths.end())
          return InvalidArgument("config.json: input_shapes['" + name + "'] is a list of shapes, but '" + name +
                                 "' is an optional tensor; give its shape, e.g. " + example +
                                 ", or null when it is empty");
        auto shape = compound_inputs_.shapes.find(name);
        if (shape == compound_inputs_.shapes.end())
          return InvalidArgument("graph input '" + name + "' is an optional tensor; say in config.json whether it "
                                 "holds one: its shape, e.g. {\"input_shapes\": {\"" + name + "\": " + example +
                                 "}}, or null for an empty optional");
        onnx::ValueInfoProto& x = inputs.emplace_back();
        OAAXVK_RETURN_IF_ERROR(ElementInput(name, *et, shape->second, /*own_name=*/true, &x));
        c.elems.push_back(name);
        // The tensor input keeps the name; the nodes read the optional under
        // a name of its own.
        const std::string optional = Fresh(name + "/optional");
        RenameReads(&g_, name, optional);
        compounds_[optional] = std::move(c);
        continue;
      }
      compounds_[name] = std::move(c);
    }
    g_.clear_input();
    for (onnx::ValueInfoProto& vi : inputs) *g_.add_input() = std::move(vi);
    return Status::Ok();
  }

  // Every read of `from` by a node of `g` and its subgraphs (outer-scope
  // references) becomes a read of `to`.
  static void RenameReads(GraphProto* g, const std::string& from, const std::string& to) {
    for (NodeProto& n : *g->mutable_node()) {
      for (std::string& i : *n.mutable_input())
        if (i == from) i = to;
      for (auto& a : *n.mutable_attribute()) {
        if (a.has_g()) RenameReads(a.mutable_g(), from, to);
        for (auto& sg : *a.mutable_graphs()) RenameReads(&sg, from, to);
      }
    }
  }

  // `vi` becomes tensor input `name` of element type `et` and `shape`;
  // `own_name`: the input keeps the name it has in the model (an optional
  // tensor), else the name must be new.
  Status ElementInput(const std::string& name, const onnx::TypeProto& et, const std::vector<int64_t>& shape,
                      bool own_name, onnx::ValueInfoProto* vi) {
    if (!own_name && used_.count(name))
      return InvalidArgument("the flattened input name '" + name + "' is already a tensor of the model");
    used_.insert(name);
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(et.tensor_type().elem_type());
    if (et.tensor_type().has_shape() && et.tensor_type().shape().dim_size() != static_cast<int>(shape.size()))
      return InvalidArgument("config.json: input_shapes['" + name + "'] has rank " + std::to_string(shape.size()) +
                             ", the model says " + std::to_string(et.tensor_type().shape().dim_size()));
    tt->mutable_shape();  // a scalar has a shape with no dimensions
    for (int64_t d : shape) tt->mutable_shape()->add_dim()->set_dim_value(d);
    return Status::Ok();
  }

  // Sequence and optional graph outputs become tensor outputs, named as the
  // inputs are; an empty optional output is left out.
  Status FlattenOutputs() {
    std::vector<onnx::ValueInfoProto> outputs;
    for (const onnx::ValueInfoProto& vi : g_.output()) {
      auto it = compounds_.find(vi.name());
      if (it == compounds_.end()) {
        const onnx::TypeProto* et = ElementTensorType(vi.type());
        bool input = false;  // an optional tensor input that holds its element, passed through
        for (const onnx::ValueInfoProto& i : g_.input()) input |= i.name() == vi.name();
        if (input && et != nullptr && vi.type().has_optional_type()) {
          onnx::ValueInfoProto& o = outputs.emplace_back();
          o.set_name(vi.name());
          o.mutable_type()->mutable_tensor_type()->set_elem_type(et->tensor_type().elem_type());
          continue;
        }
        if (!vi.type().has_tensor_type() && vi.has_type())
          return Unimplemented("graph output '" + vi.name() + "' is a sequence or optional that the conversion could "
                               "not resolve into tensors");
        outputs.push_back(vi);
        continue;
      }
      const Compound& c = it->second;
      if (!c.present) continue;
      const onnx::TypeProto* et = ElementTensorType(vi.type());
      for (size_t i = 0; i < c.elems.size(); ++i) {
        const std::string name = c.sequence ? ElementName(vi.name(), i) : vi.name();
        if (c.sequence && used_.count(name))
          return InvalidArgument("the flattened output name '" + name + "' is already a tensor of the model");
        used_.insert(name);
        NodeProto* n = g_.add_node();
        n->set_op_type("Identity");
        n->set_name(Fresh(vi.name() + "/element"));
        n->add_input(c.elems[i]);
        n->add_output(name);
        onnx::ValueInfoProto& o = outputs.emplace_back();
        o.set_name(name);
        if (et != nullptr) o.mutable_type()->mutable_tensor_type()->set_elem_type(et->tensor_type().elem_type());
      }
    }
    g_.clear_output();
    for (onnx::ValueInfoProto& vi : outputs) *g_.add_output() = std::move(vi);
    // value_info of the sequences and optionals that are gone.
    std::vector<onnx::ValueInfoProto> infos;
    for (const onnx::ValueInfoProto& vi : g_.value_info())
      if (vi.type().has_tensor_type()) infos.push_back(vi);
    g_.clear_value_info();
    for (onnx::ValueInfoProto& vi : infos) *g_.add_value_info() = std::move(vi);
    return Status::Ok();
  }

  // The initializer named `name`, or (with `nodes`) the value of the
  // Constant node that outputs it; nullptr when neither.
  const TensorProto* ConstTensor(const std::string& name, bool nodes = true) const {
    for (const TensorProto& t : g_.initializer())
      if (t.name() == name) return &t;
    if (nodes)
      for (const NodeProto& n : g_.node())
        if (n.op_type() == "Constant" && n.output_size() == 1 && n.output(0) == name)
          for (const auto& a : n.attribute())
            if (a.name() == "value" && a.has_t()) return &a.t();
    return nullptr;
  }

  // The integers of an int32 / int64 constant (initializer or Constant
  // node) and whether it is a scalar; false when `name` is not one.
  bool KnownInts(const std::string& name, std::vector<int64_t>* v, bool* scalar) const {
    const TensorProto* t = ConstTensor(name);
    if (t == nullptr || t->data_location() == TensorProto::EXTERNAL) return false;
    try {
      if (t->data_type() == TensorProto::INT64) {
        *v = onnx::ParseData<int64_t>(t);
      } else if (t->data_type() == TensorProto::INT32) {
        const std::vector<int32_t> w = onnx::ParseData<int32_t>(t);
        v->assign(w.begin(), w.end());
      } else {
        return false;
      }
    } catch (const std::exception&) {
      return false;
    }
    *scalar = t->dims_size() == 0;
    return true;
  }

  // The integers config.json "input_values" binds graph input `name` to, and
  // whether that input is a scalar; false when it is not bound (or is read at
  // run time).
  bool BoundInts(const std::string& name, std::vector<int64_t>* v, bool* scalar) const {
    auto b = bound_.find(name);
    if (b == bound_.end() || run_time_values_.count(name)) return false;
    std::vector<int64_t> shape;
    if (!ShapeOf(name, &shape)) return false;
    v->clear();
    for (const ConfigNumber& c : b->second) {
      if (!c.is_integer) return false;
      v->push_back(c.integer);
    }
    *scalar = shape.empty();
    return true;
  }

  // A one-element integer tensor named `name` (the output of a node that is
  // compiled away), visible to Known() at once.
  void ConstNamed(const std::string& name, int data_type, int64_t v) {
    TensorProto* t = g_.add_initializer();
    t->set_name(name);
    t->set_data_type(data_type);
    if (data_type == TensorProto::INT64) t->add_int64_data(v); else t->add_int32_data(static_cast<int32_t>(v));
  }

  Status Sequence(const NodeProto& n, std::vector<NodeProto>* out) {
    const std::string& op = n.op_type();
    const std::string base = (n.name().empty() ? op : n.name()) + "/";
    auto input = [&](int i) -> const std::string& {
      static const std::string kNone;
      return i < n.input_size() ? n.input(i) : kNone;
    };
    // The sequence read as input i.
    auto seq = [&](int i, const Compound** c) -> Status {
      auto it = compounds_.find(input(i));
      if (it == compounds_.end() || !it->second.sequence || (it->second.optional && !it->second.present))
        return Refuse(n, "input '" + input(i) + "' is not a sequence known at conversion (sequences are compiled "
                         "away, so their lengths and positions must be known at conversion)");
      *c = &it->second;
      return Status::Ok();
    };
    // A position input known at conversion, in [-size, size - 1 + extra].
    auto position = [&](int i, int64_t size, int64_t extra, int64_t fallback, int64_t* pos) -> Status {
      if (input(i).empty()) {
        *pos = fallback;
        return Status::Ok();
      }
      double p = 0;
      if (!Known(input(i), &p))
        return Refuse(n, "the position input '" + input(i) + "' is not a compile-time constant; sequences are "
                         "compiled away, so positions must be known at conversion (a constant, or an input bound "
                         "by config.json \"input_values\")");
      int64_t v = static_cast<int64_t>(p);
      if (v < -size || v > size - 1 + extra)
        return Refuse(n, "position " + std::to_string(v) + " is out of range for a sequence of " +
                         std::to_string(size) + " tensors");
      *pos = v < 0 ? v + size : v;
      return Status::Ok();
    };
    auto output = [&]() -> const std::string& { return n.output(0); };
    auto alias = [&](const std::string& from, const std::string& to) {
      Add(out, "Identity", {from}, to, base + "element");
    };
    if (n.output_size() < 1) return Refuse(n, "no output");
    if (op == "SequenceEmpty") {
      compounds_[output()] = Compound{};
    } else if (op == "SequenceConstruct") {
      Compound c;
      for (const std::string& i : n.input()) {
        if (compounds_.count(i)) return Refuse(n, "input '" + i + "' is not a tensor");
        c.elems.push_back(i);
      }
      compounds_[output()] = std::move(c);
    } else if (op == "SequenceInsert") {
      const Compound* s = nullptr;
      OAAXVK_RETURN_IF_ERROR(seq(0, &s));
      const int64_t size = static_cast<int64_t>(s->elems.size());
      int64_t pos = 0;
      OAAXVK_RETURN_IF_ERROR(position(2, size, 1, size, &pos));
      Compound c = *s;
      c.optional = false;
      c.elems.insert(c.elems.begin() + pos, input(1));
      compounds_[output()] = std::move(c);
    } else if (op == "SequenceErase") {
      const Compound* s = nullptr;
      OAAXVK_RETURN_IF_ERROR(seq(0, &s));
      const int64_t size = static_cast<int64_t>(s->elems.size());
      if (size == 0) return Refuse(n, "the sequence is empty");
      int64_t pos = 0;
      OAAXVK_RETURN_IF_ERROR(position(1, size, 0, size - 1, &pos));
      Compound c = *s;
      c.optional = false;
      c.elems.erase(c.elems.begin() + pos);
      compounds_[output()] = std::move(c);
    } else if (op == "SequenceAt") {
      const Compound* s = nullptr;
      OAAXVK_RETURN_IF_ERROR(seq(0, &s));
      const int64_t size = static_cast<int64_t>(s->elems.size());
      if (input(1).empty()) return Refuse(n, "SequenceAt needs a position");
      int64_t pos = 0;
      OAAXVK_RETURN_IF_ERROR(position(1, size, 0, 0, &pos));
      alias(s->elems[static_cast<size_t>(pos)], output());
    } else if (op == "SequenceLength") {
      const Compound* s = nullptr;
      OAAXVK_RETURN_IF_ERROR(seq(0, &s));
      ConstNamed(output(), TensorProto::INT64, static_cast<int64_t>(s->elems.size()));
    } else if (op == "SplitToSequence") {
      OAAXVK_RETURN_IF_ERROR(SplitToSequence(n, base, out));
    } else if (op == "ConcatFromSequence") {
      const Compound* s = nullptr;
      OAAXVK_RETURN_IF_ERROR(seq(0, &s));
      if (s->elems.empty()) return Refuse(n, "the sequence is empty (zero-size tensors are not supported)");
      const onnx::AttributeProto* ax = FindAttr(n, "axis");
      const onnx::AttributeProto* na = FindAttr(n, "new_axis");
      if (!ax) return Refuse(n, "ConcatFromSequence needs the axis attribute");
      std::vector<std::string> parts = s->elems;
      if (na && na->i() != 0)
        for (std::string& p : parts) p = Unsqueeze(out, p, ax->i(), base + "unsqueeze");
      NodeProto& c = Add(out, "Concat", parts, output(), base + "concat");
      onnx::AttributeProto* a = c.add_attribute();
      a->set_name("axis");
      a->set_type(onnx::AttributeProto::INT);
      a->set_i(ax->i());
    } else if (op == "SequenceMap") {
      OAAXVK_RETURN_IF_ERROR(SequenceMap(n, base, out));
    } else if (op == "Optional") {
      Compound c;
      c.optional = true;
      if (!input(0).empty()) {
        auto it = compounds_.find(input(0));
        if (it != compounds_.end()) {
          if (it->second.optional) return Refuse(n, "an optional of an optional");
          c.elems = it->second.elems;
        } else {
          c.sequence = false;
          c.elems = {input(0)};
        }
      } else {
        const onnx::AttributeProto* type = FindAttr(n, "type");
        if (!type || !type->has_tp()) return Refuse(n, "an empty Optional needs the type attribute");
        c.present = false;
        c.sequence = type->tp().has_sequence_type();
      }
      compounds_[output()] = std::move(c);
    } else if (op == "OptionalHasElement") {
      auto it = compounds_.find(input(0));
      const bool has = it == compounds_.end() ? !input(0).empty() : it->second.present;
      ConstNamed(output(), TensorProto::BOOL, has ? 1 : 0);
    } else if (op == "OptionalGetElement") {
      auto it = compounds_.find(input(0));
      if (it == compounds_.end()) {
        alias(input(0), output());  // a tensor (opset 18)
      } else if (!it->second.present) {
        return Refuse(n, "the optional input '" + input(0) + "' is empty (ONNX: an error)");
      } else if (it->second.sequence) {
        Compound c = it->second;
        c.optional = false;
        compounds_[output()] = std::move(c);
      } else {
        alias(it->second.elems[0], output());
      }
    } else if (op == "Identity") {
      compounds_[output()] = compounds_.at(input(0));
    } else if (op == "Where" && selects_->count(n.name())) {
      OAAXVK_RETURN_IF_ERROR(SelectCompounds(n, base, out));
    } else {
      std::string which;
      for (const std::string& i : n.input())
        if (compounds_.count(i)) which = i;
      return Refuse(n, "it reads the sequence or optional '" + which + "'; only the sequence and optional "
                       "operators, Identity, If, Loop and SequenceMap take those");
    }
    return Status::Ok();
  }

  // An If's run-time selection between two sequences / optionals: element
  // by element, when both branches give the same structure.
  Status SelectCompounds(const NodeProto& n, const std::string& base, std::vector<NodeProto>* out) {
    auto t = compounds_.find(n.input(1)), e = compounds_.find(n.input(2));
    if (t == compounds_.end() || e == compounds_.end())
      return Refuse(n, "one If branch gives a sequence or optional, the other a tensor");
    const Compound& a = t->second;
    const Compound& b = e->second;
    const std::string run_time = "the condition input '" + n.input(0) + "' is not a compile-time constant, and ";
    if (a.optional != b.optional || a.sequence != b.sequence || a.present != b.present)
      return Refuse(n, run_time + "the If branches give " +
                           (a.present != b.present ? "an empty optional in one branch and a full one in the other"
                                                   : "values of different kinds") +
                           "; with a condition read at run time which one the model returns is only known at run "
                           "time (bind the condition in config.json \"input_values\" to keep one branch)");
    if (a.elems.size() != b.elems.size())
      return Refuse(n, run_time + "the If branches give sequences of " + std::to_string(a.elems.size()) + " and " +
                       std::to_string(b.elems.size()) + " tensors; with a condition read at run time the length "
                       "would only be known at run time (bind the condition in config.json \"input_values\")");
    Compound c = a;
    for (size_t i = 0; i < a.elems.size(); ++i) {
      const std::string y = Fresh(n.output(0) + "/" + std::to_string(i));
      NodeProto& w = Add(out, "Where", {n.input(0), a.elems[i], b.elems[i]}, y, base + "select");
      selects_->insert(w.name());
      c.elems[i] = y;
    }
    selects_->erase(n.name());
    compounds_[n.output(0)] = std::move(c);
    return Status::Ok();
  }

  Status SplitToSequence(const NodeProto& n, const std::string& base, std::vector<NodeProto>* out) {
    const std::string& x = n.input(0);
    std::vector<int64_t> shape;
    if (!ShapeOf(x, &shape))
      return Refuse(n, "the input '" + x + "' has no static shape, so the number of pieces is unknown");
    const onnx::AttributeProto* ax = FindAttr(n, "axis");
    const onnx::AttributeProto* kd = FindAttr(n, "keepdims");
    int64_t axis = ax ? ax->i() : 0;
    const int64_t rank = static_cast<int64_t>(shape.size());
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return Refuse(n, "axis is out of range");
    const int64_t dim = shape[static_cast<size_t>(axis)];
    std::vector<int64_t> sizes;
    bool keep = true;
    if (n.input_size() < 2 || n.input(1).empty()) {
      sizes.assign(static_cast<size_t>(dim), 1);
      keep = !kd || kd->i() != 0;
    } else {
      std::vector<int64_t> split;
      bool scalar = false;
      if (!KnownInts(n.input(1), &split, &scalar) && !BoundInts(n.input(1), &split, &scalar)) {
        // A list of k sizes read at run time: k pieces, whatever the values;
        // Split computes their extents per inference (the sizes become value
        // symbols, a guard requires them to add up to the axis' extent).
        std::vector<int64_t> split_shape;
        if (opset_ >= 13 && ShapeOf(n.input(1), &split_shape) && split_shape.size() == 1 && split_shape[0] >= 1 &&
            split_shape[0] <= kMaxUnrolledIterations) {
          NodeProto& sp = Add(out, "Split", {x, n.input(1)}, Fresh(base + "piece"), base + "split");
          for (int64_t k = 1; k < split_shape[0]; ++k) sp.add_output(Fresh(base + "piece"));
          onnx::AttributeProto* a = sp.add_attribute();
          a->set_name("axis");
          a->set_type(onnx::AttributeProto::INT);
          a->set_i(axis);
          Compound c;
          c.elems.assign(sp.output().begin(), sp.output().end());
          compounds_[n.output(0)] = std::move(c);
          return Status::Ok();
        }
        return Refuse(n, "the split input '" + n.input(1) + "' is not a compile-time constant; sequences are "
                         "compiled away, so their lengths must be known at conversion (a scalar split decides "
                         "the number of pieces; a list of sizes needs a static length)");
      }
      if (scalar) {  // pieces of that size, the last one shorter
        const int64_t s = split.empty() ? 0 : split[0];
        if (s < 1) return Refuse(n, "split must be positive");
        for (int64_t o = 0; o < dim; o += s) sizes.push_back(std::min(s, dim - o));
      } else {
        sizes = split;
        int64_t total = 0;
        for (int64_t s : sizes) {
          if (s < 1) return Refuse(n, "split sizes must be positive (zero-size tensors are not supported)");
          total += s;
        }
        if (total != dim) return Refuse(n, "split sizes do not sum to the axis' extent " + std::to_string(dim));
      }
    }
    if (sizes.empty()) return Refuse(n, "the input is empty (zero-size tensors are not supported)");
    if (static_cast<int64_t>(sizes.size()) > kMaxUnrolledIterations)
      return Refuse(n, std::to_string(sizes.size()) + " pieces exceed the limit of " +
                       std::to_string(kMaxUnrolledIterations));
    Compound c;
    int64_t offset = 0;
    for (int64_t s : sizes) {
      const std::string y = Fresh(base + "piece");
      if (!keep) {  // pieces of 1 without the axis
        NodeProto& gn = Add(out, "Gather", {x, ConstI64(base + "index", {offset}, true)}, y, base + "gather");
        onnx::AttributeProto* a = gn.add_attribute();
        a->set_name("axis");
        a->set_type(onnx::AttributeProto::INT);
        a->set_i(axis);
      } else {
        Add(out, "Slice",
            {x, ConstI64(base + "starts", {offset}, false), ConstI64(base + "ends", {offset + s}, false),
             ConstI64(base + "axes", {axis}, false)},
            y, base + "slice");
      }
      c.elems.push_back(y);
      offset += s;
    }
    compounds_[n.output(0)] = std::move(c);
    return Status::Ok();
  }

  // SequenceMap: the body once per element; sequence inputs give their i-th
  // element, tensor inputs themselves.
  Status SequenceMap(const NodeProto& n, const std::string& base, std::vector<NodeProto>* out) {
    const onnx::AttributeProto* ba = FindAttr(n, "body");
    if (!ba || !ba->has_g()) return Refuse(n, "SequenceMap needs a body");
    const GraphProto& body = ba->g();
    if (body.input_size() != n.input_size() || body.output_size() != n.output_size())
      return Refuse(n, "the body's inputs and outputs do not match the node's");
    auto first = compounds_.find(n.input(0));
    if (first == compounds_.end() || !first->second.sequence)
      return Refuse(n, "the first input '" + n.input(0) + "' is not a sequence known at conversion");
    const size_t length = first->second.elems.size();
    for (const std::string& i : n.input()) {
      auto it = compounds_.find(i);
      if (it != compounds_.end() && (!it->second.sequence || it->second.elems.size() != length))
        return Refuse(n, "the sequence inputs '" + n.input(0) + "' and '" + i + "' differ in length");
    }
    std::vector<Compound> results(static_cast<size_t>(n.output_size()));
    for (size_t e = 0; e < length; ++e) {
      std::vector<std::string> bind;
      for (const std::string& i : n.input()) {
        auto it = compounds_.find(i);
        bind.push_back(it == compounds_.end() ? i : it->second.elems[e]);
      }
      const std::vector<std::string> outs = InlineBody(body, base + std::to_string(e) + "/", bind, out);
      for (size_t k = 0; k < outs.size(); ++k) results[k].elems.push_back(outs[k]);
    }
    for (int k = 0; k < n.output_size(); ++k) compounds_[n.output(k)] = std::move(results[static_cast<size_t>(k)]);
    return Status::Ok();
  }

  GraphProto& g_;
  const InputValues& bound_;
  const std::map<std::string, std::pair<int64_t, int64_t>>& run_time_values_;
  const CompoundInputs& compound_inputs_;
  std::set<std::string>* selects_;
  std::map<std::string, onnx::TensorShapeProto> body_shapes_;  // inlined body tensors' inferred shapes
  std::map<std::string, Compound> compounds_;
  std::set<std::string> used_;
  int64_t opset_ = 0;
};

}  // namespace

Status InlineControlFlow(onnx::ModelProto& model, const InputValues& bound,
                         const std::map<std::string, std::pair<int64_t, int64_t>>& run_time_values,
                         const CompoundInputs& compound_inputs,
                         std::set<std::string>* selects) {
  Inliner in(model, bound, run_time_values, compound_inputs, selects);
  return in.Run();
}

bool IsInlinedOp(const std::string& domain, const std::string& op_type) {
  if (!domain.empty() && domain != "ai.onnx") return false;
  return op_type == "If" || op_type == "Loop" || op_type == "Scan" || SequenceOps().count(op_type) > 0;
}

bool HasControlFlowOrSequences(const onnx::ModelProto& model) {
  const GraphProto& g = model.graph();
  for (const NodeProto& n : g.node())
    if (IsInlinedOp(n.domain(), n.op_type())) return true;
  for (const auto* list : {&g.input(), &g.output()})
    for (const auto& vi : *list)
      if (vi.has_type() && !vi.type().has_tensor_type()) return true;
  return false;
}

}  // namespace oaaxvk::toolchain
