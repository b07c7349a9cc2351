// Dynamic-shape conversion (docs/toolchain.md "Dynamic shapes",
// docs/bundle-format.md "Dynamic shapes"): the model is compiled at several
// points of the symbols' domain, always first at the maximum (the program the
// bundle carries, with its memory plan); every expression the bundle carries
// is then checked against what the compiler computed at each other point, and
// every buffer size against the plan over the whole domain.
#ifndef OAAXVK_TOOLCHAIN_DRIVER_DYNAMIC_H_
#define OAAXVK_TOOLCHAIN_DRIVER_DYNAMIC_H_

#include <string>
#include <vector>

#include "toolchain/input/archive.h"
#include "toolchain/ir/dim.h"
#include "toolchain/lower/lower.h"

namespace oaaxvk::toolchain {

// The symbols of a config (its "dimensions"), with min / max rounded inward
// to multiple_of; a name that "input_values" gives an input's element is a
// sampled run-time value symbol of that element (Symbol::value_input,
// value_element, sampled). Fails naming the config key when a symbol used in
// input_shapes or input_values has no range, a range holds no multiple of
// multiple_of, a dimension's range goes below 1 or holds fractions, or a
// name is used for two elements or for both a dimension and a value.
StatusOr<std::vector<Symbol>> ResolveSymbols(const ModelConfig& config);

// The named run-time values (config.json "input_values" names) of float
// inputs, given `g` (the model imported at the maxima): each becomes the size
// it sets, floor(element * value_scale) (Symbol::value_scale: the input
// dimension a Resize / Upsample scale applies to, or 1 for a OneHot depth),
// with min / max scaled from value_min / value_max. Fails naming the config
// entry when a float input has another reader, a scale applies to a symbolic
// dimension, or an integer input's range holds fractions.
Status ScaleFloatValueSymbols(const Graph& g, std::vector<Symbol>* symbols);

// Run-time value symbols (Symbol::is_value, bundle feature value_symbols):
// one per element of every integer graph input that the model uses only as a
// Reshape `shape`, a Squeeze / Unsqueeze `axes` (views: the value determines
// only the output's dimensions), a CumSum `axis`, a TopK `K`, a Slice's
// `starts` / `ends` / `axes` / `steps` or a Split `split` (the kernel's sizes
// are expressions of them), that is not bound by config.json "input_values", and
// that has a static shape of at most 8 elements (an input whose elements
// "input_values" names is a value symbol of ResolveSymbols instead). Named "<input>[<j>]"
// ("<input>" for a scalar); ranges: a Reshape entry [-1, the data's element
// count at the maximum shape] (2^31 - 1 when that is not known at import),
// an axis [-r, r - 1] for the rank r it indexes, K [1, the axis extent],
// Slice starts / ends / steps any int64, split sizes [0, the axis extent].
// `g` is the model imported with every symbolic dimension at its maximum.
std::vector<Symbol> FindValueSymbols(const Graph& g, const ModelConfig& config);

// Decided symbols (Symbol::decided, bundle feature segment_program) for each
// selection of an If whose condition only the device knows (a Where with
// node attribute _if_select, import/control_flow.h) whose branches give its
// output static shapes of one rank that differ (the shapes ONNX shape
// inference gave at import): "<output>/cond" in [0, 1], the condition the
// device computes, read back after the rows before the selection, and
// "<output>/larger" in [0, 1], 1 when the branch with the larger shape is
// taken (each differing dimension is then small + larger * (large - small),
// so the plan at the maximum holds either branch). Fails naming the node
// when neither branch is at least as large along every dimension.
// `g` is the model imported at the maximum.
StatusOr<std::vector<Symbol>> FindDecidedSymbols(const Graph& g);

// A data-dependent extent read back into a decided symbol: the symbol
// (named after the extent tensor, range [0, the planned largest extent])
// and the node writing the extent (NonZero, Compress or NonMaxSuppression;
// its name in the imported graph), which the driver gives the attributes
// _decided_extent (the symbol's index) and _decided_value (its value at the
// point compiled; ir/extent.h DecidedExtentDim).
struct DecidedExtent {
  std::string node;
  Symbol symbol;
};

// The data-dependent extents that reach a reader that does not keep them
// (Shape, Size, a reduction or Slice along the axis, ...; ir/extent.h
// PropagateExtent): the passes run on a copy of `g` (the model imported at
// the maximum) past every refusal, each naming an extent that becomes a
// decided symbol (the node's output then has that extent at its planned
// largest value), again until no new one shows (at most 8 runs). Extents
// that readers keep are left alone (no read-back). Refusals it cannot turn
// into a symbol (an extent written by another operator, Unique) and other
// errors are left to the compilation, which reports them.
std::vector<DecidedExtent> FindDecidedExtents(const Graph& g);

// Appends `decided` (FindDecidedSymbols) to `symbols` and to every point of
// `points` at their maximum (each If's larger branch), and adds the first
// two points (the maximum, and the minimum of the other symbols) with every
// decided symbol at its minimum (each smaller branch, where an output may
// have a zero extent), and with several Ifs the maximum with one If's
// symbols at their minimum for each, so the conversion checks every
// expression both ways.
// `extents` (FindDecidedExtents' symbols) are appended after `decided`,
// at their maximum at every point and at their minimum (0) wherever the
// decided symbols are at theirs; a model may have many (a detector: one
// NonZero per class), so they get no points of their own.
void AddDecidedSymbols(const std::vector<Symbol>& decided, std::vector<Symbol>* symbols,
                       std::vector<std::vector<int64_t>>* points, const std::vector<Symbol>& extents = {});

// The points a dynamic conversion compiles at, first the maximum of every
// symbol, then the minimum, each symbol at its minimum with the others at
// their maximum, and interior values (odd multiples of multiple_of) — at most
// 8 points, without repeats.
std::vector<std::vector<int64_t>> SamplePoints(const std::vector<Symbol>& symbols);

// The largest constant divisor whose residues ResiduePoints covers.
inline constexpr int64_t kMaxResidueDivisor = 64;

// More check points, from the expressions of `ctx` (the canonical program's):
// a size with a floor / ceil division or a modulo of a symbol by a constant
// (an output size with a stride, a ceil_mode correction) changes its rounding
// with the symbol's residue, which the fixed points of SamplePoints may all
// share. For every symbol sampled like a dimension: values from its maximum
// down that take every residue modulo its divisors (their lcm when that is at
// most kMaxResidueDivisor, else each divisor up to it; values on
// multiple_of), the other symbols at `base`. Points in `have` are left out.
std::vector<std::vector<int64_t>> ResiduePoints(const SymContext& ctx, const std::vector<int64_t>& base,
                                                const std::vector<std::vector<int64_t>>& have);

// Checks the program compiled at `point` (`sample`) against the expressions of
// `canonical` (compiled at the maximum, in `ctx`): the same dispatches,
// kernels and bindings, and every group count, specialization value, value
// size and I/O dimension equal to its expression evaluated at `point`, and
// every constant's bytes the same (LowerOptions::weight_bytes false: by
// their digests, Value::digest, which the canonical values may carry to save
// computing them at each point, and a weights_f16 copy by its float32
// source's).
// Fails naming the node, the field, both values and the symbol values.
Status CheckSample(const Program& canonical, const SymContext& ctx, const Program& sample,
                   const std::vector<int64_t>& point);

// Bounds every buffer of `p` over the symbols' domain: a size expression that
// provably grows with every symbol needs no more than at the maximum (the
// memory plan's shape). Any other size gets Value::capacity, its maximum
// over every valid point (where each guard holds) when the domain has at
// most `max_points` points, else an upper bound by interval arithmetic
// (SymContext::UpperBound). Fails when a size is negative at a valid point,
// when a bound exceeds 2^40 bytes ("narrow the ranges"), or when a graph
// output whose dimensions depend on dimensions only (no run-time value)
// would need more than its shape at the maximum (the runtime requires those
// to hold exactly their stored shape).
Status BoundBufferSizes(Program* p, const SymContext& ctx, uint64_t max_points = 1000000);

// "H=32, W=64" for messages.
std::string PointToString(const std::vector<Symbol>& symbols, const std::vector<int64_t>& point);

}  // namespace oaaxvk::toolchain

#endif  // OAAXVK_TOOLCHAIN_DRIVER_DYNAMIC_H_
