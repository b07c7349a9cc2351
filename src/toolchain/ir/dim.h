// Dimension sizes that may depend on symbolic input dimensions.
//
// A Dim is an int64 value at the shape the toolchain is currently compiling
// for, plus (when it depends on a symbol) an expression of the symbols in the
// active SymContext. Arithmetic on Dims (+, -, *, FloorDiv, CeilDiv, Mod, Min,
// Max) builds the expression alongside the value; a Dim converts implicitly
// to its int64 value, which drops the expression. A dynamic-shape conversion
// (driver.cpp) compiles the model at several points of the symbols' domain and
// checks that every expression the bundle carries, evaluated at each point,
// equals what the compiler computed there, so a size that lost its
// expression is a conversion error, never a wrong bundle.
//
// Without an active SymContext (every static conversion) Dims are plain
// integers: no expression is ever built.
#ifndef OAAXVK_TOOLCHAIN_IR_DIM_H_
#define OAAXVK_TOOLCHAIN_IR_DIM_H_

#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "oaax_vulkan/status.h"

namespace oaaxvk::toolchain {

// Opcodes of shape-program instructions (docs/bundle-format.md, "Shape program").
enum class SymOp : int64_t {
  kConst = 0, kSymbol = 1, kAdd = 2, kSub = 3, kMul = 4, kFloorDiv = 5, kCeilDiv = 6, kMod = 7, kMin = 8,
  kMax = 9, kEq = 10, kLt = 11,
};

// A symbol and its valid values: min <= v <= max, v % multiple_of == 0.
// Either a symbolic input dimension (value_input empty), or a run-time value
// symbol: element value_element of the integer graph input value_input (a
// Reshape `shape`, Squeeze/Unsqueeze `axes`, ...), which the runtime reads
// from the input's data at send_input (bundle feature `value_symbols`).
inline constexpr int64_t kOuterScaleFactor = int64_t{1} << 24;

struct Symbol {
  Symbol() = default;
  Symbol(std::string n, int64_t lo, int64_t hi, int64_t mult)
      : name(std::move(n)), min(lo), max(hi), multiple_of(mult) {}
  std::string name;
  int64_t min = 1, max = 1, multiple_of = 1;
  std::string value_input;
  int64_t value_element = -1;
  // A value symbol whose range the user gave (config.json "input_values"
  // names it): the conversion compiles at several of its values like a
  // dimension's, so every size built from it is checked there. The others
  // (ranges derived from the op) stay at their maximum at every point, and
  // their sizes reach only kernels whose lowering derived them on purpose.
  bool sampled = false;
  // A value symbol of a float input (Resize scales, a OneHot depth): the
  // symbol is floor(element * value_scale) (the output size the scale gives
  // for an input dimension of value_scale; 1 for a depth); 0 for an integer
  // element taken as it is (bundle feature float_value_symbols).
  int64_t value_scale = 0;
  // value_scale of a Resize / Upsample scale on a dimension that is not
  // resized: the symbol is floor(e * 2^24), which is 2^24 for a float32 e
  // only when e is exactly 1 (the Resize guard requires that).
  // The range as config.json "dimensions" wrote it (a float input's range
  // may hold fractions, e.g. scales in [0.5, 2.5]); min / max are then
  // floor(value_min * value_scale) and floor(value_max * value_scale).
  double value_min = 0, value_max = 0;
  // A float Range bound: the scale is a power of two (shared by the Range's
  // bounds) and the runtime refuses an element e for which e * value_scale
  // is not an integer, so floor() loses nothing (bundle feature
  // exact_value_symbols).
  bool value_exact = false;
  // A symbol the segment program sets between device segments (bundle
  // feature segment_program): an If condition read back from the device, or
  // an extent that is an expression of one. No input carries it; every
  // frame starts it at `min`, and it may have min 0 (an empty branch result).
  // Sampled like a dimension.
  bool decided = false;
  bool is_value() const { return !value_input.empty(); }
};

// A condition a valid point of the domain must satisfy (expression != 0),
// checked by the runtime before anything is queued; `text` says what is
// required, naming the node (e.g. "Reshape 'r': the target shape must hold
// 24 elements").
struct SymGuard {
  int32_t expr = -1;
  std::string text;
};

struct SymNode {
  SymOp op = SymOp::kConst;
  int64_t a = 0, b = 0;  // kConst: value; kSymbol: symbol index; else operand node indices
};

// The symbols of one conversion and the expressions built from them
// (hash-consed: equal expressions share a node). Install with SymScope.
class SymContext {
 public:
  explicit SymContext(std::vector<Symbol> symbols) : symbols_(std::move(symbols)) {}

