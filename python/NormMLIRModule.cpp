//===- NormMLIRModule.cpp - The norm_mlir._norm_mlir extension --*- C++ -*-===//
//
// nanobind bindings over the norm C++ API: parse, verify and transform
// modules given as text, and JIT-compile them and call their functions on
// NumPy arrays. The Python package (norm_mlir/__init__.py) adds dtype
// handling and the ready-made layer_norm/rms_norm/dyt functions on top.
//
// Nothing here may crash the interpreter: every MLIR diagnostic, bad
// argument and JIT failure becomes a Python exception.
//
//===----------------------------------------------------------------------===//

#include "norm/ExecutionEngine/JIT.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace nb = nanobind;
using namespace nb::literals;
using namespace mlir;

namespace {

/// An MLIR diagnostic (parse, verifier or pass error) or a JIT failure;
/// raised in Python as norm_mlir.MLIRError (a ValueError).
struct MLIRError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Accepts `builtin.module(a,b)` as well as `a,b`: a pass manager anchored
/// on the module would otherwise nest the former one level too deep.
std::string normalizePipeline(std::string pipeline) {
  auto isSpace = [](char c) {
    return std::isspace(static_cast<unsigned char>(c));
  };
  while (!pipeline.empty() && isSpace(pipeline.back()))
    pipeline.pop_back();
  size_t start = 0;
  while (start < pipeline.size() && isSpace(pipeline[start]))
    ++start;
  pipeline = pipeline.substr(start);
  llvm::StringRef ref(pipeline);
  if (ref.consume_front("builtin.module(") && ref.consume_back(")"))
    return ref.trim().str();
  return pipeline;
}

/// Parses (and verifies) `source` and runs `pipeline` on it.
OwningOpRef<Operation *> parseOrThrow(MLIRContext &context,
                                      const std::string &source,
                                      const std::string &pipeline) {
  std::string errors;
  OwningOpRef<Operation *> module = norm::parseAndTransform(
      context, source, normalizePipeline(pipeline), errors);
  if (!module)
    throw MLIRError(errors);
  return module;
}

std::string printOp(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  op->print(os);
  return text;
}

//===----------------------------------------------------------------------===//
// Function signatures
//===----------------------------------------------------------------------===//

/// How a function argument or result crosses the JIT boundary.
enum class ValueKind { Tensor, MemRef, Scalar };

/// The element (or scalar) types a NumPy array can carry.
enum class ElementKind {
  F16,
  BF16,
  F32,
  F64,
  I1,
  I8,
  I16,
  I32,
  I64,
  Index,
  F8E4M3FN,
  F8E8M0FNU,
  F4E2M1FN // packed two per byte: an array of N/2 bytes per row
};

/// One argument or result of a function, as declared before lowering.
struct ValueSpec {
  ValueKind kind;
  ElementKind element;
  std::vector<int64_t> shape; // ShapedType::kDynamic for dynamic dims
};

const char *kindName(ValueKind kind) {
  switch (kind) {
  case ValueKind::Tensor:
    return "tensor";
  case ValueKind::MemRef:
    return "memref";
  case ValueKind::Scalar:
    return "scalar";
  }
  return "";
}

const char *elementName(ElementKind element) {
  static const char *names[] = {
      "f16", "bf16", "f32",   "f64",      "i1",        "i8",      "i16",
      "i32", "i64",  "index", "f8E4M3FN", "f8E8M0FNU", "f4E2M1FN"};
  return names[static_cast<int>(element)];
}

/// Size in bytes of one element in memory.
size_t elementBytes(ElementKind element) {
  switch (element) {
  case ElementKind::F16:
  case ElementKind::BF16:
  case ElementKind::I16:
    return 2;
  case ElementKind::F32:
  case ElementKind::I32:
    return 4;
  case ElementKind::I1:
  case ElementKind::I8:
  case ElementKind::F8E4M3FN:
  case ElementKind::F8E8M0FNU:
  case ElementKind::F4E2M1FN:
    return 1;
  default:
    return 8;
  }
}

std::optional<ElementKind> classifyElement(Type type) {
  if (type.isF16())
    return ElementKind::F16;
  if (type.isBF16())
    return ElementKind::BF16;
  if (type.isF32())
    return ElementKind::F32;
  if (type.isF64())
    return ElementKind::F64;
  if (llvm::isa<Float8E4M3FNType>(type))
    return ElementKind::F8E4M3FN;
  if (llvm::isa<Float8E8M0FNUType>(type))
    return ElementKind::F8E8M0FNU;
  if (llvm::isa<Float4E2M1FNType>(type))
    return ElementKind::F4E2M1FN;
  if (type.isIndex())
    return ElementKind::Index;
  if (auto integer = llvm::dyn_cast<IntegerType>(type)) {
    switch (integer.getWidth()) {
    case 1:
      return ElementKind::I1;
    case 8:
      return ElementKind::I8;
    case 16:
      return ElementKind::I16;
    case 32:
      return ElementKind::I32;
    case 64:
      return ElementKind::I64;
    }
  }
  return std::nullopt;
}

/// The shape of the array holding a buffer of `shape` (f4E2M1FN packed two
/// per byte, as norm-pack-fp4 lays it out: the last dim halved), or nullopt
/// when it cannot be packed (rank 0, an odd last dim).
std::optional<std::vector<int64_t>> getArrayShape(ArrayRef<int64_t> shape,
                                                  ElementKind element) {
  std::vector<int64_t> result(shape.begin(), shape.end());
  if (element != ElementKind::F4E2M1FN)
    return result;
  if (result.empty() ||
      (!ShapedType::isDynamic(result.back()) && result.back() % 2 != 0))
    return std::nullopt;
  if (!ShapedType::isDynamic(result.back()))
    result.back() /= 2;
  return result;
}

/// Describes `type`, or returns nullopt for a type the bindings cannot pass
/// (unranked or non-identity memrefs, vectors, 16-bit float scalars, ...).
std::optional<ValueSpec> classifyType(Type type) {
  if (auto shaped = llvm::dyn_cast<ShapedType>(type);
      shaped && llvm::isa<RankedTensorType, MemRefType>(type)) {
    auto element = classifyElement(shaped.getElementType());
    if (!element)
      return std::nullopt;
    auto memref = llvm::dyn_cast<MemRefType>(type);
    if (memref && !memref.getLayout().isIdentity())
      return std::nullopt;
    auto shape = getArrayShape(shaped.getShape(), *element);
    if (!shape)
      return std::nullopt;
    return ValueSpec{memref ? ValueKind::MemRef : ValueKind::Tensor, *element,
                     std::move(*shape)};
  }
  auto element = classifyElement(type);
  if (!element || *element == ElementKind::F16 ||
      *element == ElementKind::BF16 || *element == ElementKind::F8E4M3FN ||
      *element == ElementKind::F8E8M0FNU || *element == ElementKind::F4E2M1FN)
    return std::nullopt;
  return ValueSpec{ValueKind::Scalar, *element, {}};
}

std::string typeToString(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  return text;
}

/// The public signature of one function, or why it cannot be called.
struct FunctionSpec {
  std::vector<ValueSpec> inputs, results;
  std::string unsupported; // non-empty: the reason the call is refused
};

/// Reads the signature of every public function with a body and marks
/// their tensor arguments read-only for bufferization, so that a call never
/// writes into the caller's arrays.
std::map<std::string, FunctionSpec> prepareFunctions(ModuleOp module) {
  std::map<std::string, FunctionSpec> functions;
  MLIRContext *context = module.getContext();
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal() || !func.isPublic())
      continue;
    FunctionSpec spec;
    FunctionType type = func.getFunctionType();
    auto add = [&](Type t, std::vector<ValueSpec> &into, const char *what,
                   unsigned index) {
      if (auto value = classifyType(t)) {
        into.push_back(*value);
      } else if (spec.unsupported.empty()) {
        spec.unsupported =
            std::string(what) + " #" + std::to_string(index) + " has type " +
            typeToString(t) +
            ", which the bindings cannot pass (supported: "
            "ranked tensors and identity-layout memrefs of "
            "f16/bf16/f32/f64/f8E4M3FN/f8E8M0FNU/i1/i8/i16/i32/i64/index "
            "and of f4E2M1FN with an even last dim, and "
            "f32/f64/integer/index scalars)";
      }
    };
    for (auto [i, t] : llvm::enumerate(type.getInputs())) {
      add(t, spec.inputs, "argument", i);
      if (llvm::isa<RankedTensorType>(t) &&
          !func.getArgAttr(
              i, bufferization::BufferizationDialect::kWritableAttrName))
        func.setArgAttr(i,
                        bufferization::BufferizationDialect::kWritableAttrName,
                        BoolAttr::get(context, false));
    }
    for (auto [i, t] : llvm::enumerate(type.getResults()))
      add(t, spec.results, "result", i);
    functions[func.getSymName().str()] = std::move(spec);
  }
  return functions;
}

