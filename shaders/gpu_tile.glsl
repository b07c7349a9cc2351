// Register-blocked, double-buffered shared-memory tile of the GPU-class GEMM
// kernels (conv2d_gemm_gpu.glsl, gemm_gpu.glsl; docs/kernels.md "GPU-class
// GEMM tiles"). Included after the kernel's own specialization constants,
// with GPU_TILE_ID = the constant_id of TILE_M (TILE_N, VEC_A and VEC_B take
// the next three ids).
//
// A workgroup of 256 invocations computes a TILE_M x TILE_N output tile
// (each 16, 32, 64 or 128, chosen per dispatch at conversion); invocation
// (tx, ty) = (id % 16, id / 16) owns the RM x RN register block of rows
// ty + 16 i and columns tx + 16 j (RM = TILE_M / 16, RN = TILE_N / 16, at
// most 8 x 8). The reduction runs in 16-deep slices through two shared
// buffers: while slice t is multiplied out of one buffer, slice t + 1 is read
// from global memory into registers and then stored into the other buffer,
// so each slice costs one barrier and the loads' latency overlaps the FMAs.
// Shared memory: 2 * 16 * (TILE_M + TILE_N) floats, 32 KiB at 128 x 128
// (the kernels require sharedMemory32KiB).
//
// The kernel body stages a slice with its load_a / load_b into ra / rb, and
// after the reduction calls gpu_tile_finish, which hands every output of the
// tile to the body's gpu_tile_epilogue(row in tile, column in tile, sum).
//
// GPU_TILE_F16 (the fp16 precision forms, *_fp16.comp): the shared slices
// hold binary16 (rounded to nearest from the staged fp32 values); each
// product of two binary16 operands is formed in fp32, where it is exact, and
// summed in fp32: the numbers a tensor core computes (docs/kernels.md "fp16
// precision"). Shared memory: half the fp32 tile's, 16 KiB at 128 x 128.
// GPU_TILE_MATRIX (with GPU_TILE_F16; the *_coopmat.comp forms): the same
// binary16 slices multiplied by cooperative-matrix operations
// (GL_NV_cooperative_matrix, 16 x 16 x 16, f16 operands, f32 accumulators;
// see gpu_tile_matrix.glsl).
#ifndef OAAXVK_GPU_TILE_GLSL
#define OAAXVK_GPU_TILE_GLSL
#ifdef GPU_TILE_F16
#define GPU_TILE_VEC4 f16vec4
#define GPU_TILE_SCALAR float16_t
#else
#define GPU_TILE_VEC4 vec4
#define GPU_TILE_SCALAR float
#endif
layout(local_size_x = 256) in;
layout(constant_id = GPU_TILE_ID) const uint TILE_M = 64;
layout(constant_id = GPU_TILE_ID + 1) const uint TILE_N = 64;
// 1: operand A (VEC_A) / B (VEC_B) is read as vec4 along its contiguous
// axis; the conversion sets it only when that axis has stride 1 and every
// row start and the axis length are multiples of 4 (so an aligned group of
// four never straddles a row or the end). 0: scalar loads.
layout(constant_id = GPU_TILE_ID + 2) const uint VEC_A = 0;
layout(constant_id = GPU_TILE_ID + 3) const uint VEC_B = 0;
const uint TK = 16u;
const uint RM = TILE_M / 16u, RN = TILE_N / 16u;
// A is kept [m][k] as vec4 (a slice row is 4 vec4 of 4 consecutive k): the
// FMA loop reads four k of a row at once (broadcasts: one or two rows per
// warp), and the staging stores of neighbouring invocations go to
// neighbouring words. B is kept [k][n]: the reads of 16 neighbouring columns
// are 16 distinct banks.
// Per-invocation staging of the next slice (at most 8 scalars or 2 vec4 per operand).
float ra[8], rb[8];
// The body's output step: tile row ml, tile column nl (ml < TILE_M,
// nl < TILE_N, possibly beyond the problem's edge), the reduced sum v.
void gpu_tile_epilogue(uint ml, uint nl, float v);
#ifdef GPU_TILE_MATRIX
#include "gpu_tile_matrix.glsl"
#else
// Between a slice's stores and its reads (and the reads and the next stores).
void gpu_tile_barrier() { barrier(); }

