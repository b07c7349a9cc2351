// The newer operator definitions that the toolchain lowers as the one before
// them (import/opset_forms.cpp) must, in the linked ONNX library, differ from
// it only by admitting more element types: same attributes (name, type,
// required, default), same inputs and outputs (name, optional / variadic),
// the same type parameters, each allowing at least the types it allowed, and
// the same description (where a new attribute value would be told).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "onnx/defs/schema.h"
#include "toolchain/import/opset_forms.h"

namespace {

std::string Attributes(const onnx::OpSchema& s) {
  std::string out;
  for (const auto& [name, a] : s.attributes())
    out += name + ":" + std::to_string(a.type) + ":" + (a.required ? "req" : "opt") + ":" +
           a.default_value.SerializeAsString() + ";";
  return out;
}

std::string Formals(const std::vector<onnx::OpSchema::FormalParameter>& v) {
  std::string out;
  for (const auto& f : v)
    out += f.GetName() + ":" + std::to_string(static_cast<int>(f.GetOption())) + ":" + f.GetTypeStr() + ";";
  return out;
}

TEST(OpsetForms, TypeOnlyNewerVersionsOnlyAdmitMoreTypes) {
  const auto forms = oaaxvk::toolchain::TypeOnlyNewerVersions();
  ASSERT_FALSE(forms.empty());
  for (const auto& [op, since] : forms) {
    SCOPED_TRACE(op + "-" + std::to_string(since));
    const onnx::OpSchema* s = onnx::OpSchemaRegistry::Schema(op, since, "");
    ASSERT_NE(s, nullptr);
    ASSERT_EQ(s->SinceVersion(), since) << "no " << op << " definition starts at opset " << since;
    const onnx::OpSchema* before = onnx::OpSchemaRegistry::Schema(op, since - 1, "");
    ASSERT_NE(before, nullptr);
    // A new value of an existing attribute (Resize-19's half_pixel_symmetric,
    // Pad-19's wrap) changes no signature, only the description.
    EXPECT_EQ(s->doc() ? std::string(s->doc()) : "", before->doc() ? std::string(before->doc()) : "");
    EXPECT_EQ(Attributes(*s), Attributes(*before));
    EXPECT_EQ(Formals(s->inputs()), Formals(before->inputs()));
    EXPECT_EQ(Formals(s->outputs()), Formals(before->outputs()));
    const auto& nc = s->typeConstraintMap();
    const auto& bc = before->typeConstraintMap();
    ASSERT_EQ(nc.size(), bc.size());
    for (const auto& [param, allowed] : bc) {
      auto it = nc.find(param);
      ASSERT_NE(it, nc.end()) << "type parameter " << param;
      // The sets hold interned type strings (onnx::DataType is a pointer).
      std::set<std::string> now;
      for (onnx::DataType t : it->second.first) now.insert(*t);
      for (onnx::DataType t : allowed.first) EXPECT_TRUE(now.count(*t)) << param << " no longer allows " << *t;
    }
  }
}

}  // namespace
