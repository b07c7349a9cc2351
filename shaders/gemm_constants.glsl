// Specialization constants of gemm.glsl and gemm_cpu.glsl (same ids, same
// meaning): Y[b, m, n] = act(ALPHA * sum_k A[b, m, k] B[b, k, n] + BETA * bias),
// strides in elements (SAB/SBB batch, SAM/SAK of A, SBK/SBN of B, SCM/SCN of
// the bias). The sizes and strides are parameter constants (params.glsl).
#include "params.glsl"
layout(constant_id = 0) const uint M_SC = 1;
#define M PARAM_U(M_SC)
layout(constant_id = 1) const uint N_SC = 1;
#define N PARAM_U(N_SC)
layout(constant_id = 2) const uint K_SC = 1;
#define K PARAM_U(K_SC)
layout(constant_id = 3) const uint SAB_SC = 0;
#define SAB PARAM_U(SAB_SC)
layout(constant_id = 4) const uint SAM_SC = 0;
#define SAM PARAM_U(SAM_SC)
layout(constant_id = 5) const uint SAK_SC = 0;
#define SAK PARAM_U(SAK_SC)
layout(constant_id = 6) const uint SBB_SC = 0;
#define SBB PARAM_U(SBB_SC)
layout(constant_id = 7) const uint SBK_SC = 0;
#define SBK PARAM_U(SBK_SC)
layout(constant_id = 8) const uint SBN_SC = 0;
#define SBN PARAM_U(SBN_SC)
layout(constant_id = 9) const uint HAS_BIAS = 0;
layout(constant_id = 10) const uint SCM_SC = 0;
#define SCM PARAM_U(SCM_SC)
layout(constant_id = 11) const uint SCN_SC = 0;
#define SCN PARAM_U(SCN_SC)
layout(constant_id = 12) const float ALPHA = 1.0;
layout(constant_id = 13) const float BETA = 1.0;
layout(constant_id = 14) const uint ACT = 0;
layout(constant_id = 15) const float ACT_A = 0.0;
layout(constant_id = 16) const float ACT_B = 0.0;
