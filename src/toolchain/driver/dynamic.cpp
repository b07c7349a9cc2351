#include "toolchain/driver/dynamic.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <set>

#include "toolchain/ir/extent.h"
#include "toolchain/ir/shape_infer_float.h"
#include "toolchain/ir/shape_infer_int.h"
#include "toolchain/passes/passes.h"

namespace oaaxvk::toolchain {

StatusOr<std::vector<Symbol>> ResolveSymbols(const ModelConfig& config) {
  for (const auto& [input, syms] : config.input_symbols)
    for (const std::string& s : syms) {
      if (s.empty()) continue;
      if (!config.dimensions.count(s))
        return InvalidArgument("config.json: input_shapes['" + input + "'] names the symbolic dimension '" + s +
                               "', which has no range; add it to \"dimensions\", e.g. {\"dimensions\": {\"" + s +
                               "\": {\"min\": 1, \"max\": 8}}}");
    }
  // A name in input_values: a run-time value symbol, sampled like a dimension.
  std::map<std::string, std::pair<std::string, int64_t>> value_of;  // name -> (input, element)
  for (const auto& [input, names] : config.value_symbols)
    for (size_t j = 0; j < names.size(); ++j) {
      const std::string& s = names[j];
      const std::string where = "config.json: input_values['" + input + "'] element " + std::to_string(j) + " ('" + s + "')";
      if (!config.dimensions.count(s))
        return InvalidArgument(where + " has no range; add it to \"dimensions\", e.g. {\"dimensions\": {\"" + s +
                               "\": {\"min\": 1, \"max\": 8}}}");
      if (value_of.count(s))
        return InvalidArgument(where + ": the name is already used by input_values['" + value_of[s].first +
                               "']; give every run-time value its own name");
      value_of[s] = {input, static_cast<int64_t>(j)};
    }
  for (const auto& [input, syms] : config.input_symbols)
    for (const std::string& s : syms)
      if (value_of.count(s))
        return InvalidArgument("config.json: '" + s + "' names both a dimension of input_shapes['" + input +
                               "'] and an element of input_values['" + value_of[s].first +
                               "']; a run-time value and an input dimension need different names");
  std::vector<Symbol> out;
  for (const auto& [name, sym] : config.dimensions) {
    Symbol s = sym;
    auto v = value_of.find(name);
    if (v != value_of.end()) {
      s.value_input = v->second.first;
      s.value_element = v->second.second;
      s.sampled = true;
    } else if (sym.value_min != static_cast<double>(sym.min) || sym.value_max != static_cast<double>(sym.max)) {
      return InvalidArgument(StrFormat("config.json: dimensions['%s'] = [%g, %g]: a dimension's range holds integers "
                                       "(fractions are for the run-time values of a float input)",
                                       name.c_str(), sym.value_min, sym.value_max));
    } else if (sym.min < 0) {
      // 0 is a valid extent: the tensors of such a shape have no elements
      // (docs/toolchain.md "Zero-size tensors").
      return InvalidArgument(StrFormat("config.json: dimensions['%s'].min is %lld; a dimension must be at least 0 "
                                       "(only a run-time value named in \"input_values\" may be negative)",
                                       name.c_str(), static_cast<long long>(sym.min)));
    }
    s.multiple_of = std::max<int64_t>(1, s.multiple_of);
    s.min = CeilDivI(sym.min, s.multiple_of) * s.multiple_of;
    s.max = FloorDivI(sym.max, s.multiple_of) * s.multiple_of;
    if (s.min > s.max)
      return InvalidArgument(StrFormat("config.json: dimensions['%s'] = [%lld, %lld] holds no multiple of %lld",
                                       name.c_str(), static_cast<long long>(sym.min), static_cast<long long>(sym.max),
                                       static_cast<long long>(s.multiple_of)));
    out.push_back(s);
  }
  return out;
}

// The scale of a float Range's bounds read at run time: the largest power
// of two 2^k (k <= 50) for which every bound of the Range (the ranges of
// its value symbols, its constant bounds) times 2^k stays below 2^50, so
// that limit - start and the length's arithmetic fit in int64 exactly.
int64_t RangeScale(const Graph& g, const Node& n, const std::vector<Symbol>& symbols) {
  double largest = 1;
  for (size_t k = 0; k < 3 && k < n.inputs.size(); ++k) {
    for (const Symbol& y : symbols)
      if (y.is_value() && y.value_input == n.inputs[k])
        largest = std::max({largest, std::fabs(y.value_min), std::fabs(y.value_max)});
    const Tensor* t = g.FindTensor(n.inputs[k]);
    if (t != nullptr && t->is_const && t->numel() == 1 && std::isfinite(t->AsDoubles()[0]))
      largest = std::max(largest, std::fabs(t->AsDoubles()[0]));
  }
  int e = 0;
  std::frexp(largest, &e);  // largest < 2^e
  return int64_t{1} << std::clamp(50 - e, 0, 50);
}

Status ScaleFloatValueSymbols(const Graph& g, std::vector<Symbol>* symbols) {
  const auto consumers = g.Consumers();
  for (Symbol& y : *symbols) {
    if (!y.is_value() || !y.sampled) continue;
    const Tensor* t = g.FindTensor(y.value_input);
    const std::string where = "config.json: input_values['" + y.value_input + "'] element " +
                              std::to_string(y.value_element) + " ('" + y.name + "')";
    if (t == nullptr) return InvalidArgument(where + ": '" + y.value_input + "' is not a graph input");
    if (!IsFloatLike(t->dtype)) {
      if (y.value_min != static_cast<double>(y.min) || y.value_max != static_cast<double>(y.max))
        return InvalidArgument(StrFormat("%s: input '%s' is an integer tensor, but dimensions['%s'] = [%g, %g] holds "
                                         "fractions", where.c_str(), y.value_input.c_str(), y.name.c_str(),
                                         y.value_min, y.value_max));
      continue;
    }
    // A float value reaches sizes only as a Resize / Upsample scale (the
    // output size floor(x * scale)) or a OneHot depth (floor(depth)).
    int64_t factor = 0;
    auto it = consumers.find(y.value_input);
    for (size_t ni : it == consumers.end() ? std::vector<size_t>{} : it->second) {
      const Node& n = g.nodes[ni];
      for (size_t k = 0; k < n.inputs.size(); ++k) {
        if (n.inputs[k] != y.value_input) continue;
        int64_t f = 0;
        const bool scales = ((n.op_type == "Resize" && k == (g.opset < 11 ? 1u : 2u)) ||
                             (n.op_type == "Upsample" && k == 1));
        if (scales) {
          const Tensor* x = g.FindTensor(n.inputs[0]);
          // The dimension the scale applies to: Resize-18's `axes` lists them.
          int64_t dim = y.value_element;
          if (const std::vector<int64_t> axes = n.GetInts("axes", {}); n.op_type == "Resize" && !axes.empty() &&
                                                                          x != nullptr && x->has_shape) {
            const int64_t r = static_cast<int64_t>(x->shape.size());
            dim = static_cast<size_t>(y.value_element) < axes.size() ? axes[y.value_element] : -r - 1;
            dim = dim < 0 ? dim + r : dim;
          }
          // An outer dimension is not resized: its scale must be exactly 1,
          // which floor(e * 2^24) == 2^24 checks for a float32 e (the Resize
          // guard); a resized one's symbol is the output size.
          if (x != nullptr && x->has_shape && dim >= 0 && dim + 2 < static_cast<int64_t>(x->shape.size()))
            f = kOuterScaleFactor;
          else if (x != nullptr && x->has_shape && dim >= 0 && static_cast<size_t>(dim) < x->shape.size() &&
                   !x->shape[dim].is_symbolic())
            f = x->shape[dim].value();
          if (f < 1)
            return Unimplemented(where + ": the scale of " + n.op_type + " '" + n.name +
                                 "' applies to a dimension that is symbolic or 0; run-time scales need a static "
                                 "input dimension (the output size is floor(dimension x scale))");
        } else if (n.op_type == "OneHot" && k == 1) {
          f = 1;
        } else if (n.op_type == "Range" && k <= 2) {
          f = RangeScale(g, n, *symbols);
          y.value_exact = true;
        } else {
          return Unimplemented(where + ": the float input '" + y.value_input + "' is read by " + n.op_type + " '" +
                               n.name + "' (input " + std::to_string(k) + "); a float input can be read at run time "
                               "only as Resize / Upsample scales, a OneHot depth or Range bounds (bind it to numbers "
                               "instead)");
        }
        if (factor != 0 && factor != f)
          return Unimplemented(where + ": the input is used by several operators with different dimensions");
        factor = f;
      }
    }
    if (factor == 0) return InvalidArgument(where + ": no operator reads the input '" + y.value_input + "'");
    y.value_scale = factor;
    const double lo = std::floor(y.value_min * static_cast<double>(factor));
    const double hi = std::floor(y.value_max * static_cast<double>(factor));
    if (!(hi < 9.0e15) || !(lo > -9.0e15))
      return InvalidArgument(StrFormat("%s: the range [%g, %g] gives sizes beyond 2^53", where.c_str(), y.value_min,
                                       y.value_max));
    y.min = CeilDivI(static_cast<int64_t>(lo), y.multiple_of) * y.multiple_of;
    y.max = FloorDivI(static_cast<int64_t>(hi), y.multiple_of) * y.multiple_of;
    if (y.min > y.max)
      return InvalidArgument(StrFormat("%s: [%g, %g] x %lld holds no size that is a multiple of %lld", where.c_str(),
                                       y.value_min, y.value_max, static_cast<long long>(factor),
                                       static_cast<long long>(y.multiple_of)));
  }
  return Status::Ok();
}

StatusOr<std::vector<Symbol>> FindDecidedSymbols(const Graph& g) {
  std::vector<Symbol> out;
  for (const Node& n : g.nodes) {
    if (n.op_type != "Where" || n.GetInt("_if_select", 0) == 0 || n.inputs.size() != 3 || n.outputs.empty()) continue;
    const Tensor* t = g.FindTensor(n.inputs[1]);
    const Tensor* e = g.FindTensor(n.inputs[2]);
    if (t == nullptr || e == nullptr || !t->has_shape || !e->has_shape || t->shape.size() != e->shape.size() ||
        t->shape == e->shape)
      continue;  // equal shapes select with Where; unknown ones are refused by shape inference
    bool then_ge = true, else_ge = true;
    for (size_t a = 0; a < t->shape.size(); ++a) {
      then_ge = then_ge && t->shape[a].value() >= e->shape[a].value();
      else_ge = else_ge && e->shape[a].value() >= t->shape[a].value();
    }
    if (!then_ge && !else_ge)
      return Unimplemented("node '" + n.name + "' (Where): the If branches give output '" + n.outputs[0] +
                           "' the shapes " + ShapeToString(t->shape) + " and " + ShapeToString(e->shape) +
                           ", neither of which holds the other; with a condition read at run time the output is "
                           "planned at the larger branch's shape (bind the condition in config.json "
                           "\"input_values\" to keep only the taken branch)");
    for (const char* suffix : {"/cond", "/larger"}) {
      Symbol y(n.outputs[0] + suffix, 0, 1, 1);
      y.decided = true;
      out.push_back(std::move(y));
    }
  }
  return out;
}

std::vector<DecidedExtent> FindDecidedExtents(const Graph& g) {
  std::vector<DecidedExtent> out;
  bool any = false;  // the passes run only for a model with such an operator
  for (const Node& n : g.nodes)
    any = any || n.op_type == "NonZero" || n.op_type == "Compress" || n.op_type == "NonMaxSuppression";
  if (!any) return out;
  // The passes go on past each refusal (the reader's outputs then carry no
  // extent), so one run finds every extent that a reader refuses; a refusal
  // of a tensor derived from a converted extent shows in the next run.
  for (size_t round = 0; round < 8; ++round) {
    Graph copy = g;
    for (const DecidedExtent& e : out)
      for (Node& n : copy.nodes)
        if (n.name == e.node) n.SetInt("_decided_extent", -1);
    ExtentRefusalRecorder recorder(/*keep_going=*/true);
    (void)RunDefaultPipeline(copy);
    bool added = false;
    for (const RefusedExtent& r : recorder.refused()) {
      if (r.producer.empty() || r.planned <= 0) continue;
      bool known = false, convertible = false;
      for (const DecidedExtent& e : out) known = known || e.node == r.producer || e.symbol.name == r.extent;
      for (const Node& n : g.nodes)
        convertible = convertible || (n.name == r.producer && (n.op_type == "NonZero" || n.op_type == "Compress" ||
                                                               n.op_type == "NonMaxSuppression"));
      if (known || !convertible) continue;
      DecidedExtent e;
      e.node = r.producer;
      e.symbol = Symbol(r.extent, 0, r.planned, 1);
      e.symbol.decided = true;
      out.push_back(std::move(e));
      added = true;
    }
    if (!added) break;  // (the passes may still fail on something else: the compilation reports it)
  }
  return out;
}

void AddDecidedSymbols(const std::vector<Symbol>& decided, std::vector<Symbol>* symbols,
                       std::vector<std::vector<int64_t>>* points, const std::vector<Symbol>& extents) {
  if (decided.empty() && extents.empty()) return;
  const size_t base_points = points->size();
  for (const std::vector<Symbol>* list : {&decided, &extents})
    for (const Symbol& y : *list) {
      symbols->push_back(y);
      for (std::vector<int64_t>& pt : *points) pt.push_back(y.max);
    }
  const size_t first = symbols->size() - decided.size() - extents.size();
  auto add = [&](std::vector<int64_t> pt) {
    if (std::find(points->begin(), points->end(), pt) == points->end()) points->push_back(std::move(pt));
  };
  for (size_t k = 0; k < std::min<size_t>(base_points, 2); ++k) {
    std::vector<int64_t> pt = (*points)[k];
    for (size_t j = 0; j < decided.size() + extents.size(); ++j)
      pt[first + j] = j < decided.size() ? decided[j].min : extents[j - decided.size()].min;
    add(pt);
  }
  // With several Ifs, each one's smaller branch alone (at the maximum of the
  // rest), so a size that two of them shape is checked with them apart. An
  // If owns a run of decided symbols sharing the prefix before the last '/'.
  auto owner = [](const std::string& name) { return name.substr(0, name.rfind('/')); };
  for (size_t j = 0; j < decided.size() && base_points > 0;) {
    size_t end = j;
    while (end < decided.size() && owner(decided[end].name) == owner(decided[j].name)) ++end;
    if (j > 0 || end < decided.size()) {
      std::vector<int64_t> pt = (*points)[0];
      for (size_t i = j; i < end; ++i) pt[first + i] = decided[i].min;
      add(pt);
    }
    j = end;
  }
}

std::vector<Symbol> FindValueSymbols(const Graph& g, const ModelConfig& config) {
  std::vector<Symbol> out;
  const auto consumers = g.Consumers();
  for (const GraphIO& io : g.inputs) {
    if (config.input_values.count(io.name) || config.value_symbols.count(io.name)) continue;
    const Tensor* t = g.FindTensor(io.tensor);
    if (t == nullptr || t->is_const || !t->has_shape || t->shape.size() > 1 || AnySymbolic(t->shape)) continue;
    if (t->dtype != DType::kInt64 && t->dtype != DType::kInt32) continue;
    const int64_t numel = NumElements(t->shape).value();
    if (numel < 1 || numel > 8 || g.IsGraphOutput(io.tensor)) continue;
    auto it = consumers.find(io.tensor);
    if (it == consumers.end()) continue;
    int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
    bool ok = true;
    for (size_t ni : it->second) {
      const Node& n = g.nodes[ni];
      for (size_t k = 0; k < n.inputs.size() && ok; ++k) {
        if (n.inputs[k] != io.tensor) continue;
        const Tensor* data = g.FindTensor(n.inputs[0]);
        const bool data_known = data != nullptr && data->has_shape && k != 0;
        if (n.op_type == "Reshape" && k == 1) {
          const int64_t count = data_known ? NumElements(data->shape).value() : int64_t{2147483647};
          lo = std::max<int64_t>(lo, -1);
          // An empty input (allowzero's [3, 4, 0] of a [0, 3, 4]) takes any
          // extents whose product is 0 (the guard), and none sizes a buffer;
          // the bound keeps the shape at the plan's point (every element at
          // its maximum) within 32-bit element counts.
          const auto fits = [numel](int64_t h) {
            int64_t p = 1;
            for (int64_t j = 0; j < numel && p <= 2147483647; ++j) p *= h;
            return p <= 2147483647;
          };
          int64_t empty_hi = static_cast<int64_t>(std::pow(2147483647.0, 1.0 / static_cast<double>(numel)));
          while (empty_hi > 1 && !fits(empty_hi)) --empty_hi;
          while (fits(empty_hi + 1)) ++empty_hi;
          hi = std::min<int64_t>(hi, count == 0 ? empty_hi : std::max<int64_t>(count, 1));
        } else if ((n.op_type == "Squeeze" || n.op_type == "Unsqueeze" || n.op_type == "CumSum") && k == 1 &&
                   data_known && !n.HasAttr("axes") && (n.op_type != "CumSum" || numel == 1)) {
          const int64_t r = static_cast<int64_t>(data->shape.size()) + (n.op_type == "Unsqueeze" ? numel : 0);
          if (r < 1) { ok = false; break; }
          lo = std::max<int64_t>(lo, -r);
          hi = std::min<int64_t>(hi, r - 1);
        } else if (n.op_type == "Slice" && k >= 1 && k <= 4 && data_known && !n.HasAttr("starts")) {
          // starts / ends / steps: any int64 (clamped as ONNX says); axes: [-r, r - 1].
          const int64_t r = static_cast<int64_t>(data->shape.size());
          if (k == 3) {
            lo = std::max<int64_t>(lo, -r);
            hi = std::min<int64_t>(hi, r - 1);
          }
        } else if (IsReduceOp(n.op_type) && k == 1 && data_known && !n.HasAttr("axes") &&
                   n.GetInt("noop_with_empty_axes", 0) == 0) {
          const int64_t r = static_cast<int64_t>(data->shape.size());
          if (r < 1 || numel > r) { ok = false; break; }
          lo = std::max<int64_t>(lo, -r);
          hi = std::min<int64_t>(hi, r - 1);
        } else if (n.op_type == "Split" && k == 1 && data_known && !data->shape.empty()) {
          const int64_t r = static_cast<int64_t>(data->shape.size());
          int64_t axis = n.GetInt("axis", 0);
          if (axis < 0) axis += r;
          if (axis < 0 || axis >= r) { ok = false; break; }
          lo = std::max<int64_t>(lo, 0);
          hi = std::min<int64_t>(hi, data->shape[axis].value());
        } else if (n.op_type == "TopK" && k == 1 && numel == 1 && data_known && !data->shape.empty()) {
          const int64_t r = static_cast<int64_t>(data->shape.size());
          int64_t axis = n.GetInt("axis", -1);
          if (axis < 0) axis += r;
          if (axis < 0 || axis >= r) { ok = false; break; }
          lo = std::max<int64_t>(lo, 1);
          hi = std::min<int64_t>(hi, data->shape[axis].value());
        } else {
          ok = false;
        }
      }
      if (!ok) break;
    }
    if (!ok || lo > hi) continue;
    for (int64_t j = 0; j < numel; ++j) {
      Symbol s;
      s.name = t->shape.empty() ? io.name : io.name + "[" + std::to_string(j) + "]";
      s.min = lo;
      s.max = hi;
      s.multiple_of = 1;
      s.value_input = io.name;
      s.value_element = j;
      out.push_back(s);
    }
  }
  return out;
}

std::vector<std::vector<int64_t>> SamplePoints(const std::vector<Symbol>& symbols) {
  const size_t n = symbols.size();
  std::vector<int64_t> mx(n), mn(n), mid(n), next(n);
  for (size_t i = 0; i < n; ++i) {
    const Symbol& s = symbols[i];
    mx[i] = s.max;
    mn[i] = s.min;
    next[i] = std::min(s.max, s.min + s.multiple_of);
    // An interior value that is an odd multiple of multiple_of (odd sizes
    // exercise loop tails), different for each symbol.
    const int64_t steps = (s.max - s.min) / s.multiple_of;
    int64_t k = steps / 2 + static_cast<int64_t>(i % 3);
    if (k > steps) k = steps;
    int64_t v = s.min + k * s.multiple_of;
    if ((v / s.multiple_of) % 2 == 0 && v + s.multiple_of <= s.max) v += s.multiple_of;
    else if ((v / s.multiple_of) % 2 == 0 && v - s.multiple_of >= s.min) v -= s.multiple_of;
    mid[i] = v;
  }
  std::vector<std::vector<int64_t>> pts = {mx, mn};
  for (size_t i = 0; i < n && n > 1; ++i) {
    std::vector<int64_t> p = mx;
    p[i] = mn[i];
    pts.push_back(p);
  }
  pts.push_back(mid);
  pts.push_back(next);
  std::vector<int64_t> mixed = mid;  // interior values beside extremes
  for (size_t i = 0; i < n; i += 2) mixed[i] = mx[i];
  for (size_t i = 1; i < n; i += 2) mixed[i] = mn[i];
  pts.push_back(mixed);
  std::vector<std::vector<int64_t>> out;
  for (const auto& p : pts)
    if (std::find(out.begin(), out.end(), p) == out.end() && out.size() < 8) out.push_back(p);
  return out;
}

std::vector<std::vector<int64_t>> ResiduePoints(const SymContext& ctx, const std::vector<int64_t>& base,
                                                const std::vector<std::vector<int64_t>>& have) {
  const std::vector<Symbol>& syms = ctx.symbols();
  const std::vector<SymNode>& nodes = ctx.nodes();
  // The symbols each node reads (operands precede the nodes that use them).
  std::vector<std::vector<bool>> deps(nodes.size(), std::vector<bool>(syms.size(), false));
  std::vector<std::set<int64_t>> divisors(syms.size());
  for (size_t e = 0; e < nodes.size(); ++e) {
    const SymNode& nd = nodes[e];
    if (nd.op == SymOp::kConst) continue;
    if (nd.op == SymOp::kSymbol) {
      if (nd.a >= 0 && static_cast<size_t>(nd.a) < syms.size()) deps[e][static_cast<size_t>(nd.a)] = true;
      continue;
    }
    for (int64_t o : {nd.a, nd.b})
      for (size_t k = 0; k < syms.size(); ++k) deps[e][k] = deps[e][k] || deps[static_cast<size_t>(o)][k];
    const bool divides = nd.op == SymOp::kFloorDiv || nd.op == SymOp::kCeilDiv || nd.op == SymOp::kMod;
    if (!divides || nodes[static_cast<size_t>(nd.b)].op != SymOp::kConst) continue;
    const int64_t d = nodes[static_cast<size_t>(nd.b)].a;
    if (d < 2 || d > kMaxResidueDivisor) continue;
    for (size_t k = 0; k < syms.size(); ++k)
      if (deps[static_cast<size_t>(nd.a)][k]) divisors[k].insert(d);
  }
  std::vector<std::vector<int64_t>> out;
  for (size_t k = 0; k < syms.size() && k < base.size(); ++k) {
    const Symbol& y = syms[k];
    if ((y.is_value() && !y.sampled) || divisors[k].empty()) continue;
    // One modulus covering every divisor when their lcm is small, else each divisor alone.
    int64_t l = 1;
    for (int64_t d : divisors[k]) l = std::min<int64_t>(kMaxResidueDivisor + 1, l / std::gcd(l, d) * d);
    std::vector<int64_t> moduli = l <= kMaxResidueDivisor ? std::vector<int64_t>{l}
                                                           : std::vector<int64_t>(divisors[k].begin(), divisors[k].end());
    const int64_t mult = std::max<int64_t>(1, y.multiple_of);
    const int64_t top = y.min + (y.max - y.min) / mult * mult;
    for (int64_t m : moduli) {
      // Values top, top - mult, ... take m / gcd(m, mult) residues modulo m, then repeat.
      const int64_t classes = m / std::gcd(m, mult);
      for (int64_t j = 0; j < classes && top - j * mult >= y.min; ++j) {
        std::vector<int64_t> p = base;
        p[k] = top - j * mult;
        if (std::find(have.begin(), have.end(), p) == have.end() && std::find(out.begin(), out.end(), p) == out.end())
          out.push_back(std::move(p));
      }
    }
  }
  return out;
}

std::string PointToString(const std::vector<Symbol>& symbols, const std::vector<int64_t>& point) {
  std::string r;
  for (size_t i = 0; i < symbols.size() && i < point.size(); ++i)
    r += (i ? ", " : "") + symbols[i].name + "=" + std::to_string(point[i]);
  return r;
}

namespace {

class Checker {
 public:
  Checker(const SymContext& ctx, const std::vector<int64_t>& point) : ctx_(ctx), point_(point) {}

