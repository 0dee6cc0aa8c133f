// Schema facts: the schema in force at an opset, attribute defaults, attributes that became inputs.
#include <gtest/gtest.h>

#include "xexp/onnx/schema.hpp"

TEST(OnnxSchema, FindsTheVersionInForce) {
  const ::onnx::OpSchema* relu = xexp::find_schema("Relu", "", 18);
  ASSERT_NE(relu, nullptr);
  EXPECT_EQ(relu->since_version(), 14);
  EXPECT_EQ(xexp::find_schema("Relu", "ai.onnx", 18), relu);
  EXPECT_EQ(xexp::find_schema("Relu", "", 13)->since_version(), 13);
  EXPECT_EQ(xexp::find_schema("Frobnicate", "my.domain", 1), nullptr);
}

TEST(OnnxSchema, AttributeDefaults) {
  auto keepdims = xexp::attribute_default("ReduceMean", "", 18, "keepdims");
  ASSERT_TRUE(keepdims.has_value());
  EXPECT_EQ(keepdims->type, xexp::ir::AttrType::Int);
  EXPECT_EQ(keepdims->i, 1);
  EXPECT_EQ(keepdims->name.view(), "keepdims");

  auto epsilon = xexp::attribute_default("LayerNormalization", "", 17, "epsilon");
  ASSERT_TRUE(epsilon.has_value());
  EXPECT_FLOAT_EQ(epsilon->f, 1e-5f);
  auto mode = xexp::attribute_default("Pad", "", 18, "mode");
  ASSERT_TRUE(mode.has_value());
  EXPECT_EQ(mode->s, "constant");

  EXPECT_FALSE(xexp::attribute_default("Transpose", "", 13, "perm").has_value());  // no default
  EXPECT_FALSE(xexp::attribute_default("Relu", "", 18, "nonexistent").has_value());
  EXPECT_FALSE(xexp::attribute_default("Frobnicate", "my.domain", 1, "x").has_value());
  // Asked twice: the same answer (from the cache).
  EXPECT_EQ(xexp::attribute_default("ReduceMean", "", 18, "keepdims")->i, 1);
}

TEST(OnnxSchema, AttributesThatBecameInputs) {
  EXPECT_EQ(xexp::axes_became_input_at("ReduceMean"), 18);
  EXPECT_EQ(xexp::axes_became_input_at("ReduceSum"), 13);
  EXPECT_EQ(xexp::axes_became_input_at("Squeeze"), 13);
  EXPECT_EQ(xexp::axes_became_input_at("Unsqueeze"), 13);
  EXPECT_EQ(xexp::axes_became_input_at("Relu"), 0);
  EXPECT_TRUE(xexp::attribute_is_input("Split", "split", 13));
  EXPECT_FALSE(xexp::attribute_is_input("Split", "split", 12));
  EXPECT_TRUE(xexp::attribute_is_input("Slice", "starts", 10));
  EXPECT_FALSE(xexp::attribute_is_input("Slice", "starts", 9));
  ASSERT_NE(xexp::attribute_became_input("Pad", "pads"), nullptr);
  EXPECT_EQ(xexp::attribute_became_input("Pad", "pads")->input_index, 1);
  // The table agrees with the registry: the attribute exists before `since` and, where the registry
  // knows that version (ONNX 1.12 stops at opset 17), no longer at `since`.
  for (const auto& e : xexp::attributes_that_became_inputs()) {
    const ::onnx::OpSchema* after = xexp::find_schema(e.op, "", e.since);
    ASSERT_NE(after, nullptr) << e.op;
    if (after->since_version() == e.since) {
      EXPECT_EQ(after->attributes().count(std::string(e.attribute)), 0u) << e.op << " " << e.attribute;
    }
    const ::onnx::OpSchema* before = xexp::find_schema(e.op, "", e.since - 1);
    if (before) {
      EXPECT_EQ(before->attributes().count(std::string(e.attribute)), 1u) << e.op << " " << e.attribute;
    }
  }
}
