// Spatial rearrangements defined after opset 17 (CenterCropPad-18,
// Col2Im-18, AffineGrid-20) as Slice / Pad, ConvTranspose and MatMul with
// constant operands, and the newer forms of Pad (18: `axes`, 19: mode
// "wrap") and GridSample (20: mode names) in the terms of the older ones;
// see docs/toolchain.md, "Resize, sampling, recurrent layers, signal
// processing and training optimizers".
#include <string>
#include <vector>

#include "toolchain/ir/not_constant.h"
#include "toolchain/passes/decompose_builder.h"

namespace oaaxvk::toolchain {

namespace {

std::string Str(int64_t v) { return std::to_string(v); }

bool HasInput(const Node& n, size_t k) { return k < n.inputs.size() && !n.inputs[k].empty(); }

// The integer values of input k, which decide the output's shape: they must
// be known at conversion. The wording is the one tools that bind graph
// inputs at conversion recognize (not_constant.h).
StatusOr<std::vector<int64_t>> ConstIntsInput(const Graph& g, const Node& n, size_t k, const std::string& what) {
  if (!HasInput(n, k)) return NodeInvalid(n, "missing input " + Str(static_cast<int64_t>(k)) + " (" + what + ")");
  const Tensor* t = g.FindTensor(n.inputs[k]);
  if (t == nullptr || !t->is_const) return NodeInvalid(n, NotConstantMessage(g, what, n.inputs[k]));
  if (t->dtype != DType::kInt64 && t->dtype != DType::kInt32)
    return NodeInvalid(n, what + " input '" + n.inputs[k] + "' must be int64, got " + DTypeName(t->dtype));
  return t->AsInts();
}

// The static dimensions of `x`, or an error naming the first symbolic one.
StatusOr<std::vector<int64_t>> StaticDims(const Node& n, const Tensor& x) {
  std::vector<int64_t> d;
  for (const Dim& v : x.shape) {
    if (v.is_symbolic())
      return NodeUnimplemented(n, "input '" + x.name + "' has shape " + ShapeToString(x.shape) + "; " + n.op_type +
                                      " needs static sizes (config.json \"input_shapes\")");
    d.push_back(v.value());
  }
  return d;
}

// CenterCropPad: on each listed axis, a larger input is cropped around its
// center (the extra element of an odd difference at the end) and a smaller
// one zero-padded around it (likewise): one Slice, then one Pad. A `shape`
// read at run time (feature value_symbols) or a symbolic input dimension
// makes both amounts expressions: the Slice keeps min(want, dim) elements
// from floor((dim - kept) / 2), the Pad adds max(want, dim) - dim split the
// same way, so one of the two is empty at every point.
Status CenterCropPad(Graph& g, const Node& n, Builder& b) {
  const Tensor* x = InputWithShape(g, n, 0);
  if (!x) return NodeInvalid(n, "input '" + n.inputs[0] + "' has no static shape");
  if (!HasInput(n, 1)) return NodeInvalid(n, "missing input 1 (shape)");
  const Tensor* st = g.FindTensor(n.inputs[1]);
  if (st == nullptr || !st->is_const) return NodeInvalid(n, NotConstantMessage(g, "shape", n.inputs[1]));
  if (st->dtype != DType::kInt64 && st->dtype != DType::kInt32)
    return NodeInvalid(n, "shape input '" + n.inputs[1] + "' must be int64, got " + DTypeName(st->dtype));
  const std::vector<Dim> target = st->AsDims();
  const Shape& dims = x->shape;
  const int64_t rank = static_cast<int64_t>(dims.size());
  std::vector<int64_t> axes = n.GetInts("axes", {});
  if (axes.empty())
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  if (axes.size() != target.size())
    return NodeInvalid(n, "shape has " + Str(static_cast<int64_t>(target.size())) + " entries for " +
                              Str(static_cast<int64_t>(axes.size())) + " axes");
  std::vector<Dim> starts, ends, pads(2 * rank, Dim(0));
  std::vector<int64_t> slice_axes;
  std::vector<bool> seen(rank, false);
  bool any_pad = false;
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = axes[i];
    if (a < -rank || a >= rank) return NodeInvalid(n, "axis " + Str(a) + " is out of range for rank " + Str(rank));
    if (a < 0) a += rank;
    if (seen[a]) return NodeInvalid(n, "axis " + Str(axes[i]) + " is listed twice");
    seen[a] = true;
    const Dim& dim = dims[a];
    const Dim& want = target[i];
    if (!want.is_symbolic() && !dim.is_symbolic()) {
      if (want < 0) return NodeInvalid(n, "shape entry " + Str(want.value()) + " for axis " + Str(a) + " is negative");
      if (want < dim) {
        const int64_t s = (dim.value() - want.value()) / 2;
        starts.push_back(Dim(s));
        ends.push_back(Dim(s + want.value()));
        slice_axes.push_back(a);
      } else if (want > dim) {
        pads[a] = Dim((want.value() - dim.value()) / 2);
        pads[rank + a] = want - dim - pads[a];
        any_pad = true;
      }
      continue;
    }
    // Known only per inference: the runtime refuses a negative entry before
    // anything runs, naming this node.
    SymContext* sc = SymContext::Current();
    if (sc != nullptr)
      OAAXVK_RETURN_IF_ERROR(sc->AddGuard((Dim(1) - Lt(want, Dim(0))).Node(sc),
                                          "CenterCropPad '" + n.name + "': shape entry " + Str(static_cast<int64_t>(i)) +
                                              " (axis " + Str(a) + ") is negative"));
    const Dim kept = Min(want, dim);
    const Dim s = FloorDiv(dim - kept, Dim(2));
    starts.push_back(s);
    ends.push_back(s + kept);
    slice_axes.push_back(a);
    const Dim grow = Max(want, dim) - dim;
    pads[a] = FloorDiv(grow, Dim(2));
    pads[rank + a] = grow - pads[a];
    any_pad = true;
  }
  std::string y = n.inputs[0];
  if (!slice_axes.empty()) {
    const std::string out = any_pad ? "" : n.outputs[0];
    std::vector<Dim> sa(slice_axes.begin(), slice_axes.end());
    y = b.Out(b.Add("Slice", {y, b.ConstI64("starts", starts), b.ConstI64("ends", ends), b.ConstI64("axes", sa)},
                    "crop", out));
  }
  if (any_pad) {
    b.Add("Pad", {y, b.ConstI64("pads", pads)}, "pad", n.outputs[0]);
  } else if (slice_axes.empty()) {
    b.Add("Identity", {y}, "same", n.outputs[0]);
  }
  return Status::Ok();
}

// Col2Im by one scatter: with image_shape / block_shape read at run time
// (feature value_symbols) the kernel size is a value, and an image of other
// than 2 dimensions has no grouped ConvTranspose to sum it; instead every
// input element is added at its image position by one ScatterElements
// (reduction add, one invocation walking the elements in order) into a
// zeroed [N * C * prod(image)] buffer, the positions computed on the device
// (from the values, or from constants): element (n, c K + k, l) with k =
// (k1, ..., kd) over the block and l = (l1, ..., ld) over the block grid,
// both row-major, lands at coordinate li si - pi + ki di on spatial axis i;
// one outside the image (padding) at an index past the end, which the
// scatter skips (sizes read at run time) or an extra slot takes (sizes known
// at conversion). Guards (checked here when the sizes are constants):
// positive sizes, C * prod(block) channels, the block fitting the padded
// image, the block grid holding the input's L blocks.
Status Col2ImByScatter(const Node& n, Builder& b, const std::vector<int64_t>& xd, const std::vector<Dim>& image,
                       const std::vector<Dim>& block) {
  const size_t nd = image.size();
  if (nd == 0 || block.size() != nd)
    return NodeInvalid(n, "image_shape and block_shape must have the same, nonzero length");
  const std::vector<int64_t> st = n.GetInts("strides", std::vector<int64_t>(nd, 1)),
                             dl = n.GetInts("dilations", std::vector<int64_t>(nd, 1)),
                             pd = n.GetInts("pads", std::vector<int64_t>(2 * nd, 0));
  if (st.size() != nd || dl.size() != nd || pd.size() != 2 * nd)
    return NodeInvalid(n, "strides, dilations and pads must have " + Str(static_cast<int64_t>(nd)) + ", " +
                              Str(static_cast<int64_t>(nd)) + " and " + Str(static_cast<int64_t>(2 * nd)) + " entries");
  for (size_t i = 0; i < nd; ++i)
    if (st[i] <= 0 || dl[i] <= 0 || pd[i] < 0 || pd[nd + i] < 0)
      return NodeInvalid(n, "strides and dilations must be positive, pads non-negative");
  SymContext* sc = SymContext::Current();
  const std::string who = "Col2Im '" + n.name + "': ";
  // A condition that must hold (nonzero): checked now when it is a
  // constant, else a guard the runtime checks per inference.
  auto require = [&](const Dim& cond, const std::string& text) -> Status {
    if (!cond.is_symbolic()) return cond.value() != 0 ? Status::Ok() : NodeInvalid(n, text);
    if (sc == nullptr) return Internal("node '" + n.name + "': run-time sizes without a symbol context");
    return sc->AddGuard(cond.Node(sc), who + text);
  };
  std::vector<Dim> grid(nd);
  for (size_t i = 0; i < nd; ++i) {
    OAAXVK_RETURN_IF_ERROR(require(Dim(1) - Lt(image[i], Dim(1)), "image_shape entries must be positive"));
    OAAXVK_RETURN_IF_ERROR(require(Dim(1) - Lt(block[i], Dim(1)), "block_shape entries must be positive"));
    const Dim room = image[i] + pd[i] + pd[nd + i] - (block[i] - 1) * dl[i] - 1;  // >= 0: the block fits
    OAAXVK_RETURN_IF_ERROR(require(Dim(1) - Lt(room, Dim(0)), "the block does not fit the padded image on spatial axis " +
                                                                  Str(static_cast<int64_t>(i))));
    grid[i] = FloorDiv(Max(room, Dim(0)), Dim(st[i])) + 1;
  }
  Dim K = 1, L = 1, pixels = 1;
  for (size_t i = 0; i < nd; ++i) {
    K = K * block[i];
    L = L * grid[i];
    pixels = pixels * image[i];
  }
  OAAXVK_RETURN_IF_ERROR(require(Eq(Mod(Dim(xd[1]), Max(K, Dim(1))), Dim(0)),
                                 "input dimension 1 (" + Str(xd[1]) + ") must be a multiple of prod(block_shape)"));
  OAAXVK_RETURN_IF_ERROR(require(Eq(L, Dim(xd[2])), "the input's " + Str(xd[2]) +
                                                        " blocks must be the block grid of image_shape, block_shape, "
                                                        "strides, dilations and pads"));
  // At least 1 also at points a guard refuses (a block larger than the
  // channels), which the conversion still sizes.
  const Dim C = Max(FloorDiv(Dim(xd[1]), Max(K, Dim(1))), Dim(1));
  auto i64 = [&](const std::vector<int64_t>& v, const Shape& shape, const std::string& sfx) {
    std::vector<double> d(v.begin(), v.end());
    return b.AddConst(MakeConstFromDoubles("", DType::kInt64, shape, d), sfx);
  };
  auto iota = [&](int64_t len, const Shape& shape, const std::string& sfx) {
    std::vector<int64_t> v(static_cast<size_t>(len));
    for (int64_t i = 0; i < len; ++i) v[i] = i;
    return i64(v, shape, sfx);
  };
  auto val = [&](const Dim& d, const std::string& sfx) { return b.ConstI64(sfx, {d}); };  // [1], computed per inference
  auto op = [&](const std::string& o, std::vector<std::string> in, const std::string& sfx) { return b.Op(o, std::move(in), sfx); };
  const std::string nn = iota(xd[0], {xd[0], 1, 1}, "n");
  const std::string ck = iota(xd[1], {1, xd[1], 1}, "ck");
  const std::string l = iota(xd[2], {1, 1, xd[2]}, "l");
  const std::string c = op("Div", {ck, val(Max(K, Dim(1)), "k_count")}, "c");
  const std::string k = op("Mod", {ck, val(Max(K, Dim(1)), "k_count_m")}, "k");
  const std::string zero = i64({0}, {1}, "zero");
  // ((n C + c) I1 + y1) I2 + y2 ..., and whether every yi is inside the image.
  std::string flat = op("Add", {op("Mul", {nn, val(C, "channels")}, "n_c"), c}, "plane");
  std::string ok;
  Dim inner_block = K, inner_grid = L;
  for (size_t i = 0; i < nd; ++i) {
    const std::string ax = Str(static_cast<int64_t>(i));
    inner_block = FloorDiv(inner_block, Max(block[i], Dim(1)));
    inner_grid = FloorDiv(inner_grid, Max(grid[i], Dim(1)));
    const std::string ki = op("Mod", {op("Div", {k, val(Max(inner_block, Dim(1)), "block_inner" + ax)}, "k_div" + ax),
                                      val(block[i], "block" + ax)}, "k" + ax);
    const std::string li = op("Mod", {op("Div", {l, val(Max(inner_grid, Dim(1)), "grid_inner" + ax)}, "l_div" + ax),
                                      val(grid[i], "grid" + ax)}, "l" + ax);
    const std::string start = op("Mul", {li, i64({st[i]}, {1}, "stride" + ax)}, "start" + ax);
    const std::string offset = op("Mul", {ki, i64({dl[i]}, {1}, "dilation" + ax)}, "offset" + ax);
    const std::string y = op("Sub", {op("Add", {start, offset}, "sum" + ax), i64({pd[i]}, {1}, "pad" + ax)}, "pos" + ax);
    const std::string ext = val(image[i], "extent" + ax);
    const std::string in = op("And", {op("Not", {op("Less", {y, zero}, "neg" + ax)}, "nonneg" + ax),
                                      op("Less", {y, ext}, "below" + ax)}, "in" + ax);
    ok = ok.empty() ? in : op("And", {ok, in}, "inside" + ax);
    flat = op("Add", {op("Mul", {flat, ext}, "scaled" + ax), y}, "flat" + ax);
  }
  const Dim total = Dim(xd[0]) * C * pixels;
  const std::string past_end = val(total, "past_end");  // skipped by the scatter
  const std::string idx = op("Where", {ok, flat, past_end}, "positions");
  const int64_t count = xd[0] * xd[1] * xd[2];
  const std::string idx_flat = b.Reshape(idx, {Dim(count)}, "positions_flat");
  const std::string upd = b.Reshape(n.inputs[0], {Dim(count)}, "values_flat");
  const Tensor* xt = b.graph().FindTensor(n.inputs[0]);
  const std::string zf = b.AddConst(MakeConstFromDoubles("", xt->dtype, {1}, {0.0}), "zero_value");
  // With sizes known at conversion the positions are constants, which the
  // conversion checks against the buffer: the elements in the padding then
  // land in one extra slot past the image, sliced off.
  const bool slot = !total.is_symbolic();
  const std::string zeros = op("Expand", {zf, b.ConstI64("image_elements", {slot ? total + 1 : total})}, "zeros");
  Node& sc_node = b.Add("ScatterElements", {zeros, idx_flat, upd}, "sum");
  sc_node.SetInt("axis", 0);
  sc_node.SetString("reduction", "add");
  std::string image_flat = b.Out(sc_node);
  if (slot)
    image_flat = op("Slice", {image_flat, i64({0}, {1}, "image_start"), i64({total.value()}, {1}, "image_end"),
                              i64({0}, {1}, "image_axis")}, "image_flat");
  std::vector<Dim> out_shape = {Dim(xd[0]), C};
  out_shape.insert(out_shape.end(), image.begin(), image.end());
  b.Add("Reshape", {image_flat, b.ConstI64("image", out_shape)}, "image_view", n.outputs[0]);
  return Status::Ok();
}

// Col2Im (2-D images): input [N, C * prod(block), L] holds, for every sliding block (L of
// them, row-major over the block grid), C * prod(block) values, channel
// major. Summing them into the image is a grouped ConvTranspose (C groups) of
// the input viewed as [N, C * prod(block), L1, ..., Ln] with a one-hot
// weight: output channel c receives block element k of its group at kernel
// position k. Products with the weight's zeros are exact zeros for finite
// inputs; an infinite input also turns the other positions of its block
// into NaN (0 * inf), where Col2Im would leave them finite.
Status Col2Im(Graph& g, const Node& n, Builder& b) {
  const Tensor* x = InputWithShape(g, n, 0);
  if (!x) return NodeInvalid(n, "input '" + n.inputs[0] + "' has no static shape");
  OAAXVK_ASSIGN_OR_RETURN(std::vector<int64_t> xd, StaticDims(n, *x));
  if (xd.size() != 3) return NodeInvalid(n, "input must be [N, C * prod(block_shape), L], got " + ShapeToString(x->shape));
  for (size_t k : {size_t{1}, size_t{2}})
    if (const Tensor* t = HasInput(n, k) ? g.FindTensor(n.inputs[k]) : nullptr;
        t != nullptr && t->is_const && AnyDependsOnValue(t->sym)) {
      const Tensor* it = g.FindTensor(n.inputs[1]);
      const Tensor* bt = HasInput(n, 2) ? g.FindTensor(n.inputs[2]) : nullptr;
      if (it == nullptr || !it->is_const || bt == nullptr || !bt->is_const)
        return NodeInvalid(n, NotConstantMessage(g, it == nullptr || !it->is_const ? "image_shape" : "block_shape",
                                                 n.inputs[it == nullptr || !it->is_const ? 1 : 2]));
      return Col2ImByScatter(n, b, xd, it->AsDims(), bt->AsDims());
    }
  OAAXVK_ASSIGN_OR_RETURN(std::vector<int64_t> image, ConstIntsInput(g, n, 1, "image_shape"));
  OAAXVK_ASSIGN_OR_RETURN(std::vector<int64_t> block, ConstIntsInput(g, n, 2, "block_shape"));
  const size_t nd = image.size();
  if (nd == 0 || block.size() != nd)
    return NodeInvalid(n, "image_shape and block_shape must have the same, nonzero length");
  // The sum is a 2-D ConvTranspose; the toolchain's grouped ConvTranspose
  // is 2-D only, so images of other ranks take the scatter.
  if (nd != 2)
    return Col2ImByScatter(n, b, xd, std::vector<Dim>(image.begin(), image.end()),
                           std::vector<Dim>(block.begin(), block.end()));
  const std::vector<int64_t> strides = n.GetInts("strides", std::vector<int64_t>(nd, 1));
  const std::vector<int64_t> dilations = n.GetInts("dilations", std::vector<int64_t>(nd, 1));
  const std::vector<int64_t> pads = n.GetInts("pads", std::vector<int64_t>(2 * nd, 0));
  if (strides.size() != nd || dilations.size() != nd || pads.size() != 2 * nd)
    return NodeInvalid(n, "strides, dilations and pads must have " + Str(static_cast<int64_t>(nd)) + ", " +
                              Str(static_cast<int64_t>(nd)) + " and " + Str(static_cast<int64_t>(2 * nd)) + " entries");
  int64_t K = 1;
  for (int64_t k : block) {
    if (k <= 0) return NodeInvalid(n, "block_shape entries must be positive");
    K *= k;
  }
  if (xd[1] % K != 0)
    return NodeInvalid(n, "input dimension 1 (" + Str(xd[1]) + ") is not a multiple of prod(block_shape) = " + Str(K));
  const int64_t C = xd[1] / K;
  std::vector<Dim> view = {xd[0], xd[1]};
  std::vector<int64_t> out_pad(nd, 0);
  int64_t L = 1;
  for (size_t i = 0; i < nd; ++i) {
    if (strides[i] <= 0 || dilations[i] <= 0 || pads[i] < 0 || pads[nd + i] < 0)
      return NodeInvalid(n, "strides and dilations must be positive, pads non-negative");
    const int64_t span = dilations[i] * (block[i] - 1) + 1;
    const int64_t blocks = (image[i] + pads[i] + pads[nd + i] - span) / strides[i] + 1;
    if (image[i] + pads[i] + pads[nd + i] < span || blocks <= 0)
      return NodeInvalid(n, "the block does not fit the padded image on spatial axis " + Str(static_cast<int64_t>(i)));
    view.push_back(blocks);
    L *= blocks;
    // ConvTranspose yields stride * (blocks - 1) + span - pads; the image
    // rows the last block does not reach are output padding.
    out_pad[i] = image[i] - (strides[i] * (blocks - 1) + span - pads[i] - pads[nd + i]);
  }
  if (L != xd[2])
    return NodeInvalid(n, "input has " + Str(xd[2]) + " blocks, image_shape, block_shape, strides, dilations and "
                              "pads give " + Str(L));
  // Weight [C * K, 1, block...]: channel c * K + k is one at position k.
  Shape wshape = {C * K, 1};
  for (int64_t k : block) wshape.push_back(k);
  std::vector<double> w(static_cast<size_t>(C * K * K), 0.0);
  for (int64_t c = 0; c < C; ++c)
    for (int64_t k = 0; k < K; ++k) w[static_cast<size_t>((c * K + k) * K + k)] = 1.0;
  const std::string weight = b.AddConst(MakeConstFromDoubles("", x->dtype, wshape, w), "one_hot_weight");
  const std::string blocks = b.Reshape(n.inputs[0], view, "block_grid");
  Node& ct = b.Add("ConvTranspose", {blocks, weight}, "sum_blocks", n.outputs[0]);
  ct.SetInt("group", C);
  ct.SetInts("kernel_shape", block);
  ct.SetInts("strides", strides);
  ct.SetInts("dilations", dilations);
  ct.SetInts("pads", pads);
  bool any_out_pad = false;
  for (int64_t p : out_pad) any_out_pad |= p != 0;
  if (any_out_pad) ct.SetInts("output_padding", out_pad);
  return Status::Ok();
}

// AffineGrid: grid[n, (d,) h, w] = theta[n] @ (x_w, y_h(, z_d), 1), the base
// coordinates in [-1, 1] (pixel centers without align_corners, corners
// with; 1 for an extent of 1 with align_corners), a constant [2 + 1 or 3 + 1, D * H * W] matrix: one MatMul, then the
// coordinate axis moved last.
Status AffineGridByValue(const Node& n, Builder& b, const Tensor& theta, const std::vector<Dim>& size);

Status AffineGrid(Graph& g, const Node& n, Builder& b) {
  const Tensor* theta = InputWithShape(g, n, 0);
  if (!theta) return NodeInvalid(n, "input '" + n.inputs[0] + "' has no static shape");
  if (const Tensor* st = HasInput(n, 1) ? g.FindTensor(n.inputs[1]) : nullptr;
      st != nullptr && st->is_const && AnyDependsOnValue(st->sym))
    return AffineGridByValue(n, b, *theta, st->AsDims());
  OAAXVK_ASSIGN_OR_RETURN(std::vector<int64_t> size, ConstIntsInput(g, n, 1, "size"));
  if (size.size() != 4 && size.size() != 5)
    return NodeInvalid(n, "size must be [N, C, H, W] or [N, C, D, H, W], got " +
                              Str(static_cast<int64_t>(size.size())) + " entries");
  const size_t nd = size.size() - 2;
  if (theta->shape.size() != 3 || theta->shape[1].is_symbolic() || theta->shape[2].is_symbolic() ||
      theta->shape[1].value() != static_cast<int64_t>(nd) || theta->shape[2].value() != static_cast<int64_t>(nd) + 1)
    return NodeInvalid(n, "theta must be [N, " + Str(static_cast<int64_t>(nd)) + ", " +
                              Str(static_cast<int64_t>(nd + 1)) + "] for a " + Str(static_cast<int64_t>(nd)) +
                              "-D size, got " + ShapeToString(theta->shape));
  if (!theta->shape[0].is_symbolic() && theta->shape[0].value() != size[0])
    return NodeInvalid(n, "theta has batch " + Str(theta->shape[0].value()) + ", size says " + Str(size[0]));
  if (theta->dtype != DType::kFloat && theta->dtype != DType::kDouble && theta->dtype != DType::kFloat16)
    return NodeUnimplemented(n, "theta has data type " + std::string(DTypeName(theta->dtype)) +
                                    "; AffineGrid is supported on floating-point values only");
  const bool align = n.GetInt("align_corners", 0) != 0;
  // spatial[0] is the outermost (D or H), the coordinate order is innermost first (x = W).
  const std::vector<int64_t> spatial(size.begin() + 2, size.end());
  int64_t points = 1;
  for (int64_t s : spatial) {
    if (s <= 0) return NodeUnimplemented(n, "size has a spatial extent " + Str(s) + "; only positive sizes are supported");
    points *= s;
  }
  auto coord = [&](int64_t i, int64_t s) {
    // align_corners on an extent of 1: ONNX Runtime's 1 (the ONNX reference
    // divides by 0 there).
    if (align) return s == 1 ? 1.0 : -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(s - 1);
    return -1.0 + (2.0 * static_cast<double>(i) + 1.0) / static_cast<double>(s);
  };
  std::vector<double> base(static_cast<size_t>((nd + 1) * points));
  for (int64_t p = 0; p < points; ++p) {
    int64_t rem = p;
    std::vector<int64_t> idx(nd);
    for (size_t a = nd; a-- > 0;) {
      idx[a] = rem % spatial[a];
      rem /= spatial[a];
    }
    for (size_t c = 0; c < nd; ++c) {
      const size_t axis = nd - 1 - c;  // coordinate c runs along spatial axis nd - 1 - c
      base[c * points + p] = coord(idx[axis], spatial[axis]);
    }
    base[nd * points + p] = 1.0;
  }
  const std::string bt =
      b.AddConst(MakeConstFromDoubles("", theta->dtype, {static_cast<int64_t>(nd + 1), points}, base), "base_grid");
  const std::string prod = b.Op("MatMul", {n.inputs[0], bt}, "transformed");  // [N, nd, points]
  const std::string last = b.Transpose(prod, {0, 2, 1}, "coordinates_last");
  std::vector<Dim> out = {theta->shape[0]};
  for (int64_t s : spatial) out.push_back(s);
  out.push_back(static_cast<int64_t>(nd));
  b.Add("Reshape", {last, b.ConstI64("grid_shape", out)}, "grid", n.outputs[0]);
  return Status::Ok();
}

// AffineGrid with `size` read at run time (feature value_symbols): the same
// product with the base grid computed on the device in float32 from
// run-time iotas, coordinate (2 i + 1) / s - 1 (align_corners: 2 i /
// max(s - 1, 1) - 1, or 1 for s = 1 as in AffineGrid), each axis' coordinates
// expanded over the grid's points. Guards: the batch equals theta's, the
// spatial extents are positive.
Status AffineGridByValue(const Node& n, Builder& b, const Tensor& theta, const std::vector<Dim>& size) {
  if (size.size() != 4 && size.size() != 5)
    return NodeInvalid(n, "size must be [N, C, H, W] or [N, C, D, H, W], got " +
                              Str(static_cast<int64_t>(size.size())) + " entries");
  const size_t nd = size.size() - 2;
  if (theta.shape.size() != 3 || theta.shape[1].is_symbolic() || theta.shape[2].is_symbolic() ||
      theta.shape[1].value() != static_cast<int64_t>(nd) || theta.shape[2].value() != static_cast<int64_t>(nd) + 1)
    return NodeInvalid(n, "theta must be [N, " + Str(static_cast<int64_t>(nd)) + ", " +
                              Str(static_cast<int64_t>(nd + 1)) + "] for a " + Str(static_cast<int64_t>(nd)) +
                              "-D size, got " + ShapeToString(theta.shape));
  if (theta.dtype != DType::kFloat && theta.dtype != DType::kFloat16)
    return NodeUnimplemented(n, "theta has data type " + std::string(DTypeName(theta.dtype)) +
                                    "; AffineGrid with a size read at run time is supported on float32 and float16");
  SymContext* sc = SymContext::Current();
  if (sc == nullptr) return Internal("node '" + n.name + "': run-time size without a symbol context");
  const std::string who = "AffineGrid '" + n.name + "': ";
  OAAXVK_RETURN_IF_ERROR(sc->AddGuard(Eq(size[0], theta.shape[0]).Node(sc), who + "size[0] must equal theta's batch"));
  const std::vector<Dim> spatial(size.begin() + 2, size.end());
  for (size_t a = 0; a < nd; ++a)
    OAAXVK_RETURN_IF_ERROR(sc->AddGuard((Dim(1) - Lt(spatial[a], Dim(1))).Node(sc),
                                        who + "size[" + Str(static_cast<int64_t>(a + 2)) + "] must be positive"));
  const bool align = n.GetInt("align_corners", 0) != 0;
  Dim points = 1;
  for (const Dim& e : spatial) points = points * e;
  auto f32 = [&](double v, const std::string& sfx) { return b.AddConst(MakeConstFromDoubles("", DType::kFloat, {1}, {v}), sfx); };
  // rows[c]: coordinate c (innermost axis first) at every point, [1, points].
  std::vector<std::string> rows(nd + 1);
  for (size_t c = 0; c < nd; ++c) {
    const size_t axis = nd - 1 - c;  // coordinate c runs along spatial axis nd - 1 - c
    const std::string sx = Str(static_cast<int64_t>(c));
    const Dim& e = spatial[axis];
    const std::string i = b.RunTimeIota(e, DType::kFloat, false, "iota" + sx);
    const std::string twice = b.Op("Mul", {i, f32(2.0, "two" + sx)}, "twice" + sx);
    const std::string num = align ? twice : b.Op("Add", {twice, f32(1.0, "one" + sx)}, "numerator" + sx);
    const Dim den = align ? Max(e - 1, Dim(1)) : e;
    const std::string den_f = b.Cast(b.ConstI64("denominator" + sx, {den}), DType::kFloat, "denominator_f" + sx);
    // The subtrahend: 1, or -1 for an extent of 1 with align_corners.
    const Dim sub = align ? Dim(1) - Dim(2) * Eq(e, Dim(1)) : Dim(1);
    const std::string sub_f = b.Cast(b.ConstI64("offset" + sx, {sub}), DType::kFloat, "offset_f" + sx);
    const std::string coord = b.Op("Sub", {b.Op("Div", {num, den_f}, "ratio" + sx), sub_f}, "coord" + sx);
    std::vector<Dim> view(nd, Dim(1)), full(spatial);
    view[axis] = e;
    const std::string spread = b.Op("Expand", {b.Reshape(coord, view, "coord_view" + sx), b.ConstI64("grid_extent" + sx, full)},
                                    "coord_spread" + sx);
    rows[c] = b.Reshape(spread, {Dim(1), points}, "coord_row" + sx);
  }
  rows[nd] = b.Op("Expand", {f32(1.0, "one"), b.ConstI64("ones_extent", {Dim(1), points})}, "ones_row");
  Node& cat = b.Add("Concat", rows, "base_grid");
  cat.SetInt("axis", 0);
  std::string base = b.Out(cat);  // [nd + 1, points]
  if (theta.dtype != DType::kFloat) base = b.Cast(base, theta.dtype, "base_grid_cast");
  const std::string prod = b.Op("MatMul", {n.inputs[0], base}, "transformed");  // [N, nd, points]
  const std::string last = b.Transpose(prod, {0, 2, 1}, "coordinates_last");
  std::vector<Dim> out = {theta.shape[0]};
  for (const Dim& e : spatial) out.push_back(e);
  out.push_back(static_cast<int64_t>(nd));
  b.Add("Reshape", {last, b.ConstI64("grid_shape", out)}, "grid", n.outputs[0]);
  return Status::Ok();
}

// Adds a copy of `n` (name, domain, attributes, outputs) with `inputs` to `b`.
Node& KeepWith(const Node& n, Builder& b, std::vector<std::string> inputs) {
  Node& c = b.Add(n.op_type, std::move(inputs), "kept", n.outputs.empty() ? "" : n.outputs[0]);
  c.name = n.name;
  c.domain = n.domain;
  c.outputs = n.outputs;
  c.attrs = n.attrs;
  return c;
}

// Pad mode "wrap" with pads read at run time (feature value_symbols): per
// axis, a Gather at the indices (j - pb) mod d for j in [0, d + pb + pe),
// computed on the device from a run-time iota, so that a pad of 0 needs no
// empty piece. Guards keep each amount in [0, d], the static form's limit.
Status WrapPadByValue(const Node& n, Builder& b, const std::vector<int64_t>& dims, const std::vector<Dim>& pads) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  if (static_cast<int64_t>(pads.size()) != 2 * rank)
    return NodeInvalid(n, "pads has " + Str(static_cast<int64_t>(pads.size())) + " entries for rank " + Str(rank));
  SymContext* sc = SymContext::Current();
  std::vector<int64_t> padded;
  for (int64_t a = 0; a < rank; ++a)
    if (pads[a].is_symbolic() || pads[rank + a].is_symbolic() || pads[a] != 0 || pads[rank + a] != 0) padded.push_back(a);
  std::string y = n.inputs[0];
  if (padded.empty()) {
    b.Add("Identity", {y}, "same", n.outputs[0]);
    return Status::Ok();
  }
  for (int64_t a : padded) {
    const Dim& pb = pads[a];
    const Dim& pe = pads[rank + a];
    const Dim d(dims[a]);
    for (const Dim* p : {&pb, &pe}) {
      const std::string who = "Pad '" + n.name + "': mode 'wrap' pads dimension " + Str(a) + " (extent " + Str(dims[a]) +
                              ") by " + (p == &pb ? "pads[" + Str(a) + "]" : "pads[" + Str(rank + a) + "]");
      if (!p->is_symbolic()) {
        if (*p < 0 || *p > d)
          return NodeUnimplemented(n, "mode 'wrap' pads dimension " + Str(a) + " (extent " + Str(dims[a]) + ") by " +
                                          Str(p->value()) + "; only pads between 0 and the extent are supported");
      } else if (sc != nullptr) {
        OAAXVK_RETURN_IF_ERROR(sc->AddGuard((Dim(1) - Lt(*p, Dim(0))).Node(sc), who + ", which is negative"));
        OAAXVK_RETURN_IF_ERROR(sc->AddGuard((Dim(1) - Lt(d, *p)).Node(sc), who + ", more than the extent"));
      }
    }
    const std::string s = Str(a);
    // (j + d - pb) mod d: the dividend is never negative (pb <= d).
    const std::string j = b.RunTimeIota(d + pb + pe, DType::kInt64, false, "wrap_j" + s);
    const std::string shifted = b.Op("Add", {j, b.ConstI64("wrap_shift" + s, {d - pb})}, "wrap_shifted" + s);
    const std::string idx = b.Op("Mod", {shifted, b.ConstI64("wrap_extent" + s, {d})}, "wrap_index" + s);
    const bool final_axis = a == padded.back();
    Node& gather = b.Add("Gather", {y, idx}, "wrapped" + s, final_axis ? n.outputs[0] : "");
    gather.SetInt("axis", a);
    y = b.Out(gather);
  }
  return Status::Ok();
}