shared GPU_TILE_VEC4 As[2u * TK / 4u * TILE_M];  // [buffer][m][k / 4]
shared GPU_TILE_SCALAR Bs[2u * TK * TILE_N];  // [buffer][k][n]
float acc[8][8];

void gpu_tile_init() {
  for (uint i = 0u; i < 8u; ++i) for (uint j = 0u; j < 8u; ++j) acc[i][j] = 0.0;
}

// Hands this invocation's outputs to gpu_tile_epilogue.
void gpu_tile_finish(uint tid) {
  const uint tx = tid % 16u, ty = tid / 16u;
  for (uint i = 0u; i < 8u; ++i)
    for (uint j = 0u; j < 8u; ++j)
      if (i < RM && j < RN) gpu_tile_epilogue(ty + 16u * i, tx + 16u * j, acc[i][j]);
}

// acc += the slice in shared buffer `buf`.
void gpu_tile_fma(uint buf, uint tx, uint ty) {
  const uint a0 = buf * TK / 4u * TILE_M, b0 = buf * TK * TILE_N;
  for (uint kq = 0u; kq < TK / 4u; ++kq) {
    vec4 av[8];
    for (uint i = 0u; i < 8u; ++i)
      if (i < RM) av[i] = vec4(As[a0 + (ty + 16u * i) * (TK / 4u) + kq]);
    for (uint c = 0u; c < 4u; ++c) {
      float bv[8];
      for (uint j = 0u; j < 8u; ++j)
        if (j < RN) bv[j] = float(Bs[b0 + (4u * kq + c) * TILE_N + tx + 16u * j]);
      for (uint i = 0u; i < 8u; ++i)
        for (uint j = 0u; j < 8u; ++j)
          if (i < RM && j < RN) acc[i][j] += av[i][c] * bv[j];
    }
  }
}

// Stores the staged A slice into shared buffer `buf`. Scalar: element
// e = tid + 256 r (r < RM) is (k = e % 16, m = e / 16). vec4: e = tid + 256 r
// (r < 2, e < 4 TILE_M) is (k = 4 (e % 4) .. + 3, m = e / 4).
void gpu_tile_store_a(uint buf, uint tid) {
  const uint a0 = buf * TK / 4u * TILE_M;
  if (VEC_A != 0u) {
    for (uint r = 0u; r < 2u; ++r) {
      const uint e = tid + 256u * r;
      if (e < 4u * TILE_M)
        As[a0 + e] = GPU_TILE_VEC4(vec4(ra[4u * r], ra[4u * r + 1u], ra[4u * r + 2u], ra[4u * r + 3u]));
    }
  } else {
    for (uint r = 0u; r < 8u; ++r) {
      const uint e = tid + 256u * r;
      if (r < RM) As[a0 + e / 4u][e % 4u] = GPU_TILE_SCALAR(ra[r]);
    }
  }
}

// Stores the staged B slice into shared buffer `buf`. Scalar: element
// e = tid + 256 r (r < RN) is (n = e % TILE_N, k = e / TILE_N); as 256 is a
// multiple of TILE_N, an invocation keeps its column n = tid % TILE_N in
// every slice. vec4: e = tid + 256 r (r < 2, e < 4 TILE_N) is
// (n = 4 (e % (TILE_N / 4)) .. + 3, k = e / (TILE_N / 4)).
void gpu_tile_store_b(uint buf, uint tid) {
  const uint b0 = buf * TK * TILE_N;
  if (VEC_B != 0u) {
    const uint q = TILE_N / 4u;
    for (uint r = 0u; r < 2u; ++r) {
      const uint e = tid + 256u * r;
      if (e < 4u * TILE_N)
        for (uint c = 0u; c < 4u; ++c) Bs[b0 + (e / q) * TILE_N + 4u * (e % q) + c] = GPU_TILE_SCALAR(rb[4u * r + c]);
    }
  } else {
    for (uint r = 0u; r < 8u; ++r) {
      const uint e = tid + 256u * r;
      if (r < RN) Bs[b0 + (e / TILE_N) * TILE_N + e % TILE_N] = GPU_TILE_SCALAR(rb[r]);
    }
  }
}
#endif  // GPU_TILE_MATRIX
#endif
