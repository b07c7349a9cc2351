// The load-time check of cooperative-matrix kernels (docs/kernels.md
// "Cooperative-matrix kernels"): before any row runs a matrix kernel, the
// runtime runs it once beside its fp16 precision form (the portable kernel
// with the same numbers) on a small problem with known data, and keeps it only
// when it compiles, runs and agrees. A driver's matrix path is the part of a
// device the project cannot test everywhere; this makes a broken one cost
// speed, never a wrong answer.
#ifndef OAAXVK_RUNTIME_MATRIX_CHECK_H_
#define OAAXVK_RUNTIME_MATRIX_CHECK_H_

#include <set>
#include <string>

#include "oaax_vulkan/status.h"
#include "runtime/bundle.h"
#include "runtime/vk_context.h"

namespace oaaxvk::runtime {

// Runs `candidate` and `reference` (the same interface: either the gemm_gpu
// kernels' 4 bindings and 21 specialization constants or the conv2d_gemm_gpu
// kernels' 5 and 25, told apart by the binding count) on one problem each
// with the full epilogue (bias, ReLU; for the convolution also the residual):
//   GEMM: 64 x 64 x 64, bias per column;
//   Conv: 1 x 8 x 8 x 8 input, 64 output channels, 3 x 3, padding 1
//         (K = 72, not a multiple of the 16-deep slice);
// each at tiles 128 x 128 (vec4 loads where the problem allows; every
// fragment slot of the matrix tile), 16 x 16 (scalar loads; one fragment),
// 32 x 64 (vec4) and 64 x 32 (scalar), on data from a fixed pseudo-random
// sequence in [-1, 1], the output filled with NaN beforehand so an unwritten
// output disagrees.
// The two agree when every output differs by at most
//   (4 K + 8) * 2^-24 * (sum_k |a_k b_k| + |bias| + |residual|),
// the bound on two fp32 summations of the same binary16 products, each
// addition within one ulp (a matrix unit may truncate where the portable
// kernel rounds).
// `inject_error` (fault injection: a stand-in for a broken matrix kernel)
// runs the candidate with its bias left out.
// Ok when the candidate agrees; otherwise an error that names the candidate
// and what failed: its module or pipeline creation (the Vulkan result), the
// run, or the first disagreeing output (tile, index, both values, bound).
// Uses its own buffers, command pool and fence on ctx's queue, all freed
// before returning; runs to completion before returning.
Status CheckMatrixKernel(VkContext* ctx, const Kernel& candidate, const Kernel& reference, bool inject_error);

// Checks every cooperative-matrix kernel of `bundle` (Kernel::matrix_kernel of
// an fp16 precision form) whose capabilities `limits` has, with
// CheckMatrixKernel against the form naming it; inserts each failing one's
// index into `dropped` and logs a warning with the reason (an info line for
// each one kept). Kernels the device lacks capabilities for are not run (the
// selection keeps their rows on the fp16 form and reports why). In the fault
// injection build, InjectedMatrixStandIn may first replace each matrix
// kernel's module by its fp16 form's and add its capabilities to `limits`.
void CheckMatrixKernels(VkContext* ctx, Bundle* bundle, DeviceLimits* limits, std::set<uint32_t>* dropped);

// The load-log line of a precision=fp16 selection: rows on fp16 forms and on
// cooperative matrices, and each row kept on a wider form with its reason;
// for a table other than the GPU one, that it has no fp16 forms.
std::string PrecisionSummary(const std::string& bundle_path, const VariantSelection& sel);

}  // namespace oaaxvk::runtime

#endif  // OAAXVK_RUNTIME_MATRIX_CHECK_H_