nb::tuple specToPython(const ValueSpec &spec) {
  nb::list shape;
  for (int64_t dim : spec.shape) {
    if (ShapedType::isDynamic(dim))
      shape.append(nb::none());
    else
      shape.append(dim);
  }
  return nb::make_tuple(kindName(spec.kind), elementName(spec.element),
                        nb::tuple(shape));
}

//===----------------------------------------------------------------------===//
// Calling compiled functions
//===----------------------------------------------------------------------===//

using InputArray = nb::ndarray<nb::ro, nb::device::cpu>;

/// Checks that `array` matches `spec` (element size, rank, static dims).
void checkArray(const InputArray &array, const ValueSpec &spec,
                unsigned index) {
  std::string where = "argument " + std::to_string(index) + ": ";
  if (array.dtype().lanes != 1 ||
      array.dtype().bits != elementBytes(spec.element) * 8)
    throw nb::type_error(
        (where + "expected elements of type " + elementName(spec.element) +
         " (" + std::to_string(elementBytes(spec.element)) + " bytes), got " +
         std::to_string(array.dtype().bits / 8) + " bytes")
            .c_str());
  if (array.ndim() != spec.shape.size())
    throw nb::value_error((where + "expected an array of rank " +
                           std::to_string(spec.shape.size()) + ", got rank " +
                           std::to_string(array.ndim()))
                              .c_str());
  for (size_t d = 0; d < spec.shape.size(); ++d) {
    if (!ShapedType::isDynamic(spec.shape[d]) &&
        int64_t(array.shape(d)) != spec.shape[d])
      throw nb::value_error((where + "dimension " + std::to_string(d) +
                             " must be " + std::to_string(spec.shape[d]) +
                             ", got " + std::to_string(array.shape(d)))
                                .c_str());
  }
}

