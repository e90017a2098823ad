// Factories of the op runners, one per op kind (wired up in op_table.cpp).
#pragma once

#include <memory>

namespace tw {

struct Context;
struct Layer;
class OpRunner;

std::unique_ptr<OpRunner> make_conv(Context& ctx, const Layer& layer);
std::unique_ptr<OpRunner> make_conv_transpose(Context& ctx, const Layer& layer);
std::unique_ptr<OpRunner> make_gemm(Context& ctx, const Layer& layer);
std::unique_ptr<OpRunner> make_pool(Context& ctx, const Layer& layer);
std::unique_ptr<OpRunner> make_eltwise(Context& ctx, const Layer& layer);
std::unique_ptr<OpRunner> make_reduce(Context& ctx, const Layer& layer);
std::unique_ptr<OpRunner> make_softmax(Context& ctx, const Layer& layer);
std::unique_ptr<OpRunner> make_copy(Context& ctx, const Layer& layer);

}  // namespace tw