  const std::vector<Symbol>& symbols() const { return symbols_; }
  const std::vector<SymNode>& nodes() const { return nodes_; }
  // Node of symbol `s`.
  int32_t SymbolNode(size_t s);
  int32_t ConstNode(int64_t v);
  // Node for `op` over nodes a and b, folded when both are constants,
  // simplified for the identities x+0, x-0, x*1, x*0, x/1, and decided by
  // the operands' ranges (Range) where they settle it: eq of disjoint
  // ranges is 0, lt of ordered ranges is 0 or 1, min / max of ordered
  // ranges is the smaller / larger operand.
  int32_t Make(SymOp op, int32_t a, int32_t b);
  // Value of node `e` with symbol values `vals` (one per symbol). Fails on a
  // divisor <= 0 or a 64-bit overflow, naming the node.
  StatusOr<int64_t> Eval(int32_t e, const std::vector<int64_t>& vals) const;
  // Every node's value (nodes in order), same failures.
  StatusOr<std::vector<int64_t>> EvalAll(const std::vector<int64_t>& vals) const;
  // Whether node `e` provably never decreases when any symbol grows (within
  // the symbols' ranges): built from constants, symbols, add, min, max,
  // subtraction of a constant, floordiv / ceildiv by a positive constant, and
  // mul of such nodes that are never negative.
  bool IsMonotone(int32_t e) const;
  // An upper bound of node `e` over the symbols' ranges by interval
  // arithmetic (sound, possibly above the true maximum): a divisor or
  // modulus whose interval reaches 0 or below counts from 1 (the runtime
  // refuses a point where it is <= 0). Saturates at INT64_MAX.
  int64_t UpperBound(int32_t e) const;
  // The interval [lo, hi] node `e` stays in over the symbols' ranges (the
  // same interval arithmetic as UpperBound; lo saturates at INT64_MIN).
  std::pair<int64_t, int64_t> Range(int32_t e) const;
  // A positive number every value of node `e` is a multiple of (1 when
  // nothing is known; 0 for the constant 0).
  int64_t KnownDivisor(int32_t e) const;
  // Human-readable form, e.g. "ceildiv(H*W, 256)".
  std::string ToString(int32_t e) const;
  // Whether node `e` reads a run-time value symbol (Symbol::is_value; with
  // unsampled_only, one that is not Symbol::sampled).
  bool DependsOnValue(int32_t e, bool unsampled_only = false) const;
  // Records a guard (kept once per expression; a constant-true guard is
  // dropped). Fails with `text` when the guard is constant false.
  Status AddGuard(int32_t e, const std::string& text);
  const std::vector<SymGuard>& guards() const { return guards_; }

  // The context in use on this thread (nullptr: static conversion).
  static SymContext* Current();

 private:
  friend class SymScope;
  std::vector<Symbol> symbols_;
  std::vector<SymNode> nodes_;
  std::vector<std::pair<int64_t, int64_t>> ranges_;  // NodeRange of each node, in node order
  std::vector<SymGuard> guards_;
  std::map<std::tuple<int64_t, int64_t, int64_t>, int32_t> index_;
  int32_t Intern(SymNode n);
  std::pair<int64_t, int64_t> NodeRange(const SymNode& n) const;
  std::string ToStringWithin(int32_t e, size_t* budget) const;
  bool IsMonotoneMemo(int32_t e, const std::vector<int64_t>* at_min, std::vector<int8_t>* memo) const;
};

// Installs a SymContext as the current one for its lifetime (RAII).
class SymScope {
 public:
  explicit SymScope(SymContext* c);
  ~SymScope();
  SymScope(const SymScope&) = delete;
  SymScope& operator=(const SymScope&) = delete;

 private:
  SymContext* prev_;
};

class Dim {
 public:
  constexpr Dim() = default;
  template <typename T, typename = std::enable_if_t<std::is_integral_v<T>>>
  constexpr Dim(T v) : v_(static_cast<int64_t>(v)) {}  // NOLINT: a plain (static) size
  // A size with value v and expression node e of the current SymContext (-1 = static).
  constexpr Dim(int64_t v, int32_t e) : v_(v), e_(e) {}