/// The dlpack dtype of a result array (bf16 travels as uint16 and
/// f8E4M3FN as uint8; Python views them as ml_dtypes.bfloat16 and
/// ml_dtypes.float8_e4m3fn).
nb::dlpack::dtype resultDType(ElementKind element) {
  using Code = nb::dlpack::dtype_code;
  auto make = [](Code code, unsigned bits) {
    return nb::dlpack::dtype{static_cast<uint8_t>(code),
                             static_cast<uint8_t>(bits), 1};
  };
  switch (element) {
  case ElementKind::F16:
    return make(Code::Float, 16);
  case ElementKind::BF16:
    return make(Code::UInt, 16);
  case ElementKind::F32:
    return make(Code::Float, 32);
  case ElementKind::F64:
    return make(Code::Float, 64);
  case ElementKind::I1:
    return make(Code::Bool, 8);
  case ElementKind::I8:
    return make(Code::Int, 8);
  case ElementKind::F8E4M3FN:
  case ElementKind::F8E8M0FNU:
  case ElementKind::F4E2M1FN:
    return make(Code::UInt, 8);
  case ElementKind::I16:
    return make(Code::Int, 16);
  case ElementKind::I32:
    return make(Code::Int, 32);
  default:
    return make(Code::Int, 64);
  }
}

/// Bytes and alignment of a value in the LLVM lowering: a memref is a
/// descriptor {ptr, ptr, i64, [rank x i64], [rank x i64]}.
std::pair<size_t, size_t> loweredLayout(const ValueSpec &spec) {
  if (spec.kind != ValueKind::Scalar)
    return {8 * (3 + 2 * spec.shape.size()), 8};
  size_t bytes = elementBytes(spec.element);
  return {bytes, bytes};
}

