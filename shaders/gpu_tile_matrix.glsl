// Cooperative-matrix tile of the *_coopmat GPU-class GEMM kernels, included
// by gpu_tile.glsl under GPU_TILE_MATRIX (docs/kernels.md "Cooperative-matrix
// kernels"). Same interface, slices, staging and output tile as the
// register-blocked tile; the slices are multiplied by the device's matrix
// units (GL_NV_cooperative_matrix, 16 x 16 x 16, binary16 A and B, fp32
// accumulators).
//
// The TILE_M x TILE_N tile is F = (TILE_M / 16) * (TILE_N / 16) fragments of
// 16 x 16 (at most 64). The first S = min(gl_NumSubgroups, 8) subgroups share
// them: subgroup s owns fragments s + S i (i < 8), so with 8 subgroups
// (subgroups of 32, the only size this kernel's capability is listed for)
// every fragment of a 128 x 128 tile has an owner. A device with fewer
// subgroups would leave fragments unwritten; the runtime's load-time check
// (128 x 128 tile, output filled with NaN beforehand) then drops the kernel.
//
// Shared memory, binary16: A [buffer][m][k] (row stride 16) and B
// [buffer][k][n] (row stride TILE_N), 2 * 16 * (TILE_M + TILE_N) halves
// (16 KiB at 128 x 128), plus an fp32 16 x 16 staging fragment per subgroup
// (8 KiB) through which the accumulators reach gpu_tile_epilogue.
#ifndef OAAXVK_GPU_TILE_MATRIX_GLSL
#define OAAXVK_GPU_TILE_MATRIX_GLSL
const uint GPU_TILE_FRAGS = (TILE_M / 16u) * (TILE_N / 16u);
const uint GPU_TILE_MAX_SUBGROUPS = 8u;
shared float16_t As[2u * TK * TILE_M];  // [buffer][m][k]
shared float16_t Bs[2u * TK * TILE_N];  // [buffer][k][n]
shared float Cs[GPU_TILE_MAX_SUBGROUPS * 256u];  // [subgroup][16 x 16, row-major]
fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> cacc[8];

// Between a slice's stores and its reads (and the reads and the next
// stores): the module uses the Vulkan memory model (cooperative matrices
// require it), where the barrier must make the shared stores available and
// visible explicitly.
void gpu_tile_barrier() {
  controlBarrier(gl_ScopeWorkgroup, gl_ScopeWorkgroup, gl_StorageSemanticsShared,
                 gl_SemanticsAcquireRelease | gl_SemanticsMakeAvailable | gl_SemanticsMakeVisible);
}

uint gpu_tile_subgroups() { return min(gl_NumSubgroups, GPU_TILE_MAX_SUBGROUPS); }

void gpu_tile_init() {
  for (uint i = 0u; i < 8u; ++i) cacc[i] = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);
}

// cacc += the slice in shared buffer `buf` (tx, ty unused: the subgroup, not
// the invocation, owns the outputs).
void gpu_tile_fma(uint buf, uint tx, uint ty) {
  const uint s = gl_SubgroupID, S = gpu_tile_subgroups();
  if (s >= S) return;
  const uint a0 = buf * TK * TILE_M, b0 = buf * TK * TILE_N;
  for (uint i = 0u; i < 8u; ++i) {
    const uint f = s + S * i;
    if (f >= GPU_TILE_FRAGS) break;
    const uint fm = f / (TILE_N / 16u), fn = f % (TILE_N / 16u);
    fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> a, b;
    coopMatLoadNV(a, As, a0 + fm * 16u * TK, TK, false);
    coopMatLoadNV(b, Bs, b0 + fn * 16u, TILE_N, false);
    cacc[i] = coopMatMulAddNV(a, b, cacc[i]);
  }
}

// Stores the staged A slice into shared buffer `buf`, element (m, k) at
// m * 16 + k. Scalar: element e = tid + 256 r (r < RM) is (k = e % 16,
// m = e / 16). vec4: e = tid + 256 r (r < 2, e < 4 TILE_M) is
// (k = 4 (e % 4) .. + 3, m = e / 4).
void gpu_tile_store_a(uint buf, uint tid) {
  const uint a0 = buf * TK * TILE_M;
  if (VEC_A != 0u) {
    for (uint r = 0u; r < 2u; ++r) {
      const uint e = tid + 256u * r;
      if (e < 4u * TILE_M)
        for (uint c = 0u; c < 4u; ++c) As[a0 + 4u * e + c] = float16_t(ra[4u * r + c]);
    }
  } else {
    for (uint r = 0u; r < 8u; ++r)
      if (r < RM) As[a0 + tid + 256u * r] = float16_t(ra[r]);
  }
}

// Stores the staged B slice into shared buffer `buf`, element (k, n) at
// k * TILE_N + n; the staging order is gpu_tile.glsl's.
void gpu_tile_store_b(uint buf, uint tid) {
  const uint b0 = buf * TK * TILE_N;
  if (VEC_B != 0u) {
    const uint q = TILE_N / 4u;
    for (uint r = 0u; r < 2u; ++r) {
      const uint e = tid + 256u * r;
      if (e < 4u * TILE_N)
        for (uint c = 0u; c < 4u; ++c) Bs[b0 + (e / q) * TILE_N + 4u * (e % q) + c] = float16_t(rb[4u * r + c]);
    }
  } else {
    for (uint r = 0u; r < 8u; ++r)
      if (r < RN) Bs[b0 + tid + 256u * r] = float16_t(rb[r]);
  }
}

// Each owned fragment goes through the subgroup's staging fragment to
// gpu_tile_epilogue, 256 / gl_SubgroupSize outputs per invocation.
void gpu_tile_finish(uint tid) {
  const uint s = gl_SubgroupID, S = gpu_tile_subgroups();
  if (s >= S) return;
  for (uint i = 0u; i < 8u; ++i) {
    const uint f = s + S * i;
    if (f >= GPU_TILE_FRAGS) break;
    const uint fm = f / (TILE_N / 16u), fn = f % (TILE_N / 16u);
    coopMatStoreNV(cacc[i], Cs, s * 256u, 16u, false);
    subgroupMemoryBarrierShared();
    subgroupBarrier();
    for (uint e = gl_SubgroupInvocationID; e < 256u; e += gl_SubgroupSize)
      gpu_tile_epilogue(16u * fm + e / 16u, 16u * fn + e % 16u, Cs[s * 256u + e]);
    subgroupBarrier();
  }
}
#endif
