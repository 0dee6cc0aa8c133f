#pragma once
// Recurrent layers: RNN, GRU, LSTM. X is (seq, batch, input) or, with layout 1 (opset 14),
// (batch, seq, input); W is (directions, gates * hidden, input). Outputs: Y (seq, directions, batch,
// hidden), Y_h and, for LSTM, Y_c (directions, batch, hidden), batch first with layout 1.
#include <string>
#include <string_view>

#include "xexp/core/checked_int.hpp"
#include "xexp/infer/rule_table.hpp"

namespace xexp::infer {

inline void infer_recurrent(InferContext& c, int64_t gates) {
  const ElemType type = c.type(0);
  const std::string_view direction = c.attr_string("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    c.fail("unknown direction " + std::string(direction));
  const Dim directions(direction == "bidirectional" ? 2 : 1);
  const bool batch_first = c.attr_int("layout", 0) != 0;
  // hidden_size, else the last axis of R (directions, gates * hidden, hidden).
  const int64_t hidden_size = c.attr_int("hidden_size", -1);
  Dim hidden = hidden_size > 0 ? Dim(hidden_size) : c.shape(2) && c.shape(2)->size() == 3 ? (*c.shape(2))[2] : Dim();
  Dim seq, batch;
  if (c.shape(0)) {
    const Shape& x = *c.shape(0);
    if (x.size() != 3) c.fail("the input has rank " + std::to_string(x.size()) + ", expected 3", c.input_name(0));
    seq = x[batch_first ? 1 : 0];
    batch = x[batch_first ? 0 : 1];
  }
  for (std::size_t i : {std::size_t{1}, std::size_t{2}}) {
    if (!c.shape(i)) continue;
    const Shape& w = *c.shape(i);
    const std::string what = i == 1 ? "W" : "R";
    if (w.size() != 3) c.fail(what + " has rank " + std::to_string(w.size()) + ", expected 3", c.input_name(i));
    const std::optional<int64_t> gate_rows = hidden.is_static() ? checked_mul(gates, hidden.value()) : std::nullopt;
    const Dim rows = gate_rows ? Dim(*gate_rows) : Dim();  // unknown past int64 too (a hostile hidden_size)
    const Dim columns = i == 2 ? hidden : c.shape(0) ? (*c.shape(0))[2] : Dim();
    const Shape expected{directions, rows, columns};
    for (std::size_t k = 0; k < 3; ++k) {
      const Dim got = c.constraints().canonical(w[k]), want = c.constraints().canonical(expected[k]);
      if (got.is_static() && want.is_static() && got != want)
        c.fail(what + " has shape " + shape_str(w) + ", expected " + shape_str(expected), c.input_name(i));
      c.unify(w[k], expected[k]);
    }
  }
  c.set_output(0, type, batch_first ? Shape{batch, seq, directions, hidden} : Shape{seq, directions, batch, hidden});
  const Shape state = batch_first ? Shape{batch, directions, hidden} : Shape{directions, batch, hidden};
  c.set_output(1, type, state);
  if (gates == 4) c.set_output(2, type, state);
}

inline void add_rnn_rules(RuleTable& t) {
  t.add({"RNN"}, [](InferContext& c) { infer_recurrent(c, 1); });
  t.add({"GRU"}, [](InferContext& c) { infer_recurrent(c, 3); });
  t.add({"LSTM"}, [](InferContext& c) { infer_recurrent(c, 4); });
}

}  // namespace xexp::infer
