#include "toolchain/input/archive.h"

#include <cmath>
#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

namespace oaaxvk::toolchain {

namespace {

bool EndsWithCI(const std::string& s, const std::string& suffix) {
  if (s.size() < suffix.size()) return false;
  for (size_t i = 0; i < suffix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[s.size() - suffix.size() + i])) != suffix[i]) return false;
  return true;
}

int RemoveEntry(const char* p, const struct stat*, int, struct FTW*) { return ::remove(p); }

void RemoveTree(const std::string& dir) {
  if (!dir.empty()) ::nftw(dir.c_str(), RemoveEntry, 16, FTW_DEPTH | FTW_PHYS);
}

// Validates an entry name and returns it normalized (no leading "./", no
// trailing "/"). Fails for absolute paths, "..", backslashes, empty names.
StatusOr<std::string> SafeEntryName(const std::string& archive, const char* raw) {
  if (!raw) return InvalidArgument("archive '" + archive + "' has an entry without a name");
  std::string name(raw);
  auto bad = [&](const std::string& why) {
    return InvalidArgument("archive '" + archive + "': entry '" + name + "' rejected: " + why);
  };
  if (name.empty()) return bad("empty name");
  if (name[0] == '/') return bad("absolute path (entries must be relative to the archive root)");
  if (name.find('\\') != std::string::npos) return bad("backslash in the path");
  std::vector<std::string> parts;
  std::stringstream ss(name);
  std::string part;
  while (std::getline(ss, part, '/')) {
    if (part.empty() || part == ".") continue;
    if (part == "..") return bad("'..' path component (entries must stay inside the archive root)");
    parts.push_back(part);
  }
  if (parts.empty()) return std::string();
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? "/" : "") + parts[i];
  return out;
}