  constexpr operator int64_t() const { return v_; }  // NOLINT: the value, without the expression
  constexpr int64_t value() const { return v_; }
  // Expression node in the current SymContext, or -1 when the size is static.
  constexpr int32_t expr() const { return e_; }
  constexpr bool is_symbolic() const { return e_ >= 0; }
  // The node of this Dim in `c` (a constant node when static).
  int32_t Node(SymContext* c) const { return e_ >= 0 ? e_ : c->ConstNode(v_); }

  Dim& operator+=(const Dim& o) { return *this = Apply(SymOp::kAdd, *this, o); }
  Dim& operator-=(const Dim& o) { return *this = Apply(SymOp::kSub, *this, o); }
  Dim& operator*=(const Dim& o) { return *this = Apply(SymOp::kMul, *this, o); }

  // Result of `op` on a and b: the value, and an expression when either is symbolic.
  static Dim Apply(SymOp op, const Dim& a, const Dim& b);

 private:
  int64_t v_ = 0;
  int32_t e_ = -1;
};

// Arithmetic keeping expressions. Division is written out (FloorDiv /
// CeilDiv) because sizes never divide with C++'s truncation by accident.
inline Dim operator+(const Dim& a, const Dim& b) { return Dim::Apply(SymOp::kAdd, a, b); }
inline Dim operator-(const Dim& a, const Dim& b) { return Dim::Apply(SymOp::kSub, a, b); }
inline Dim operator*(const Dim& a, const Dim& b) { return Dim::Apply(SymOp::kMul, a, b); }
template <typename T, typename = std::enable_if_t<std::is_integral_v<T>>>
Dim operator+(const Dim& a, T b) { return a + Dim(b); }
template <typename T, typename = std::enable_if_t<std::is_integral_v<T>>>
Dim operator+(T a, const Dim& b) { return Dim(a) + b; }
template <typename T, typename = std::enable_if_t<std::is_integral_v<T>>>
Dim operator-(const Dim& a, T b) { return a - Dim(b); }
template <typename T, typename = std::enable_if_t<std::is_integral_v<T>>>
Dim operator-(T a, const Dim& b) { return Dim(a) - b; }
template <typename T, typename = std::enable_if_t<std::is_integral_v<T>>>
Dim operator*(const Dim& a, T b) { return a * Dim(b); }
template <typename T, typename = std::enable_if_t<std::is_integral_v<T>>>
Dim operator*(T a, const Dim& b) { return Dim(a) * b; }
inline Dim FloorDiv(const Dim& a, const Dim& b) { return Dim::Apply(SymOp::kFloorDiv, a, b); }
inline Dim CeilDiv(const Dim& a, const Dim& b) { return Dim::Apply(SymOp::kCeilDiv, a, b); }
inline Dim Mod(const Dim& a, const Dim& b) { return Dim::Apply(SymOp::kMod, a, b); }
inline Dim Min(const Dim& a, const Dim& b) { return Dim::Apply(SymOp::kMin, a, b); }
inline Dim Max(const Dim& a, const Dim& b) { return Dim::Apply(SymOp::kMax, a, b); }
// 1 when a == b (a < b), else 0.
inline Dim Eq(const Dim& a, const Dim& b) { return Dim::Apply(SymOp::kEq, a, b); }
inline Dim Lt(const Dim& a, const Dim& b) { return Dim::Apply(SymOp::kLt, a, b); }
// c ? x : y for a condition c that is 0 or 1 (c*x + (1-c)*y); x itself
// when x and y are the same size (equal static values or the same node).
inline Dim Select(const Dim& c, const Dim& x, const Dim& y) {
  if (x.expr() == y.expr() && x.value() == y.value()) return x;
  return c * x + (Dim(1) - c) * y;
}
// A q with prod(a) == prod(b) * q at every point, found by cancelling each
// size of b against the same size (the same node) in a, and b's constant
// factors against a's (static sizes, and the c of a size x*c), e.g.
// [n, 364] over [n, 4] gives 91. Where prod(b) is 0 so is prod(a), and any
// q satisfies it: callers use q only where a zero prod(b) leaves it unused
// (a Reshape's -1 beside a zero entry). False when a size of b is not one
// of a's or b's constant does not divide a's.
bool ExactQuotient(const std::vector<Dim>& a, const std::vector<Dim>& b, Dim* q);

// Facts that hold at every valid point of the symbols' domain (used where a
// kernel choice depends on a size, so that every shape of a dynamic bundle
// gets the same kernels). Static Dims answer for their value.
// A lower / upper bound of d over the domain: exact for IsMonotone ones (at
// every symbol's min / max) and on small domains (every point), else the
// interval bound SymContext::Range (INT64_MIN / INT64_MAX where it saturates).
int64_t LowerBound(const Dim& d);
int64_t UpperBound(const Dim& d);
// Whether d is a multiple of k (k > 0) at every point: a static value's
// remainder, or a divisor the expression provably has (multiple_of of
// symbols, products, sums).
bool Divisible(const Dim& d, int64_t k);
// Whether a and b are the same size at every point: equal static values, or
// the same expression node.
bool SameDim(const Dim& a, const Dim& b);
// The size two operands of an operator must share (NonMaxSuppression's box
// counts, Concat's other axes, MatMul's K, a broadcast of two sizes that
// are not 1). `a` when SameDim. Two symbolic sizes that are equal at the
// point compiled but that the simplifier cannot prove equal everywhere (an
// extent through a Reshape with -1 beside the same extent summed) are
// unified under a guard of the current SymContext: a frame where they
// differ fails with `who`, `what` and both expressions; `a` is returned.
// A static size beside a symbolic one of the same value gives the symbolic
// one (the check points then compare them). Fails (InvalidArgument:
// "<who>: <what> must be equal, got <a> and <b>") when the values differ.
StatusOr<Dim> UnifyDims(const Dim& a, const Dim& b, const std::string& who, const std::string& what);

// floor / ceil division and floor modulo of plain integers (b > 0).
int64_t FloorDivI(int64_t a, int64_t b);
int64_t CeilDivI(int64_t a, int64_t b);

// Value comparison of a list of Dims with plain integers (tests, shape checks).
template <typename T, typename = std::enable_if_t<std::is_integral_v<T>>>
bool operator==(const std::vector<Dim>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].value() != static_cast<int64_t>(b[i])) return false;
  return true;
}
template <typename T, typename = std::enable_if_t<std::is_integral_v<T>>>
bool operator==(const std::vector<T>& b, const std::vector<Dim>& a) { return a == b; }
template <typename T, typename = std::enable_if_t<std::is_integral_v<T>>>
bool operator!=(const std::vector<Dim>& a, const std::vector<T>& b) { return !(a == b); }
template <typename T, typename = std::enable_if_t<std::is_integral_v<T>>>
bool operator!=(const std::vector<T>& b, const std::vector<Dim>& a) { return !(a == b); }
// Prints the value.
std::ostream& operator<<(std::ostream& os, const Dim& d);

