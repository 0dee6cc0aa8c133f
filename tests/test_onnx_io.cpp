// The onnx layer beyond the corpus round trip: fields ONNX 1.12 does not know, external data, bad
// files and bad graphs, tensors, value_info writing, moving weights out of a model.
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <random>
#include <string>

#include "support/onnx_protos.hpp"
#include "support/temp_dir.hpp"
#include "xexp/core/float16.hpp"
#include "xexp/onnx.hpp"

using google::protobuf::util::MessageDifferencer;
using xexp::testing::make_node;
using xexp::testing::read_file;
using xexp::testing::tensor_info;
using xexp::testing::TempDir;
using xexp::testing::write_file;

// SaveOptions, spelled out (designated initializers that skip members warn with -Wextra).
static xexp::SaveOptions external(std::size_t threshold, std::string file = {},
                                  xexp::ExternalData mode = xexp::ExternalData::Always) {
  xexp::SaveOptions o;
  o.external_data = mode;
  o.external_data_threshold = threshold;
  o.external_data_file = std::move(file);
  return o;
}

namespace {

// X -> Relu -> Y, at opset 18.
::onnx::ModelProto small_model() {
  ::onnx::ModelProto m;
  m.set_ir_version(8);
  auto* opset = m.add_opset_import();
  opset->set_domain("");
  opset->set_version(18);
  auto* g = m.mutable_graph();
  g->set_name("small");
  *g->add_input() = tensor_info("X", 1, {2, 3});
  *g->add_node() = make_node("Relu", {"X"}, {"Y"}, "relu");
  *g->add_output() = tensor_info("Y", 1, {2, 3});
  return m;
}

std::string load_error(const std::string& path) {
  try {
    xexp::load_model(path);
  } catch (const xexp::Error& e) {
    return e.what();
  }
  return "no error";
}

std::string proto_error(::onnx::ModelProto proto) {
  try {
    xexp::model_from_proto(std::move(proto));
  } catch (const xexp::Error& e) {
    return e.what();
  }
  return "no error";
}

bool round_trips(const ::onnx::ModelProto& p0) {
  ::onnx::ModelProto copy = p0;
  ::onnx::ModelProto p1;
  EXPECT_TRUE(p1.ParseFromString(xexp::model_to_proto(xexp::model_from_proto(std::move(copy))).SerializeAsString()));
  MessageDifferencer differencer;
  std::string report;
  differencer.ReportDifferencesToString(&report);
  const bool same = differencer.Compare(p0, p1);
  EXPECT_EQ(report, "");
  return same;
}

xexp::Tensor random_floats(std::vector<int64_t> dims, unsigned seed) {
  xexp::Tensor t(xexp::ElemType::Float, std::move(dims));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (float& v : t.mutable_data<float>()) v = dist(rng);
  return t;
}

// Y = X @ W + B, W 256x256 (256 KB), B 256 floats (1 KB), built with the IR directly.
xexp::ir::Model linear_model() {
  xexp::ir::Model m;
  m.opsets.push_back({"", 18, {}, 0});
  auto& g = *m.graph;
  auto x = g.add_input("X", xexp::ElemType::Float, xexp::make_shape({4, 256}));
  auto w = g.add_initializer("W", random_floats({256, 256}, 1));
  auto b = g.add_initializer("B", random_floats({256}, 2));
  auto xw = g.add_value("XW");
  auto y = g.add_value("Y");
  g.add_node(xexp::Symbol("MatMul"), {x, w}, {xw}, {}, "matmul");
  g.add_node(xexp::Symbol("Add"), {xw, b}, {y}, {}, "add");
  g.value(xw).elem = xexp::ElemType::Float;
  g.value(xw).shape = xexp::make_shape({4, 256});
  g.value(y).elem = xexp::ElemType::Float;
  g.add_output(y);
  return m;
}

const xexp::Tensor& initializer(const xexp::ir::Model& m, const std::string& name) {
  return *m.graph->value(m.graph->at(name)).initializer;
}

}  // namespace

// ---- fields ONNX 1.12 does not know, proto2 presence ----------------------------------------------

