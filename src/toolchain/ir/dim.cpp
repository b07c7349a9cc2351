#include "toolchain/ir/dim.h"

#include <algorithm>
#include <limits>
#include <ostream>

namespace oaaxvk::toolchain {

namespace {
thread_local SymContext* g_current = nullptr;

bool CheckedOp(SymOp op, int64_t a, int64_t b, int64_t* r) {
  switch (op) {
    case SymOp::kAdd: return !__builtin_add_overflow(a, b, r);
    case SymOp::kSub: return !__builtin_sub_overflow(a, b, r);
    case SymOp::kMul: return !__builtin_mul_overflow(a, b, r);
    case SymOp::kFloorDiv: if (b <= 0) return false; *r = FloorDivI(a, b); return true;
    case SymOp::kCeilDiv: if (b <= 0) return false; *r = CeilDivI(a, b); return true;
    case SymOp::kMod: if (b <= 0) return false; *r = a - b * FloorDivI(a, b); return true;
    case SymOp::kMin: *r = a < b ? a : b; return true;
    case SymOp::kMax: *r = a > b ? a : b; return true;
    case SymOp::kEq: *r = a == b ? 1 : 0; return true;
    case SymOp::kLt: *r = a < b ? 1 : 0; return true;
    default: return false;
  }
}

const char* OpName(SymOp op) {
  switch (op) {
    case SymOp::kFloorDiv: return "floordiv";
    case SymOp::kCeilDiv: return "ceildiv";
    case SymOp::kMod: return "mod";
    case SymOp::kMin: return "min";
    case SymOp::kMax: return "max";
    case SymOp::kEq: return "eq";
    case SymOp::kLt: return "lt";
    default: return "?";
  }
}
}  // namespace

int64_t FloorDivI(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t CeilDivI(int64_t a, int64_t b) { return -FloorDivI(-a, b); }

SymContext* SymContext::Current() { return g_current; }

SymScope::SymScope(SymContext* c) : prev_(g_current) { g_current = c; }
SymScope::~SymScope() { g_current = prev_; }

// The interval of node `n` from its operands' intervals (ranges_): sound
// at every point where the node evaluates (a symbol never leaves its range:
// the runtime refuses an input or read-back value outside it, and a point
// where an operation overflows or divides by a value <= 0 is refused, so a
// divisor's interval counts from 1 and every bound is clamped to int64).
std::pair<int64_t, int64_t> SymContext::NodeRange(const SymNode& n) const {
  using I = __int128;
  constexpr I kMax = std::numeric_limits<int64_t>::max(), kMin = std::numeric_limits<int64_t>::min();
  auto clamp = [&](I v) { return static_cast<int64_t>(v > kMax ? kMax : v < kMin ? kMin : v); };
  auto fdiv = [](I a, I b) { I q = a / b; return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q; };
  auto cdiv = [](I a, I b) { I q = a / b; return (a % b != 0 && ((a < 0) == (b < 0))) ? q + 1 : q; };
  I lo = 0, hi = 0;
  if (n.op == SymOp::kConst) {
    lo = hi = n.a;
  } else if (n.op == SymOp::kSymbol) {
    lo = symbols_[n.a].min;
    hi = symbols_[n.a].max;
  } else {
    const I al = ranges_[n.a].first, ah = ranges_[n.a].second;
    I bl = ranges_[n.b].first, bh = ranges_[n.b].second;
    switch (n.op) {
      case SymOp::kAdd: lo = al + bl; hi = ah + bh; break;
      case SymOp::kSub: lo = al - bh; hi = ah - bl; break;
      case SymOp::kMul: {
        const I c[4] = {al * bl, al * bh, ah * bl, ah * bh};
        lo = *std::min_element(c, c + 4);
        hi = *std::max_element(c, c + 4);
        break;
      }
      case SymOp::kFloorDiv:
      case SymOp::kCeilDiv: {
        bl = std::max<I>(bl, 1);
        bh = std::max<I>(bh, 1);
        auto div = n.op == SymOp::kFloorDiv ? fdiv : cdiv;
        const I c[4] = {div(al, bl), div(al, bh), div(ah, bl), div(ah, bh)};
        lo = *std::min_element(c, c + 4);
        hi = *std::max_element(c, c + 4);
        break;
      }
      case SymOp::kMod: lo = 0; hi = std::max<I>(bh, 1) - 1; break;
      case SymOp::kMin: lo = std::min(al, bl); hi = std::min(ah, bh); break;
      case SymOp::kMax: lo = std::max(al, bl); hi = std::max(ah, bh); break;
      case SymOp::kEq: lo = (al == ah && bl == bh && al == bl) ? 1 : 0; hi = (ah < bl || bh < al) ? 0 : 1; break;
      case SymOp::kLt: lo = ah < bl ? 1 : 0; hi = al < bh ? 1 : 0; break;
      default: lo = kMin; hi = kMax; break;
    }
  }
  return {clamp(lo), clamp(hi)};
}

int32_t SymContext::Intern(SymNode n) {
  auto key = std::make_tuple(static_cast<int64_t>(n.op), n.a, n.b);
  auto it = index_.find(key);
  if (it != index_.end()) return it->second;
  nodes_.push_back(n);
  ranges_.push_back(NodeRange(n));
  int32_t id = static_cast<int32_t>(nodes_.size() - 1);
  index_[key] = id;
  return id;
}

int32_t SymContext::SymbolNode(size_t s) { return Intern({SymOp::kSymbol, static_cast<int64_t>(s), 0}); }
int32_t SymContext::ConstNode(int64_t v) { return Intern({SymOp::kConst, v, 0}); }

int32_t SymContext::Make(SymOp op, int32_t a, int32_t b) {
  const SymNode na = nodes_[a];
  const SymNode nb = nodes_[b];
  const bool ca = na.op == SymOp::kConst, cb = nb.op == SymOp::kConst;
  if (ca && cb) {
    int64_t r;
    if (CheckedOp(op, na.a, nb.a, &r)) return ConstNode(r);
  }
  // Linear forms: x - c is x + (-c); (x + c1) + c2 is x + (c1 + c2);
  // (x * c1) * c2 is x * (c1 * c2); (x * c1) / c2 is x * (c1 / c2) when c2
  // divides c1 (floor and ceil alike).
  if (op == SymOp::kSub && cb && nb.a != std::numeric_limits<int64_t>::min())
    return Make(SymOp::kAdd, a, ConstNode(-nb.a));
  if ((op == SymOp::kAdd || op == SymOp::kMul) && (ca || cb)) {
    const int32_t x = ca ? b : a;
    const int64_t c = ca ? na.a : nb.a;
    const SymNode& nx = nodes_[x];
    if (nx.op == op) {
      const SymNode& l = nodes_[nx.a];
      const SymNode& r = nodes_[nx.b];
      int64_t folded;
      if (r.op == SymOp::kConst && CheckedOp(op, r.a, c, &folded))
        return Make(op, static_cast<int32_t>(nx.a), ConstNode(folded));
      if (l.op == SymOp::kConst && CheckedOp(op, l.a, c, &folded))
        return Make(op, static_cast<int32_t>(nx.b), ConstNode(folded));
    }
  }
  if ((op == SymOp::kFloorDiv || op == SymOp::kCeilDiv) && cb && nb.a > 0 && na.op == SymOp::kMul) {
    for (int k = 0; k < 2; ++k) {
      const int64_t f = k == 0 ? na.a : na.b, other = k == 0 ? na.b : na.a;
      const SymNode& nf = nodes_[f];
      if (nf.op == SymOp::kConst && nf.a % nb.a == 0)
        return Make(SymOp::kMul, static_cast<int32_t>(other), ConstNode(nf.a / nb.a));
    }
  }
  // Comparisons, min and max that the operands' ranges decide: sizes are
  // never negative, so a Reshape entry that is a size is never -1 and never
  // selects the -1 branch (eq(size, -1) is 0), and min(n, c) is n when n
  // never exceeds c. Sound because a symbol never leaves its range (NodeRange).
  if (op == SymOp::kEq || op == SymOp::kLt || op == SymOp::kMin || op == SymOp::kMax) {
    const auto [al, ah] = ranges_[a];
    const auto [bl, bh] = ranges_[b];
    switch (op) {
      case SymOp::kEq:
        if (ah < bl || bh < al) return ConstNode(0);
        break;
      case SymOp::kLt:
        if (ah < bl) return ConstNode(1);
        if (al >= bh) return ConstNode(0);
        break;
      case SymOp::kMin:
        if (ah <= bl) return a;
        if (bh <= al) return b;
        break;
      case SymOp::kMax:
        if (ah <= bl) return b;
        if (bh <= al) return a;
        break;
      default: break;
    }
  }
  switch (op) {
    case SymOp::kAdd:
      if (ca && na.a == 0) return b;
      if (cb && nb.a == 0) return a;
      break;
    case SymOp::kSub:
      if (cb && nb.a == 0) return a;
      if (a == b) return ConstNode(0);
      break;
    case SymOp::kMul:
      if (ca && na.a == 1) return b;
      if (cb && nb.a == 1) return a;
      if ((ca && na.a == 0) || (cb && nb.a == 0)) return ConstNode(0);
      break;
    case SymOp::kFloorDiv:
    case SymOp::kCeilDiv:
      if (cb && nb.a == 1) return a;
      if (a == b) return ConstNode(1);
      break;
    case SymOp::kMin:
    case SymOp::kMax:
      if (a == b) return a;
      break;
    case SymOp::kEq:
      if (a == b) return ConstNode(1);
      break;
    case SymOp::kLt:
      if (a == b) return ConstNode(0);
      break;
    default: break;
  }
  // Commutative operations in a canonical operand order, so equal
  // expressions share a node.
  if ((op == SymOp::kAdd || op == SymOp::kMul || op == SymOp::kMin || op == SymOp::kMax || op == SymOp::kEq) && a > b)
    std::swap(a, b);
  return Intern({op, a, b});
}

StatusOr<std::vector<int64_t>> SymContext::EvalAll(const std::vector<int64_t>& vals) const {
  std::vector<int64_t> v(nodes_.size());
  for (size_t k = 0; k < nodes_.size(); ++k) {
    const SymNode& n = nodes_[k];
    if (n.op == SymOp::kConst) { v[k] = n.a; continue; }
    if (n.op == SymOp::kSymbol) {
      if (n.a < 0 || static_cast<size_t>(n.a) >= vals.size())
        return Internal(StrFormat("shape expression %zu reads symbol %lld of %zu", k, static_cast<long long>(n.a),
                                  vals.size()));
      v[k] = vals[n.a];
      continue;
    }
    if (!CheckedOp(n.op, v[n.a], v[n.b], &v[k]))
      return InvalidArgument(StrFormat("shape expression %zu (%s) overflows or divides by a non-positive value "
                                       "(%lld, %lld)", k, ToString(static_cast<int32_t>(k)).c_str(),
                                       static_cast<long long>(v[n.a]), static_cast<long long>(v[n.b])));
  }
  return v;
}

StatusOr<int64_t> SymContext::Eval(int32_t e, const std::vector<int64_t>& vals) const {
  // Expressions are small DAGs over earlier nodes: evaluate the nodes e needs.
  std::vector<int64_t> v(static_cast<size_t>(e) + 1, 0);
  std::vector<char> need(static_cast<size_t>(e) + 1, 0);
  need[e] = 1;
  for (int32_t k = e; k >= 0; --k) {
    if (!need[k]) continue;
    const SymNode& n = nodes_[k];
    if (n.op != SymOp::kConst && n.op != SymOp::kSymbol) { need[n.a] = 1; need[n.b] = 1; }
  }
  for (int32_t k = 0; k <= e; ++k) {
    if (!need[k]) continue;
    const SymNode& n = nodes_[k];
    if (n.op == SymOp::kConst) { v[k] = n.a; continue; }
    if (n.op == SymOp::kSymbol) {
      if (n.a < 0 || static_cast<size_t>(n.a) >= vals.size()) return Internal("shape expression reads a missing symbol");
      v[k] = vals[n.a];
      continue;
    }
    if (!CheckedOp(n.op, v[n.a], v[n.b], &v[k]))
      return InvalidArgument(StrFormat("shape expression %s overflows or divides by a non-positive value",
                                       ToString(k).c_str()));
  }
  return v[e];
}

int64_t SymContext::UpperBound(int32_t e) const { return ranges_[e].second; }

std::pair<int64_t, int64_t> SymContext::Range(int32_t e) const { return ranges_[e]; }

bool SymContext::IsMonotone(int32_t e) const {
  // Memoized: expressions are DAGs with shared subexpressions (the case
  // analyses of run-time values are large), walked once per node.
  std::vector<int8_t> memo(nodes_.size(), -1);
  std::vector<int64_t> mins;
  for (const Symbol& s : symbols_) mins.push_back(s.min);
  StatusOr<std::vector<int64_t>> at_min = EvalAll(mins);
  return IsMonotoneMemo(e, at_min.ok() ? &*at_min : nullptr, &memo);
}

bool SymContext::IsMonotoneMemo(int32_t e, const std::vector<int64_t>* at_min, std::vector<int8_t>* memo) const {
  if ((*memo)[e] >= 0) return (*memo)[e] != 0;
  const SymNode& n = nodes_[e];
  const int32_t a = static_cast<int32_t>(n.a), b = static_cast<int32_t>(n.b);
  // Value with every symbol at its minimum: the smallest value of a monotone node.
  auto non_negative_at_min = [&](int32_t k) { return at_min != nullptr && (*at_min)[k] >= 0; };
  auto mono = [&](int32_t k) { return IsMonotoneMemo(k, at_min, memo); };
  bool r = false;
  switch (n.op) {
    case SymOp::kConst:
    case SymOp::kSymbol: r = true; break;
    case SymOp::kAdd:
    case SymOp::kMin:
    case SymOp::kMax: r = mono(a) && mono(b); break;
    case SymOp::kSub: r = mono(a) && nodes_[b].op == SymOp::kConst; break;
    case SymOp::kMul:  // non-decreasing factors that are never negative
      r = mono(a) && mono(b) && non_negative_at_min(a) && non_negative_at_min(b);
      break;
    case SymOp::kFloorDiv:
    case SymOp::kCeilDiv: r = mono(a) && nodes_[b].op == SymOp::kConst && nodes_[b].a > 0; break;
    default: r = false; break;
  }
  (*memo)[e] = r ? 1 : 0;
  return r;
}

int64_t SymContext::KnownDivisor(int32_t e) const {
  if (DependsOnValue(e, /*unsampled_only=*/true)) return 1;  // a derived range's values are not checked against it
  const SymNode& n = nodes_[e];
  auto gcd = [](int64_t x, int64_t y) {
    x = x < 0 ? -x : x;
    y = y < 0 ? -y : y;
    while (y) { int64_t t = x % y; x = y; y = t; }
    return x;
  };
  switch (n.op) {
    case SymOp::kConst: return n.a < 0 ? -n.a : n.a;
    case SymOp::kSymbol:
      return n.a >= 0 && static_cast<size_t>(n.a) < symbols_.size() ? std::max<int64_t>(1, symbols_[n.a].multiple_of) : 1;
    case SymOp::kMul: {
      int64_t r;
      const int64_t x = KnownDivisor(static_cast<int32_t>(n.a)), y = KnownDivisor(static_cast<int32_t>(n.b));
      return __builtin_mul_overflow(x, y, &r) ? 1 : r;
    }
    case SymOp::kAdd:
    case SymOp::kSub:
    case SymOp::kMin:
    case SymOp::kMax: {
      const int64_t g = gcd(KnownDivisor(static_cast<int32_t>(n.a)), KnownDivisor(static_cast<int32_t>(n.b)));
      return g == 0 ? 0 : g;
    }
    default: return 1;
  }
}

std::string SymContext::ToString(int32_t e) const {
  size_t budget = 400;  // characters: shared DAGs can print exponentially long
  return ToStringWithin(e, &budget);
}

std::string SymContext::ToStringWithin(int32_t e, size_t* budget) const {
  if (*budget == 0) return "...";
  const SymNode& n = nodes_[e];
  auto sub = [&](int64_t k) {
    std::string r = ToStringWithin(static_cast<int32_t>(k), budget);
    *budget = r.size() >= *budget ? 0 : *budget - r.size();
    return r;
  };
  auto paren = [&](int64_t k) {
    SymOp o = nodes_[k].op;
    std::string s = sub(k);
    return (o == SymOp::kAdd || o == SymOp::kSub) ? "(" + s + ")" : s;
  };
  switch (n.op) {
    case SymOp::kConst: return std::to_string(n.a);
    case SymOp::kSymbol:
      return n.a >= 0 && static_cast<size_t>(n.a) < symbols_.size() ? symbols_[n.a].name : "?";
    case SymOp::kAdd: return sub(n.a) + "+" + sub(n.b);
    case SymOp::kSub: return sub(n.a) + "-" + paren(n.b);
    case SymOp::kMul: return paren(n.a) + "*" + paren(n.b);
    default: return std::string(OpName(n.op)) + "(" + sub(n.a) + ", " + sub(n.b) + ")";
  }
}

bool SymContext::DependsOnValue(int32_t e, bool unsampled_only) const {
  std::vector<char> seen(nodes_.size(), 0);
  std::vector<int32_t> stack{e};
  while (!stack.empty()) {
    const int32_t k = stack.back();
    stack.pop_back();
    if (k < 0 || static_cast<size_t>(k) >= nodes_.size() || seen[k]) continue;
    seen[k] = 1;
    const SymNode& n = nodes_[k];
    if (n.op == SymOp::kSymbol) {
      // A decided symbol (an extent read back from the device) is a run-time
      // value too, sampled like a dimension.
      if (n.a >= 0 && static_cast<size_t>(n.a) < symbols_.size() &&
          ((symbols_[n.a].is_value() && !(unsampled_only && symbols_[n.a].sampled)) ||
           (symbols_[n.a].decided && !unsampled_only)))
        return true;
    } else if (n.op != SymOp::kConst) {
      stack.push_back(static_cast<int32_t>(n.a));
      stack.push_back(static_cast<int32_t>(n.b));
    }
  }
  return false;
}

Status SymContext::AddGuard(int32_t e, const std::string& text) {
  const SymNode& n = nodes_[e];
  if (n.op == SymOp::kConst) return n.a != 0 ? Status::Ok() : InvalidArgument(text);
  for (const SymGuard& g : guards_)
    if (g.expr == e) return Status::Ok();
  guards_.push_back({e, text});
  return Status::Ok();
}

Dim Dim::Apply(SymOp op, const Dim& a, const Dim& b) {
  int64_t r = 0;
  if (!CheckedOp(op, a.v_, b.v_, &r)) {
    // Division by a non-positive size: 0, which the caller refuses. Overflow
    // saturates towards the true result's sign, so the size stays out of
    // every limit (ir/limits.h) instead of wrapping into a plausible one.
    const bool negative = op == SymOp::kMul ? (a.v_ < 0) != (b.v_ < 0)
                          : op == SymOp::kSub ? a.v_ < 0 : (a.v_ < 0 && b.v_ < 0);
    if (op == SymOp::kFloorDiv || op == SymOp::kCeilDiv || op == SymOp::kMod) r = 0;
    else r = negative ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
  }
  SymContext* c = g_current;
  if (c == nullptr || (a.e_ < 0 && b.e_ < 0)) return Dim(r);
  int32_t e = c->Make(op, a.Node(c), b.Node(c));
  if (c->nodes()[e].op == SymOp::kConst) return Dim(r);
  return Dim(r, e);
}

namespace {
// Value of d with every symbol at its min (lo) or max, when d is monotone.
bool Bound(const Dim& d, bool lo, int64_t* out) {
  SymContext* c = SymContext::Current();
  if (!d.is_symbolic() || c == nullptr) { *out = d.value(); return true; }
  if (!c->IsMonotone(d.expr())) return false;
  std::vector<int64_t> vals;
  for (const Symbol& s : c->symbols()) vals.push_back(lo ? s.min : s.max);
  StatusOr<int64_t> v = c->Eval(d.expr(), vals);
  if (!v.ok()) return false;
  *out = *v;
  return true;
}
}  // namespace

// Calls fn(values of `es`) at every valid point of the domain; false when
// the domain has more than kMaxEnumeratedPoints points or an expression
// fails to evaluate somewhere (the caller then answers conservatively).
constexpr uint64_t kMaxEnumeratedPoints = 100000;
template <typename Fn>
bool ForEachPoint(const SymContext& c, const std::vector<int32_t>& es, Fn fn) {
  const std::vector<Symbol>& syms = c.symbols();
  uint64_t points = 1;
  for (const Symbol& s : syms) {
    // A value symbol's range may span all of int64: count in 128 bits.
    const __int128 span = (static_cast<__int128>(s.max) - s.min) / std::max<int64_t>(1, s.multiple_of) + 1;
    if (span > static_cast<__int128>(kMaxEnumeratedPoints)) return false;
    points *= static_cast<uint64_t>(span);
    if (points > kMaxEnumeratedPoints) return false;
  }
  std::vector<int64_t> cur;
  for (const Symbol& s : syms) cur.push_back(s.min);
  std::vector<int64_t> vals(es.size());
  for (;;) {
    for (size_t k = 0; k < es.size(); ++k) {
      StatusOr<int64_t> v = c.Eval(es[k], cur);
      if (!v.ok()) return false;
      vals[k] = *v;
    }
    if (!fn(vals)) return true;  // fn stopped early
    size_t i = 0;
    for (; i < syms.size(); ++i) {
      const int64_t step = std::max<int64_t>(1, syms[i].multiple_of);
      if (cur[i] + step <= syms[i].max) { cur[i] += step; break; }
      cur[i] = syms[i].min;
    }
    if (i == syms.size()) return true;
  }
}

// The least (lo) or greatest value of d over the domain: the monotone bound,
// else every point of a small domain, else the interval bound (Range; the
// type's extreme where that saturates).
static int64_t Extreme(const Dim& d, bool lo) {
  int64_t v;
  if (Bound(d, lo, &v)) return v;
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();
  // Run-time values: most points of their ranges are invalid (a guard fails
  // there), so enumerating them says nothing.
  if (DependsOnUnsampledValue(d)) return lo ? kMin : kMax;
  int64_t r = lo ? kMax : kMin;
  if (ForEachPoint(*SymContext::Current(), {d.expr()}, [&](const std::vector<int64_t>& x) {
        r = lo ? std::min(r, x[0]) : std::max(r, x[0]);
        return true;
      }))
    return r;
  const std::pair<int64_t, int64_t> range = SymContext::Current()->Range(d.expr());
  return lo ? range.first : range.second;
}

int64_t LowerBound(const Dim& d) { return Extreme(d, true); }
int64_t UpperBound(const Dim& d) { return Extreme(d, false); }
int64_t PlannedMax(const Dim& d) {
  const int64_t ub = UpperBound(d);
  // No bound found (run-time values, or a range too large to enumerate):
  // the plan allocates the value at the compile point.
  if (d.is_symbolic() && (ub == std::numeric_limits<int64_t>::max() || DependsOnUnsampledValue(d)))
    return std::min(ub, d.value());
  return ub;
}
bool Divisible(const Dim& d, int64_t k) {
  if (k <= 0) return false;
  SymContext* c = SymContext::Current();
  if (!d.is_symbolic() || c == nullptr) return d.value() % k == 0;
  const int64_t kd = c->KnownDivisor(d.expr());
  if (kd == 0 || kd % k == 0) return true;
  bool all = true;
  const bool done = ForEachPoint(*c, {d.expr()}, [&](const std::vector<int64_t>& x) {
    all = x[0] % k == 0;
    return all;
  });
  return done && all;
}
bool SameDim(const Dim& a, const Dim& b) {
  if (a.is_symbolic() != b.is_symbolic()) return false;
  if (!a.is_symbolic()) return a.value() == b.value();
  if (a.expr() == b.expr()) return true;
  bool all = true;
  const bool done = ForEachPoint(*SymContext::Current(), {a.expr(), b.expr()}, [&](const std::vector<int64_t>& x) {
    all = x[0] == x[1];
    return all;
  });
  return done && all;
}

StatusOr<Dim> UnifyDims(const Dim& a, const Dim& b, const std::string& who, const std::string& what) {
  SymContext* c = SymContext::Current();
  auto show = [&](const Dim& d) {
    return d.is_symbolic() && c != nullptr ? std::to_string(d.value()) + " (" + c->ToString(d.expr()) + ")"
                                           : std::to_string(d.value());
  };
  if (a.value() != b.value())
    return InvalidArgument(who + ": " + what + " must be equal, got " + show(a) + " and " + show(b));
  if (SameDim(a, b)) return a;
  if (!a.is_symbolic() || !b.is_symbolic() || c == nullptr) return a.is_symbolic() ? a : b;
  OAAXVK_RETURN_IF_ERROR(c->AddGuard(Eq(a, b).Node(c), who + ": " + what + " must be equal; they are " +
                                                           c->ToString(a.expr()) + " and " + c->ToString(b.expr())));
  return a;
}

bool ExactQuotient(const std::vector<Dim>& a, const std::vector<Dim>& b, Dim* q) {
  SymContext* c = SymContext::Current();
  // Each list as a constant times symbolic sizes; a size x*k contributes k
  // to the constant and x (value / k) to the sizes.
  auto split = [c](const std::vector<Dim>& ds, int64_t* coef, std::vector<Dim>* syms) {
    *coef = 1;
    for (const Dim& d : ds) {
      int64_t k = d.value();
      Dim rest = 1;
      if (d.is_symbolic() && c != nullptr) {
        k = 1;
        rest = d;
        const SymNode& n = c->nodes()[d.expr()];
        if (n.op == SymOp::kMul) {
          for (int side = 0; side < 2; ++side) {
            const SymNode& f = c->nodes()[side == 0 ? n.a : n.b];
            const int64_t other = side == 0 ? n.b : n.a;
            if (f.op == SymOp::kConst && f.a != 0 && d.value() % f.a == 0) {
              k = f.a;
              rest = Dim(d.value() / f.a, static_cast<int32_t>(other));
              break;
            }
          }
        }
        syms->push_back(rest);
      }
      if (__builtin_mul_overflow(*coef, k, coef)) return false;
    }
    return true;
  };
  int64_t ka = 1, kb = 1;
  std::vector<Dim> sa, sb;
  if (!split(a, &ka, &sa) || !split(b, &kb, &sb) || kb == 0 || ka % kb != 0) return false;
  for (const Dim& d : sb) {
    auto it = std::find_if(sa.begin(), sa.end(), [&](const Dim& x) { return x.expr() == d.expr(); });
    if (it == sa.end()) return false;
    sa.erase(it);
  }
  Dim r = ka / kb;
  for (const Dim& d : sa) r = r * d;
  *q = r;
  return true;
}

std::ostream& operator<<(std::ostream& os, const Dim& d) { return os << d.value(); }

std::vector<int64_t> DimValues(const std::vector<Dim>& ds) {
  std::vector<int64_t> r(ds.size());
  for (size_t i = 0; i < ds.size(); ++i) r[i] = ds[i].value();
  return r;
}

std::vector<Dim> ToDims(const std::vector<int64_t>& vs) { return std::vector<Dim>(vs.begin(), vs.end()); }

bool AnySymbolic(const std::vector<Dim>& ds) {
  for (const Dim& d : ds)
    if (d.is_symbolic()) return true;
  return false;
}

}  // namespace oaaxvk::toolchain

namespace oaaxvk::toolchain {
bool DependsOnValue(const Dim& d) {
  const SymContext* c = SymContext::Current();
  return c != nullptr && d.is_symbolic() && c->DependsOnValue(d.expr());
}
bool AnyDependsOnValue(const std::vector<Dim>& ds) {
  for (const Dim& d : ds)
    if (DependsOnValue(d)) return true;
  return false;
}
bool DependsOnUnsampledValue(const Dim& d) {
  const SymContext* c = SymContext::Current();
  return c != nullptr && d.is_symbolic() && c->DependsOnValue(d.expr(), /*unsampled_only=*/true);
}
bool AnyDependsOnUnsampledValue(const std::vector<Dim>& ds) {
  for (const Dim& d : ds)
    if (DependsOnUnsampledValue(d)) return true;
  return false;
}
}  // namespace oaaxvk::toolchain