  // Whether canonical field `c` evaluated at the point equals `got` (as
  // 32-bit patterns when `bits32`).
  Status Field(const Dim& c, int64_t got, bool bits32, const std::string& what) const {
    int64_t want = c.value();
    if (c.is_symbolic()) {
      StatusOr<int64_t> v = ctx_.Eval(c.expr(), point_);
      if (!v.ok()) return v.status().WithContext(what);
      want = *v;
    }
    const bool same = bits32 ? static_cast<uint32_t>(want) == static_cast<uint32_t>(got) : want == got;
    if (same) return Status::Ok();
    const std::string at = PointToString(ctx_.symbols(), point_);
    if (!c.is_symbolic()) {
      // The bundle holds one number where the model computes another at
      // other sizes: nothing in the bundle follows the symbols there.
      return InvalidArgument(StrFormat(
          "dynamic shapes: %s is %s when the model is compiled at %s, but the bundle holds it as the constant %s "
          "(its value at the ranges' reference sizes): this value follows the input's size in the model, through "
          "a computation the toolchain evaluates only at fixed sizes (float arithmetic such as a Resize scale "
          "derived from fixed output `sizes`, or floor(float(H) * scale)). A model whose output size is fixed in "
          "the export (e.g. Resize `sizes` given as numbers) does not follow a dynamic input size anyway. Convert "
          "with fixed sizes in config.json \"input_shapes\" (one bundle per size), or export the model with its "
          "sizes computed from the input's shape",
          what.c_str(), ShowValue(got, bits32).c_str(), at.c_str(), ShowValue(want, bits32).c_str()));
    }
    return InvalidArgument(StrFormat(
        "dynamic shapes: %s is %s when the model is compiled at %s, but the bundle's size expression (%s) gives "
        "%s there: this operator, or the shape computation feeding it (a size computed in float arithmetic, "
        "e.g. floor(float(H) * scale), has no size expression), does not carry that size symbolically; bind the "
        "dimension to a number in config.json \"input_shapes\" (or export the model with a fixed input size)",
        what.c_str(), ShowValue(got, bits32).c_str(), at.c_str(), ctx_.ToString(c.expr()).c_str(),
        ShowValue(want, bits32).c_str()));
  }

