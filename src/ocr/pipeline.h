// The PP-OCR pipeline over two Engines: detection -> DB boxes -> line crops
// -> recognition (all crops queued before the first output is read) -> CTC.
#ifndef OAAX_VULKAN_OCR_PIPELINE_H_
#define OAAX_VULKAN_OCR_PIPELINE_H_

#include <string>
#include <vector>

#include "ocr/engine.h"
#include "ocr/image.h"
#include "ocr/ocr.h"
#include "oaax_vulkan/status.h"

namespace oaaxvk::ocr {

struct OcrOptions {
  DetInputOptions det;
  DbOptions db;
  RecInputOptions rec;
  std::string det_input_name = "x";  // ONNX input names of the PP-OCR models
  std::string rec_input_name = "x";
  float drop_score = 0.5f;  // lines whose recognition score is lower are dropped
};

struct OcrLine {
  Quad box;             // image coordinates, TL, TR, BR, BL
  float box_score = 0;  // detection score
  std::string text;
  float score = 0;      // recognition score
};

// Milliseconds per stage (wall clock).
struct OcrTimings {
  double det_preprocess = 0, det_inference = 0, det_postprocess = 0;
  double rec_preprocess = 0, rec_inference = 0, ctc_decode = 0;
};

struct OcrResult {
  std::vector<OcrLine> lines;  // reading order
  OcrTimings timings;
  int det_height = 0, det_width = 0;  // the detection input's size
  size_t rec_crops = 0;               // boxes sent to recognition (before drop_score)
};

// Runs the whole pipeline on `image`. Errors name the stage.
StatusOr<OcrResult> RunOcr(const Image& image, Engine& det, Engine& rec, const Charset& charset, const OcrOptions& options);

// Draws each line's box on a copy of `image` (red, 2 px).
Image Annotate(const Image& image, const std::vector<OcrLine>& lines);

}  // namespace oaaxvk::ocr

#endif  // OAAX_VULKAN_OCR_PIPELINE_H_
