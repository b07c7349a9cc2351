// PlanBufferBlocks (src/runtime/buffer_blocks.h): how a bundle buffer is cut
// into VkBuffers no larger than the device allows.
#include "runtime/buffer_blocks.h"

#include <gtest/gtest.h>

namespace oaaxvk::runtime {
namespace {

std::vector<std::pair<uint64_t, uint64_t>> R(std::initializer_list<std::pair<uint64_t, uint64_t>> r) { return r; }

TEST(PlanBufferBlocks, ABufferThatFitsIsOneBlockFromZero) {
  auto s = PlanBufferBlocks(R({{256, 512}}), 1000, 1008, "weights");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->size(), 1u);
  EXPECT_EQ((*s)[0].begin, 0u);
  EXPECT_EQ((*s)[0].end, 1000u);
}

TEST(PlanBufferBlocks, DisjointBindingsArePackedGreedilyUpToTheLimit) {
  // Four 1000-byte bindings 1024 apart; 2048 bytes per buffer: two each.
  auto s = PlanBufferBlocks(R({{3072, 4072}, {0, 1000}, {1024, 2024}, {2048, 3048}}), 4072, 2048, "weights");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->size(), 2u);
  EXPECT_EQ((*s)[0].begin, 0u);
  EXPECT_EQ((*s)[0].end, 2024u);
  EXPECT_EQ((*s)[1].begin, 2048u);
  EXPECT_EQ((*s)[1].end, 4072u);
  EXPECT_EQ(BlockOf(*s, 0), 0u);
  EXPECT_EQ(BlockOf(*s, 1024), 0u);
  EXPECT_EQ(BlockOf(*s, 2048), 1u);
  EXPECT_EQ(BlockOf(*s, 3072), 1u);
}

TEST(PlanBufferBlocks, OverlappingBindingsShareABlock) {
  // [0, 1500) and [1024, 2500) overlap (arena reuse): one block of 2500
  // bytes; [2560, 3000) goes on its own under a 2560-byte limit.
  auto s = PlanBufferBlocks(R({{0, 1500}, {1024, 2500}, {2560, 3000}}), 3000, 2560, "arena");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->size(), 2u);
  EXPECT_EQ((*s)[0].end, 2500u);
  EXPECT_EQ((*s)[1].begin, 2560u);
  EXPECT_EQ(BlockOf(*s, 1024), 0u);
}

TEST(PlanBufferBlocks, BytesThatMustShareABufferOverTheLimitAreRefused) {
  auto s = PlanBufferBlocks(R({{0, 1500}, {1024, 2500}}), 2500, 2048, "bundle 'm.oinf': metadata 'arena.bytes'");
  ASSERT_FALSE(s.ok());
  const std::string m = s.status().ToString();
  EXPECT_NE(m.find("bundle 'm.oinf': metadata 'arena.bytes': bytes [0, 2500)"), std::string::npos) << m;
  EXPECT_NE(m.find("2500 bytes are over the 2048 bytes one buffer may take"), std::string::npos) << m;
}

TEST(PlanBufferBlocks, SizesRoundUpTo16BytesAsBuffersAreAllocated) {
  // 2040 bytes allocate 2048: fits a 2048 limit; 2050 allocate 2064: does not.
  EXPECT_TRUE(PlanBufferBlocks(R({{0, 2040}}), 4096, 2048, "w").ok());
  EXPECT_FALSE(PlanBufferBlocks(R({{0, 2050}}), 4096, 2048, "w").ok());
}

}  // namespace
}  // namespace oaaxvk::runtime
