// The persistent pipeline cache file (src/runtime/pipeline_cache.h) without
// a device: where the file lives, what the reader accepts, and how the
// per-user directory is kept bounded. The runtime tests cover the same file
// through a real load (runtime_test.cpp, "pipeline cache").
#include "runtime/pipeline_cache.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utime.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace oaaxvk::runtime {
namespace {

class PipelineCacheFile : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/oaaxvk-pipeline-cache-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    key_.bundle_hash = 0x0123456789abcdefull;
    for (unsigned i = 0; i < VK_UUID_SIZE; ++i) key_.cache_uuid[i] = static_cast<uint8_t>(i);
    key_.vendor_id = 0x10de;
    key_.device_id = 0x2330;
    key_.driver_version = 0x01020304;
  }
  void TearDown() override {
    const std::string cmd = "rm -rf '" + dir_ + "'";
    if (system(cmd.c_str()) != 0) fprintf(stderr, "could not remove %s\n", dir_.c_str());
  }
  static std::string Read(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  }
  static void WriteBytes(const std::string& path, size_t n, time_t mtime) {
    std::ofstream(path, std::ios::binary) << std::string(n, 'x');
    utimbuf t{mtime, mtime};
    ASSERT_EQ(utime(path.c_str(), &t), 0);
  }
  std::string dir_;
  PipelineCacheKey key_;
};

TEST_F(PipelineCacheFile, PathFollowsTheSettingAndTheEnvironment) {
  std::string auto_dir, why;
  const std::string name = "0123456789abcdef-10de:2330-01020304-000102030405060708090a0b0c0d0e0f.vkpc";
  EXPECT_EQ(PipelineCachePath("", "/c/d/", key_, &auto_dir, &why), "/c/d/" + name);
  EXPECT_EQ(auto_dir, "/c/d");
  EXPECT_EQ(PipelineCachePath("auto", "/c", key_, &auto_dir, &why), "/c/" + name);
  EXPECT_EQ(PipelineCachePath("/x/y.bin", "/c", key_, &auto_dir, &why), "/x/y.bin");
  EXPECT_EQ(auto_dir, "") << "an explicit file's directory is not created";
  for (const char* off : {"off", "0"}) {
    EXPECT_EQ(PipelineCachePath(off, "/c", key_, &auto_dir, &why), "");
    EXPECT_EQ(why, std::string("pipeline_cache=") + off);
  }
  const char* xdg = getenv("XDG_CACHE_HOME");
  const char* home = getenv("HOME");
  const std::string saved_xdg = xdg ? xdg : "", saved_home = home ? home : "";
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  setenv("HOME", "/home/u", 1);
  EXPECT_EQ(PipelineCachePath("", "", key_, &auto_dir, &why), "/xdg/oaax-vulkan/" + name);
  setenv("XDG_CACHE_HOME", "relative", 1);  // not absolute: ignored, as the XDG spec says
  EXPECT_EQ(PipelineCachePath("", "", key_, &auto_dir, &why), "/home/u/.cache/oaax-vulkan/" + name);
  unsetenv("XDG_CACHE_HOME");
  unsetenv("HOME");
  EXPECT_EQ(PipelineCachePath("", "", key_, &auto_dir, &why), "");
  EXPECT_NE(why.find("neither XDG_CACHE_HOME"), std::string::npos) << why;
  if (xdg) setenv("XDG_CACHE_HOME", saved_xdg.c_str(), 1);
  if (home) setenv("HOME", saved_home.c_str(), 1);
}

TEST_F(PipelineCacheFile, WrittenDataIsReadBackOnlyForItsKey) {
  const std::string sub = dir_ + "/a/b", path = sub + "/c.vkpc";
  const std::vector<uint8_t> data = {1, 2, 3, 4, 5, 6, 7};
  ASSERT_TRUE(WritePipelineCache(path, sub, key_, data));  // creates a/b
  EXPECT_EQ(ReadPipelineCache(path, key_), data);
  EXPECT_EQ(Read(path).size(), 64 + data.size());
  struct stat st;
  ASSERT_EQ(stat(sub.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u) << "the per-user directory is private";
  PipelineCacheKey other = key_;
  other.bundle_hash ^= 1;
  EXPECT_TRUE(ReadPipelineCache(path, other).empty());
  other = key_;
  other.cache_uuid[15] ^= 1;
  EXPECT_TRUE(ReadPipelineCache(path, other).empty());
  other = key_;
  other.driver_version += 1;
  EXPECT_TRUE(ReadPipelineCache(path, other).empty());
  EXPECT_TRUE(ReadPipelineCache(dir_ + "/missing.vkpc", key_).empty());
  // Every byte of the data is covered by the checksum.
  const std::string good = Read(path);
  for (size_t i = 64; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] = static_cast<char>(bad[i] ^ 0x01);
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bad;
    EXPECT_TRUE(ReadPipelineCache(path, key_).empty()) << "byte " << i;
  }
  EXPECT_FALSE(WritePipelineCache(dir_ + "/no/such/dir/c.vkpc", "", key_, data));
}

TEST_F(PipelineCacheFile, PruneDeletesTheLeastRecentlyUsedFilesAndStaleTemporaries) {
  const time_t now = time(nullptr);
  WriteBytes(dir_ + "/old.vkpc", 100, now - 300);
  WriteBytes(dir_ + "/mid.vkpc", 100, now - 200);
  WriteBytes(dir_ + "/new.vkpc", 100, now - 100);
  WriteBytes(dir_ + "/kept.vkpc", 100, now - 400);  // oldest, but the one just written
  WriteBytes(dir_ + "/other.txt", 1000, now - 500);  // not a cache file: never touched
  WriteBytes(dir_ + "/x.vkpc.12.ab.tmp", 10, now - 7200);  // left by a dead process
  WriteBytes(dir_ + "/y.vkpc.13.cd.tmp", 10, now);         // another process is saving
  PrunePipelineCacheDir(dir_, dir_ + "/kept.vkpc", 250);
  EXPECT_NE(access((dir_ + "/kept.vkpc").c_str(), F_OK), -1);
  EXPECT_EQ(access((dir_ + "/old.vkpc").c_str(), F_OK), -1);
  EXPECT_EQ(access((dir_ + "/mid.vkpc").c_str(), F_OK), -1);
  EXPECT_NE(access((dir_ + "/new.vkpc").c_str(), F_OK), -1);
  EXPECT_NE(access((dir_ + "/other.txt").c_str(), F_OK), -1);
  EXPECT_EQ(access((dir_ + "/x.vkpc.12.ab.tmp").c_str(), F_OK), -1);
  EXPECT_NE(access((dir_ + "/y.vkpc.13.cd.tmp").c_str(), F_OK), -1);
  // Reading a file makes it recently used.
  const std::string a = dir_ + "/a.vkpc", b = dir_ + "/b.vkpc";
  ASSERT_TRUE(WritePipelineCache(a, "", key_, {1}));
  ASSERT_TRUE(WritePipelineCache(b, "", key_, {2}));
  utimbuf t{now - 1000, now - 1000};
  ASSERT_EQ(utime(b.c_str(), &t), 0);
  utimbuf t2{now - 500, now - 500};
  ASSERT_EQ(utime(a.c_str(), &t2), 0);
  EXPECT_EQ(ReadPipelineCache(b, key_), std::vector<uint8_t>{2});  // b is now the newest
  PrunePipelineCacheDir(dir_, "", 3 * 65);  // new, kept, and one of a / b: 100 + 100 + 65 > 195
  EXPECT_NE(access(b.c_str(), F_OK), -1);
}

}  // namespace
}  // namespace oaaxvk::runtime
