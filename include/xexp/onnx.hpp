#pragma once
// The onnx layer: protobuf <-> IR with exact round trips, external data, load-time validation and
// schema facts (attribute defaults, attributes that became inputs).
#include "xexp/onnx/attribute_proto.hpp"
#include "xexp/onnx/external_data.hpp"
#include "xexp/onnx/load.hpp"
#include "xexp/onnx/mapped_file.hpp"
#include "xexp/onnx/opset_upgrade.hpp"
#include "xexp/onnx/proto_fields.hpp"
#include "xexp/onnx/proto_storage.hpp"
#include "xexp/onnx/save.hpp"
#include "xexp/onnx/schema.hpp"
#include "xexp/onnx/temporary_file.hpp"
#include "xexp/onnx/tensor_proto.hpp"
#include "xexp/onnx/validate.hpp"
