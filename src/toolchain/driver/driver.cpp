#include "toolchain/driver/driver.h"

#include "toolchain/ir/extent.h"
#include "toolchain/ir/limits.h"

#include "toolchain/input/archive.h"

#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <new>
#include <stdexcept>
#include <set>

#include <nlohmann/json.hpp>

#include "toolchain/driver/check_points.h"
#include "toolchain/driver/dynamic.h"
#include "toolchain/driver/loop_symbols.h"
#include "toolchain/ir/loop_reads.h"
#include "toolchain/ir/shape_infer.h"

namespace oaaxvk::toolchain {

using json = nlohmann::ordered_json;

namespace {

uint32_t Rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

class Sha256 {
 public:
  void Update(const uint8_t* p, size_t n) {
    len_ += n;
    while (n) {
      size_t k = std::min(n, 64 - fill_);
      std::memcpy(buf_ + fill_, p, k);
      fill_ += k; p += k; n -= k;
      if (fill_ == 64) { Block(buf_); fill_ = 0; }
    }
  }
  std::string Hex() {
    uint64_t bits = len_ * 8;
    uint8_t pad = 0x80, zero = 0;
    Update(&pad, 1);
    while (fill_ != 56) Update(&zero, 1);
    uint8_t l[8];
    for (int i = 0; i < 8; ++i) l[i] = static_cast<uint8_t>(bits >> (56 - 8 * i));
    Update(l, 8);
    static const char* hx = "0123456789abcdef";
    std::string r;
    for (uint32_t v : h_)
      for (int i = 7; i >= 0; --i) r += hx[(v >> (4 * i)) & 15];
    return r;
  }

