// Transformer and sequence ops: attention (opset 23 and ONNX Runtime's
// MultiHeadAttention) as one fused flash-attention-style kernel, Einsum's
// matmul-shaped equations as GEMMs, newer normalisations, ONNX Runtime's
// fused Gelu/LayerNorm forms, and recurrent layers as their GEMMs
// (docs/model.md "Attention", "Transformer ops").
#include <map>

#include <fmt/format.h>

#include "op_families.h"
#include "shape_helpers.h"
#include "tilewave/op_registry.h"

namespace tilewave {

namespace {

// ---- normalisations ----

// GroupNormalization: each (sample, group) is one row of C/groups x spatial.
std::optional<Layer> lower_group_norm(const LowerContext& ctx) {
  const auto& x = ctx.input(0);
  const int64_t groups = attr_int(ctx.node, "num_groups", 0);
  if (x.dims.size() < 2 || groups <= 0 || x.dims[1] % groups)
    throw Unmodelled(fmt::format("num_groups {} does not divide the channels", groups));
  auto l = lower_rowwise_from(ctx, 1);
  auto& m = std::get<MemoryProblem>(l->problem);
  // A batch of 0 has no rows (issue 32: numel / 0 raised SIGFPE); saturated,
  // a batch times 2^31 groups of an empty tensor cannot wrap.
  m.outer = saturating_mul(x.dims[0], groups);
  m.inner = m.outer > 0 ? x.numel() / m.outer : 0;
  return l;
}

// ---- attention ----

// Opset-23 Attention: Q, K, V as [B, heads, S, d] or [B, S, heads x d].
struct AttentionDims {
  int64_t batch, q_heads, kv_heads, q_len, kv_len, head_dim, v_head_dim;
  bool three_d;
};

AttentionDims attention_dims(const ShapeContext* sctx, const std::vector<int64_t>& q, const std::vector<int64_t>& k,
                             const std::vector<int64_t>& v, const Node& node) {
  AttentionDims a{};
  auto fail = [&](const std::string& why) {
    if (sctx) sctx->fail(why);
    throw Unmodelled(why);
  };
  if (q.size() == 4 && k.size() == 4 && v.size() == 4) {
    a = {q[0], q[1], k[1], q[2], k[2], q[3], v[3], false};
  } else if (q.size() == 3 && k.size() == 3 && v.size() == 3) {
    const int64_t qh = attr_int(node, "q_num_heads", 0), kvh = attr_int(node, "kv_num_heads", 0);
    if (qh <= 0 || kvh <= 0) fail("3-D Attention needs q_num_heads and kv_num_heads");
    if (q[2] % qh || v[2] % kvh) fail("hidden sizes are not divisible by the head counts");
    a = {q[0], qh, kvh, q[1], k[1], q[2] / qh, v[2] / kvh, true};
  } else {
    fail(fmt::format("Q, K, V of ranks {}, {}, {}", q.size(), k.size(), v.size()));
  }
  if (a.kv_heads <= 0 || a.q_heads % a.kv_heads) fail("query heads are not a multiple of key/value heads");
  return a;
}

// Attention is compute: every operand dimension must be at least 1, as for
// Conv, Gemm and MatMul (shape::require_nonempty). A head, hidden or
// sequence size of 0 once reached the cost model's division by the value
// head size (SIGFPE, issue 32).
void require_nonempty_qkv(const ShapeContext& ctx, const std::vector<int64_t>& q, const std::vector<int64_t>& k,
                          const std::vector<int64_t>& v) {
  shape::require_nonempty(ctx, q, "query");
  shape::require_nonempty(ctx, k, "key");
  shape::require_nonempty(ctx, v, "value");
}

void shape_attention(ShapeContext& ctx) {
  require_nonempty_qkv(ctx, ctx.dims(0), ctx.dims(1), ctx.dims(2));
  const auto a = attention_dims(&ctx, ctx.dims(0), ctx.dims(1), ctx.dims(2), ctx.node);
  if (a.three_d) ctx.set_output(0, {a.batch, a.q_len, a.q_heads * a.v_head_dim}, ctx.elem_type(0));
  else ctx.set_output(0, {a.batch, a.q_heads, a.q_len, a.v_head_dim}, ctx.elem_type(0));
  // present_key / present_value: the cache after this step.
  if (ctx.has_input(4) && ctx.has_output(1)) {
    const auto& past = ctx.dims(4);
    if (past.size() == 4)
      ctx.set_output(1, {a.batch, a.kv_heads, past[2] < 0 ? -1 : past[2] + a.kv_len, a.head_dim}, ctx.elem_type(0));
  }
  if (ctx.has_input(5) && ctx.has_output(2)) {
    const auto& past = ctx.dims(5);
    if (past.size() == 4)
      ctx.set_output(2, {a.batch, a.kv_heads, past[2] < 0 ? -1 : past[2] + a.kv_len, a.v_head_dim}, ctx.elem_type(0));
  }
}

Layer attention_layer(const LowerContext& ctx, int64_t batch_heads, int64_t q_len, int64_t kv_len, int64_t d,
                      int64_t dv, bool masked) {
  // The shape functions refuse zero-sized operands; a form they leave
  // unknown is checked here, before the cost model divides by dv.
  if (batch_heads <= 0 || q_len <= 0 || kv_len <= 0 || d <= 0 || dv <= 0)
    throw Unmodelled(fmt::format("attention of {} heads, {} queries, {} keys, head sizes {} and {}: a zero-sized "
                                 "dimension", batch_heads, q_len, kv_len, d, dv));
  AttentionProblem p;
  p.batch_heads = batch_heads;
  p.q_len = q_len;
  p.kv_len = kv_len;
  p.head_dim = d;
  p.v_head_dim = dv;
  p.masked = masked;
  Layer l;
  l.problem = p;
  l.dtype = ctx.dtype;
  return l;
}

std::optional<Layer> lower_attention(const LowerContext& ctx) {
  const auto a = attention_dims(nullptr, ctx.input(0).dims, ctx.input(1).dims, ctx.input(2).dims, ctx.node);
  int64_t kv_len = a.kv_len;
  if (ctx.has_input(4)) kv_len += ctx.input(4).dims[2];  // the past cache is attended too
  return attention_layer(ctx, a.batch * a.q_heads, a.q_len, kv_len, a.head_dim, a.v_head_dim, ctx.has_input(3));
}

// com.microsoft.MultiHeadAttention with separate 3-D query, key and value.
void shape_mha(ShapeContext& ctx) {
  const auto& q = ctx.dims(0);
  if (q.size() != 3 || !ctx.has_input(1) || ctx.rank(1) != 3 || !ctx.has_input(2) || ctx.rank(2) != 3)
    throw ShapeUnknown("only MultiHeadAttention with separate 3-D query, key and value is read");
  require_nonempty_qkv(ctx, q, ctx.dims(1), ctx.dims(2));
  ctx.set_output(0, {q[0], q[1], ctx.dims(2)[2]}, ctx.elem_type(0));
}

std::optional<Layer> lower_mha(const LowerContext& ctx) {
  const auto& q = ctx.input(0).dims;
  const auto& k = ctx.input(1).dims;
  const auto& v = ctx.input(2).dims;
  const int64_t heads = attr_int(ctx.node, "num_heads", 0);
  // A hidden size below the head count (0 among them) leaves heads of size 0.
  if (heads <= 0 || q[2] < heads || v[2] < heads || q[2] % heads || v[2] % heads)
    throw Unmodelled("num_heads does not divide the hidden sizes");
  // Inputs 4 and 5: a key padding mask and an attention bias.
  return attention_layer(ctx, q[0] * heads, q[1], k[1], q[2] / heads, v[2] / heads,
                         ctx.has_input(4) || ctx.has_input(5));
}

// com.microsoft.Attention: [B, S, D_in] with packed QKV weights [D_in, Dq+Dk+Dv].
void shape_ort_attention(ShapeContext& ctx) {
  const auto& x = ctx.dims(0);
  const auto& w = ctx.dims(1);
  if (x.size() != 3 || w.size() != 2) ctx.fail("input must be 3-D and weights 2-D");
  auto sizes = attr_ints(ctx.node, "qkv_hidden_sizes");
  const int64_t dv = sizes.size() == 3 ? sizes[2] : (w[1] < 0 ? -1 : w[1] / 3);
  ctx.set_output(0, {x[0], x[1], dv}, ctx.elem_type(0));
}

// ---- Einsum ----

struct Equation {
  std::vector<std::string> inputs;
  std::string output;
};

Equation parse_equation(const ShapeContext* sctx, const std::string& eq, size_t operands) {
  auto fail = [&](const std::string& why) {
    if (sctx) sctx->fail(why);
    throw Unmodelled(why);
  };
  std::string s;
  for (char c : eq)
    if (c != ' ') s += c;
  if (s.find("...") != std::string::npos) fail("Einsum with an ellipsis is not read");
  Equation e;
  const auto arrow = s.find("->");
  const std::string lhs = s.substr(0, arrow);
  size_t start = 0;
  while (true) {
    const auto comma = lhs.find(',', start);
    e.inputs.push_back(lhs.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (e.inputs.size() != operands) fail(fmt::format("equation '{}' has {} operands, the node {}", eq, e.inputs.size(), operands));
  if (arrow != std::string::npos) {
    e.output = s.substr(arrow + 2);
  } else {  // implicit output: letters seen once, in alphabetical order
    std::map<char, int> count;
    for (const auto& in : e.inputs)
      for (char c : in) ++count[c];
    for (auto [c, n] : count)
      if (n == 1) e.output += c;
  }
  return e;
}

std::map<char, int64_t> letter_sizes(const ShapeContext* sctx, const Equation& e,
                                     const std::vector<std::vector<int64_t>>& dims) {
  std::map<char, int64_t> size;
  for (size_t i = 0; i < e.inputs.size(); ++i) {
    if (e.inputs[i].size() != dims[i].size()) {
      const std::string why = fmt::format("operand {} has rank {}, the equation {}", i, dims[i].size(), e.inputs[i].size());
      if (sctx) sctx->fail(why);
      throw Unmodelled(why);
    }
    for (size_t k = 0; k < dims[i].size(); ++k) {
      auto [it, fresh] = size.emplace(e.inputs[i][k], dims[i][k]);
      if (!fresh && it->second == 1) it->second = dims[i][k];
    }
  }
  return size;
}

void shape_einsum(ShapeContext& ctx) {
  std::vector<std::vector<int64_t>> dims;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    dims.push_back(ctx.dims(i));
    // Compute, as MatMul: no zero-sized operand (issue 32: 0/0 tile efficiency).
    shape::require_nonempty(ctx, dims.back(), fmt::format("operand {}", i).c_str());
  }
  const Equation e = parse_equation(&ctx, attr_string(ctx.node, "equation", ""), dims.size());
  const auto size = letter_sizes(&ctx, e, dims);
  std::vector<int64_t> out;
  for (char c : e.output) {
    auto it = size.find(c);
    if (it == size.end()) ctx.fail(fmt::format("output letter '{}' is in no operand", c));
    out.push_back(it->second);
  }
  ctx.set_output(0, out, ctx.elem_type(0));
}

// Two operands: a batched GEMM over batch letters (in both and the output),
// M (A and output), N (B and output) and K (both, summed). One operand: a
// copy (transpose) or a reduction.
std::optional<Layer> lower_einsum(const LowerContext& ctx) {
  std::vector<std::vector<int64_t>> dims;
  for (size_t i = 0; i < ctx.node.inputs.size(); ++i) dims.push_back(ctx.input(i).dims);
  const Equation e = parse_equation(nullptr, attr_string(ctx.node, "equation", ""), dims.size());
  const auto size = letter_sizes(nullptr, e, dims);
  if (dims.size() == 1) return make_copy(ctx, ctx.input(0).numel(), ctx.output(0).numel());
  if (dims.size() != 2) throw Unmodelled("Einsum over more than two operands");
  GemmProblem g;
  g.M = g.N = g.K = g.batch = 1;
  // Saturating: the sizes of summed letters multiply past int64 (four of
  // 2^24 + 74 each), and the wrapped product printed a negative K (issue 32);
  // a saturated one fails the 2^60 check of every kernel, an error naming the node.
  for (auto [c, n] : size) {
    const bool in_a = e.inputs[0].find(c) != std::string::npos, in_b = e.inputs[1].find(c) != std::string::npos;
    const bool in_out = e.output.find(c) != std::string::npos;
    int64_t* dim = &g.K;  // a letter summed inside one operand: work on the way in
    if (in_a && in_b && in_out) dim = &g.batch;
    else if (in_a && in_out) dim = &g.M;
    else if (in_b && in_out) dim = &g.N;
    *dim = saturating_mul(*dim, n);
  }
  Layer l;
  l.problem = g;
  l.dtype = ctx.dtype;
  return l;
}

// ---- recurrent layers ----

// LSTM (4 gates), GRU (3), RNN (1): X [seq, batch, in] (layout 1: batch first).
int64_t gates_of(const std::string& op) { return op == "LSTM" ? 4 : op == "GRU" ? 3 : 1; }

void shape_recurrent(ShapeContext& ctx) {
  const auto& x = ctx.dims(0);
  if (x.size() != 3) ctx.fail(fmt::format("input has rank {}; 3 expected", x.size()));
  // Its GEMMs are compute: no zero-sized input, weight or recurrence (issue 32: 0/0 tile efficiency).
  shape::require_nonempty(ctx, x, "X");
  shape::require_nonempty(ctx, ctx.dims(1), "W");
  shape::require_nonempty(ctx, ctx.dims(2), "R");
  const int64_t hidden = attr_int(ctx.node, "hidden_size", ctx.rank(1) == 3 ? ctx.dims(1)[1] / gates_of(ctx.node.op_type) : -1);
  if (hidden == 0) ctx.fail(fmt::format("W has {} rows, fewer than its {} gates: a hidden size of 0", ctx.dims(1)[1],
                                        gates_of(ctx.node.op_type)));
  const int64_t dirs = attr_string(ctx.node, "direction", "forward") == "bidirectional" ? 2 : 1;
  const bool batch_first = attr_int(ctx.node, "layout", 0) != 0;
  const int64_t seq = batch_first ? x[1] : x[0], batch = batch_first ? x[0] : x[1];
  ctx.set_output(0, batch_first ? std::vector<int64_t>{batch, seq, dirs, hidden} : std::vector<int64_t>{seq, dirs, batch, hidden},
                 ctx.elem_type(0));
  for (size_t o : {1, 2})
    if (ctx.has_output(o))
      ctx.set_output(o, batch_first ? std::vector<int64_t>{batch, dirs, hidden} : std::vector<int64_t>{dirs, batch, hidden},
                     ctx.elem_type(0));
}

// As its GEMMs: every step multiplies [batch, in + hidden] by the gate
// weights, for every direction (the sequential dependence is not modelled).
std::optional<Layer> lower_recurrent(const LowerContext& ctx) {
  const auto& x = ctx.input(0).dims;
  const auto& w = ctx.input(1).dims;  // [dirs, gates x hidden, in]
  const int64_t gates_hidden = w[1], hidden = gates_hidden / gates_of(ctx.node.op_type);
  if (x[0] <= 0 || x[1] <= 0 || x[2] <= 0 || w[0] <= 0 || hidden <= 0)
    throw Unmodelled("a zero-sized input, weight or hidden size");
  GemmProblem g;
  g.M = x[0] * x[1];
  g.N = gates_hidden;
  g.K = x[2] + hidden;
  g.batch = w[0];
  Layer l;
  l.problem = g;
  l.dtype = ctx.dtype;
  return l;
}

}  // namespace

void register_transformer_ops(OpRegistry& r) {
  auto add = [&](const char* domain, const char* op, FusionRole role, ShapeFn shape, LowerFn lower,
                 int since) -> OpEntry {
    OpRule rule{domain, op, role, std::move(shape), std::move(lower), TILEWAVE_HERE};
    rule.since_opset = since;
    return r.add(std::move(rule));
  };
  constexpr int64_t kMaxHeads = int64_t(1) << 20;
  add("", "Attention", FusionRole::gemm, shape_attention, lower_attention, 23)
      .inputs(3, 6)
      .rank(0, 3, 4)
      .rank(1, 3, 4)
      .rank(2, 3, 4)
      .rank(4, 4)
      .rank(5, 4)
      .attr("q_num_heads", 1, kMaxHeads)
      .attr("kv_num_heads", 1, kMaxHeads);
  add("com.microsoft", "MultiHeadAttention", FusionRole::gemm, shape_mha, lower_mha, 1)
      .inputs(1, 10)
      .rank(0, 3, 5)
      .rank(1, 3, 5)
      .rank(2, 3, 4)
      .attr("num_heads", 1, kMaxHeads);
  add("com.microsoft", "Attention", FusionRole::gemm, shape_ort_attention,
      [](const LowerContext&) -> std::optional<Layer> {
        throw Unmodelled("com.microsoft.Attention packs the QKV projection and attention into one node; "
                         "tilewave models them only as separate nodes");
      },
      1)
      .inputs(2, 10)
      .rank(0, 3)
      .rank(1, 2)
      .attr("num_heads", 1, kMaxHeads);
  add("", "Einsum", FusionRole::gemm, shape_einsum, lower_einsum, 12).inputs(1, -1);
  add("", "GroupNormalization", FusionRole::opaque, [](ShapeContext& c) { c.same_as_input(0); }, lower_group_norm, 18)
      .inputs(3, 3)
      .rank(0, 2, 8)
      .attr("num_groups", 1, int64_t(1) << 31);
  add("", "RMSNormalization", FusionRole::opaque, shape_norm, lower_norm, 23).inputs(1, 2);
  add("com.microsoft", "SkipLayerNormalization", FusionRole::opaque, shape_norm, lower_layer_norm, 1).inputs(2, 5);
  add("com.microsoft", "SkipSimplifiedLayerNormalization", FusionRole::opaque, shape_norm, lower_norm, 1).inputs(2, 5);
  add("com.microsoft", "SimplifiedLayerNormalization", FusionRole::opaque, shape_norm, lower_norm, 1).inputs(1, 2);
  add("", "SimplifiedLayerNormalization", FusionRole::opaque, shape_norm, lower_norm, 1).inputs(1, 2);
  struct Elementwise {
    const char* op;
    int min_inputs, max_inputs;
    int special_functions;
  };
  for (const auto& e : {Elementwise{"BiasGelu", 2, 2, 1}, Elementwise{"FastGelu", 1, 2, 1}, Elementwise{"Gelu", 1, 1, 1},
                        Elementwise{"QuickGelu", 1, 1, 1}, Elementwise{"BiasAdd", 3, 3, 0}})
    add("com.microsoft", e.op, FusionRole::elementwise, [](ShapeContext& c) { c.same_as_input(0); }, lower_elementwise, 1)
        .inputs(e.min_inputs, e.max_inputs)
        .special_functions(e.special_functions);
  for (const char* op : {"LSTM", "GRU", "RNN"})
    add("", op, FusionRole::gemm, shape_recurrent, lower_recurrent, 7)
        .inputs(3, 8)
        .rank(0, 3)
        .rank(1, 3)
        .rank(2, 3)
        .attr("hidden_size", 1, int64_t(1) << 31);
}

}  // namespace tilewave