Status MakeDirsUnder(const std::string& root, const std::string& rel) {
  std::string cur = root;
  std::stringstream ss(rel);
  std::string part;
  while (std::getline(ss, part, '/')) {
    cur += "/" + part;
    if (::mkdir(cur.c_str(), 0700) != 0 && errno != EEXIST)
      return InvalidArgument("cannot create directory '" + cur + "': " + std::strerror(errno));
    struct stat st;
    if (::lstat(cur.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      return InvalidArgument("'" + cur + "' is not a directory");
  }
  return Status::Ok();
}

}  // namespace

ResolvedInput::~ResolvedInput() { RemoveTree(temp_dir_); }

ResolvedInput::ResolvedInput(ResolvedInput&& o) noexcept { *this = std::move(o); }

ResolvedInput& ResolvedInput::operator=(ResolvedInput&& o) noexcept {
  if (this != &o) {
    RemoveTree(temp_dir_);
    model_path = std::move(o.model_path);
    from_archive = o.from_archive;
    has_config = o.has_config;
    config = std::move(o.config);
    entries = std::move(o.entries);
    temp_dir_ = std::move(o.temp_dir_);
    o.temp_dir_.clear();
  }
  return *this;
}

bool IsArchivePath(const std::string& path) {
  return EndsWithCI(path, ".zip") || EndsWithCI(path, ".tar.gz") || EndsWithCI(path, ".tgz");
}

namespace {

// One tensor shape of input_shapes (`what` names it in errors): numbers and
// symbols; `scalar_ok`: [] is a scalar's shape (a sequence element).
Status ParseShape(const nlohmann::json& v, const std::string& what, bool scalar_ok, std::vector<int64_t>* dims,
                  std::vector<std::string>* syms, bool* symbolic) {
  if (!v.is_array() || (v.empty() && !scalar_ok))
    return InvalidArgument("config.json: " + what + " must be a " + (scalar_ok ? "" : "non-empty ") +
                           "list of positive integers");
  for (const auto& d : v) {
    if (d.is_string() && !d.get<std::string>().empty()) {  // a symbolic dimension
      dims->push_back(0);
      syms->push_back(d.get<std::string>());
      *symbolic = true;
      continue;
    }
    if (!d.is_number_integer() || d.get<int64_t>() < 1 || d.get<int64_t>() > (int64_t{1} << 31))
      return InvalidArgument("config.json: " + what + " has " + d.dump() +
                             "; every dimension must be an integer in [1, 2^31] or the name of a symbolic "
                             "dimension (a string with its range in \"dimensions\")");
    dims->push_back(d.get<int64_t>());
    syms->emplace_back();
  }
  return Status::Ok();
}

Status ParseInputShapes(const nlohmann::json& v, ModelConfig* c) {
  if (!v.is_object())
    return InvalidArgument("config.json: \"input_shapes\" must map input names to lists of positive integers");
  for (auto s = v.begin(); s != v.end(); ++s) {
    const std::string& name = s.key();
    if (s.value().is_null()) {  // an optional input that is empty
      c->sequence_lengths[name] = -1;
      continue;
    }
    // A list of shapes (or []): a sequence input, flattened into inputs
    // "name[0]", "name[1]", ... (docs/toolchain.md "Sequences and optionals").
    const bool sequence = s.value().is_array() && (s.value().empty() || s.value()[0].is_array());
    if (sequence) {
      c->sequence_lengths[name] = static_cast<int64_t>(s.value().size());
      for (size_t i = 0; i < s.value().size(); ++i) {
        const std::string element = name + "[" + std::to_string(i) + "]";
        std::vector<int64_t> dims;
        std::vector<std::string> syms;
        bool symbolic = false;
        OAAXVK_RETURN_IF_ERROR(ParseShape(s.value()[i], "input_shapes['" + name + "'][" + std::to_string(i) + "]",
                                          /*scalar_ok=*/true, &dims, &syms, &symbolic));
        c->input_shapes[element] = std::move(dims);
        if (symbolic) c->input_symbols[element] = std::move(syms);
      }
      continue;
    }
    std::vector<int64_t> dims;
    std::vector<std::string> syms;
    bool symbolic = false;
    OAAXVK_RETURN_IF_ERROR(ParseShape(s.value(), "input_shapes['" + name + "']", /*scalar_ok=*/false, &dims, &syms, &symbolic));
    c->input_shapes[name] = std::move(dims);
    if (symbolic) c->input_symbols[name] = std::move(syms);
  }
  return Status::Ok();
}

Status ParseInputValues(const nlohmann::json& v, ModelConfig* c) {
  if (!v.is_object())
    return InvalidArgument("config.json: \"input_values\" must map graph input names to flat lists of numbers, "
                           "e.g. {\"input_values\": {\"shape\": [1, 3, 224, 224]}}");
  for (auto s = v.begin(); s != v.end(); ++s) {
    if (!s.value().is_array())  // [] binds an input with zero elements
      return InvalidArgument("config.json: input_values['" + s.key() + "'] must be a flat list of numbers (row-major)");
    std::vector<ConfigNumber> vals;
    std::vector<std::string> names;
    size_t k = 0;
    for (const auto& d : s.value()) {
      ConfigNumber n;
      if (d.is_number_unsigned() && d.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
        return InvalidArgument("config.json: input_values['" + s.key() + "'] element " + std::to_string(k) + " = " +
                               d.dump() + " is out of the int64 range");
      } else if (d.is_number_integer()) {
        n.is_integer = true;
        n.integer = d.get<int64_t>();
        n.value = static_cast<double>(n.integer);
      } else if (d.is_number_float()) {
        n.value = d.get<double>();
      } else if (d.is_boolean()) {
        n.is_integer = true;
        n.integer = d.get<bool>() ? 1 : 0;
        n.value = static_cast<double>(n.integer);
      } else if (d.is_string() && !d.get<std::string>().empty()) {  // a run-time value with a range
        names.push_back(d.get<std::string>());
        ++k;
        continue;
      } else {
        return InvalidArgument("config.json: input_values['" + s.key() + "'] element " + std::to_string(k) + " is " +
                               d.dump() + "; expected a number, or the name of a run-time value (the list must be flat, row-major)");
      }
      vals.push_back(n);
      ++k;
    }
    if (!names.empty() && !vals.empty())
      return InvalidArgument("config.json: input_values['" + s.key() + "'] mixes numbers and names; either bind every "
                             "element to a number, or name every element (each name with its range in "
                             "\"dimensions\") so that the runtime reads the values");
    if (!names.empty()) c->value_symbols[s.key()] = std::move(names);
    else c->input_values[s.key()] = std::move(vals);
  }
  return Status::Ok();
}

Status ParseDimensions(const nlohmann::json& v, ModelConfig* c) {
  const std::string example = "e.g. {\"dimensions\": {\"H\": {\"min\": 32, \"max\": 960, \"multiple_of\": 32}}}";
  if (!v.is_object()) return InvalidArgument("config.json: \"dimensions\" must map symbol names to ranges, " + example);
  for (auto s = v.begin(); s != v.end(); ++s) {
    const std::string where = "config.json: dimensions['" + s.key() + "']";
    if (s.key().empty()) return InvalidArgument("config.json: dimensions has an empty symbol name");
    if (!s.value().is_object()) return InvalidArgument(where + " must be an object like {\"min\": 1, \"max\": 8}");
    Symbol sym;
    sym.name = s.key();
    bool has_min = false, has_max = false;
    for (auto k = s.value().begin(); k != s.value().end(); ++k) {
      const auto& n = k.value();
      if (k.key() != "min" && k.key() != "max" && k.key() != "multiple_of")
        return InvalidArgument(where + ": unknown key '" + k.key() + "' (supported: min, max, multiple_of)");
      // [0, 2^31] for a dimension, checked once its use is known (ResolveSymbols);
      // a run-time value's range may hold 0 and negative numbers, and a float
      // input's fractions (checked by the driver, which knows the input's type).
      if (k.key() != "multiple_of" && n.is_number_float() && std::isfinite(n.get<double>()) &&
          std::fabs(n.get<double>()) <= static_cast<double>(int64_t{1} << 31)) {
        const double x = n.get<double>();
        if (k.key() == "min") { sym.min = static_cast<int64_t>(std::floor(x)); sym.value_min = x; has_min = true; }
        else { sym.max = static_cast<int64_t>(std::floor(x)); sym.value_max = x; has_max = true; }
        continue;
      }
      if (!n.is_number_integer() || n.get<int64_t>() < -(int64_t{1} << 31) || n.get<int64_t>() > (int64_t{1} << 31) ||
          (k.key() == "multiple_of" && n.get<int64_t>() < 1))
        return InvalidArgument(where + "." + k.key() + " is " + n.dump() + "; it must be an integer in " +
                               (k.key() == "multiple_of" ? "[1, 2^31]" : "[-2^31, 2^31] (or a float input's value)"));
      int64_t x = n.get<int64_t>();
      if (k.key() == "min") { sym.min = x; sym.value_min = static_cast<double>(x); has_min = true; }
      else if (k.key() == "max") { sym.max = x; sym.value_max = static_cast<double>(x); has_max = true; }
      else sym.multiple_of = x;
    }
    if (!has_min || !has_max) return InvalidArgument(where + " needs both \"min\" and \"max\"");
    if (sym.value_min > sym.value_max)
      return InvalidArgument(StrFormat("%s: min %g is above max %g", where.c_str(), sym.value_min, sym.value_max));
    c->dimensions[s.key()] = sym;
  }
  return Status::Ok();
}

}  // namespace

// "limits": {"max_folded_bytes": N, ...}: positive integers, each a field of
// ConversionLimits (ir/limits.h).
Status ParseLimits(const nlohmann::json& j, ModelConfig* c) {
  if (!j.is_object()) return InvalidArgument("config.json: \"limits\" must be an object, is " + j.dump());
  const std::pair<const char*, uint64_t ConversionLimits::*> keys[] = {
      {"max_folded_bytes", &ConversionLimits::max_folded_bytes},
      {"max_tensor_elements", &ConversionLimits::max_tensor_elements},
      {"max_tensor_bytes", &ConversionLimits::max_tensor_bytes},
      {"max_arena_bytes", &ConversionLimits::max_arena_bytes},
      {"max_dispatches", &ConversionLimits::max_dispatches},
      {"max_binding_bytes", &ConversionLimits::max_binding_bytes},
      {"max_loop_iterations", &ConversionLimits::max_loop_iterations},
      {"max_loop_read_value", &ConversionLimits::max_loop_read_value}};
  for (auto it = j.begin(); it != j.end(); ++it) {
    bool known = false;
    for (const auto& [name, field] : keys) {
      if (it.key() != name) continue;
      known = true;
      if (!it.value().is_number_unsigned() || it.value().get<uint64_t>() == 0)
        return InvalidArgument(std::string("config.json: limits[\"") + name + "\"] must be a positive integer, is " +
                               it.value().dump());
      c->limits.*field = it.value().get<uint64_t>();
    }
    if (!known)
      return InvalidArgument("config.json: unknown key limits['" + it.key() +
                             "'] (supported: \"max_folded_bytes\", \"max_tensor_elements\", \"max_tensor_bytes\", "
                             "\"max_arena_bytes\", \"max_dispatches\", \"max_binding_bytes\", \"max_loop_iterations\", "
                             "\"max_loop_read_value\")");
  }
  return Status::Ok();
}

StatusOr<ModelConfig> ParseModelConfig(const std::string& text) {
  ModelConfig c;
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return InvalidArgument("config.json is not valid JSON");
  if (!j.is_object()) return InvalidArgument("config.json must be a JSON object like {\"input_shapes\": {\"x\": [1, 3, 224, 224]}}");
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() == "input_shapes") {
      OAAXVK_RETURN_IF_ERROR(ParseInputShapes(it.value(), &c));
    } else if (it.key() == "input_values") {
      OAAXVK_RETURN_IF_ERROR(ParseInputValues(it.value(), &c));
    } else if (it.key() == "dimensions") {
      OAAXVK_RETURN_IF_ERROR(ParseDimensions(it.value(), &c));
    } else if (it.key() == "fp16_weights") {
      if (!it.value().is_boolean())
        return InvalidArgument("config.json: \"fp16_weights\" must be true or false, is " + it.value().dump());
      c.fp16_weights = it.value().get<bool>();
    } else if (it.key() == "gpu_conv_tiles") {
      const nlohmann::json& v = it.value();
      if (!v.is_string() || (v.get<std::string>() != "auto" && v.get<std::string>() != "all"))
        return InvalidArgument("config.json: \"gpu_conv_tiles\" must be \"auto\" (the default) or \"all\", is " +
                               v.dump());
      c.all_conv_gpu_tiles = v.get<std::string>() == "all";
    } else if (it.key() == "limits") {
      OAAXVK_RETURN_IF_ERROR(ParseLimits(it.value(), &c));
    } else {
      return InvalidArgument("config.json: unknown key '" + it.key() +
                             "' (supported: \"input_shapes\", \"dimensions\", \"input_values\", \"fp16_weights\", "
                             "\"gpu_conv_tiles\", \"limits\")");
    }
  }
  return c;
}