TEST(OnnxUnknownFields, SurviveLoadAndSave) {
  ::onnx::ModelProto m = small_model();
  auto* g = m.mutable_graph();
  ::onnx::StringStringEntryProto entry;  // NodeProto.metadata_props (field 9) of ONNX >= 1.16
  entry.set_key("origin");
  entry.set_value("torch.nn.Linear");
  g->mutable_node(0)->mutable_unknown_fields()->AddLengthDelimited(9, entry.SerializeAsString());
  g->mutable_node(0)->mutable_unknown_fields()->AddVarint(1000, 7);
  g->mutable_input(0)->mutable_unknown_fields()->AddLengthDelimited(4, entry.SerializeAsString());
  g->mutable_unknown_fields()->AddLengthDelimited(16, entry.SerializeAsString());
  m.mutable_opset_import(0)->mutable_unknown_fields()->AddVarint(3, 1);
  m.mutable_unknown_fields()->AddFixed64(77, 123456789);
  EXPECT_TRUE(round_trips(m));

  xexp::ir::Model loaded = xexp::model_from_proto(::onnx::ModelProto(m));
  EXPECT_FALSE(loaded.graph->node(loaded.graph->first_node()).unknown.empty());
  EXPECT_FALSE(loaded.graph->value(loaded.graph->inputs()[0]).unknown.empty());
}

TEST(OnnxUnknownFields, FunctionAttributeDefaultsAndOverload) {
  ::onnx::ModelProto m = small_model();
  auto* f = m.add_functions();
  f->set_name("Scale");
  f->set_domain("custom");
  f->add_input("x");
  f->add_output("y");
  f->add_attribute("alpha");
  auto* opset = f->add_opset_import();
  opset->set_domain("");
  opset->set_version(18);
  *f->add_node() = make_node("Constant", {}, {"a"}, "");
  auto* value = f->mutable_node(0)->add_attribute();
  value->set_name("value_float");
  value->set_type(::onnx::AttributeProto::FLOAT);
  value->set_ref_attr_name("alpha");
  *f->add_node() = make_node("Mul", {"x", "a"}, {"y"}, "");
  ::onnx::AttributeProto alpha;  // FunctionProto.attribute_proto (field 11) of ONNX >= 1.13
  alpha.set_name("alpha");
  alpha.set_type(::onnx::AttributeProto::FLOAT);
  alpha.set_f(2.5f);
  f->mutable_unknown_fields()->AddLengthDelimited(11, alpha.SerializeAsString());
  f->mutable_unknown_fields()->AddLengthDelimited(13, "v2");  // overload
  EXPECT_TRUE(round_trips(m));

  xexp::ir::Model loaded = xexp::model_from_proto(::onnx::ModelProto(m));
  ASSERT_EQ(loaded.functions.size(), 1u);
  const xexp::ir::Function& fn = loaded.functions[0];
  ASSERT_EQ(fn.attribute_defaults.size(), 1u);
  EXPECT_EQ(fn.attribute_defaults[0].name.view(), "alpha");
  EXPECT_EQ(fn.attribute_defaults[0].f, 2.5f);
  EXPECT_FALSE(fn.unknown.empty());  // the overload
  const auto& constant = fn.body->node(fn.body->first_node());
  EXPECT_EQ(constant.attributes[0].ref_attr_name, "alpha");
}

TEST(OnnxPresence, EmptyStringsSetExplicitlyStaySet) {
  ::onnx::ModelProto m = small_model();
  m.set_producer_name("");
  m.set_doc_string("");
  m.mutable_graph()->mutable_node(0)->set_domain("");
  m.mutable_graph()->mutable_node(0)->set_doc_string("");
  m.mutable_graph()->mutable_input(0)->set_doc_string("");
  m.mutable_graph()->set_doc_string("");
  *m.mutable_graph()->add_node() = make_node("Identity", {"Y"}, {"Z"}, "");
  m.mutable_graph()->mutable_node(1)->clear_name();
  m.mutable_graph()->mutable_output(0)->set_name("Z");
  EXPECT_TRUE(round_trips(m));
}

