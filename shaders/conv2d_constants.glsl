// Specialization constants of the Conv kernels conv2d_gemm.glsl,
// conv2d_gemm_gpu.glsl and conv2d_cpu.glsl (same ids, same meaning): X [N, C,
// H, W], W [K_OUT, C / GROUPS, KH, KW], Y [N, K_OUT, OH, OW]; strides SH/SW,
// leading pads PH/PW, dilations DH/DW; HAS_BIAS, the fused activation ACT
// (ACT_A, ACT_B its parameters) and HAS_RES (a fused residual Add). N, H, W,
// OH and OW are parameter constants (params.glsl).
#include "params.glsl"
layout(constant_id = 0) const uint N_SC = 1;
#define N PARAM_U(N_SC)
layout(constant_id = 1) const uint C = 1;
layout(constant_id = 2) const uint H_SC = 1;
#define H PARAM_U(H_SC)
layout(constant_id = 3) const uint W_SC = 1;
#define W PARAM_U(W_SC)
layout(constant_id = 4) const uint K_OUT = 1;
layout(constant_id = 5) const uint OH_SC = 1;
#define OH PARAM_U(OH_SC)
layout(constant_id = 6) const uint OW_SC = 1;
#define OW PARAM_U(OW_SC)
layout(constant_id = 7) const uint KH = 1;
layout(constant_id = 8) const uint KW = 1;
layout(constant_id = 9) const uint SH = 1;
layout(constant_id = 10) const uint SW = 1;
layout(constant_id = 11) const uint PH = 0;
layout(constant_id = 12) const uint PW = 0;
layout(constant_id = 13) const uint DH = 1;
layout(constant_id = 14) const uint DW = 1;
layout(constant_id = 15) const uint GROUPS = 1;
layout(constant_id = 16) const uint HAS_BIAS = 0;
layout(constant_id = 17) const uint ACT = 0;
layout(constant_id = 18) const float ACT_A = 0.0;
layout(constant_id = 19) const float ACT_B = 0.0;
layout(constant_id = 20) const uint HAS_RES = 0;
