#include "ocr/pipeline.h"

#include <chrono>

namespace oaaxvk::ocr {
namespace {
double MsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

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
  std::vector<std::vector<float>> crops;
  crops.reserve(boxes.size());
  for (const DetBox& b : boxes) crops.push_back(PrepareRecInput(image, b.box, options.rec));
  result.timings.rec_preprocess = MsSince(t0);
  result.rec_crops = crops.size();

  // Queue every crop before reading any output: the runtime keeps up to
  // frames_in_flight of them on the device and holds the rest.
  t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < crops.size(); ++i) {
    Tensor rt{options.rec_input_name, {1, 3, options.rec.height, options.rec.width}, std::move(crops[i])};
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
    result.lines.push_back(OcrLine{boxes[i].box, boxes[i].score, d->text, d->score});
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
