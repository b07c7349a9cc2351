#include "toolchain/import/control_flow.h"

#include <cstring>
#include <functional>
#include <map>
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

class Inliner {
 public:
  Inliner(onnx::ModelProto& model, const InputValues& bound, std::set<std::string>* selects)
      : g_(*model.mutable_graph()), bound_(bound), selects_(selects) {
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
    for (int round = 0; round < 64; ++round) {
      bool any = false;
      std::vector<NodeProto> out;
      for (const NodeProto& n : g_.node()) {
        const bool onnx_domain = n.domain().empty() || n.domain() == "ai.onnx";
        if (onnx_domain && (n.op_type() == "If" || n.op_type() == "Loop" || n.op_type() == "Scan")) {
          any = true;
          if (n.op_type() == "If") {
            OAAXVK_RETURN_IF_ERROR(If(n, &out));
          } else if (n.op_type() == "Loop") {
            OAAXVK_RETURN_IF_ERROR(Loop(n, &out));
          } else {
            OAAXVK_RETURN_IF_ERROR(Scan(n, &out));
          }
        } else {
          out.push_back(n);
        }
        if (out.size() > kMaxInlinedNodes)
          return ResourceExhausted("control flow: inlining If/Loop/Scan gives more than " +
                                   std::to_string(kMaxInlinedNodes) + " nodes (at node '" + NodeLabel(n) + "))");
      }
      g_.clear_node();
      for (NodeProto& n : out) *g_.add_node() = std::move(n);
      if (!any) return Status::Ok();
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
    for (const TensorProto& t : g_.initializer())
      if (t.name() == name) return FirstElement(t, v);
    for (const NodeProto& n : g_.node()) {
      if (n.op_type() != "Constant" || n.output_size() != 1 || n.output(0) != name) continue;
      for (const auto& a : n.attribute()) {
        if (a.name() == "value" && a.has_t()) return FirstElement(a.t(), v);
        if (a.name() == "value_int") { *v = static_cast<double>(a.i()); return true; }
        if (a.name() == "value_float") { *v = a.f(); return true; }
      }
      return false;
    }
    auto b = bound_.find(name);
    if (b != bound_.end() && b->second.size() == 1) {
      *v = b->second[0].is_integer ? static_cast<double>(b->second[0].integer) : b->second[0].value;
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
    if (n.input(0).empty())
      return Refuse(n, "a Loop without a trip count runs until a condition only known at run time; only loops with "
                       "a trip count known at conversion are unrolled");
    if (!Known(n.input(0), &m))
      return Refuse(n, "the trip count input '" + n.input(0) + "' is not a compile-time constant; only loops with a "
                       "trip count known at conversion (a constant, or an input bound by config.json "
                       "\"input_values\") are unrolled");
    if (!n.input(1).empty() && !Known(n.input(1), &c))
      return Refuse(n, "the loop condition input '" + n.input(1) + "' is not a compile-time constant; only loops "
                       "whose condition stays true are unrolled");
    // The body's condition output must stay true: its condition input passed
    // through, or a constant true.
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
    if (!stays)
      return Refuse(n, "the body computes its loop condition ('" + cond_out +
                       "'), which may end the loop early at run time; only loops whose condition stays true are "
                       "unrolled");
    const int64_t trips = c == 0 ? 0 : static_cast<int64_t>(m);
    if (trips > kMaxUnrolledIterations)
      return Refuse(n, "trip count " + std::to_string(trips) + " is above the unrolling limit of " +
                       std::to_string(kMaxUnrolledIterations));
    if (trips <= 0 && scans > 0)
      return Refuse(n, "the loop runs no iteration, so its scan outputs are empty (zero-size tensors are not "
                       "supported)");
    const std::string base = (n.name().empty() ? "Loop" : n.name()) + "/";
    std::vector<std::string> state(n.input().begin() + 2, n.input().end());
    std::vector<std::vector<std::string>> scanned(static_cast<size_t>(scans));
    const std::string cond = ConstBool(base + "cond", true);
    for (int64_t t = 0; t < trips; ++t) {
      const std::string prefix = base + std::to_string(t) + "/";
      std::vector<std::string> bind = {ConstI64(prefix + "iteration", {t}, true), cond};
      bind.insert(bind.end(), state.begin(), state.end());
      const std::vector<std::string> outs = InlineBody(body, prefix, bind, out);
      for (int k = 0; k < states; ++k) state[static_cast<size_t>(k)] = outs[static_cast<size_t>(1 + k)];
      for (int k = 0; k < scans; ++k)
        scanned[static_cast<size_t>(k)].push_back(
            Unsqueeze(out, outs[static_cast<size_t>(1 + states + k)], 0, prefix + "scan"));
    }
    return Finish(n, base, state, scanned, std::vector<int64_t>(static_cast<size_t>(scans), 0), out);
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

  GraphProto& g_;
  const InputValues& bound_;
  std::set<std::string>* selects_;
  std::set<std::string> used_;
  int64_t opset_ = 0;
};

}  // namespace

Status InlineControlFlow(onnx::ModelProto& model, const InputValues& bound, std::set<std::string>* selects) {
  Inliner in(model, bound, selects);
  return in.Run();
}

}  // namespace oaaxvk::toolchain