size_t alignTo(size_t value, size_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

/// Copies a strided memref result into a new contiguous NumPy array.
nb::object copyMemRef(const int64_t *descriptor, const ValueSpec &spec) {
  size_t rank = spec.shape.size();
  const char *aligned = reinterpret_cast<const char *>(descriptor[1]);
  int64_t offset = descriptor[2];
  const int64_t *sizes = descriptor + 3;
  const int64_t *strides = descriptor + 3 + rank;
  size_t bytes = elementBytes(spec.element);
  size_t count = 1;
  std::vector<size_t> shape(rank);
  for (size_t d = 0; d < rank; ++d) {
    if (sizes[d] < 0)
      throw MLIRError("a result has a negative size");
    shape[d] = size_t(sizes[d]);
    count *= shape[d];
  }
  char *data =
      static_cast<char *>(std::malloc(std::max<size_t>(count, 1) * bytes));
  if (!data)
    throw std::bad_alloc();
  nb::capsule owner(data, [](void *p) noexcept { std::free(p); });
  // Walk the elements in row-major order with a multi-index.
  std::vector<int64_t> index(rank, 0);
  for (size_t linear = 0; linear < count; ++linear) {
    int64_t element = offset;
    for (size_t d = 0; d < rank; ++d)
      element += index[d] * strides[d];
    std::memcpy(data + linear * bytes, aligned + element * int64_t(bytes),
                bytes);
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < sizes[d])
        break;
      index[d] = 0;
    }
  }
  return nb::ndarray<nb::numpy>(data, rank, shape.data(), owner, nullptr,
                                resultDType(spec.element))
      .cast();
}

nb::object readScalar(const char *slot, ElementKind element) {
  switch (element) {
  case ElementKind::F32: {
    float v;
    std::memcpy(&v, slot, 4);
    return nb::float_(v);
  }
  case ElementKind::F64: {
    double v;
    std::memcpy(&v, slot, 8);
    return nb::float_(v);
  }
  case ElementKind::I1:
    return nb::bool_((*slot & 1) != 0);
  case ElementKind::I8:
    return nb::int_(int64_t(*reinterpret_cast<const int8_t *>(slot)));
  case ElementKind::I16: {
    int16_t v;
    std::memcpy(&v, slot, 2);
    return nb::int_(int64_t(v));
  }
  case ElementKind::I32: {
    int32_t v;
    std::memcpy(&v, slot, 4);
    return nb::int_(int64_t(v));
  }
  default: {
    int64_t v;
    std::memcpy(&v, slot, 8);
    return nb::int_(v);
  }
  }
}

void writeScalar(nb::handle value, ElementKind element, uint64_t &slot,
                 unsigned index) {
  char *bytes = reinterpret_cast<char *>(&slot);
  try {
    switch (element) {
    case ElementKind::F32: {
      float v = float(nb::cast<double>(value));
      std::memcpy(bytes, &v, 4);
      return;
    }
    case ElementKind::F64: {
      double v = nb::cast<double>(value);
      std::memcpy(bytes, &v, 8);
      return;
    }
    case ElementKind::I1:
      *bytes = nb::cast<bool>(value) ? 1 : 0;
      return;
    default: {
      int64_t v = nb::cast<int64_t>(value);
      std::memcpy(bytes, &v, 8); // little-endian: narrower reads see v
      return;
    }
    }
  } catch (const nb::cast_error &) {
    throw nb::type_error(("argument " + std::to_string(index) +
                          ": expected a Python scalar of type " +
                          elementName(element))
                             .c_str());
  }
}