StatusOr<ResolvedInput> ResolveModelInput(const std::string& path, const ArchiveLimits& limits) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return NotFound("input '" + path + "' does not exist: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return InvalidArgument("input '" + path + "' is not a regular file");
  ResolvedInput r;
  if (EndsWithCI(path, ".onnx")) {
    r.model_path = path;
    return r;
  }
  if (!IsArchivePath(path))
    return InvalidArgument("input '" + path + "' is neither a .onnx file nor a .zip / .tar.gz archive");

  const char* tmp_root = std::getenv("TMPDIR");
  std::string templ = std::string(tmp_root && *tmp_root ? tmp_root : "/tmp") + "/oaax-vulkan-toolchain.XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data())) return InvalidArgument("cannot create a temporary directory: " + std::string(std::strerror(errno)));
  r.temp_dir_ = buf.data();
  r.from_archive = true;

  struct archive* a = archive_read_new();
  if (!a) return ResourceExhausted("libarchive: out of memory");
  std::unique_ptr<struct archive, int (*)(struct archive*)> guard(a, archive_read_free);
  if (EndsWithCI(path, ".zip")) {
    archive_read_support_format_zip(a);
  } else {
    archive_read_support_filter_gzip(a);
    archive_read_support_format_tar(a);
    archive_read_support_format_gnutar(a);
  }
  auto lib_error = [&](const std::string& what) {
    const char* m = archive_error_string(a);
    return InvalidArgument("archive '" + path + "': " + what + (m ? std::string(": ") + m : std::string()));
  };
  if (archive_read_open_filename(a, path.c_str(), 1 << 16) != ARCHIVE_OK) return lib_error("cannot open");

  uint64_t count = 0, total = 0;
  std::set<std::string> seen;
  bool has_model = false;
  std::string config_text;
  for (;;) {
    struct archive_entry* e = nullptr;
    int rc = archive_read_next_header(a, &e);
    if (rc == ARCHIVE_EOF) break;
    if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN) return lib_error("corrupt or unsupported archive");
    if (++count > limits.max_entries)
      return ResourceExhausted(StrFormat("archive '%s' has more than %llu entries", path.c_str(),
                                         static_cast<unsigned long long>(limits.max_entries)));
    const char* raw = archive_entry_pathname(e);
    OAAXVK_ASSIGN_OR_RETURN(std::string name, SafeEntryName(path, raw));
    if (archive_entry_hardlink(e))
      return InvalidArgument("archive '" + path + "': entry '" + std::string(raw) + "' rejected: hard links are not allowed");
    mode_t type = archive_entry_filetype(e);
    if (type == AE_IFLNK)
      return InvalidArgument("archive '" + path + "': entry '" + std::string(raw) + "' rejected: symbolic links are not allowed");
    if (type == AE_IFDIR) {
      if (!name.empty()) OAAXVK_RETURN_IF_ERROR(MakeDirsUnder(r.temp_dir_, name));
      continue;
    }
    if (type != AE_IFREG)
      return InvalidArgument("archive '" + path + "': entry '" + std::string(raw) + "' rejected: only regular files and directories are allowed");
    if (name.empty()) return InvalidArgument("archive '" + path + "': a file entry has an empty name");
    if (!seen.insert(name).second)
      return InvalidArgument("archive '" + path + "': entry '" + name + "' appears more than once");
    if (archive_entry_size_is_set(e) && static_cast<uint64_t>(archive_entry_size(e)) > limits.max_entry_bytes)
      return ResourceExhausted(StrFormat("archive '%s': entry '%s' is %lld bytes, over the limit of %llu bytes",
                                         path.c_str(), name.c_str(), static_cast<long long>(archive_entry_size(e)),
                                         static_cast<unsigned long long>(limits.max_entry_bytes)));
    size_t slash = name.find_last_of('/');
    if (slash != std::string::npos) OAAXVK_RETURN_IF_ERROR(MakeDirsUnder(r.temp_dir_, name.substr(0, slash)));
    std::string out = r.temp_dir_ + "/" + name;
    int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return InvalidArgument("cannot create '" + out + "': " + std::strerror(errno));
    uint64_t entry_bytes = 0;
    std::string keep;  // config.json text
    char chunk[1 << 16];
    Status ws = Status::Ok();
    for (;;) {
      la_ssize_t n = archive_read_data(a, chunk, sizeof chunk);
      if (n == 0) break;
      if (n < 0) { ws = lib_error("cannot read entry '" + name + "'"); break; }
      entry_bytes += static_cast<uint64_t>(n);
      total += static_cast<uint64_t>(n);
      if (entry_bytes > limits.max_entry_bytes) {
        ws = ResourceExhausted(StrFormat("archive '%s': entry '%s' decompresses to more than %llu bytes", path.c_str(),
                                         name.c_str(), static_cast<unsigned long long>(limits.max_entry_bytes)));
        break;
      }
      if (total > limits.max_total_bytes) {
        ws = ResourceExhausted(StrFormat("archive '%s' decompresses to more than %llu bytes in total (at entry '%s')",
                                         path.c_str(), static_cast<unsigned long long>(limits.max_total_bytes),
                                         name.c_str()));
        break;
      }
      if (name == "config.json") keep.append(chunk, static_cast<size_t>(n));
      const char* p = chunk;
      size_t left = static_cast<size_t>(n);
      while (left > 0) {
        ssize_t w = ::write(fd, p, left);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) { ws = InvalidArgument("cannot write '" + out + "': " + std::strerror(errno)); break; }
        p += w;
        left -= static_cast<size_t>(w);
      }
      if (!ws.ok()) break;
    }
    ::close(fd);
    OAAXVK_RETURN_IF_ERROR(ws);
    r.entries.push_back(name);
    if (name == "model.onnx") has_model = true;
    if (name == "config.json") { r.has_config = true; config_text = std::move(keep); }
  }
  size_t onnx_files = std::count_if(r.entries.begin(), r.entries.end(),
                                    [](const std::string& n) { return EndsWithCI(n, ".onnx"); });
  if (!has_model)
    return InvalidArgument("archive '" + path + "' has no 'model.onnx' at its top level (found " +
                           std::to_string(r.entries.size()) + " file(s))");
  if (onnx_files != 1)
    return InvalidArgument("archive '" + path + "' holds " + std::to_string(onnx_files) +
                           " .onnx files; it must hold exactly one, named model.onnx");
  if (r.has_config) {
    StatusOr<ModelConfig> c = ParseModelConfig(config_text);
    if (!c.ok()) return c.status().WithContext("archive '" + path + "'");
    r.config = std::move(*c);
  }
  r.model_path = r.temp_dir_ + "/model.onnx";
  return r;
}

}  // namespace oaaxvk::toolchain