 private:
  void Block(const uint8_t* b) {
    static const uint32_t k[64] = {
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
    uint32_t w[64];
    for (int i = 0; i < 16; ++i)
      w[i] = (uint32_t{b[4 * i]} << 24) | (uint32_t{b[4 * i + 1]} << 16) | (uint32_t{b[4 * i + 2]} << 8) | b[4 * i + 3];
    for (int i = 16; i < 64; ++i) {
      uint32_t s0 = Rotr(w[i - 15], 7) ^ Rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      uint32_t s1 = Rotr(w[i - 2], 17) ^ Rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h_[0], bb = h_[1], c = h_[2], d = h_[3], e = h_[4], f = h_[5], g = h_[6], h = h_[7];
    for (int i = 0; i < 64; ++i) {
      uint32_t t1 = h + (Rotr(e, 6) ^ Rotr(e, 11) ^ Rotr(e, 25)) + ((e & f) ^ (~e & g)) + k[i] + w[i];
      uint32_t t2 = (Rotr(a, 2) ^ Rotr(a, 13) ^ Rotr(a, 22)) + ((a & bb) ^ (a & c) ^ (bb & c));
      h = g; g = f; f = e; e = d + t1; d = c; c = bb; bb = a; a = t1 + t2;
    }
    h_[0] += a; h_[1] += bb; h_[2] += c; h_[3] += d; h_[4] += e; h_[5] += f; h_[6] += g; h_[7] += h;
  }
  uint32_t h_[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  uint8_t buf_[64];
  size_t fill_ = 0;
  uint64_t len_ = 0;
};

std::string HumanError(const Status& s) {
  switch (s.code()) {
    case StatusCode::kNotFound: return "The input file or a file it references was not found.";
    case StatusCode::kDataLoss: return "The input is not a valid ONNX model (the file is corrupt or not ONNX).";
    case StatusCode::kUnimplemented:
      return "The model uses operators, data types or features this toolchain does not support yet.";
    case StatusCode::kResourceExhausted: return "The model exceeds a size limit of this toolchain.";
    case StatusCode::kInvalidArgument: return "The model or the command-line arguments are invalid.";
    default: return "An internal error occurred while converting the model.";
  }
}

// Where to look next for a class of failure; the technical error names the
// entry (node, input, limit) itself.
std::string Hint(const Status& s) {
  switch (s.code()) {
    case StatusCode::kNotFound:
      return "check the path: the input is a .onnx file, or a .zip / .tar.gz holding model.onnx (and config.json)";
    case StatusCode::kDataLoss:
      return "give an ONNX model as torch.onnx.export or tf2onnx write it; python3 -c \"import onnx; "
             "onnx.checker.check_model('model.onnx')\" tells whether a file is valid ONNX";
    case StatusCode::kUnimplemented:
      return "docs/toolchain.md (\"Operators\") lists what is supported; re-export the model without the operator "
             "(another opset, or a replacement in the model's code), or fix the input shapes with config.json";
    case StatusCode::kResourceExhausted:
      return "use a smaller input shape, or raise the named limit in config.json \"limits\" (oaax-vulkan-toolchain "
             "--help lists them)";
    case StatusCode::kInvalidArgument:
      return "the message names the node or input and the config.json key that fixes it (oaax-vulkan-toolchain "
             "--help lists the keys)";
    default: return "";
  }
}

Status MakeDirs(const std::string& path) {
  std::string cur;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    cur = path.substr(0, pos);
    if (cur.empty()) continue;
    if (::mkdir(cur.c_str(), 0755) != 0 && errno != EEXIST)
      return InvalidArgument("cannot create output directory '" + cur + "': " + std::strerror(errno));
  }
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return InvalidArgument("output path '" + path + "' is not a directory");
  return Status::Ok();
}

Status WriteBytes(const std::string& path, const void* data, size_t n) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) return InvalidArgument("cannot write '" + tmp + "': " + std::strerror(errno));
    f.write(static_cast<const char*>(data), static_cast<std::streamsize>(n));
    if (!f) return InvalidArgument("cannot write '" + tmp + "'");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    return InvalidArgument("cannot rename '" + tmp + "' to '" + path + "': " + std::strerror(errno));
  return Status::Ok();
}

// The message of the last log entry: where a conversion stopped.
std::string LastStep(const json& log) {
  if (log.empty() || !log.back().contains("Message")) return "start";
  return log.back()["Message"].get<std::string>();
}

}  // namespace

std::string Sha256Hex(const uint8_t* data, size_t n) {
  Sha256 h;
  h.Update(data, n);
  return h.Hex();
}

std::string Sha256File(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return "";
  Sha256 h;
  char buf[1 << 16];
  while (f) {
    f.read(buf, sizeof buf);
    h.Update(reinterpret_cast<const uint8_t*>(buf), static_cast<size_t>(f.gcount()));
  }
  return h.Hex();
}

StatusOr<CompileResult> CompileGraph(Graph g, const LogSink& log,
                                     const std::map<std::string, std::vector<uint8_t>>& bound_inputs,
                                     const LowerOptions& lower_options, bool dynamic, bool lower_only) {
  auto emit = [&](const std::string& m, const json& d) { if (log) log(m, d.dump()); };
  CompileResult r;
  r.nodes_before = g.nodes.size();
  OAAXVK_ASSIGN_OR_RETURN(r.passes, RunDefaultPipeline(g));
  for (const PassResult& p : r.passes) {
    json d = {{"Nodes before", p.nodes_before}, {"Nodes after", p.nodes_after}};
    if (!p.details.empty()) d["Details"] = p.details;
    emit("Pass: " + p.name, d);
  }
  r.nodes_after = g.nodes.size();
  AddExtentOutputs(g);  // graph outputs with a data-dependent extent (ir/extent.h)
  OAAXVK_ASSIGN_OR_RETURN(r.program, Lower(g, lower_options));
  const ConversionLimits& limits = CurrentLimits();
  if (r.program.dispatches.size() > limits.max_dispatches)
    return ResourceExhausted(StrFormat("the model lowers to %zu dispatches, over the limit max_dispatches = %llu "
                                       "(raise it in config.json \"limits\" if the model really needs it)",
                                       r.program.dispatches.size(),
                                       static_cast<unsigned long long>(limits.max_dispatches)));
  if (dynamic) r.program.features.insert("dynamic_shapes");
  if (lower_only) return r;
  size_t bound_found = 0;
  for (IoDesc& in : r.program.inputs) {
    auto b = bound_inputs.find(in.name);
    if (b == bound_inputs.end()) continue;
    if (b->second.size() != static_cast<uint64_t>(in.nbytes))
      return Internal(StrFormat("bound input '%s' has %zu bytes, the program's input %llu", in.name.c_str(),
                                b->second.size(), static_cast<unsigned long long>(in.nbytes)));
    in.bound = b->second;
    r.program.features.insert("bound_inputs");
    ++bound_found;
  }
  if (bound_found != bound_inputs.size())
    return Internal("a bound input is not an input of the compiled program");
  json kernels = json::array();
  for (const auto& [node, k] : r.program.node_kernels) kernels.push_back({{"Node", node}, {"Kernel", k}});
  emit("Kernels selected", {{"Dispatches", r.program.dispatches.size()}, {"Nodes", kernels}});
  if (dynamic && SymContext::Current() != nullptr)  // sizes that can exceed their value at the maximum
    OAAXVK_RETURN_IF_ERROR(BoundBufferSizes(&r.program, *SymContext::Current()));
  OAAXVK_ASSIGN_OR_RETURN(r.plan, PlanMemory(r.program));
  if (r.plan.arena_bytes > limits.max_arena_bytes)
    return ResourceExhausted(StrFormat("the memory plan needs an arena of %llu bytes for intermediate values, over "
                                       "the limit max_arena_bytes = %llu (raise it in config.json \"limits\" if "
                                       "the device has the memory)",
                                       static_cast<unsigned long long>(r.plan.arena_bytes),
                                       static_cast<unsigned long long>(limits.max_arena_bytes)));
  BundleInfo info;
  info.model_name = g.name;
  info.opset = g.opset;
  info.producer = std::string("oaax-vulkan-toolchain-") + OAAXVK_VERSION;
  OAAXVK_ASSIGN_OR_RETURN(r.bundle, SerializeBundle(r.program, r.plan, info, &r.summary));
  emit("Memory plan", {{"Arena bytes", r.plan.arena_bytes},
                       {"Arena bytes without reuse", r.plan.arena_unshared_bytes},
                       {"Weights bytes", r.plan.weights_bytes},
                       {"Weights fp16 bytes", r.plan.weights_f16_bytes},
                       {"Inputs bytes", r.plan.inputs_bytes},
                       {"Outputs bytes", r.plan.outputs_bytes},
                       {"Barriers", r.summary.barriers},
                       {"Barriers lower bound", r.plan.barrier_lower_bound},
                       {"Distinct pipelines", r.summary.pipelines}});
  return r;
}

int RunConversion(const std::string& input_path, const std::string& output_dir,
                  const std::function<void(const std::string&)>& console, const std::string& config_path,
                  ConversionOutcome* outcome) {
  ConversionOutcome unused;
  if (outcome == nullptr) outcome = &unused;
  *outcome = ConversionOutcome();
  using Clock = std::chrono::steady_clock;
  auto t0 = Clock::now();
  json log = json::array();
  bool verbose = std::getenv("OAAXVK_TOOLCHAIN_VERBOSE") && std::string(std::getenv("OAAXVK_TOOLCHAIN_VERBOSE")) != "0";
  auto add = [&](const std::string& m, json d) {
    if (console) console(verbose ? m + " " + d.dump() : m);
    log.push_back({{"Message", m}, {"Data", std::move(d)}});
  };
  auto ms = [&] { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); };
  // "out/" and "out" name the same directory; paths shown to the user have one '/'.
  std::string dir = output_dir;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  const std::string log_path = dir + "/conversion-log.json";
  Status dir_status = MakeDirs(output_dir);
  auto write_log = [&]() -> bool {
    if (!dir_status.ok()) return false;
    std::string text = log.dump(2) + "\n";
    if (!WriteBytes(log_path, text.data(), text.size()).ok()) return false;
    outcome->log_path = log_path;
    return true;
  };
  auto fail = [&](const Status& s) {
    outcome->ok = false;
    outcome->human_error = HumanError(s);
    outcome->technical_error = s.ToString();
    outcome->hint = Hint(s);
    outcome->elapsed_ms = ms();
    add("Conversion Failed", {{"Human Error", outcome->human_error}, {"Technical Error", outcome->technical_error},
                              {"Elapsed ms", outcome->elapsed_ms}});
    if (!write_log() && console) console("could not write conversion-log.json in '" + output_dir + "'");
    return 1;
  };
  // Any exception still escaping (memory exhausted by a model the limits did
  // not foresee, a container over its maximum size) fails the conversion
  // with a log, never an abort.
  try {
    add("Conversion started", {{"Input path", input_path}, {"Output directory", output_dir},
                               {"Toolchain", std::string("oaax-vulkan-toolchain ") + OAAXVK_VERSION}});
    if (!dir_status.ok()) return fail(dir_status);
    StatusOr<ResolvedInput> in = ResolveModelInput(input_path);
    if (!in.ok()) return fail(in.status());
    if (!config_path.empty()) {
      if (in->has_config)
        return fail(InvalidArgument("--config '" + config_path + "' was given, but the archive '" + input_path +
                                    "' also carries a config.json; use one of them"));
      std::ifstream cf(config_path, std::ios::binary);
      if (!cf) return fail(NotFound("--config file '" + config_path + "' cannot be read: " + std::strerror(errno)));
      std::string text((std::istreambuf_iterator<char>(cf)), std::istreambuf_iterator<char>());
      StatusOr<ModelConfig> c = ParseModelConfig(text);
      if (!c.ok()) return fail(c.status().WithContext("--config '" + config_path + "'"));
      in->config = std::move(*c);
      in->has_config = true;
    }
    const LimitsScope limits(&in->config.limits);  // config.json "limits" (ir/limits.h)
    json shapes = json::object(), values = json::object();
    for (const auto& [k, v] : in->config.input_shapes) {  // symbolic dimensions by name, as config.json gives them
      json dims = json::array();
      auto syms = in->config.input_symbols.find(k);
      for (size_t d = 0; d < v.size(); ++d) {
        if (syms != in->config.input_symbols.end() && !syms->second[d].empty()) dims.push_back(syms->second[d]);
        else dims.push_back(v[d]);
      }
      shapes[k] = std::move(dims);
    }
    json dimensions = json::object();
    for (const auto& [k, sym] : in->config.dimensions)
      dimensions[k] = {{"min", sym.min}, {"max", sym.max}, {"multiple_of", sym.multiple_of}};
    for (const auto& [k, v] : in->config.input_values) values[k] = v.size();
    json named = json::object();
    for (const auto& [k, v] : in->config.value_symbols) named[k] = v;
    if (in->from_archive) {
      add("Archive extracted", {{"Entries", in->entries}, {"config.json", in->has_config},
                                {"Input shapes", shapes}, {"Elapsed ms", ms()}});
    }
    if (!config_path.empty())
      add("Config read", {{"Path", config_path}, {"Input shapes", shapes}, {"Dimensions", dimensions},
                          {"Input values (count)", values}, {"Run-time values (names)", named},
                          {"fp16 weights", in->config.fp16_weights},
                          {"GPU conv tiles", in->config.all_conv_gpu_tiles ? "all" : "auto"}});
    StatusOr<std::vector<Symbol>> symbols = ResolveSymbols(in->config);
    if (!symbols.ok()) return fail(symbols.status());
    // Decided symbols of data-dependent extents (FindDecidedExtents): symbol
    // name -> the node writing the extent.
    std::map<std::string, std::string> extent_nodes;
    // The model is imported at every check point: its file is read once.
    StatusOr<OnnxFile> model_file = ReadOnnxFile(in->model_path, ImportOptions().max_model_bytes);
    if (!model_file.ok()) return fail(model_file.status());
    // Imports the model with every symbol at its value in `point`; the graph
    // inputs' symbolic dimensions become Dims of `ctx` (nullptr: static).
    auto import_at = [&](const std::vector<int64_t>& point, SymContext* ctx, ImportReport* rep) -> StatusOr<Graph> {
      ImportOptions iopt;
      iopt.input_shapes = in->config.input_shapes;
      iopt.sequence_lengths = in->config.sequence_lengths;
      iopt.input_values = in->config.input_values;
      std::map<std::string, size_t> index;
      std::map<std::string, std::vector<size_t>> value_symbols;  // input -> its value symbols, by element
      for (size_t k = 0; k < symbols->size(); ++k) {
        const Symbol& y = (*symbols)[k];
        if (y.decided) continue;  // set on the Where it belongs to, below
        if (y.is_value()) {
          // Feature value_symbols: the nodes read a constant of the input's
          // name whose elements are the symbols (at this point's values).
          std::vector<ConfigNumber>& v = iopt.input_values[y.value_input];
          if (v.size() <= static_cast<size_t>(y.value_element)) v.resize(static_cast<size_t>(y.value_element) + 1);
          // A float input's symbol is floor(e * value_scale): e sits halfway
          // inside the interval of scales that give the point's size.
          // An exact symbol's (a float Range bound's) element is point / scale.
          const double inside = y.value_exact ? 0.0 : 0.5;
          v[static_cast<size_t>(y.value_element)] =
              y.value_scale > 0
                  ? ConfigNumber{(static_cast<double>(point[k]) + inside) / static_cast<double>(y.value_scale), false, 0}
                  : ConfigNumber{static_cast<double>(point[k]), true, point[k]};
          {
            // A single integer / bool value carries its range (a Loop trip count
            // unrolls to the maximum); any other element makes it unusable there.
            auto [it, fresh] = iopt.run_time_values.emplace(y.value_input, std::make_pair(y.min, y.max));
            if (!fresh || y.value_element != 0 || y.value_scale != 0) it->second = {1, 0};
          }
          std::vector<size_t>& ks = value_symbols[y.value_input];
          if (ks.size() <= static_cast<size_t>(y.value_element)) ks.resize(static_cast<size_t>(y.value_element) + 1);
          ks[static_cast<size_t>(y.value_element)] = k;
          continue;
        }
        index[y.name] = k;
        iopt.symbol_values[y.name] = point[k];
      }
      for (const auto& [input, names] : in->config.input_symbols)
        for (size_t d = 0; d < names.size(); ++d)
          if (!names[d].empty()) {
            iopt.input_shapes[input][d] = point[index.at(names[d])];
            iopt.symbolic_inputs.insert(input);
          }
      OAAXVK_ASSIGN_OR_RETURN(Graph g, ImportOnnxBytes(model_file->bytes, model_file->dir, iopt, rep));
      for (const auto& [input, ks] : value_symbols) {
        rep->bound_inputs.erase(input);  // not bound: the runtime reads the value
        Tensor* t = g.FindTensor(input);
        if (t == nullptr || !t->is_const) return Internal("value input '" + input + "' was not imported as a constant");
        if (ctx == nullptr) continue;
        t->sym.clear();
        for (size_t k : ks) t->sym.push_back(Dim(point[k], ctx->SymbolNode(k)));
      }
      if (ctx == nullptr) return g;
      std::set<std::string> used;
      auto attach = [&](const std::string& input, size_t d, const std::string& sym) -> Status {
        used.insert(sym);
        for (const GraphIO& io : g.inputs) {
          if (io.name != input) continue;
          Tensor* t = g.FindTensor(io.tensor);
          if (t == nullptr || d >= t->shape.size()) break;
          const size_t k = index.at(sym);
          t->shape[d] = Dim(point[k], ctx->SymbolNode(k));
          return Status::Ok();
        }
        return Internal("dynamic shapes: input '" + input + "' dimension " + std::to_string(d) + " not found");
      };
      for (const auto& [input, names] : in->config.input_symbols)
        for (size_t d = 0; d < names.size(); ++d)
          if (!names[d].empty()) OAAXVK_RETURN_IF_ERROR(attach(input, d, names[d]));
      for (const auto& [input, d, sym] : rep->symbolic_dims)
        OAAXVK_RETURN_IF_ERROR(attach(input, static_cast<size_t>(d), sym));
      // Feature segment_program: the selection an If's decided symbols belong
      // to (FindDecidedSymbols) takes its shape from their values here.
      for (size_t k = 0; k < symbols->size(); ++k) {
        const Symbol& y = (*symbols)[k];
        const std::string suffix = "/larger";
        if (!y.decided || y.name.size() <= suffix.size() || y.name.compare(y.name.size() - suffix.size(), suffix.size(), suffix) != 0)
          continue;
        const std::string output = y.name.substr(0, y.name.size() - suffix.size());
        bool found = false;
        for (Node& n : g.nodes)
          if (n.op_type == "Where" && n.GetInt("_if_select", 0) != 0 && !n.outputs.empty() && n.outputs[0] == output) {
            n.SetInt("_if_larger", static_cast<int64_t>(k));
            n.SetInt("_if_cond", static_cast<int64_t>(k) - 1);  // FindDecidedSymbols: "/cond" precedes "/larger"
            n.SetInt("_if_larger_value", point[k]);
            found = true;
          }
        if (!found) return Internal("dynamic shapes: no If selection writes '" + output + "'");
        used.insert(y.name);
        used.insert((*symbols)[k - 1].name);
      }
      // A data-dependent extent read back into a decided symbol: its node's
      // output takes the symbol as its extent (ir/extent.h DecidedExtentDim).
      for (size_t k = 0; k < symbols->size(); ++k) {
        const auto it = extent_nodes.find((*symbols)[k].name);
        if (!(*symbols)[k].decided || it == extent_nodes.end()) continue;
        bool found = false;
        for (Node& n : g.nodes)
          if (n.name == it->second) {
            n.SetInt("_decided_extent", static_cast<int64_t>(k));
            n.SetInt("_decided_value", point[k]);
            found = true;
          }
        if (!found) return Internal("dynamic shapes: no node '" + it->second + "' writes the extent '" + it->first + "'");
        used.insert(it->first);
      }
      OAAXVK_RETURN_IF_ERROR(AnnotateDecidedLoops(g, *symbols, point, &used));  // driver/loop_symbols.h
      OAAXVK_RETURN_IF_ERROR(InsertLoopReads(g, *symbols, point, &used));       // ir/loop_reads.h
      for (const Symbol& s : *symbols)
        if (!s.is_value() && !used.count(s.name))
          return InvalidArgument("config.json: dimensions['" + s.name +
                                 "'] is not a symbolic dimension of any graph input (name it in \"input_shapes\", or "
                                 "use the model's own dim_param name)");
      return g;
    };
    // Run-time value symbols with ranges derived from their ops: found on the
    // model imported at the maximum shape; they stay at their maximum at every
    // check point, and their sizes reach only kernels whose lowering derived
    // them on purpose (Dispatch::value_sizes). Values named in "input_values"
    // (ResolveSymbols) are sampled like dimensions instead.
    std::vector<Symbol> value_syms, decided_syms, extent_syms;
    {
      std::vector<int64_t> max_point;
      for (const Symbol& y : *symbols) max_point.push_back(y.max);
      ImportReport scan_rep;
      StatusOr<Graph> scan = import_at(max_point, nullptr, &scan_rep);
      if (!scan.ok()) return fail(scan.status());
      value_syms = FindValueSymbols(*scan, in->config);
      StatusOr<std::vector<Symbol>> decided = FindDecidedSymbols(*scan);
      if (!decided.ok()) return fail(decided.status());
      decided_syms = std::move(*decided);
      for (Symbol& y : FindDecidedLoops(*scan)) decided_syms.push_back(std::move(y));  // driver/loop_symbols.h
      for (Symbol& y : FindLoopReads(*scan)) decided_syms.push_back(std::move(y));     // ir/loop_reads.h
      for (DecidedExtent& e : FindDecidedExtents(*scan)) {
        extent_nodes[e.symbol.name] = e.node;
        extent_syms.push_back(std::move(e.symbol));
      }
      Status scaled = ScaleFloatValueSymbols(*scan, &*symbols);
      if (!scaled.ok()) return fail(scaled);
    }
    std::vector<std::vector<int64_t>> points =
        symbols->empty() ? std::vector<std::vector<int64_t>>{{}} : SamplePoints(*symbols);
    for (const Symbol& y : value_syms) {
      symbols->push_back(y);
      for (std::vector<int64_t>& pt : points) pt.push_back(y.max);
    }
    AddDecidedSymbols(decided_syms, &*symbols, &points, extent_syms);
    const bool dynamic = !symbols->empty();
    SymContext ctx(*symbols);  // the canonical (maximum) program's expressions
    std::unique_ptr<SymScope> scope;
    if (dynamic) scope = std::make_unique<SymScope>(&ctx);
    ImportReport rep;
    StatusOr<Graph> g = import_at(points[0], dynamic ? &ctx : nullptr, &rep);
    if (!g.ok()) return fail(g.status());
    json inputs = json::array(), outputs = json::array();
    for (const GraphIO& io : g->inputs) {
      json e = {{"Name", io.name}, {"Shape", ShapeToString(g->FindTensor(io.tensor)->shape)}};
      if (rep.bound_inputs.count(io.name)) e["Bound at conversion"] = true;
      inputs.push_back(std::move(e));
    }
    for (const GraphIO& io : g->outputs) outputs.push_back({{"Name", io.name}});
    add("Model imported", {{"SHA-256", Sha256File(input_path)}, {"Model SHA-256", Sha256File(in->model_path)}, {"IR version", rep.ir_version}, {"Opset", rep.opset},
                           {"Producer", rep.producer}, {"ONNX nodes", rep.onnx_nodes}, {"Inputs", inputs},
                           {"Outputs", outputs}, {"Notes", rep.notes}, {"Elapsed ms", ms()}});
    outcome->notes = rep.notes;
    LowerOptions lopt;
    lopt.fp16_weights = in->config.fp16_weights;
    lopt.all_conv_gpu_tiles = in->config.all_conv_gpu_tiles;
    StatusOr<CompileResult> r = CompileGraph(
        std::move(*g), [&](const std::string& m, const std::string& d) { add(m, json::parse(d)); }, rep.bound_inputs,
        lopt, dynamic);
    if (!r.ok()) return fail(r.status());
    if (dynamic) {
      // Every other check point: the same program, every expression right there.
      for (std::vector<int64_t>& pt : ResiduePoints(ctx, points[0], points)) points.push_back(std::move(pt));
      json checked = json::array(), skipped = json::array();
      std::vector<size_t> todo;  // the points compiled and checked, in order
      for (size_t k = 1; k < points.size(); ++k) {
        // A point where a guard fails is no valid input (run-time values a
        // Reshape or an Expand cannot take there): the runtime refuses it, so
        // nothing is compiled for it; a valid point nearer the maximum is
        // checked instead when one is found.
        auto valid_at = [&](const std::vector<int64_t>& pt) {
          for (const SymGuard& gd : ctx.guards()) {
            StatusOr<int64_t> gv = ctx.Eval(gd.expr, pt);
            if (!gv.ok() || *gv == 0) return false;
          }
          return true;
        };
        if (!valid_at(points[k])) {
          // Halfway towards the maximum (on multiple_of), a few times, for a
          // point inside the valid region (e.g. an output_shape at least the
          // unpooled size), unless that is the maximum or an earlier point.
          std::vector<int64_t> pt = points[k];
          bool found = false;
          for (int step = 0; step < 4 && !found; ++step) {
            for (size_t i = 0; i < pt.size(); ++i) {
              const Symbol& y = (*symbols)[i];
              const int64_t mid = pt[i] + (y.max - pt[i]) / 2;
              pt[i] = std::min(y.max, y.min + CeilDivI(mid - y.min, y.multiple_of) * y.multiple_of);
            }
            found = valid_at(pt) && std::find(points.begin(), points.begin() + static_cast<std::ptrdiff_t>(k), pt) ==
                                        points.begin() + static_cast<std::ptrdiff_t>(k);
          }
          if (!found) {
            skipped.push_back(PointToString(*symbols, points[k]));
            continue;
          }
          points[k] = pt;
        }
        todo.push_back(k);
      }
      // Each point is a whole import and compile: on several threads,
      // checked in order (driver/check_points.h), with progress on the
      // console, as a large model takes minutes here.
      LowerOptions sample_lopt = lopt;
      sample_lopt.weight_bytes = false;  // constants compared by their digests (CheckSample)
      for (Value& v : r->program.values)
        if (v.kind == BufferKind::kWeights) v.digest = WeightsDigest(v.data);
      const size_t workers = CheckPointWorkers();
      if (console)
        console(StrFormat("Dynamic shapes: checking the program at %zu more points (%zu threads)", todo.size(),
                          workers));
      auto last_report = Clock::now();
      Status sampled = CompileAndCheckInOrder(
          todo.size(), workers, &in->config.limits,
          [&](size_t i) -> StatusOr<CompileResult> {
            const std::vector<int64_t>& pt = points[todo[i]];
            SymContext sample_ctx(*symbols);
            SymScope sample_scope(&sample_ctx);
            ImportReport srep;
            StatusOr<Graph> sg = import_at(pt, &sample_ctx, &srep);
            if (!sg.ok()) return sg.status().WithContext("dynamic shapes, compiling at " + PointToString(*symbols, pt));
            StatusOr<CompileResult> sr =
                CompileGraph(std::move(*sg), nullptr, srep.bound_inputs, sample_lopt, true, true);
            if (!sr.ok()) return sr.status().WithContext("dynamic shapes, compiling at " + PointToString(*symbols, pt));
            return sr;
          },
          [&](size_t i, const CompileResult& sr) -> Status {
            OAAXVK_RETURN_IF_ERROR(CheckSample(r->program, ctx, sr.program, points[todo[i]]));
            checked.push_back(PointToString(*symbols, points[todo[i]]));
            return Status::Ok();
          },
          [&](size_t done) {
            if (!console || (done < todo.size() && Clock::now() - last_report < std::chrono::seconds(5))) return;
            last_report = Clock::now();
            console(StrFormat("Dynamic shapes: %zu of %zu points checked (%.0f s)", done, todo.size(), ms() / 1000));
          });
      if (!sampled.ok()) return fail(sampled);
      json guards = json::array();
      for (const SymGuard& gd : ctx.guards()) guards.push_back(gd.text + " :: " + ctx.ToString(gd.expr));
      json syms = json::array();
      for (const Symbol& s : *symbols)
        syms.push_back({{"Name", s.name}, {"Min", s.min}, {"Max", s.max}, {"Multiple of", s.multiple_of}});
      add("Dynamic shapes", {{"Symbols", syms}, {"Shape program instructions", ctx.nodes().size()},
                             {"Guards", guards},
                             {"Compiled for", PointToString(*symbols, points[0])}, {"Checked at", checked},
                             {"Skipped (a guard fails there)", skipped},
                             {"Elapsed ms", ms()}});
    }
    if (!r.ok()) return fail(r.status());
    std::string out = dir + "/model.oinf";
    Status ws = WriteBytes(out, r->bundle.data(), r->bundle.size());
    if (!ws.ok()) return fail(ws);
    add("Successful Conversion", {{"MIME type", kBundleMimeType},
                                  {"Output file", "model.oinf"},
                                  {"Output bytes", r->bundle.size()},
                                  {"Output SHA-256", Sha256Hex(r->bundle.data(), r->bundle.size())},
                                  {"Format", kBundleFormat},
                                  {"Format version", kBundleFormatVersion},
                                  {"Nodes before passes", r->nodes_before},
                                  {"Nodes after passes", r->nodes_after},
                                  {"Dispatches", r->summary.dispatches},
                                  {"Kernels", r->summary.kernels},
                                  {"Elapsed ms", ms()}});
    if (!write_log()) {
      if (console) console("could not write conversion-log.json");
      outcome->human_error = "The output directory cannot be written.";
      outcome->technical_error = "cannot write '" + log_path + "' (model.oinf was written)";
      return 1;
    }
    outcome->ok = true;
    outcome->bundle_path = out;
    outcome->bundle_bytes = r->bundle.size();
    outcome->dispatches = r->summary.dispatches;
    outcome->elapsed_ms = ms();
    return 0;
  } catch (const std::bad_alloc&) {
    return fail(ResourceExhausted("out of memory while converting (after step '" + LastStep(log) +
                                  "'); the model needs more memory than this machine gives, or lower the "
                                  "config.json \"limits\" so that it is refused early"));
  } catch (const std::length_error& e) {
    return fail(ResourceExhausted(std::string("a size computed from the model is too large (") + e.what() +
                                  ", after step '" + LastStep(log) + "')"));
  } catch (const std::exception& e) {
    return fail(Internal(std::string("unexpected exception while converting (after step '") + LastStep(log) +
                         "'): " + e.what()));
  }
}

}  // namespace oaaxvk::toolchain
