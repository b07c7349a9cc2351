#include "toolchain/bundle/bundle_writer.h"

#include <algorithm>
#include <cmath>
#include <cctype>
#include <cstring>
#include <map>
#include <set>

#include "toolchain/lower/kernels.h"

namespace oaaxvk::toolchain {

namespace {
using oinf::MetadataValue;
using oinf::ValueType;

MetadataValue Utf8Array(const std::string& s) {
  return MetadataValue::NdArray(ValueType::kU8, {s.size()}, std::vector<uint8_t>(s.begin(), s.end()));
}

template <typename T>
std::vector<uint8_t> Bytes(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// Feature segment_program: checks p.control against the program (a
// mistake here is the toolchain's, so Internal) and writes control.*.
Status WriteControlProgram(const Program& p, const SymContext& c, oinf::Writer* w) {
  const ControlProgram& cp = p.control;
  const size_t nseg = cp.segments.size(), nsteps = cp.steps.size(), nodes = c.nodes().size();
  uint32_t at = 0;
  std::vector<uint32_t> segs;
  for (size_t n = 0; n < nseg; ++n) {
    if (cp.segments[n].first != at || cp.segments[n].second < at)
      return Internal(StrFormat("segment %zu is dispatches [%u, %u): segments must cover the dispatches in order, "
                                "the next one starting at %u", n, cp.segments[n].first, cp.segments[n].second, at));
    at = cp.segments[n].second;
    segs.insert(segs.end(), {cp.segments[n].first, cp.segments[n].second});
  }
  if (at != p.dispatches.size())
    return Internal(StrFormat("the segments end at dispatch %u of %zu", at, p.dispatches.size()));
  auto decided = [&](int64_t s) {
    return s >= 0 && static_cast<size_t>(s) < c.symbols().size() && c.symbols()[static_cast<size_t>(s)].decided;
  };
  auto in = [](int64_t v, size_t n) { return v >= 0 && static_cast<uint64_t>(v) < n; };
  std::vector<int64_t> steps;
  for (size_t k = 0; k < nsteps; ++k) {
    const ControlStep& st = cp.steps[k];
    bool ok = false;
    switch (st.op) {
      case ControlOp::kRun: ok = in(st.a, nseg); break;
      case ControlOp::kRead: ok = decided(st.a) && in(st.b, cp.reads.size()); break;
      case ControlOp::kSet: ok = decided(st.a) && in(st.b, nodes); break;
      case ControlOp::kBranchZero: ok = in(st.a, nodes) && in(st.b, nsteps + 1); break;
      case ControlOp::kJump:
        ok = in(st.a, nsteps + 1) && (st.a > static_cast<int64_t>(k) || (st.b >= 0 && in(st.c, cp.texts.size())));
        break;
    }
    if (!ok)
      return Internal(StrFormat("control step %zu (opcode %lld, %lld, %lld, %lld) names a segment, symbol, read, "
                                "shape node, step or text that does not exist or is not decided", k,
                                static_cast<long long>(st.op), static_cast<long long>(st.a),
                                static_cast<long long>(st.b), static_cast<long long>(st.c)));
    steps.insert(steps.end(), {static_cast<int64_t>(st.op), st.a, st.b, st.c});
  }
  std::vector<uint64_t> reads;
  for (size_t r = 0; r < cp.reads.size(); ++r) {
    const ControlRead& rd = cp.reads[r];
    const uint64_t size = rd.dtype == DType::kBool ? 1 : DTypeSize(rd.dtype);
    if (!in(rd.value, p.values.size()) || !in(rd.text, cp.texts.size()) ||
        (rd.dtype != DType::kInt32 && rd.dtype != DType::kInt64 && rd.dtype != DType::kBool))
      return Internal(StrFormat("control read %zu: value %d, text %u or dtype %d out of range", r, rd.value, rd.text,
                                static_cast<int>(rd.dtype)));
    const Value& v = p.values[rd.value];
    if ((v.kind != BufferKind::kArena && v.kind != BufferKind::kOutputs) || rd.byte_offset % size != 0 ||
        rd.byte_offset + size > PlannedBytes(v) || (v.offset + rd.byte_offset) % size != 0)
      return Internal(StrFormat("control read %zu: %llu bytes at offset %llu of '%s' (buffer kind %u, %llu bytes) "
                                "is not an aligned element of an arena or output value", r,
                                static_cast<unsigned long long>(size), static_cast<unsigned long long>(rd.byte_offset),
                                v.tensor.c_str(), static_cast<unsigned>(v.kind),
                                static_cast<unsigned long long>(PlannedBytes(v))));
    reads.insert(reads.end(), {static_cast<uint64_t>(v.kind), v.offset + rd.byte_offset,
                               static_cast<uint64_t>(rd.dtype), static_cast<uint64_t>(rd.mode), rd.text});
  }
  w->AddTensor("control.segments", ValueType::kU32, {nseg, 2}, Bytes(segs));
  w->AddTensor("control.program", ValueType::kI64, {nsteps, 4}, Bytes(steps));
  w->AddTensor("control.reads", ValueType::kU64, {cp.reads.size(), 5}, Bytes(reads));
  w->AddMetadata("control.texts", MetadataValue::Scalar<uint32_t>(static_cast<uint32_t>(cp.texts.size())));
  for (size_t t = 0; t < cp.texts.size(); ++t) w->AddMetadata("control.text." + std::to_string(t), Utf8Array(cp.texts[t]));
  return Status::Ok();
}

MetadataValue ShapeArray(const Shape& s) {
  std::vector<int64_t> v = DimValues(s);
  return MetadataValue::NdArray(ValueType::kI64, {s.size()}, Bytes(v));
}

// The bundle fields that expressions drive (feature dynamic_shapes,
// docs/bundle-format.md "Dynamic shapes"): rows of shape.refs.
struct Refs {
  std::vector<uint32_t> rows;  // kind, index, sub, expr
  void Add(uint32_t kind, uint64_t index, uint32_t sub, const Dim& d) {
    if (d.is_symbolic())
      rows.insert(rows.end(), {kind, static_cast<uint32_t>(index), sub, static_cast<uint32_t>(d.expr())});
  }
  // Group counts of table `table` (0 default, 1 cpu, 2 gpu) for dispatch row `row`.
  void Groups(uint32_t table, size_t row, const Dim g[3]) {
    for (uint32_t a = 0; a < 3; ++a) Add(0, row, table * 3 + a, g[a]);
  }
  // Feature parameter_buffer: parameter slot of each expression given to one
  // (kind 4 rows), in order of first use.
  std::map<int64_t, uint32_t> param_slot;
  // The program.spec values of kernel `k` appended at index `first`: a
  // symbolic value at one of k's parameter constants becomes the marker of
  // its expression's parameter slot (the pipeline then does not depend on the
  // shape); any other symbolic value is specialized per shape (kind 1 row).
  StatusOr<std::vector<uint32_t>> Spec(size_t first, const std::vector<Dim>& v, const KernelInfo& k) {
    std::vector<uint32_t> out(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      const bool param = i < 64 && ((k.param_constants >> i) & 1u) != 0;
      if (param && v[i].is_symbolic()) {
        auto it = param_slot.find(v[i].expr());
        if (it == param_slot.end() && param_slot.size() < kMaxParamSlots) {
          it = param_slot.emplace(v[i].expr(), static_cast<uint32_t>(param_slot.size())).first;
          rows.insert(rows.end(), {4u, it->second, 0u, static_cast<uint32_t>(v[i].expr())});
        }
        if (it != param_slot.end()) {
          out[i] = kParamMarker | it->second;
          continue;
        }
      }
      out[i] = static_cast<uint32_t>(v[i].value());
      if (param && (out[i] & 0xFFFF0000u) == kParamMarker)
        return Internal(StrFormat("kernel '%s': specialization constant %zu = %u collides with the parameter-buffer "
                                  "marker", k.name.c_str(), i, out[i]));
      Add(1, first + i, 0, v[i]);
    }
    return out;
  }
};

uint32_t U32(const Dim& d) { return static_cast<uint32_t>(d.value()); }

// The group counts `g` of one dispatch row as the table stores them. A count
// computed from run-time values (feature value_symbols) may be 0 at the
// plan's point (an element count whose value there is smaller than at other
// values, e.g. a reduction over an empty axis chosen at run time): the table
// holds 1 for it, as a valid row must, and the runtime evaluates the
// expression per inference, running no dispatch where it is 0. Any other 0 is
// an internal error (the lowering skips dispatches with no work).
Status TableGroups(const Dim g[3], const char* row, const std::string& node, uint32_t out[3], BundleSummary* s) {
  for (int a = 0; a < 3; ++a) {
    const bool placeholder = g[a] == 0 && DependsOnUnsampledValue(g[a]);
    if (g[a] < 1 && !placeholder)
      return Internal(std::string(row) + " with a zero group count at node '" + node + "'");
    out[a] = placeholder ? 1u : U32(g[a]);
    s->max_workgroup_count = std::max(s->max_workgroup_count, out[a]);
  }
  return Status::Ok();
}
bool SameSpec(const std::vector<Dim>& a, const std::vector<Dim>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].value() != b[i].value() || a[i].expr() != b[i].expr()) return false;
  return true;
}
// Appends dispatch `di`'s program.dispatch.gpu row (feature device_variants)
// to `dispatch_gpu`: its GPU kernel, group counts and spec values (sharing
// the default row's spec range when equal) and bindings (sharing the default
// row's binding rows unless a weights value is replaced by its binary16
// copy). `dispatch` ends with the default row; `k` is its kernel. Checks the
// contract's rules: same binding count and ranges except kind 0 -> kind 4.
Status AppendGpuRow(const Program& p, size_t di, const KernelInfo& k, const std::vector<uint32_t>& dispatch,
                    std::map<std::string, uint32_t>& kernel_index, std::vector<uint32_t>* spec,
                    std::vector<uint64_t>* bindings, std::vector<uint32_t>* dispatch_gpu, Refs* refs,
                    BundleSummary* s) {
  const Dispatch& d = p.dispatches[di];
  const KernelInfo& kg = *FindKernel(d.gpu_kernel);
  const std::vector<Binding>& gb = d.GpuBindings();
  if (kg.bindings != k.bindings || gb.size() != d.bindings.size() || d.gpu_spec.size() != kg.spec_constants)
    return Internal(StrFormat("dispatch %zu (node '%s'): GPU variant %s wants %u bindings / %u spec constants, "
                              "has %zu / %zu", di, d.node.c_str(), d.gpu_kernel.c_str(), kg.bindings,
                              kg.spec_constants, gb.size(), d.gpu_spec.size()));
  uint32_t table_groups[3];
  OAAXVK_RETURN_IF_ERROR(TableGroups(d.gpu_groups, "GPU variant", d.node, table_groups, s));
  uint32_t first_binding = dispatch[dispatch.size() - 4];  // the default row's bindings when equal
  bool same = true;
  for (size_t b = 0; b < gb.size(); ++b) {
    const Value& dv = p.values[d.bindings[b].value];
    const Value& gv = p.values[gb[b].value];
    if (gb[b].value == d.bindings[b].value && gb[b].written == d.bindings[b].written) continue;
    if (dv.kind != BufferKind::kWeights || gv.kind != BufferKind::kWeightsF16 || gb[b].written)
      return Internal(StrFormat("dispatch %zu (node '%s'): GPU binding %zu is neither the default binding nor a "
                                "binary16 copy of its weights", di, d.node.c_str(), b));
    same = false;
  }
  if (!same) {
    first_binding = static_cast<uint32_t>(bindings->size() / 3);
    for (const Binding& b : gb) {
      const Value& v = p.values[b.value];
      if (v.offset % kAlignment) return Internal("unaligned binding offset for '" + v.tensor + "'");
      bindings->insert(bindings->end(), {static_cast<uint64_t>(v.kind), v.offset, PlannedBytes(v)});
      s->max_storage_buffer_range = std::max<uint64_t>(s->max_storage_buffer_range, PlannedBytes(v));
    }
  }
  uint32_t first_spec = dispatch[dispatch.size() - 2];  // the default row's spec values when equal
  if (!SameSpec(d.gpu_spec, d.spec) || kg.param_constants != k.param_constants) {
    first_spec = static_cast<uint32_t>(spec->size());
    OAAXVK_ASSIGN_OR_RETURN(std::vector<uint32_t> v, refs->Spec(spec->size(), d.gpu_spec, kg));
    spec->insert(spec->end(), v.begin(), v.end());
  }
  refs->Groups(2, di, d.gpu_groups);
  dispatch_gpu->insert(dispatch_gpu->end(), {kernel_index[d.gpu_kernel], table_groups[0], table_groups[1],
                                             table_groups[2], first_binding, static_cast<uint32_t>(gb.size()),
                                             first_spec, static_cast<uint32_t>(d.gpu_spec.size())});
  return Status::Ok();
}
}  // namespace

