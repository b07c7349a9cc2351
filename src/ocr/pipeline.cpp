#include "ocr/pipeline.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <tuple>

namespace oaaxvk::ocr {
namespace {
double MsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}
int ToInt(int64_t v) { return static_cast<int>(std::min<int64_t>(v, INT_MAX)); }

SizeRange ToRange(const InputDim& d) { return SizeRange{ToInt(d.min), ToInt(d.max), ToInt(d.multiple_of)}; }

// Why `d` rejects `v`, e.g. "H = 1000 is outside H in [32, 960], multiple of 32".
std::string Rejection(const InputDim& d, const char* name, int64_t v) {
  if (!d.is_symbolic()) return StrFormat("%s = %lld differs from the model's static size %lld", name, static_cast<long long>(v),
                                         static_cast<long long>(d.value));
  const bool in_range = v >= d.min && v <= d.max;
  return StrFormat("%s = %lld is %s %s", name, static_cast<long long>(v),
                   in_range ? "not a valid size of" : "outside", d.ToString().c_str());
}

Status CheckImageInput(const std::vector<InputDim>& d, const std::string& model, const char* what) {
  if (d.size() != 4 || !d[0].Accepts(1) || !d[1].Accepts(3)) {
    return InvalidArgument(StrFormat("%s: the %s model's input is %s; oaax-ocr needs [1, 3, H, W] (batch 1, RGB)",
                                     model.c_str(), what, InputDimsString(d).c_str()));
  }
  return Status::Ok();
}

}  // namespace

Status FitInputsToModels(const std::vector<InputDim>& det_dims, const std::string& det_model,
                         const std::vector<InputDim>& rec_dims, const std::string& rec_model,
                         const ShapeRequest& request, OcrOptions* options) {
  DetInputOptions& det = options->det;
  det.fixed_height = det.fixed_width = 0;
  det.height = det.width = SizeRange{};
  det.square = false;
  const bool det_fixed = request.det_height > 0 || request.det_width > 0;
  if (!det_dims.empty()) {
    OAAXVK_RETURN_IF_ERROR(CheckImageInput(det_dims, det_model, "detection"));
    const InputDim &h = det_dims[2], &w = det_dims[3];
    det.square = h.is_symbolic() && h.symbol == w.symbol;
    if (det_fixed) {
      for (auto [d, name, v] : {std::tuple{&h, "H", request.det_height}, {&w, "W", request.det_width}}) {
        if (!d->Accepts(v)) {
          return InvalidArgument(StrFormat("--det-shape %dx%d: %s (detection model %s, input %s)", request.det_height,
                                           request.det_width, Rejection(*d, name, v).c_str(), det_model.c_str(),
                                           InputDimsString(det_dims).c_str()));
        }
      }
      if (det.square && request.det_height != request.det_width) {
        return InvalidArgument(StrFormat("--det-shape %dx%d: the detection model %s has one symbol (%s) for H and W, "
                                         "so the shape must be square",
                                         request.det_height, request.det_width, det_model.c_str(), h.symbol.c_str()));
      }
    } else {
      det.height = ToRange(h), det.width = ToRange(w);
    }
  }
  if (det_fixed) det.fixed_height = request.det_height, det.fixed_width = request.det_width;

  RecInputOptions& rec = options->rec;
  if (request.rec_width > 0 && request.rec_width_multiple > 0) {
    return InvalidArgument("--rec-width fixes one width for every crop and --rec-width-multiple rounds per-crop widths: "
                           "give one of them");
  }
  if (request.rec_width_multiple < 0 || request.rec_width < 0) {
    return InvalidArgument("--rec-width and --rec-width-multiple must be positive");
  }
  if (rec_dims.empty()) {
    rec = RecInputOptions{};
    if (request.rec_width > 0) rec.min_width = rec.max_width = request.rec_width, rec.width_multiple = 1;
    if (request.rec_width_multiple > 0) rec.width_multiple = request.rec_width_multiple;
    return Status::Ok();
  }
  OAAXVK_RETURN_IF_ERROR(CheckImageInput(rec_dims, rec_model, "recognition"));
  const InputDim &h = rec_dims[2], &w = rec_dims[3];
  if (!h.is_symbolic()) {
    rec.height = ToInt(h.value);
  } else if (h.Accepts(48)) {
    rec.height = 48;
  } else {
    return InvalidArgument(StrFormat("%s: the recognition model's height is %s, which excludes 48, the PP-OCR line height",
                                     rec_model.c_str(), h.ToString().c_str()));
  }
  if (request.rec_width > 0) {
    if (!w.Accepts(request.rec_width)) {
      return InvalidArgument(StrFormat("--rec-width %d: %s (recognition model %s, input %s)", request.rec_width,
                                       Rejection(w, "W", request.rec_width).c_str(), rec_model.c_str(),
                                       InputDimsString(rec_dims).c_str()));
    }
    rec.min_width = rec.max_width = request.rec_width, rec.width_multiple = 1;
    return Status::Ok();
  }
  rec.min_width = ToInt(w.min), rec.max_width = ToInt(w.max), rec.width_multiple = ToInt(w.multiple_of);
  if (request.rec_width_multiple > 0) {
    if (!w.is_symbolic()) {
      return InvalidArgument(StrFormat("--rec-width-multiple %d: the recognition model %s has a static width %lld; "
                                       "per-crop widths need a model converted with a width range",
                                       request.rec_width_multiple, rec_model.c_str(), static_cast<long long>(w.value)));
    }
    if (request.rec_width_multiple % w.multiple_of != 0) {
      return InvalidArgument(StrFormat("--rec-width-multiple %d is not a multiple of %lld, the step of the recognition "
                                       "model's width (%s, %s)",
                                       request.rec_width_multiple, static_cast<long long>(w.multiple_of),
                                       w.ToString().c_str(), rec_model.c_str()));
    }
    rec.width_multiple = request.rec_width_multiple;
  }
  return Status::Ok();
}