  // A field's value for a message: the number, or for a 32-bit field (a
  // specialization value, possibly a float's bits) the float it encodes too.
  static std::string ShowValue(int64_t v, bool bits32) {
    if (!bits32) return std::to_string(v);
    const uint32_t u = static_cast<uint32_t>(v);
    float f;
    std::memcpy(&f, &u, sizeof f);
    const bool plausible_float =
        std::isfinite(f) && (u & 0x7f800000u) != 0 && std::fabs(f) < 1e9f && std::fabs(f) >= 1e-6f;
    if (!plausible_float) return std::to_string(static_cast<int32_t>(u));
    return StrFormat("%d (as a float: %g)", static_cast<int32_t>(u), static_cast<double>(f));
  }

 private:
  const SymContext& ctx_;
  const std::vector<int64_t>& point_;
};

std::string Where(const Dispatch& d, size_t i) {
  return StrFormat("node '%s' (%s), dispatch %zu (%s)", d.node.c_str(), d.op_type.c_str(), i, d.kernel.c_str());
}

Status Rows(const Checker& ck, const std::string& where, const char* table, const Dim cg[3], const Dim sg[3],
            const std::vector<Dim>& cs, const std::vector<Dim>& ss) {
  for (int a = 0; a < 3; ++a)
    OAAXVK_RETURN_IF_ERROR(ck.Field(cg[a], sg[a].value(), false,
                                    StrFormat("%s: %s group count %c", where.c_str(), table, "xyz"[a])));
  if (cs.size() != ss.size())
    return Unimplemented(where + ": the " + table + " kernel's specialization differs between shapes");
  for (size_t k = 0; k < cs.size(); ++k)
    OAAXVK_RETURN_IF_ERROR(
        ck.Field(cs[k], ss[k].value(), true, StrFormat("%s: %s specialization value %zu", where.c_str(), table, k)));
  return Status::Ok();
}

}  // namespace

Status CheckSample(const Program& canonical, const SymContext& ctx, const Program& sample,
                   const std::vector<int64_t>& point) {
  const std::string at = " when compiled at " + PointToString(ctx.symbols(), point);
  Checker ck(ctx, point);
  if (canonical.dispatches.size() != sample.dispatches.size() || canonical.values.size() != sample.values.size())
    return Unimplemented(StrFormat("dynamic shapes: the program has %zu dispatches / %zu buffers at the maximum "
                                   "shape but %zu / %zu%s: passes or lowering depend on the shape",
                                   canonical.dispatches.size(), canonical.values.size(), sample.dispatches.size(),
                                   sample.values.size(), at.c_str()));
  for (size_t i = 0; i < canonical.dispatches.size(); ++i) {
    const Dispatch& c = canonical.dispatches[i];
    const Dispatch& s = sample.dispatches[i];
    const std::string where = Where(c, i);
    if (c.kernel != s.kernel || c.cpu_kernel != s.cpu_kernel || c.gpu_kernel != s.gpu_kernel ||
        c.node != s.node)
      return Unimplemented("dynamic shapes: " + where + " selects kernel " + c.kernel + " [cpu: " + c.cpu_kernel +
                           ", gpu: " + c.gpu_kernel + "] at the maximum shape but node '" + s.node + "' kernel " +
                           s.kernel + " [cpu: " + s.cpu_kernel + ", gpu: " + s.gpu_kernel + "]" + at);
    if (c.bindings.size() != s.bindings.size() || c.gpu_bindings.size() != s.gpu_bindings.size())
      return Unimplemented("dynamic shapes: " + where + " binds different buffers" + at);
    for (size_t b = 0; b < c.bindings.size(); ++b)
      if (c.bindings[b].value != s.bindings[b].value || c.bindings[b].written != s.bindings[b].written)
        return Unimplemented("dynamic shapes: " + where + " binds different buffers" + at);
    OAAXVK_RETURN_IF_ERROR(Rows(ck, where, "default", c.groups, s.groups, c.spec, s.spec));
    if (!c.cpu_kernel.empty())
      OAAXVK_RETURN_IF_ERROR(Rows(ck, where, "cpu", c.cpu_groups, s.cpu_groups, c.cpu_spec, s.cpu_spec));
    if (!c.gpu_kernel.empty())
      OAAXVK_RETURN_IF_ERROR(Rows(ck, where, "gpu", c.gpu_groups, s.gpu_groups, c.gpu_spec, s.gpu_spec));
  }
  for (size_t v = 0; v < canonical.values.size(); ++v) {
    const Value& c = canonical.values[v];
    if (c.kind != sample.values[v].kind || c.tensor != sample.values[v].tensor)
      return Unimplemented("dynamic shapes: buffer " + std::to_string(v) + " ('" + c.tensor + "') differs" + at);
    OAAXVK_RETURN_IF_ERROR(
        ck.Field(c.bytes, sample.values[v].bytes.value(), false, "the size in bytes of tensor '" + c.tensor + "'"));
    // A constant computed at conversion from a symbol (a run-time value that
    // a decomposition read as a number) would be baked into the bundle at
    // the maximum: its contents must be the same at every point. A sample
    // compiled without weight bytes (LowerOptions::weight_bytes) carries
    // their digests, and a binary16 copy without bytes is settled by its
    // float32 source, a kWeights value compared here as well.
    const Value& s = sample.values[v];
    const bool by_digest = c.kind == BufferKind::kWeights && s.data.empty() && !c.data.empty();
    const bool differs =
        by_digest ? (c.digest != 0 ? c.digest : WeightsDigest(c.data)) != s.digest
                  : (c.kind == BufferKind::kWeights || (c.kind == BufferKind::kWeightsF16 && !s.data.empty())) &&
                        c.data != s.data;
    if (differs)
      return Unimplemented("dynamic shapes: the constant '" + c.tensor + "' is computed at conversion from " +
                           "a dimension or run-time value and differs" + at +
                           ": the operator that reads it needs it at conversion; bind the input (config.json "
                           "\"input_values\" with numbers) or the dimension");
  }
  auto io = [&](const std::vector<IoDesc>& cv, const std::vector<IoDesc>& sv, const char* what) -> Status {
    if (cv.size() != sv.size()) return Internal(std::string("dynamic shapes: ") + what + " count differs" + at);
    for (size_t i = 0; i < cv.size(); ++i) {
      if (cv[i].shape.size() != sv[i].shape.size())
        return Unimplemented(StrFormat("dynamic shapes: %s '%s' has rank %zu at the maximum shape but %zu%s", what,
                                       cv[i].name.c_str(), cv[i].shape.size(), sv[i].shape.size(), at.c_str()));
      for (size_t k = 0; k < cv[i].shape.size(); ++k)
        OAAXVK_RETURN_IF_ERROR(ck.Field(cv[i].shape[k], sv[i].shape[k].value(), false,
                                        StrFormat("dimension %zu of %s '%s'", k, what, cv[i].name.c_str())));
    }
    return Status::Ok();
  };
  OAAXVK_RETURN_IF_ERROR(io(canonical.inputs, sample.inputs, "input"));
  OAAXVK_RETURN_IF_ERROR(io(canonical.outputs, sample.outputs, "output"));
  return Status::Ok();
}

Status BoundBufferSizes(Program* p, const SymContext& ctx, uint64_t max_points) {
  const std::vector<Symbol>& syms = ctx.symbols();
  std::vector<size_t> todo;
  for (size_t i = 0; i < p->values.size(); ++i) {
    const Value& v = p->values[i];
    if (v.bytes.is_symbolic() && !ctx.IsMonotone(v.bytes.expr())) todo.push_back(i);
  }
  if (todo.empty()) return Status::Ok();
  std::vector<int64_t> bound(todo.size(), 0);
  for (size_t k = 0; k < todo.size(); ++k) bound[k] = p->values[todo[k]].bytes.value();
  uint64_t points = 1;
  for (const Symbol& s : syms) {
    const __int128 span = (static_cast<__int128>(s.max) - s.min) / s.multiple_of + 1;  // value symbols may span int64
    points = span > static_cast<__int128>(max_points) || points * static_cast<uint64_t>(span) > max_points
                 ? max_points + 1
                 : points * static_cast<uint64_t>(span);
  }
  if (points <= max_points) {
    // Every point of the domain where the guards hold (elsewhere the runtime
    // refuses the input).
    std::vector<int64_t> cur(syms.size());
    for (size_t i = 0; i < syms.size(); ++i) cur[i] = syms[i].min;
    for (;;) {
      StatusOr<std::vector<int64_t>> vals = ctx.EvalAll(cur);
      bool valid = vals.ok();
      // A guard reading a decided symbol is checked only once the control
      // program has set it (runtime/control_program.h): the segments before
      // run at points where it may fail, so those points count here.
      for (const SymGuard& gd : ctx.guards())
        valid = valid && ((*vals)[gd.expr] != 0 || ReadsDecidedSymbol(Dim(0, gd.expr)));
      for (size_t k = 0; k < todo.size() && valid; ++k) {
        const int64_t b = (*vals)[p->values[todo[k]].bytes.expr()];
        if (b < 0)
          return Unimplemented(StrFormat("dynamic shapes: the size of tensor '%s' is %lld bytes at %s (%s)",
                                         p->values[todo[k]].tensor.c_str(), static_cast<long long>(b),
                                         PointToString(syms, cur).c_str(),
                                         ctx.ToString(p->values[todo[k]].bytes.expr()).c_str()));
        bound[k] = std::max(bound[k], b);
      }
      size_t i = 0;
      for (; i < syms.size(); ++i) {
        if (cur[i] + syms[i].multiple_of <= syms[i].max) { cur[i] += syms[i].multiple_of; break; }
        cur[i] = syms[i].min;
      }
      if (i == syms.size()) break;
    }
  } else {
    for (size_t k = 0; k < todo.size(); ++k)
      bound[k] = std::max(bound[k], ctx.UpperBound(p->values[todo[k]].bytes.expr()));
  }
  constexpr int64_t kLimit = int64_t{1} << 40;
  for (size_t k = 0; k < todo.size(); ++k) {
    Value& v = p->values[todo[k]];
    if (bound[k] <= v.bytes.value()) continue;
    if (bound[k] > kLimit)
      return Unimplemented(StrFormat("dynamic shapes: the size of tensor '%s' (%s bytes) is not bounded by its value "
                                     "at the maximum shape, and over the symbols' ranges it can reach %lld bytes; "
                                     "narrow the ranges",
                                     v.tensor.c_str(), ctx.ToString(v.bytes.expr()).c_str(),
                                     static_cast<long long>(bound[k])));
    if (v.kind == BufferKind::kOutputs && v.io_index >= 0) {
      bool by_value = false;
      for (const Dim& d : p->outputs[v.io_index].shape)
        by_value = by_value || (d.is_symbolic() && ctx.DependsOnValue(d.expr()));
      if (!by_value)
        return Unimplemented(StrFormat("dynamic shapes: graph output '%s' needs %lld bytes within the ranges, more "
                                       "than the %lld bytes of its shape at the maximum (%s bytes); narrow the ranges",
                                       p->outputs[v.io_index].name.c_str(), static_cast<long long>(bound[k]),
                                       static_cast<long long>(v.bytes.value()),
                                       ctx.ToString(v.bytes.expr()).c_str()));
    }
    v.capacity = static_cast<uint64_t>(bound[k]);
  }
  return Status::Ok();
}

}  // namespace oaaxvk::toolchain
