//===- OneDNN.cpp - oneDNN layer normalization baseline ---------*- C++ -*-===//
//
// oneDNN's layer_normalization_forward (inference, scale and shift), the
// vendor-optimized CPU LayerNorm. oneDNN 2.6 has no RMSNorm flag.
//
//===----------------------------------------------------------------------===//

#include "Baselines.h"

#include <dnnl.hpp>

#include <map>
#include <memory>
#include <tuple>
#include <vector>

using namespace norm_bench;

namespace {

/// A ready primitive with its memory objects for one shape and dtype.
struct LayerNormPrimitive {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  dnnl::layer_normalization_forward primitive;
  dnnl::memory::desc dataDesc, scaleDesc;
  std::vector<float> scale, shift;
};

} // namespace

/// Returns the primitive for `p`'s shape and dtype, creating it on first
/// use; null when oneDNN cannot implement it on this CPU (e.g. bf16 without
/// the ISA it needs).
static LayerNormPrimitive *getPrimitive(const Problem &p) {
  using Key = std::tuple<int, int64_t, int64_t>;
  static std::map<Key, std::unique_ptr<LayerNormPrimitive>> cache;
  Key key{int(p.dtype), p.rows, p.cols};
  auto found = cache.find(key);
  if (found != cache.end())
    return found->second.get();
  auto &entry = cache[key];
  try {
    entry = std::make_unique<LayerNormPrimitive>();
    auto dataType = p.dtype == DType::F32 ? dnnl::memory::data_type::f32
                                          : dnnl::memory::data_type::bf16;
    entry->dataDesc = dnnl::memory::desc({p.rows, p.cols}, dataType,
                                         dnnl::memory::format_tag::ab);
    entry->scaleDesc = dnnl::memory::desc(
        {p.cols}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::a);
    auto desc = dnnl::layer_normalization_forward::desc(
        dnnl::prop_kind::forward_inference, entry->dataDesc, p.epsilon,
        dnnl::normalization_flags::use_scale |
            dnnl::normalization_flags::use_shift);
    auto pd = dnnl::layer_normalization_forward::primitive_desc(
        desc, entry->engine);
    entry->primitive = dnnl::layer_normalization_forward(pd);
    // oneDNN takes f32 scale and shift: convert the weights once.
    entry->scale.assign(p.cols, 1.0f);
    entry->shift.assign(p.cols, 0.0f);
    for (int64_t j = 0; j < p.cols; ++j) {
      if (p.dtype == DType::F32) {
        entry->scale[j] = static_cast<const float *>(p.weight)[j];
        entry->shift[j] = static_cast<const float *>(p.bias)[j];
      } else {
        auto widen = [](uint16_t v) {
          uint32_t bits = uint32_t(v) << 16;
          float f;
          __builtin_memcpy(&f, &bits, 4);
          return f;
        };
        entry->scale[j] = widen(static_cast<const uint16_t *>(p.weight)[j]);
        entry->shift[j] = widen(static_cast<const uint16_t *>(p.bias)[j]);
      }
    }
  } catch (const dnnl::error &) {
    entry.reset();
  }
  return entry.get();
}

bool norm_bench::oneDNNSupports(Case kind, const Problem &p) {
  return kind == Case::LayerNorm && getPrimitive(p) != nullptr;
}

bool norm_bench::runOneDNN(Case kind, const Problem &p) {
  LayerNormPrimitive *entry =
      kind == Case::LayerNorm ? getPrimitive(p) : nullptr;
  if (!entry)
    return false;
  dnnl::memory src(entry->dataDesc, entry->engine, const_cast<void *>(p.x));
  dnnl::memory dst(entry->dataDesc, entry->engine, p.y);
  dnnl::memory scale(entry->scaleDesc, entry->engine, entry->scale.data());
  dnnl::memory shift(entry->scaleDesc, entry->engine, entry->shift.data());
  entry->primitive.execute(entry->stream, {{DNNL_ARG_SRC, src},
                                           {DNNL_ARG_DST, dst},
                                           {DNNL_ARG_SCALE, scale},
                                           {DNNL_ARG_SHIFT, shift}});
  entry->stream.wait();
  return true;
}