/// A module compiled for the host, with the signatures of its functions.
class CompiledModule {
public:
  CompiledModule(const std::string &source, const std::string &pipeline,
                 const std::vector<std::string> &sharedLibs) {
    std::string text;
    {
      // Parse and verify in a context of our own first: reading the
      // signatures needs the tensor-level module.
      std::unique_ptr<MLIRContext> context = norm::createNormContext();
      OwningOpRef<Operation *> op = parseOrThrow(*context, source, "");
      auto module = llvm::dyn_cast<ModuleOp>(op.get());
      if (!module)
        throw MLIRError("the source is not a builtin.module");
      functions = prepareFunctions(module);
      text = printOp(module);
    }
    std::vector<llvm::StringRef> libs(sharedLibs.begin(), sharedLibs.end());
    std::string errors;
    {
      nb::gil_scoped_release release;
      jit = norm::JITModule::compile(text, normalizePipeline(pipeline), errors,
                                     libs);
    }
    if (!jit)
      throw MLIRError(errors);
  }

  const FunctionSpec &lookup(const std::string &name) const {
    auto it = functions.find(name);
    if (it == functions.end())
      throw nb::attribute_error(
          ("the module has no public function '" + name + "'").c_str());
    if (!it->second.unsupported.empty())
      throw nb::type_error(
          ("cannot call '" + name + "': " + it->second.unsupported).c_str());
    return it->second;
  }

  nb::tuple signature(const std::string &name) const {
    const FunctionSpec &spec = lookup(name);
    nb::list inputs, results;
    for (const ValueSpec &v : spec.inputs)
      inputs.append(specToPython(v));
    for (const ValueSpec &v : spec.results)
      results.append(specToPython(v));
    return nb::make_tuple(nb::tuple(inputs), nb::tuple(results));
  }

  std::vector<std::string> functionNames() const {
    std::vector<std::string> names;
    for (const auto &entry : functions)
      names.push_back(entry.first);
    return names;
  }

  /// Calls `name` with `args` (arrays for tensors and memrefs, Python
  /// scalars for scalars) through its packed wrapper, which takes a pointer
  /// to every scalar of the lowered signature (a memref expands into its
  /// descriptor fields) and then a pointer to the result.
  nb::list invoke(const std::string &name, const nb::list &args) {
    const FunctionSpec &spec = lookup(name);
    if (nb::len(args) != spec.inputs.size())
      throw nb::type_error(("'" + name + "' takes " +
                            std::to_string(spec.inputs.size()) +
                            " arguments, got " + std::to_string(nb::len(args)))
                               .c_str());

    // Storage of every argument word; reserved up front so that the
    // pointers into it stay valid.
    size_t words = 0;
    for (const ValueSpec &v : spec.inputs)
      words += v.kind == ValueKind::Scalar ? 1 : 3 + 2 * v.shape.size();
    std::vector<uint64_t> storage;
    storage.reserve(words);
    std::vector<void *> packed;
    std::vector<InputArray> keepAlive;
    std::set<const void *> inputBuffers;

    for (size_t i = 0; i < spec.inputs.size(); ++i) {
      const ValueSpec &v = spec.inputs[i];
      nb::handle arg = args[i];
      if (v.kind == ValueKind::Scalar) {
        storage.push_back(0);
        writeScalar(arg, v.element, storage.back(), i);
        packed.push_back(&storage.back());
        continue;
      }
      InputArray array;
      if (!nb::try_cast(arg, array))
        throw nb::type_error(("argument " + std::to_string(i) +
                              ": expected a NumPy array (" + kindName(v.kind) +
                              " of " + elementName(v.element) + ")")
                                 .c_str());
      checkArray(array, v, i);
      keepAlive.push_back(array);
      const void *data = array.data();
      inputBuffers.insert(data);
      auto push = [&](uint64_t word) {
        storage.push_back(word);
        packed.push_back(&storage.back());
      };
      push(reinterpret_cast<uint64_t>(data)); // allocated
      push(reinterpret_cast<uint64_t>(data)); // aligned
      push(0);                                // offset
      for (size_t d = 0; d < v.shape.size(); ++d)
        push(uint64_t(array.shape(d)));
      for (size_t d = 0; d < v.shape.size(); ++d)
        push(uint64_t(array.stride(d)));
    }

    // The result: one value, or an LLVM struct of all of them.
    std::vector<size_t> offsets;
    size_t resultBytes = 0;
    for (const ValueSpec &v : spec.results) {
      auto [bytes, alignment] = loweredLayout(v);
      resultBytes = alignTo(resultBytes, alignment);
      offsets.push_back(resultBytes);
      resultBytes += bytes;
    }
    std::vector<uint64_t> result((resultBytes + 7) / 8 + 1, 0);
    if (!spec.results.empty())
      packed.push_back(result.data());

    llvm::Error error = llvm::Error::success();
    {
      nb::gil_scoped_release release;
      error = jit->invokePacked(name, packed);
    }
    if (error)
      throw MLIRError("cannot call '" + name +
                      "': " + llvm::toString(std::move(error)));

    // Copy the results out, then free the buffers the callee allocated
    // (returned tensors are owned by the caller after buffer deallocation).
    nb::list outputs;
    std::set<uint64_t> toFree;
    const char *base = reinterpret_cast<const char *>(result.data());
    for (size_t r = 0; r < spec.results.size(); ++r) {
      const ValueSpec &v = spec.results[r];
      const char *slot = base + offsets[r];
      if (v.kind == ValueKind::Scalar) {
        outputs.append(readScalar(slot, v.element));
        continue;
      }
      const int64_t *descriptor = reinterpret_cast<const int64_t *>(slot);
      outputs.append(copyMemRef(descriptor, v));
      uint64_t allocated = uint64_t(descriptor[0]);
      // 0xdeadbeef marks a memref.global; memref results may alias inputs.
      if (v.kind == ValueKind::Tensor && allocated != 0 &&
          allocated != 0xdeadbeef &&
          !inputBuffers.count(reinterpret_cast<const void *>(allocated)))
        toFree.insert(allocated);
    }
    for (uint64_t pointer : toFree)
      std::free(reinterpret_cast<void *>(pointer));
    return outputs;
  }

private:
  std::map<std::string, FunctionSpec> functions;
  std::unique_ptr<norm::JITModule> jit;
};

} // namespace