TEST(OnnxPresence, UnusualTypesAndAttributesAreKeptRaw) {
  ::onnx::ModelProto m = small_model();
  auto* g = m.mutable_graph();
  // dim_value -1 and a denotation cannot be told apart from "unknown" by ir::Dim: kept serialized.
  g->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_value(-1);
  g->mutable_output(0)->mutable_type()->set_denotation("TENSOR");
  auto* seq = g->add_value_info();
  seq->set_name("S");  // a name nothing defines: kept on a value of its own
  seq->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(1);
  auto* odd = g->mutable_node(0)->add_attribute();  // an INT attribute that also carries a float
  odd->set_name("odd");
  odd->set_type(::onnx::AttributeProto::INT);
  odd->set_i(3);
  odd->set_f(1.5f);
  EXPECT_TRUE(round_trips(m));

  xexp::ir::Model loaded = xexp::model_from_proto(::onnx::ModelProto(m));
  const auto& x = loaded.graph->value(loaded.graph->inputs()[0]);
  EXPECT_EQ(x.elem, xexp::ElemType::Float);  // still readable
  ASSERT_TRUE(x.shape.has_value());
  EXPECT_TRUE((*x.shape)[0].is_unknown());
  EXPECT_EQ((*x.shape)[1], xexp::Dim(3));
  EXPECT_EQ(loaded.graph->node(loaded.graph->first_node()).attribute(xexp::Symbol("odd"))->i, 3);
}

// ---- external data ------------------------------------------------------------------------------

TEST(OnnxExternalData, SaveReloadAndLeaveTheInputUntouched) {
  TempDir dir;
  xexp::ir::Model built = linear_model();
  xexp::save_model(built, dir / "m.onnx", external(4096));
  ASSERT_TRUE(std::filesystem::exists(dir / "m.onnx.data"));
  EXPECT_LT(std::filesystem::file_size(dir / "m.onnx"), 8000u);  // W is outside, B (1 KB) inside
  EXPECT_GE(std::filesystem::file_size(dir / "m.onnx.data"), 256u * 256u * 4u);

  xexp::ir::Model loaded = xexp::load_model(dir / "m.onnx");
  EXPECT_TRUE(initializer(loaded, "W").same_content(initializer(built, "W")));
  EXPECT_TRUE(initializer(loaded, "B").same_content(initializer(built, "B")));
  auto* w_storage = dynamic_cast<const xexp::ProtoTensorStorage*>(initializer(loaded, "W").storage().get());
  ASSERT_NE(w_storage, nullptr);
  EXPECT_TRUE(w_storage->is_external());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(initializer(loaded, "W").bytes().data()) % 64, 0u);

  const std::string model_bytes = read_file(dir / "m.onnx"), data_bytes = read_file(dir / "m.onnx.data");
  xexp::save_model(loaded, dir / "copy.onnx", external(4096, "weights.bin"));
  xexp::save_model(loaded, dir / "inline.onnx", external(0, {}, xexp::ExternalData::Never));
  EXPECT_EQ(read_file(dir / "m.onnx"), model_bytes);
  EXPECT_EQ(read_file(dir / "m.onnx.data"), data_bytes);
  EXPECT_TRUE(std::filesystem::exists(dir / "weights.bin"));
  EXPECT_GT(std::filesystem::file_size(dir / "inline.onnx"), 256u * 256u * 4u);
  for (const char* name : {"copy.onnx", "inline.onnx"}) {
    xexp::ir::Model again = xexp::load_model(dir / name);
    EXPECT_TRUE(initializer(again, "W").same_content(initializer(built, "W"))) << name;
    EXPECT_TRUE(initializer(again, "B").same_content(initializer(built, "B"))) << name;
  }
  // Saving over the file the model was loaded from: the weights it maps stay valid (rename, not rewrite).
  xexp::save_model(loaded, dir / "m.onnx", external(4096));
  EXPECT_TRUE(initializer(xexp::load_model(dir / "m.onnx"), "W").same_content(initializer(built, "W")));
  // Nothing half-written is left behind.
  for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
    EXPECT_EQ(entry.path().string().find(".tmp"), std::string::npos) << entry.path();
}

