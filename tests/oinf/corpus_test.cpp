// Every file in tests/data/malformed is rejected with its expected message
// (tests/data/malformed/expected.tsv: file name, TAB, message fragment).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "oaax_vulkan/oinf.h"

namespace oaaxvk::oinf {
namespace {

struct Case {
  std::string file;
  std::string fragment;
};

std::vector<Case> LoadCases() {
  std::vector<Case> cases;
  std::ifstream in(std::string(OAAXVK_TEST_DATA_DIR) + "/malformed/expected.tsv");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t tab = line.find('\t');
    if (tab == std::string::npos) continue;
    cases.push_back({line.substr(0, tab), line.substr(tab + 1)});
  }
  return cases;
}

TEST(OinfCorpus, EveryMalformedFileIsRejectedWithItsMessage) {
  const auto cases = LoadCases();
  ASSERT_GE(cases.size(), 20u) << "corpus missing: run tests/data/malformed/generate.py";
  for (const Case& c : cases) {
    const std::string path = std::string(OAAXVK_TEST_DATA_DIR) + "/malformed/" + c.file;
    auto f = File::Open(path);
    ASSERT_FALSE(f.ok()) << c.file << " was accepted";
    EXPECT_NE(f.status().message().find(c.fragment), std::string::npos)
        << c.file << ": expected '" << c.fragment << "' in: " << f.status().message();
  }
}

TEST(OinfCorpus, ValidBaseFileIsAccepted) {
  auto f = File::Open(std::string(OAAXVK_TEST_DATA_DIR) + "/malformed/valid_base.oinf");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
}

}  // namespace
}  // namespace oaaxvk::oinf