Status BuildBundle(const Program& p, const MemoryPlan& plan, const BundleInfo& info, oinf::Writer* w,
                   BundleSummary* summary) {
  // A program may have no dispatches: every output is a constant with no
  // elements (nothing is computed; the host gets the outputs' shapes).
  if (plan.barrier.size() != p.dispatches.size()) return Internal("barrier count does not match dispatches");
  w->AddMetadata("format", MetadataValue::String(kBundleFormat));
  w->AddMetadata("format_version", MetadataValue::Scalar<uint32_t>(kBundleFormatVersion));
  w->AddMetadata("producer", MetadataValue::String(info.producer));
  w->AddMetadata("model.name", Utf8Array(info.model_name));
  w->AddMetadata("model.opset", MetadataValue::Scalar<int64_t>(info.opset));

  // Kernels in order of first use.
  std::vector<const KernelInfo*> kernels;
  std::map<std::string, uint32_t> kernel_index;
  for (const Dispatch& d : p.dispatches) {
    // cpu_kernel: feature kernel_variants; gpu_kernel: feature device_variants
    for (const std::string* name : {&d.kernel, &d.cpu_kernel, &d.gpu_kernel}) {
      if (name->empty() || kernel_index.count(*name)) continue;
      const KernelInfo* k = FindKernel(*name);
      if (!k || !k->spirv) return Internal("kernel '" + *name + "' has no embedded SPIR-V");
      kernel_index[*name] = static_cast<uint32_t>(kernels.size());
      kernels.push_back(k);
    }
  }
  // The fp32 forms of the GPU rows' binary16-weight kernels, which the
  // runtime runs when fp16 weights are not allowed (kernel.<j>.fp32_kernel).
  for (size_t j = 0; j < kernels.size(); ++j) {
    const std::string& twin = kernels[j]->fp32_kernel;
    if (twin.empty() || kernel_index.count(twin)) continue;
    const KernelInfo* k = FindKernel(twin);
    if (!k || !k->spirv) return Internal("kernel '" + twin + "' has no embedded SPIR-V");
    if (k->bindings != kernels[j]->bindings || k->spec_constants != kernels[j]->spec_constants ||
        !k->fp32_kernel.empty())
      return Internal("kernel '" + twin + "' is not an fp32 form of '" + kernels[j]->name + "'");
    kernel_index[twin] = static_cast<uint32_t>(kernels.size());
    kernels.push_back(k);
  }
  // The fp16 precision forms of the GPU rows' kernels and their
  // cooperative-matrix forms (kernel.<j>.fp16_kernel, kernel.<j>.matrix_kernel),
  // which the runtime runs under precision=fp16; appended after the kernel
  // naming them, so the loop reaches the matrix form too.
  std::set<std::string> precision_forms;
  for (size_t j = 0; j < kernels.size(); ++j) {
    for (const std::string* form : {&kernels[j]->fp16_kernel, &kernels[j]->matrix_kernel}) {
      if (form->empty() || kernel_index.count(*form)) continue;
      const KernelInfo* k = FindKernel(*form);
      if (!k || !k->spirv) return Internal("kernel '" + *form + "' has no embedded SPIR-V");
      if (k->bindings != kernels[j]->bindings || k->spec_constants != kernels[j]->spec_constants)
        return Internal("kernel '" + *form + "' is not a precision form of '" + kernels[j]->name + "'");
      kernel_index[*form] = static_cast<uint32_t>(kernels.size());
      kernels.push_back(k);
      precision_forms.insert(*form);
    }
  }
  // Required features: the program's, plus texel_bindings when a kernel has
  // a texel-buffer binding (kernel.<j>.binding_types).
  std::set<std::string> features = p.features;
  for (const KernelInfo* k : kernels) {
    if (!k->binding_types.empty() && k->binding_types.size() != k->bindings)
      return Internal(StrFormat("kernel '%s': binding_types '%s' has %zu letters for %u bindings", k->name.c_str(),
                                k->binding_types.c_str(), k->binding_types.size(), k->bindings));
    if (k->binding_types.find_first_not_of('s') != std::string::npos) features.insert("texel_bindings");
    if (k->parameter_buffer) features.insert("parameter_buffer");
  }
  if (const SymContext* c = SymContext::Current(); c != nullptr && features.count("dynamic_shapes"))
    for (const Symbol& y : c->symbols()) {
      // Any guard (a run-time value's, an extent's, two sizes unified by
      // UnifyDims) needs the guard table.
      if (y.is_value() || !c->guards().empty()) features.insert("value_symbols");
      if (y.is_value() && y.value_scale > 0) features.insert("float_value_symbols");
      if (y.is_value() && y.value_exact) features.insert("exact_value_symbols");
    }
  for (const IoDesc& o : p.outputs)
    if (o.count_for >= 0) features.insert("data_dependent_outputs");
  if (!p.control.empty()) features.insert("segment_program");
  if (!features.empty()) {
    std::string list;
    for (const std::string& f : features) list += (list.empty() ? "" : " ") + f;
    w->AddMetadata("bundle.features", Utf8Array(list));
  }
  w->AddMetadata("kernels.count", MetadataValue::Scalar<uint32_t>(static_cast<uint32_t>(kernels.size())));
  BundleSummary s;
  uint32_t max_x = 1, max_y = 1, max_z = 1;
  for (size_t j = 0; j < kernels.size(); ++j) {
    const KernelInfo& k = *kernels[j];
    std::string pre = "kernel." + std::to_string(j) + ".";
    w->AddTensor(pre + "spirv", ValueType::kU32, {k.spirv_words}, k.spirv, k.spirv_words * 4);
    w->AddMetadata(pre + "name", MetadataValue::String(k.name));
    w->AddMetadata(pre + "bindings", MetadataValue::Scalar<uint32_t>(k.bindings));
    w->AddMetadata(pre + "spec_constants", MetadataValue::Scalar<uint32_t>(k.spec_constants));
    if (k.binding_types.find_first_not_of('s') != std::string::npos)
      w->AddMetadata(pre + "binding_types", MetadataValue::String(k.binding_types));
    if (!k.required_capabilities.empty()) {  // feature device_variants
      std::string req;
      for (const std::string& c : k.required_capabilities) req += (req.empty() ? "" : "-") + c;
      w->AddMetadata(pre + "requires", MetadataValue::String(req));
    }
    if (!k.fp32_kernel.empty())  // feature device_variants
      w->AddMetadata(pre + "fp32_kernel", MetadataValue::Scalar<uint32_t>(kernel_index.at(k.fp32_kernel)));
    if (!k.fp16_kernel.empty())  // feature device_variants
      w->AddMetadata(pre + "fp16_kernel", MetadataValue::Scalar<uint32_t>(kernel_index.at(k.fp16_kernel)));
    if (!k.matrix_kernel.empty())  // feature device_variants
      w->AddMetadata(pre + "matrix_kernel", MetadataValue::Scalar<uint32_t>(kernel_index.at(k.matrix_kernel)));
    s.max_workgroup_invocations = std::max(s.max_workgroup_invocations, k.local_size[0] * k.local_size[1] * k.local_size[2]);
    max_x = std::max(max_x, k.local_size[0]);
    max_y = std::max(max_y, k.local_size[1]);
    max_z = std::max(max_z, k.local_size[2]);
    // A kernel that requires sharedMemory32KiB runs only in GPU rows, on
    // devices with that much (the others keep their default row): the load
    // requirement stays that of the rows every device runs. So does a
    // precision form's, which runs only when the device can run it.
    const bool optional_shared = std::find(k.required_capabilities.begin(), k.required_capabilities.end(),
                                           kCapabilitySharedMemory32KiB) != k.required_capabilities.end() ||
                                 precision_forms.count(k.name) != 0;
    if (!optional_shared) s.max_shared_memory_bytes = std::max(s.max_shared_memory_bytes, k.shared_bytes);
  }

  // Program tables.
  std::vector<uint32_t> dispatch, spec, op;
  std::vector<uint32_t> dispatch_cpu;  // feature kernel_variants: program.dispatch.cpu
  const bool variants = p.features.count("kernel_variants") != 0;
  std::vector<uint32_t> dispatch_gpu;  // feature device_variants: program.dispatch.gpu
  const bool device_variants = p.features.count("device_variants") != 0;
  std::vector<uint64_t> bindings;
  Refs refs;
  std::vector<std::string> op_names;
  std::map<std::string, uint32_t> op_index;
  std::set<std::pair<uint32_t, std::vector<uint32_t>>> pipelines;
  for (size_t di = 0; di < p.dispatches.size(); ++di) {
    const Dispatch& d = p.dispatches[di];
    const KernelInfo& k = *FindKernel(d.kernel);
    if (d.bindings.size() != k.bindings || d.spec.size() != k.spec_constants)
      return Internal(StrFormat("dispatch %zu (%s, node '%s'): %zu bindings / %zu spec constants, kernel wants %u / %u",
                                di, d.kernel.c_str(), d.node.c_str(), d.bindings.size(), d.spec.size(), k.bindings,
                                k.spec_constants));
    uint32_t table_groups[3];
    OAAXVK_RETURN_IF_ERROR(TableGroups(d.groups, "dispatch", d.node, table_groups, &s));
    // Feature value_symbols: a size computed from run-time input values
    // reaches a kernel only where the lowering derived it on purpose.
    if (!d.value_sizes) {
      // (Sizes of sampled value symbols were checked at several values.)
      bool by_value = AnyDependsOnUnsampledValue(d.spec) || AnyDependsOnUnsampledValue(d.cpu_spec) ||
                      AnyDependsOnUnsampledValue(d.gpu_spec);
      for (int a = 0; a < 3; ++a)
        by_value = by_value || DependsOnUnsampledValue(d.groups[a]) || DependsOnUnsampledValue(d.cpu_groups[a]) ||
                   DependsOnUnsampledValue(d.gpu_groups[a]);
      if (by_value)
        return Unimplemented("node '" + d.node + "' (" + d.op_type + ", kernel " + d.kernel +
                             "): a size computed from a run-time input value reaches its kernel, which takes "
                             "only sizes fixed by the input shapes; bind the input at conversion (config.json "
                             "\"input_values\")");
    }
    uint32_t kj = kernel_index[d.kernel];
    refs.Groups(0, di, d.groups);
    dispatch.insert(dispatch.end(), {kj, table_groups[0], table_groups[1], table_groups[2], static_cast<uint32_t>(bindings.size() / 3),
                                     static_cast<uint32_t>(d.bindings.size()), static_cast<uint32_t>(spec.size()),
                                     static_cast<uint32_t>(d.spec.size())});
    for (const Binding& b : d.bindings) {
      const Value& v = p.values[b.value];
      if (v.offset % kAlignment) return Internal("unaligned binding offset for '" + v.tensor + "'");
      if (v.kind == BufferKind::kWeightsF16)
        return Internal(StrFormat("dispatch %zu (node '%s') binds the binary16 copy of '%s' outside a GPU-class row",
                                  di, d.node.c_str(), v.tensor.c_str()));
      bindings.insert(bindings.end(), {static_cast<uint64_t>(v.kind), v.offset, PlannedBytes(v)});
      s.max_storage_buffer_range = std::max<uint64_t>(s.max_storage_buffer_range, PlannedBytes(v));
    }
    {
      OAAXVK_ASSIGN_OR_RETURN(std::vector<uint32_t> v, refs.Spec(spec.size(), d.spec, k));
      spec.insert(spec.end(), v.begin(), v.end());
      pipelines.insert({kj, v});
    }
    if (variants && d.cpu_kernel.empty()) {  // no CPU-specific kernel: the same row
      dispatch_cpu.insert(dispatch_cpu.end(), dispatch.end() - 8, dispatch.end());
      refs.Groups(1, di, d.groups);
    } else if (variants) {
      const KernelInfo& kc = *FindKernel(d.cpu_kernel);
      if (kc.bindings != k.bindings || d.cpu_spec.size() != kc.spec_constants)
        return Internal(StrFormat("dispatch %zu (node '%s'): CPU variant %s wants %u bindings / %u spec constants, "
                                  "has %zu / %zu", di, d.node.c_str(), d.cpu_kernel.c_str(), kc.bindings,
                                  kc.spec_constants, d.bindings.size(), d.cpu_spec.size()));
      uint32_t cpu_groups[3];
      OAAXVK_RETURN_IF_ERROR(TableGroups(d.cpu_groups, "CPU variant", d.node, cpu_groups, &s));
      uint32_t first_spec = dispatch[dispatch.size() - 2];  // reuse the default row's values when equal
      if (!SameSpec(d.cpu_spec, d.spec) || kc.param_constants != k.param_constants) {
        first_spec = static_cast<uint32_t>(spec.size());
        OAAXVK_ASSIGN_OR_RETURN(std::vector<uint32_t> v, refs.Spec(spec.size(), d.cpu_spec, kc));
        spec.insert(spec.end(), v.begin(), v.end());
      }
      uint32_t kc_index = kernel_index[d.cpu_kernel];
      refs.Groups(1, di, d.cpu_groups);
      dispatch_cpu.insert(dispatch_cpu.end(), {kc_index, cpu_groups[0], cpu_groups[1], cpu_groups[2],
                                               dispatch[dispatch.size() - 4], dispatch[dispatch.size() - 3],
                                               first_spec, static_cast<uint32_t>(d.cpu_spec.size())});
    } else if (!d.cpu_kernel.empty()) {
      return Internal("dispatch at node '" + d.node + "' has a CPU variant but feature kernel_variants is not set");
    }
    if (device_variants && d.gpu_kernel.empty()) {  // no device-specific kernel: the same row
      dispatch_gpu.insert(dispatch_gpu.end(), dispatch.end() - 8, dispatch.end());
      refs.Groups(2, di, d.groups);
    } else if (device_variants) {
      OAAXVK_RETURN_IF_ERROR(AppendGpuRow(p, di, k, dispatch, kernel_index, &spec, &bindings, &dispatch_gpu, &refs, &s));
    } else if (!d.gpu_kernel.empty()) {
      return Internal("dispatch at node '" + d.node + "' has a GPU variant but feature device_variants is not set");
    }
    auto it = op_index.find(d.node);
    if (it == op_index.end()) {
      it = op_index.emplace(d.node, static_cast<uint32_t>(op_names.size())).first;
      op_names.push_back(d.node);
    }
    op.push_back(it->second);
    s.barriers += plan.barrier[di];
  }
  uint64_t D = p.dispatches.size();
  w->AddTensor("program.dispatch", ValueType::kU32, {D, 8}, Bytes(dispatch));
  if (variants) w->AddTensor("program.dispatch.cpu", ValueType::kU32, {D, 8}, Bytes(dispatch_cpu));
  if (device_variants) w->AddTensor("program.dispatch.gpu", ValueType::kU32, {D, 8}, Bytes(dispatch_gpu));
  w->AddTensor("program.bindings", ValueType::kU64, {bindings.size() / 3, 3}, Bytes(bindings));
  w->AddTensor("program.spec", ValueType::kU32, {spec.size()}, Bytes(spec));
  w->AddTensor("program.barrier", ValueType::kU8, {D}, plan.barrier);
  w->AddTensor("program.op", ValueType::kU32, {D}, Bytes(op));
  for (size_t k = 0; k < op_names.size(); ++k)
    w->AddMetadata("program.op_name." + std::to_string(k), Utf8Array(op_names[k]));

  // Buffers.
  w->AddTensor("weights", ValueType::kU8, {plan.weights.size()}, plan.weights);
  if (device_variants) {  // buffer kind 4 (may be empty: subgroup rows only)
    w->AddTensor("weights_f16", ValueType::kU8, {plan.weights_f16.size()}, plan.weights_f16);
  } else if (!plan.weights_f16.empty()) {
    return Internal("binary16 weight copies without feature device_variants");
  }
  w->AddMetadata("arena.bytes", MetadataValue::Scalar<uint64_t>(plan.arena_bytes));
  w->AddMetadata("io.inputs_bytes", MetadataValue::Scalar<uint64_t>(plan.inputs_bytes));
  w->AddMetadata("io.outputs_bytes", MetadataValue::Scalar<uint64_t>(plan.outputs_bytes));

  // I/O descriptors.
  for (const IoDesc& d : p.inputs)
    if (!d.bound.empty() && (d.bound.size() != static_cast<uint64_t>(d.nbytes.value()) || !p.features.count("bound_inputs")))
      return Internal("input '" + d.name + "' is bound with " + std::to_string(d.bound.size()) + " bytes for " +
                      std::to_string(d.nbytes.value()) + " (or feature bound_inputs is missing)");
  auto io = [&](const char* plural, const char* single, const std::vector<IoDesc>& v) {
    w->AddMetadata(std::string("io.") + plural, MetadataValue::Scalar<uint32_t>(static_cast<uint32_t>(v.size())));
    for (size_t i = 0; i < v.size(); ++i) {
      std::string pre = std::string("io.") + single + "." + std::to_string(i) + ".";
      w->AddMetadata(pre + "name", Utf8Array(v[i].name));
      w->AddMetadata(pre + "dtype", MetadataValue::Scalar<uint32_t>(static_cast<uint32_t>(v[i].dtype)));
      w->AddMetadata(pre + "shape", ShapeArray(v[i].shape));
      w->AddMetadata(pre + "offset", MetadataValue::Scalar<uint64_t>(p.values[v[i].value].offset));
      w->AddMetadata(pre + "nbytes", MetadataValue::Scalar<uint64_t>(IoPlannedBytes(v[i], p.values[v[i].value])));
      for (size_t k = 0; k < v[i].shape.size(); ++k) refs.Add(single[0] == 'i' ? 2 : 3, i, static_cast<uint32_t>(k), v[i].shape[k]);
      if (!v[i].bound.empty())  // feature bound_inputs: the value assumed at conversion
        w->AddTensor(pre + "bound", ValueType::kU8, {v[i].bound.size()}, v[i].bound);
      if (!std::isnan(v[i].value_min)) {  // a range checked at send_input (docs/bundle-format.md "Inputs")
        w->AddMetadata(pre + "value_min", MetadataValue::Scalar<double>(v[i].value_min));
        w->AddMetadata(pre + "value_max", MetadataValue::Scalar<double>(v[i].value_max));
        w->AddMetadata(pre + "value_rule", Utf8Array(v[i].value_rule));
      }
      if (v[i].count_for >= 0) {  // feature data_dependent_outputs: the extent of another output
        w->AddMetadata(pre + "count_for", MetadataValue::Scalar<uint32_t>(static_cast<uint32_t>(v[i].count_for)));
        w->AddMetadata(pre + "count_axis", MetadataValue::Scalar<uint32_t>(static_cast<uint32_t>(v[i].count_axis)));
      }
    }
  };
  io("inputs", "input", p.inputs);
  io("outputs", "output", p.outputs);

  // Dynamic shapes: symbols, the shape program and the fields it drives (a
  // segment program's steps read the shape program too). A program whose
  // sizes no longer depend on the symbols may still guard their values
  // (split sizes of an empty axis must add up to 0): the guards are kept.
  const bool guarded = SymContext::Current() != nullptr && !SymContext::Current()->guards().empty() &&
                       features.count("dynamic_shapes") != 0;
  if (!refs.rows.empty() || !p.control.empty() || guarded) {
    const SymContext* c = SymContext::Current();
    if (c == nullptr || !features.count("dynamic_shapes"))
      return Internal("symbolic sizes in a program compiled without symbols (feature dynamic_shapes)");
    const std::vector<Symbol>& syms = c->symbols();
    w->AddMetadata("shape.symbols", MetadataValue::Scalar<uint32_t>(static_cast<uint32_t>(syms.size())));
    for (size_t k = 0; k < syms.size(); ++k) {
      std::string sv = syms[k].name;
      for (char& ch : sv)
        if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '_' || ch == '-')) ch = '_';
      w->AddSizeVar(sv, static_cast<uint64_t>(std::max<int64_t>(syms[k].max, 0)));  // unsigned: a negative value max is 0
      std::string pre = "shape.symbol." + std::to_string(k) + ".";
      w->AddMetadata(pre + "name", Utf8Array(syms[k].name));
      w->AddMetadata(pre + "min", MetadataValue::Scalar<int64_t>(syms[k].min));
      w->AddMetadata(pre + "max", MetadataValue::Scalar<int64_t>(syms[k].max));
      w->AddMetadata(pre + "multiple_of", MetadataValue::Scalar<int64_t>(syms[k].multiple_of));
      if (syms[k].is_value()) {  // feature value_symbols: element value_element of a graph input
        size_t in = p.inputs.size();
        for (size_t i = 0; i < p.inputs.size(); ++i)
          if (p.inputs[i].name == syms[k].value_input) in = i;
        if (in == p.inputs.size())
          return Internal("value symbol '" + syms[k].name + "' reads input '" + syms[k].value_input +
                          "', which is not an input of the program");
        w->AddMetadata(pre + "input", MetadataValue::Scalar<uint32_t>(static_cast<uint32_t>(in)));
        w->AddMetadata(pre + "element", MetadataValue::Scalar<uint64_t>(static_cast<uint64_t>(syms[k].value_element)));
        if (syms[k].value_scale > 0)  // feature float_value_symbols: floor(element * scale)
          w->AddMetadata(pre + "scale", MetadataValue::Scalar<uint64_t>(static_cast<uint64_t>(syms[k].value_scale)));
        if (syms[k].value_exact)  // feature exact_value_symbols: e * scale must be an integer
          w->AddMetadata(pre + "exact", MetadataValue::Scalar<uint32_t>(1));
      }
      if (syms[k].decided) {  // feature segment_program: set by the control program
        if (syms[k].is_value() || p.control.empty())
          return Internal("symbol '" + syms[k].name + "' is decided on the device but " +
                          (p.control.empty() ? "the program has no segment program" : "also reads an input value"));
        w->AddMetadata(pre + "decided", MetadataValue::Scalar<uint32_t>(1));
      }
    }
    // Guards (feature value_symbols): kind-5 rows, one text each.
    if (!c->guards().empty()) {
      w->AddMetadata("shape.guards", MetadataValue::Scalar<uint32_t>(static_cast<uint32_t>(c->guards().size())));
      for (size_t g = 0; g < c->guards().size(); ++g) {
        refs.rows.insert(refs.rows.end(), {5u, static_cast<uint32_t>(g), 0u, static_cast<uint32_t>(c->guards()[g].expr)});
        w->AddMetadata("shape.guard." + std::to_string(g) + ".text", Utf8Array(c->guards()[g].text));
      }
    }
    std::vector<int64_t> prog;
    for (const SymNode& n : c->nodes()) prog.insert(prog.end(), {static_cast<int64_t>(n.op), n.a, n.b});
    w->AddTensor("shape.program", ValueType::kI64, {c->nodes().size(), 3}, Bytes(prog));
    w->AddTensor("shape.refs", ValueType::kU32, {refs.rows.size() / 4, 4}, Bytes(refs.rows));
    if (!p.control.empty()) OAAXVK_RETURN_IF_ERROR(WriteControlProgram(p, *c, w));
    if (!refs.param_slot.empty()) {
      if (!features.count("parameter_buffer"))
        return Internal("parameter slots in a bundle whose kernels have no parameter buffer");
      w->AddMetadata("shape.params", MetadataValue::Scalar<uint32_t>(static_cast<uint32_t>(refs.param_slot.size())));
    }
  } else if (features.count("dynamic_shapes")) {
    std::string names;
    if (const SymContext* c = SymContext::Current(); c != nullptr)
      for (const Symbol& y : c->symbols()) names += (names.empty() ? "" : ", ") + y.name;
    return Unimplemented("dynamic shapes: no size of the program depends on the symbols (" + names +
                         "): an operator read them as numbers at conversion (a run-time value it needs then), or "
                         "no tensor uses them; bind them to numbers in config.json");
  }

  // Device requirements.
  w->AddMetadata("device.max_workgroup_invocations", MetadataValue::Scalar<uint32_t>(s.max_workgroup_invocations));
  w->AddMetadata("device.max_workgroup_size_x", MetadataValue::Scalar<uint32_t>(max_x));
  w->AddMetadata("device.max_workgroup_size_y", MetadataValue::Scalar<uint32_t>(max_y));
  w->AddMetadata("device.max_workgroup_size_z", MetadataValue::Scalar<uint32_t>(max_z));
  w->AddMetadata("device.max_shared_memory_bytes", MetadataValue::Scalar<uint32_t>(s.max_shared_memory_bytes));
  w->AddMetadata("device.max_workgroup_count", MetadataValue::Scalar<uint32_t>(s.max_workgroup_count));
  w->AddMetadata("device.max_storage_buffer_range", MetadataValue::Scalar<uint64_t>(s.max_storage_buffer_range));
  w->AddMetadata("device.shader_float16", MetadataValue::Bool(false));
  w->AddMetadata("device.storage_buffer_16bit", MetadataValue::Bool(false));

  s.kernels = static_cast<uint32_t>(kernels.size());
  s.dispatches = static_cast<uint32_t>(D);
  s.pipelines = static_cast<uint32_t>(pipelines.size());
  if (summary) *summary = s;
  return Status::Ok();
}

StatusOr<std::vector<uint8_t>> SerializeBundle(const Program& p, const MemoryPlan& plan, const BundleInfo& info,
                                               BundleSummary* summary) {
  oinf::Writer w;
  OAAXVK_RETURN_IF_ERROR(BuildBundle(p, plan, info, &w, summary));
  return w.Serialize();
}

}  // namespace oaaxvk::toolchain
