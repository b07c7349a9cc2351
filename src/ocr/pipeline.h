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
  int rec_width = 0;    // width of the recognition input tensor [1, 3, 48, rec_width]
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
  int rec_height = 0;                 // the recognition inputs' height
  std::vector<int> rec_widths;        // each crop's recognition input width, in detection order
};

// What a user fixed on the command line; 0 = not given.
struct ShapeRequest {
  int det_height = 0, det_width = 0;  // one detection input size for every image (--det-shape HxW)
  int rec_width = 0;                  // one recognition input width for every crop (--rec-width)
  int rec_width_multiple = 0;         // round each crop's width up to a multiple of this (--rec-width-multiple)
};

// Sets options->det and options->rec so that every tensor RunOcr builds is
// one the models accept. `det_dims` / `rec_dims` are the models' input
// dimensions (Engine::InputDims; empty = any shape) and `det_model` /
// `rec_model` name the models in messages.
//
// Detection, a [1, 3, H, W] input:
//  * no request: each image at its PP-OCR size (DetNaturalSize) fitted to the
//    dimensions' ranges (PlanDetInput); a static H x W makes that one size,
//    and an engine that accepts any shape gets the PP-OCR size itself;
//  * --det-shape: every image at that size, which the model must accept (for
//    a static model: equal its H x W).
// Recognition, a [1, 3, 48, W] input (a static height is taken as it is;
// a symbolic one must accept 48):
//  * no request: each crop at its own width (RecTensorWidth) within W's range
//    and multiple_of; a static W pads every crop to it; an engine that
//    accepts any shape gets the RecInputOptions defaults (height 48, widths
//    32..1280, multiple of 32: the range of tools/ocr/convert_models.sh's
//    bundle);
//  * --rec-width: every crop at that width, which W must accept;
//  * --rec-width-multiple: per-crop widths rounded up to a coarser multiple
//    (fewer distinct shapes); it must be a multiple of W's multiple_of, and
//    is refused for a static W and together with --rec-width.
// Errors (kInvalidArgument) name the model, the dimension, the value and the
// accepted range, or the input shape when it is not [1, 3, H, W].
Status FitInputsToModels(const std::vector<InputDim>& det_dims, const std::string& det_model,
                         const std::vector<InputDim>& rec_dims, const std::string& rec_model,
                         const ShapeRequest& request, OcrOptions* options);

// Runs the whole pipeline on `image`: the detection input sized by
// options.det, each crop's recognition input by options.rec. Errors name the
// stage (and the line for recognition).
StatusOr<OcrResult> RunOcr(const Image& image, Engine& det, Engine& rec, const Charset& charset, const OcrOptions& options);

// Draws each line's box on a copy of `image` (red, 2 px).
Image Annotate(const Image& image, const std::vector<OcrLine>& lines);

}  // namespace oaaxvk::ocr

#endif  // OAAX_VULKAN_OCR_PIPELINE_H_