TEST(OnnxExternalData, TinyThresholdRoundTripsBitIdentical) {
  TempDir dir;
  const xexp::ir::Model built = linear_model();
  xexp::save_model(built, dir / "m.onnx", external(1));
  ::onnx::ModelProto written;
  ASSERT_TRUE(written.ParseFromString(read_file(dir / "m.onnx")));
  ASSERT_EQ(written.graph().initializer_size(), 2);
  for (const auto& t : written.graph().initializer()) {
    EXPECT_EQ(t.data_location(), ::onnx::TensorProto::EXTERNAL) << t.name();
    EXPECT_FALSE(t.has_raw_data()) << t.name();
  }
  // Each tensor's bytes at a 64-aligned offset, zeros between: W (262144 bytes) at 0, B at 262144.
  const std::string data = read_file(dir / "m.onnx.data");
  ASSERT_EQ(data.size(), 262144u + 1024u);
  EXPECT_EQ(0, std::memcmp(data.data(), initializer(built, "W").bytes().data(), 262144));
  EXPECT_EQ(0, std::memcmp(data.data() + 262144, initializer(built, "B").bytes().data(), 1024));

  // Read back (mapped) and written again (copied file to file): the same bytes, the same side file.
  const xexp::ir::Model loaded = xexp::load_model(dir / "m.onnx");
  for (const char* name : {"W", "B"}) {
    EXPECT_TRUE(initializer(loaded, name).same_content(initializer(built, name))) << name;
    EXPECT_TRUE(dynamic_cast<const xexp::ProtoTensorStorage&>(*initializer(loaded, name).storage()).is_external());
  }
  xexp::save_model(loaded, dir / "again.onnx", external(1));
  EXPECT_EQ(read_file(dir / "again.onnx.data"), data);
  // A threshold above B keeps it inline; one above every tensor writes no side file at all.
  xexp::save_model(loaded, dir / "w_only.onnx", external(2048));
  EXPECT_EQ(read_file(dir / "w_only.onnx.data"), data.substr(0, 262144));
  xexp::save_model(loaded, dir / "none.onnx", external(std::size_t{1} << 20));
  EXPECT_FALSE(std::filesystem::exists(dir / "none.onnx.data"));
  for (const char* name : {"w_only.onnx", "none.onnx"}) {
    const xexp::ir::Model again = xexp::load_model(dir / name);
    EXPECT_TRUE(initializer(again, "W").same_content(initializer(built, "W"))) << name;
    EXPECT_TRUE(initializer(again, "B").same_content(initializer(built, "B"))) << name;
  }
}

TEST(OnnxExternalData, AutomaticWhenTheInputHadExternalData) {
  TempDir dir;
  xexp::save_model(linear_model(), dir / "inline.onnx");  // default options, no external data read
  EXPECT_FALSE(std::filesystem::exists(dir / "inline.onnx.data"));
  xexp::save_model(xexp::load_model(dir / "inline.onnx"), dir / "still_inline.onnx");
  EXPECT_FALSE(std::filesystem::exists(dir / "still_inline.onnx.data"));
  EXPECT_EQ(read_file(dir / "still_inline.onnx"), read_file(dir / "inline.onnx"));

  xexp::save_model(linear_model(), dir / "ext.onnx", external(1024));
  xexp::save_model(xexp::load_model(dir / "ext.onnx"), dir / "out.onnx");  // default options again
  EXPECT_EQ(read_file(dir / "out.onnx.data"), read_file(dir / "ext.onnx.data"));
  ::onnx::ModelProto out;
  ASSERT_TRUE(out.ParseFromString(read_file(dir / "out.onnx")));
  for (const auto& t : out.graph().initializer()) {  // W and B (1024 bytes, the default threshold)
    EXPECT_EQ(t.data_location(), ::onnx::TensorProto::EXTERNAL) << t.name();
    EXPECT_EQ(t.external_data(0).value(), "out.onnx.data") << t.name();
  }
}

TEST(OnnxExternalData, MissingFileKeepsTheReference) {
  TempDir dir;
  xexp::save_model(linear_model(), dir / "m.onnx", external(4096));
  std::filesystem::remove(dir / "m.onnx.data");
  xexp::ir::Model loaded = xexp::load_model(dir / "m.onnx");
  try {
    (void)initializer(loaded, "W").bytes();
    ADD_FAILURE() << "reading missing external data must throw";
  } catch (const xexp::Error& e) {
    EXPECT_NE(std::string(e.what()).find("m.onnx.data"), std::string::npos) << e.what();
    EXPECT_EQ(e.value(), "W");
  }
  ::onnx::ModelProto p = xexp::model_to_proto(loaded);
  const auto& w = p.graph().initializer(0);
  EXPECT_EQ(w.name(), "W");
  EXPECT_EQ(w.data_location(), ::onnx::TensorProto::EXTERNAL);
  EXPECT_FALSE(w.has_raw_data());
  // Saved elsewhere, the reference stays as it was; a new side file of that very name would become it.
  TempDir other;
  xexp::save_model(loaded, other / "other.onnx");
  EXPECT_EQ(xexp::load_model(other / "other.onnx").graph->initializers().size(), 2u);
  try {
    xexp::save_model(loaded, other / "m.onnx");
    ADD_FAILURE() << "a new m.onnx.data would have been read as W's missing data";
  } catch (const xexp::Error& e) {
    EXPECT_NE(std::string(e.what()).find("'m.onnx.data', which was not found"), std::string::npos) << e.what();
    EXPECT_EQ(e.value(), "W");
  }
  EXPECT_FALSE(std::filesystem::exists(other / "m.onnx"));
  EXPECT_FALSE(std::filesystem::exists(other / "m.onnx.data"));
}