NB_MODULE(_norm_mlir, m) {
  m.doc() = "norm-mlir: the norm dialect, its passes and a JIT (native part)";

  nb::exception<MLIRError>(m, "MLIRError", PyExc_ValueError);

  m.def(
      "compile",
      [](const std::string &source, const std::string &pipeline) {
        std::string text;
        {
          nb::gil_scoped_release release;
          std::unique_ptr<MLIRContext> context = norm::createNormContext();
          OwningOpRef<Operation *> module =
              parseOrThrow(*context, source, pipeline);
          text = printOp(module.get());
        }
        return text;
      },
      "source"_a, "pipeline"_a = "",
      "Parses and verifies `source`, runs the textual pass `pipeline` on it "
      "and returns the printed module.");

  m.def(
      "verify",
      [](const std::string &source) {
        nb::gil_scoped_release release;
        std::unique_ptr<MLIRContext> context = norm::createNormContext();
        parseOrThrow(*context, source, "");
      },
      "source"_a, "Parses and verifies `source`; raises MLIRError if invalid.");

  m.def("openmp_runtime", &norm::findOpenMPRuntime,
        "Path of the OpenMP runtime (needed for threads > 1), or ''.");

  m.def(
      "runner_utils",
      [] {
        // memrefCopy, printMemref*, ...: what lowered modules may call.
        std::vector<std::string> libs;
        for (const char *name :
             {"libmlir_c_runner_utils.so", "libmlir_runner_utils.so"}) {
          std::string path = std::string(NORM_LLVM_LIBRARY_DIR) + "/" + name;
          if (llvm::sys::fs::exists(path))
            libs.push_back(path);
        }
        return libs;
      },
      "Paths of MLIR's runner utility libraries, loaded into every JIT.");

  nb::class_<CompiledModule>(m, "CompiledModule")
      .def(nb::init<const std::string &, const std::string &,
                    const std::vector<std::string> &>(),
           "source"_a, "pipeline"_a,
           "shared_libs"_a = std::vector<std::string>())
      .def("signature", &CompiledModule::signature, "name"_a,
           "((kind, dtype, shape), ...) of the arguments and of the results")
      .def("function_names", &CompiledModule::functionNames)
      .def("invoke", &CompiledModule::invoke, "name"_a, "args"_a);
}