// Pad mode "wrap" (opset 19) becomes, per padded axis, a Concat of the
// input's last pb elements, the input and its first pe elements (pads given
// for every axis or, from opset 18, for the listed `axes`). Every other Pad
// passes unchanged: shape inference reads opset 18's `axes` input
// (shape_infer_index.cpp); opsets 21, 23 and 24 only admit more element types.
Status Pad(Graph& g, const Node& n, Builder& b) {
  const bool has_axes = g.opset >= 18 && HasInput(n, 3);
  const std::string mode = n.GetString("mode", "constant");
  if (mode != "wrap") {
    KeepWith(n, b, n.inputs);
    return Status::Ok();
  }
  const Tensor* x = InputWithShape(g, n, 0);
  if (!x) return NodeInvalid(n, "input '" + n.inputs[0] + "' has no static shape");
  OAAXVK_ASSIGN_OR_RETURN(std::vector<int64_t> dims, StaticDims(n, *x));
  const int64_t rank = static_cast<int64_t>(dims.size());
  if (const Tensor* pt = HasInput(n, 1) ? g.FindTensor(n.inputs[1]) : nullptr;
      pt != nullptr && pt->is_const && AnyDependsOnValue(pt->sym) && !has_axes)
    return WrapPadByValue(n, b, dims, pt->AsDims());
  OAAXVK_ASSIGN_OR_RETURN(std::vector<int64_t> pads, ConstIntsInput(g, n, 1, "pads"));
  std::vector<int64_t> full(2 * rank, 0);
  if (has_axes) {
    OAAXVK_ASSIGN_OR_RETURN(std::vector<int64_t> axes, ConstIntsInput(g, n, 3, "axes"));
    const int64_t na = static_cast<int64_t>(axes.size());
    if (static_cast<int64_t>(pads.size()) != 2 * na)
      return NodeInvalid(n, "pads has " + Str(static_cast<int64_t>(pads.size())) + " entries for " + Str(na) +
                                " axes (2 per axis)");
    std::vector<bool> seen(rank, false);
    for (int64_t i = 0; i < na; ++i) {
      int64_t a = axes[i];
      if (a < -rank || a >= rank) return NodeInvalid(n, "axis " + Str(a) + " is out of range for rank " + Str(rank));
      if (a < 0) a += rank;
      if (seen[a]) return NodeInvalid(n, "axis " + Str(axes[i]) + " is listed twice");
      seen[a] = true;
      full[a] = pads[i];
      full[rank + a] = pads[na + i];
    }
  } else {
    if (static_cast<int64_t>(pads.size()) != 2 * rank)
      return NodeInvalid(n, "pads has " + Str(static_cast<int64_t>(pads.size())) + " entries for rank " + Str(rank));
    full = pads;
  }
  std::string y = n.inputs[0];
  std::vector<int64_t> last_axis;
  for (int64_t a = 0; a < rank; ++a)
    if (full[a] != 0 || full[rank + a] != 0) last_axis.push_back(a);
  if (last_axis.empty()) {
    b.Add("Identity", {y}, "same", n.outputs[0]);
    return Status::Ok();
  }
  for (int64_t a : last_axis) {
    const int64_t pb = full[a], pe = full[rank + a], d = dims[a];
    if (pb < 0 || pe < 0 || pb > d || pe > d)
      return NodeUnimplemented(n, "mode 'wrap' pads dimension " + Str(a) + " (extent " + Str(d) + ") by " + Str(pb) +
                                      " and " + Str(pe) + "; only pads between 0 and the extent are supported");
    std::vector<std::string> parts;
    const std::string s = Str(a);
    if (pb > 0) parts.push_back(b.SliceAxis(y, a, d - pb, d, "wrap_before" + s));
    parts.push_back(y);
    if (pe > 0) parts.push_back(b.SliceAxis(y, a, 0, pe, "wrap_after" + s));
    const bool final_axis = a == last_axis.back();
    Node& c = b.Add("Concat", parts, "wrapped" + s, final_axis ? n.outputs[0] : "");
    c.SetInt("axis", a);
    y = b.Out(c);
  }
  return Status::Ok();
}

