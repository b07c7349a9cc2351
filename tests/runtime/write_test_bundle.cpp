// Writes a test bundle for host-level tests (tests/e2e/oaax_run_cli.sh):
//   write_test_bundle affine N OUT.oinf   y = relu(2 x - 1), x and y [1, N]
//   write_test_bundle two N OUT.oinf      "input:0" [1, N], "画像" [N] -> "sum/out", "prod:0"
//   write_test_bundle variants N OUT.oinf y = relu(2.1 x - 1) with w = 2.1, b = -1 and the
//                                         features kernel_variants and device_variants
//                                         (test_bundles.h, AffineReluWithDeviceVariants):
//                                         kernel_variant=gpu computes relu(fp16(2.1) x - 1)
//                                         where the device has storageBuffer16BitAccess,
//                                         cpu relu(-2.1 x)
//   write_test_bundle dynamic N OUT.oinf  y = relu(2 x - 1) for x, y [1, K], K in [1, N]
//                                         (feature dynamic_shapes, symbol "K")
//   write_test_bundle dyntwo N OUT.oinf   "two" with one symbol "N" in [1, N] for both inputs
//   write_test_bundle dynrows N OUT.oinf  y[r] = sum_k x[r, k], x [R, L], R in [1, N], L in [4, N]
//                                         on multiples of 4 (N a multiple of 4)
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "test_bundles.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: write_test_bundle affine|two|variants|dynamic|dyntwo|dynrows N OUT.oinf\n");
    return 2;
  }
  const std::string kind = argv[1];
  const long n = strtol(argv[2], nullptr, 10);
  if (n < 1 || n > (1 << 24)) {
    fprintf(stderr, "write_test_bundle: N must be in [1, 2^24]\n");
    return 2;
  }
  const uint32_t un = static_cast<uint32_t>(n);
  oaaxvk::test::BundleSpec spec;
  if (kind == "affine") {
    spec = oaaxvk::test::AffineReluBundle(un, std::vector<float>(un, 2.0f), std::vector<float>(un, -1.0f));
  } else if (kind == "variants") {
    spec = oaaxvk::test::AffineReluWithDeviceVariants(un, std::vector<float>(un, 2.1f), std::vector<float>(un, -1.0f),
                                                      true);
  } else if (kind == "dynamic") {
    spec = oaaxvk::test::DynamicAffineBundle(1, un, 1, std::vector<float>(un, 2.0f), std::vector<float>(un, -1.0f));
    spec.symbols[0].name = "K";
  } else if (kind == "dynrows") {
    if (un % 4 != 0 || un < 4) {
      fprintf(stderr, "write_test_bundle: dynrows needs N a multiple of 4\n");
      return 2;
    }
    spec = oaaxvk::test::DynamicRowSumBundle(1, un, 4, un, 4);
  } else if (kind == "dyntwo") {
    spec = oaaxvk::test::DynamicTwoInTwoOutBundle(un);
  } else if (kind == "two") {
    spec = oaaxvk::test::TwoInTwoOutBundle(un);
  } else {
    fprintf(stderr, "write_test_bundle: unknown kind '%s'\n", kind.c_str());
    return 2;
  }
  oaaxvk::Status s = spec.Write(argv[3]);
  if (!s.ok()) {
    fprintf(stderr, "write_test_bundle: %s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}