TEST(OnnxExternalData, LocationOutsideTheModelDirectoryIsRefused) {
  TempDir dir;
  ::onnx::ModelProto m = small_model();
  auto* w = m.mutable_graph()->add_initializer();
  w->set_name("W");
  w->set_data_type(1);
  w->add_dims(4);
  w->set_data_location(::onnx::TensorProto::EXTERNAL);
  auto* location = w->add_external_data();
  location->set_key("location");
  location->set_value("../../etc/passwd");
  write_file(dir / "evil.onnx", m.SerializeAsString());
  EXPECT_NE(load_error(dir / "evil.onnx").find("leaves the model's directory"), std::string::npos);
}

TEST(OnnxExternalData, NeverPastTwoGigabytesFailsBeforeCopyingTheWeights) {
  // 2.4 GB of weights in a sparse file: mapped, never read, as long as saving refuses before copying them
  // into the ModelProto (which would take the time and memory of 2.4 GB).
  TempDir dir;
  ::onnx::ModelProto m = small_model();
  auto* w = m.mutable_graph()->add_initializer();
  w->set_name("W");
  w->set_data_type(1);
  w->add_dims(600'000'000);
  w->set_data_location(::onnx::TensorProto::EXTERNAL);
  auto* location = w->add_external_data();
  location->set_key("location");
  location->set_value("big.data");
  write_file(dir / "big.onnx", m.SerializeAsString());
  write_file(dir / "big.data", "");
  std::filesystem::resize_file(dir / "big.data", 2'400'000'000u);
  const xexp::ir::Model loaded = xexp::load_model(dir / "big.onnx");
  try {
    xexp::save_model(loaded, dir / "inline.onnx", external(1024, {}, xexp::ExternalData::Never));
    ADD_FAILURE() << "saving 2.4 GB of tensors inside the model file must fail";
  } catch (const xexp::Error& e) {
    EXPECT_NE(std::string(e.what()).find("without external data: its tensors hold 2400000000 bytes"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "inline.onnx"));
}

// ---- bad files ----------------------------------------------------------------------------------

TEST(OnnxBadInput, FilesThatAreNotModels) {
  TempDir dir;
  write_file(dir / "empty.onnx", "");
  EXPECT_NE(load_error(dir / "empty.onnx").find("empty file"), std::string::npos);
  EXPECT_NE(load_error(dir / "missing.onnx").find("cannot open"), std::string::npos);

  std::string random(4096, '\0');
  std::mt19937 rng(42);
  for (char& c : random) c = static_cast<char>(rng());
  write_file(dir / "random.onnx", random);
  EXPECT_NE(load_error(dir / "random.onnx").find("not an ONNX model"), std::string::npos) << load_error(dir / "random.onnx");
  write_file(dir / "text.onnx", "this is not a model\n");
  EXPECT_NE(load_error(dir / "text.onnx").find("not an ONNX model"), std::string::npos);
}

TEST(OnnxBadInput, TruncatedFilesGiveErrorsNotCrashes) {
  TempDir dir;
  const std::string bytes = read_file(std::string(XEXP_SHARED_DIR) + "/models/seed_llm.onnx");
  write_file(dir / "half.onnx", bytes.substr(0, bytes.size() / 2));
  EXPECT_NE(load_error(dir / "half.onnx").find("not an ONNX model"), std::string::npos);
  // Every cut either loads (a cut between fields of a complete prefix) or gives an xexp::Error.
  for (std::size_t cut = 1; cut < bytes.size(); cut += bytes.size() / 97 + 1) {
    write_file(dir / "cut.onnx", bytes.substr(0, cut));
    try {
      xexp::load_model(dir / "cut.onnx");
    } catch (const xexp::Error&) {
    }
  }
}

TEST(OnnxBadInput, CorruptedBytesGiveErrorsNotCrashes) {
  TempDir dir;
  const std::string bytes = read_file(std::string(XEXP_SHARED_DIR) + "/models/seed_llm.fold.onnx");
  std::mt19937 rng(3);
  int refused = 0;
  for (int trial = 0; trial < 200; ++trial) {
    std::string corrupt = bytes;
    for (int flips = 0; flips < 4; ++flips) corrupt[rng() % corrupt.size()] ^= static_cast<char>(1 + rng() % 255);
    write_file(dir / "corrupt.onnx", corrupt);
    try {
      xexp::ir::Model m = xexp::load_model(dir / "corrupt.onnx");
      (void)xexp::model_to_proto(m).SerializeAsString();
    } catch (const xexp::Error&) {
      ++refused;
    }
  }
  EXPECT_GT(refused, 0);  // some corruptions are harmless (inside weights), many are not
}

TEST(OnnxBadInput, HugeDimensionsAreRefused) {
  ::onnx::ModelProto m = small_model();
  auto* w = m.mutable_graph()->add_initializer();
  w->set_name("W");
  w->set_data_type(1);
  w->add_dims(int64_t{1} << 40);
  w->add_dims(int64_t{1} << 40);
  EXPECT_NE(proto_error(m).find("too large"), std::string::npos) << proto_error(m);
}

TEST(OnnxBadInput, UndefinedInput) {
  ::onnx::ModelProto m = small_model();
  *m.mutable_graph()->add_node() = make_node("Add", {"Y", "nowhere"}, {"Z"}, "adder");
  const std::string error = proto_error(m);
  EXPECT_NE(error.find("undefined value"), std::string::npos) << error;
  EXPECT_NE(error.find("adder"), std::string::npos) << error;
  EXPECT_NE(error.find("nowhere"), std::string::npos) << error;
}

TEST(OnnxBadInput, Cycle) {
  ::onnx::ModelProto m = small_model();
  *m.mutable_graph()->add_node() = make_node("Add", {"Y", "B"}, {"A"}, "first");
  *m.mutable_graph()->add_node() = make_node("Neg", {"A"}, {"B"}, "second");
  const std::string error = proto_error(m);
  EXPECT_NE(error.find("cycle"), std::string::npos) << error;
  EXPECT_NE(error.find("first"), std::string::npos) << error;
}

TEST(OnnxBadInput, DuplicateOutputAndDuplicateInput) {
  ::onnx::ModelProto m = small_model();
  *m.mutable_graph()->add_node() = make_node("Neg", {"X"}, {"Y"}, "again");
  std::string error = proto_error(m);
  EXPECT_NE(error.find("two nodes write the same value"), std::string::npos) << error;
  EXPECT_NE(error.find("again"), std::string::npos) << error;
  EXPECT_NE(error.find("relu"), std::string::npos) << error;

  ::onnx::ModelProto twice = small_model();
  *twice.mutable_graph()->add_input() = tensor_info("X", 1, {2, 3});
  error = proto_error(twice);
  EXPECT_NE(error.find("duplicate graph input"), std::string::npos) << error;
  EXPECT_NE(error.find("'X'"), std::string::npos) << error;
}

TEST(OnnxBadInput, UndefinedGraphOutputAndBadTensor) {
  ::onnx::ModelProto m = small_model();
  m.mutable_graph()->mutable_output(0)->set_name("ghost");
  EXPECT_NE(proto_error(m).find("graph output is not defined"), std::string::npos);

  ::onnx::ModelProto short_tensor = small_model();
  auto* w = short_tensor.mutable_graph()->add_initializer();
  w->set_name("W");
  w->set_data_type(1);
  w->add_dims(4);
  w->set_raw_data(std::string(12, '\0'));  // 3 floats for 4
  const std::string error = proto_error(short_tensor);
  EXPECT_NE(error.find("needs 16 bytes but has 12"), std::string::npos) << error;
  EXPECT_NE(error.find("'W'"), std::string::npos) << error;
}

TEST(OnnxLoad, UnknownOpInUnknownDomainLoads) {
  ::onnx::ModelProto m = small_model();
  auto* opset = m.add_opset_import();
  opset->set_domain("my.domain");
  opset->set_version(1);
  *m.mutable_graph()->add_node() = make_node("Frobnicate", {"Y"}, {"Z"}, "frob", "my.domain");
  m.mutable_graph()->mutable_output(0)->set_name("Z");
  xexp::ir::Model loaded = xexp::model_from_proto(::onnx::ModelProto(m));
  EXPECT_EQ(loaded.graph->node(loaded.graph->last_node()).domain.view(), "my.domain");
  EXPECT_NO_THROW(xexp::validate(loaded));
  EXPECT_TRUE(round_trips(m));
}

TEST(OnnxLoad, NodesOutOfOrderAreSorted) {
  ::onnx::ModelProto m = small_model();
  auto* g = m.mutable_graph();
  *g->add_node() = make_node("Neg", {"A"}, {"Z"}, "uses_a");
  *g->add_node() = make_node("Neg", {"Y"}, {"A"}, "makes_a");
  g->mutable_output(0)->set_name("Z");
  xexp::ir::Model loaded = xexp::model_from_proto(std::move(m));
  std::vector<std::string> order;
  for (auto id : loaded.graph->nodes()) order.push_back(loaded.graph->node(id).name);
  EXPECT_EQ(order, (std::vector<std::string>{"relu", "makes_a", "uses_a"}));
  EXPECT_NO_THROW(xexp::validate(loaded));
}

// ---- validate on the IR -------------------------------------------------------------------------

TEST(OnnxValidate, FindsWhatRewritesCanBreak) {
  xexp::ir::Model m = linear_model();
  EXPECT_NO_THROW(xexp::validate(m));
  auto& g = *m.graph;
  xexp::ir::NodeId add = g.last_node(), matmul = g.first_node();
  g.move_before(add, matmul);  // Add now reads XW before MatMul makes it
  try {
    xexp::validate(m);
    ADD_FAILURE() << "out of order nodes must be refused";
  } catch (const xexp::Error& e) {
    EXPECT_EQ(e.node(), "add");
    EXPECT_EQ(e.value(), "XW");
  }
  g.move_before(matmul, add);
  EXPECT_NO_THROW(xexp::validate(m));
  auto dangling = g.add_value("dangling");
  g.set_node_input(add, 1, dangling);
  try {
    xexp::validate(m);
    ADD_FAILURE() << "a dangling input must be refused";
  } catch (const xexp::Error& e) {
    EXPECT_NE(std::string(e.what()).find("undefined value"), std::string::npos);
    EXPECT_EQ(e.value(), "dangling");
  }
}

// ---- tensors ------------------------------------------------------------------------------------

TEST(OnnxTensor, TypedFieldsDecodeLazilyAndWriteBackAsRead) {
  ::onnx::TensorProto p;
  p.set_name("t");
  p.set_data_type(::onnx::TensorProto::FLOAT16);
  p.add_dims(3);
  for (int v : {0x3c00, 0x4000, 0xc000}) p.add_int32_data(v);  // 1, 2, -2 as float16 bits
  ::onnx::TensorProto original = p;
  xexp::Tensor t = xexp::tensor_from_proto(std::move(p));
  ASSERT_EQ(t.type(), xexp::ElemType::Float16);
  auto half = t.data<uint16_t>();
  ASSERT_EQ(half.size(), 3u);
  EXPECT_EQ(xexp::half_to_float(half[0]), 1.0f);
  EXPECT_EQ(xexp::half_to_float(half[2]), -2.0f);
  EXPECT_TRUE(MessageDifferencer::Equals(xexp::tensor_to_proto(t, "t"), original));

  // A reshaped tensor shares the bytes but not the proto's dims: written fresh, as raw_data.
  ::onnx::TensorProto reshaped = xexp::tensor_to_proto(t.reshaped({1, 3}), "r");
  EXPECT_EQ(reshaped.dims_size(), 2);
  EXPECT_EQ(reshaped.raw_data().size(), 6u);
  EXPECT_EQ(reshaped.name(), "r");
}

TEST(OnnxTensor, StringsAndInt64) {
  ::onnx::TensorProto s;
  s.set_data_type(::onnx::TensorProto::STRING);
  s.add_dims(2);
  s.add_string_data("a");
  s.add_string_data("bc");
  xexp::Tensor strings = xexp::tensor_from_proto(std::move(s));
  EXPECT_EQ(strings.string_data(), (std::vector<std::string>{"a", "bc"}));

  xexp::Tensor ints = xexp::Tensor::from<int64_t>({2}, {7, -8});
  xexp::Tensor back = xexp::tensor_from_proto(xexp::tensor_to_proto(ints, "i"));
  EXPECT_TRUE(back.same_content(ints));
}

TEST(OnnxTensor, LoadAndSaveTensorFiles) {
  const std::string input = std::string(XEXP_TESTDATA_DIR) + "/node/test_add/test_data_set_0/input_0.pb";
  xexp::NamedTensor loaded = xexp::load_tensor(input);
  EXPECT_EQ(loaded.name, "x");
  EXPECT_EQ(loaded.tensor.dims(), (std::vector<int64_t>{3, 4, 5}));
  TempDir dir;
  xexp::save_tensor(loaded.tensor, loaded.name, dir / "copy.pb");
  EXPECT_EQ(read_file(dir / "copy.pb"), read_file(input));
  write_file(dir / "bad.pb", "\xff\xff\xff");
  EXPECT_THROW(xexp::load_tensor(dir / "bad.pb"), xexp::Error);
}

// ---- writing -------------------------------------------------------------------------------------

TEST(OnnxSave, InferredValueInfoOnlyWhenAsked) {
  xexp::ir::Model m = linear_model();
  EXPECT_EQ(xexp::model_to_proto(m).graph().value_info_size(), 0);
  xexp::SaveOptions options;
  options.write_inferred_value_info = true;
  ::onnx::ModelProto with = xexp::model_to_proto(m, options);
  ASSERT_EQ(with.graph().value_info_size(), 1);  // XW; Y is a graph output
  EXPECT_EQ(with.graph().value_info(0).name(), "XW");
  EXPECT_EQ(with.graph().value_info(0).type().tensor_type().shape().dim(1).dim_value(), 256);
}

TEST(OnnxSave, GivingTheModelAwayMovesWeightsInsteadOfCopying) {
  TempDir dir;
  xexp::save_model(linear_model(), dir / "m.onnx");
  xexp::ir::Model kept = xexp::load_model(dir / "m.onnx");
  const std::byte* w_bytes = initializer(kept, "W").bytes().data();
  ::onnx::ModelProto copied = xexp::model_to_proto(kept);
  EXPECT_NE(reinterpret_cast<const std::byte*>(copied.graph().initializer(0).raw_data().data()), w_bytes);
  ::onnx::ModelProto moved = xexp::model_to_proto(std::move(kept));
  EXPECT_EQ(reinterpret_cast<const std::byte*>(moved.graph().initializer(0).raw_data().data()), w_bytes);
  EXPECT_TRUE(MessageDifferencer::Equals(copied, moved));
}

TEST(OnnxLoad, LargeFilesAreReadNotMapped) {
  TempDir dir;
  xexp::ir::Model m = linear_model();
  auto& g = *m.graph;
  auto big = g.add_initializer("Big", random_floats({17, 1024, 1024}, 3));  // 68 MB: over the mapping limit
  g.add_output(big);
  xexp::save_model(m, dir / "big.onnx");
  ASSERT_GT(std::filesystem::file_size(dir / "big.onnx"), std::size_t{64} << 20);
  xexp::ir::Model loaded = xexp::load_model(dir / "big.onnx");
  EXPECT_TRUE(initializer(loaded, "Big").same_content(initializer(m, "Big")));
  EXPECT_TRUE(initializer(loaded, "W").same_content(initializer(m, "W")));
}

TEST(OnnxSave, SavingIsDeterministic) {
  TempDir dir;
  xexp::ir::Model m = linear_model();
  xexp::save_model(m, dir / "a.onnx");
  xexp::save_model(m, dir / "b.onnx");
  EXPECT_EQ(read_file(dir / "a.onnx"), read_file(dir / "b.onnx"));
  // With external data, from memory and from a mapped side file: the location aside, the same bytes.
  xexp::save_model(m, dir / "c.onnx", external(16, "w.bin"));
  xexp::save_model(m, dir / "d.onnx", external(16, "w.bin"));
  EXPECT_EQ(read_file(dir / "c.onnx"), read_file(dir / "d.onnx"));
  const std::string data = read_file(dir / "w.bin");
  const xexp::ir::Model loaded = xexp::load_model(dir / "c.onnx");
  xexp::save_model(loaded, dir / "e.onnx", external(16, "w2.bin"));
  xexp::save_model(loaded, dir / "f.onnx", external(16, "w2.bin"));
  EXPECT_EQ(read_file(dir / "e.onnx"), read_file(dir / "f.onnx"));
  EXPECT_EQ(read_file(dir / "w2.bin"), data);
}