StatusOr<OcrResult> RunOcr(const Image& image, Engine& det, Engine& rec, const Charset& charset, const OcrOptions& options) {
  OcrResult result;
  auto t0 = std::chrono::steady_clock::now();
  OAAXVK_ASSIGN_OR_RETURN(DetInput din, PrepareDetInput(image, options.det));
  result.det_height = din.height, result.det_width = din.width;
  result.timings.det_preprocess = MsSince(t0);

  t0 = std::chrono::steady_clock::now();
  Tensor dt{options.det_input_name, {1, 3, din.height, din.width}, std::move(din.data)};
  OAAXVK_RETURN_IF_ERROR(det.Send(std::move(dt)).WithContext("detection"));
  OAAXVK_ASSIGN_OR_RETURN(std::vector<Tensor> dout, det.Receive());
  result.timings.det_inference = MsSince(t0);
  if (dout.size() != 1 || dout[0].shape.size() != 4 || dout[0].shape[0] != 1 || dout[0].shape[1] != 1 ||
      dout[0].shape[2] != din.height || dout[0].shape[3] != din.width) {
    std::string got = dout.empty() ? "no output" : dout[0].name + " with rank " + std::to_string(dout[0].shape.size());
    return InvalidArgument(StrFormat("detection: expected one [1, 1, %d, %d] probability map, got %zu outputs (%s)",
                                     din.height, din.width, dout.size(), got.c_str()));
  }

  t0 = std::chrono::steady_clock::now();
  OAAXVK_ASSIGN_OR_RETURN(std::vector<DetBox> boxes,
                          DbPostprocess(dout[0].data.data(), din.height, din.width, din.resized_height, din.resized_width,
                                        image.width, image.height, options.db));
  result.timings.det_postprocess = MsSince(t0);

  t0 = std::chrono::steady_clock::now();
  std::vector<RecInput> crops;
  crops.reserve(boxes.size());
  for (size_t i = 0; i < boxes.size(); ++i) {
    auto crop = PrepareRecInput(image, boxes[i].box, options.rec);
    if (!crop.ok()) return crop.status().WithContext(StrFormat("recognition of line %zu", i));
    result.rec_widths.push_back(crop->width);
    crops.push_back(std::move(*crop));
  }
  result.timings.rec_preprocess = MsSince(t0);
  result.rec_crops = crops.size();
  result.rec_height = options.rec.height;

  // Queue every crop, each at its own width, before reading any output: the
  // runtime keeps up to frames_in_flight of them on the device and holds the rest.
  t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < crops.size(); ++i) {
    Tensor rt{options.rec_input_name, {1, 3, options.rec.height, crops[i].width}, std::move(crops[i].data)};
    OAAXVK_RETURN_IF_ERROR(rec.Send(std::move(rt)).WithContext(StrFormat("recognition of line %zu", i)));
  }
  std::vector<Tensor> routs;
  for (size_t i = 0; i < crops.size(); ++i) {
    auto r = rec.Receive();
    if (!r.ok()) return r.status().WithContext(StrFormat("recognition of line %zu", i));
    if (r->size() != 1 || (*r)[0].shape.size() != 3 || (*r)[0].shape[0] != 1) {
      return InvalidArgument(StrFormat("recognition of line %zu: expected one [1, steps, classes] output", i));
    }
    routs.push_back(std::move((*r)[0]));
  }
  result.timings.rec_inference = MsSince(t0);

  t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < routs.size(); ++i) {
    const Tensor& t = routs[i];
    auto d = CtcGreedyDecode(t.data.data(), static_cast<int>(t.shape[1]), static_cast<int>(t.shape[2]), charset);
    if (!d.ok()) return d.status().WithContext(StrFormat("recognition of line %zu", i));
    if (d->score < options.drop_score) continue;
    result.lines.push_back(OcrLine{boxes[i].box, boxes[i].score, d->text, d->score, result.rec_widths[i]});
  }
  result.timings.ctc_decode = MsSince(t0);
  return result;
}

Image Annotate(const Image& image, const std::vector<OcrLine>& lines) {
  Image out = image;
  const uint8_t red[3] = {230, 20, 20};
  for (const OcrLine& l : lines) DrawPolygon(out, {l.box.begin(), l.box.end()}, red, 2);
  return out;
}

}  // namespace oaaxvk::ocr