// GridSample-20 renamed the interpolation modes (linear, cubic; linear the
// default) and admits N-D inputs; the kernels sample 4-D inputs (grid_sample)
// and 5-D ones (grid_sample3d, trilinear or nearest) with the opset-16 names.
// GridSample-22 only admits more element types.
Status GridSample(Graph& g, const Node& n, Builder& b) {
  Node& c = KeepWith(n, b, n.inputs);
  if (g.opset < 20) return Status::Ok();
  const std::string mode = n.GetString("mode", "linear");
  if (mode == "linear") c.SetString("mode", "bilinear");
  else if (mode == "cubic") c.SetString("mode", "bicubic");
  else if (mode != "nearest")
    return NodeInvalid(n, "mode '" + mode + "' is not linear, nearest or cubic");
  const Tensor* x = InputWithShape(g, n, 0);
  if (x && x->shape.size() != 4 && x->shape.size() != 5)
    return NodeUnimplemented(n, "input " + ShapeToString(x->shape) +
                                    ": only 4-D and 5-D inputs ([N, C, H, W], [N, C, D, H, W]: 2-D and 3-D sampling) "
                                    "are supported");
  return Status::Ok();
}

}  // namespace

const std::map<std::string, DecomposeFn>& SpatialDecompositions() {
  static const std::map<std::string, DecomposeFn> k = {
      {"AffineGrid", AffineGrid},
      {"CenterCropPad", CenterCropPad},
      {"Col2Im", Col2Im},
      {"GridSample", GridSample},
      {"Pad", Pad},
  };
  return k;
}

}  // namespace oaaxvk::toolchain