// The values of `ds`, without expressions.
std::vector<int64_t> DimValues(const std::vector<Dim>& ds);
// Dims of plain values.
std::vector<Dim> ToDims(const std::vector<int64_t>& vs);
// Whether any Dim of `ds` is symbolic.
bool AnySymbolic(const std::vector<Dim>& ds);
// Whether d (any of ds) depends on a run-time value symbol of the current
// SymContext (Symbol::is_value); false without a context.
bool DependsOnValue(const Dim& d);
bool AnyDependsOnValue(const std::vector<Dim>& ds);
// The same for value symbols that are not sampled (Symbol::sampled).
bool DependsOnUnsampledValue(const Dim& d);
bool AnyDependsOnUnsampledValue(const std::vector<Dim>& ds);
// The largest value size `d` takes in the bundle's plan: UpperBound(d),
// except for a size UpperBound cannot bound (one that depends on run-time
// values no enumeration samples, or whose interval bound saturates), which
// the plan allocates at its value at the
// compile point, the largest over the ranges (docs/toolchain.md "Run-time
// values with ranges"). Kernels that split work by a length use this, so
// their passes and scratch buffers match the buffers the plan allocates.
int64_t PlannedMax(const Dim& d);

}  // namespace oaaxvk::toolchain

#endif  // OAAXVK_TOOLCHAIN_IR_DIM_H_
