//===- norm-fuzz.cpp - libFuzzer target for the norm dialect ----*- C++ -*-===//
//
// Parses each input as an MLIR module (every upstream dialect plus norm) and,
// when it parses and verifies, checks that it prints and parses back to the
// same text, then runs every norm pass and pipeline on a copy of it.
//
// Besides crashes, assertions and sanitizer reports, the target aborts on
// what is a bug although nothing crashed:
//   - a module that verifies but does not print and parse back unchanged;
//   - a pass that succeeds but leaves IR that does not verify (the target
//     verifies after every pass itself, so that it can tell this from a pass
//     that rejects its input);
//   - a pass or pipeline that fails without an error diagnostic.
//
// An input that starts with `GEN:` is not parsed itself: the bytes after the
// prefix drive a generator of well-formed norm modules (every op, rank,
// static/dynamic dim, element and compute type, operand combination,
// attribute and constant operand the ops accept), which reaches the
// lowerings far more often than mutated text does.
//
// Environment: NORM_FUZZ_PIPELINES, a `;`-separated list of pass pipelines
// (module-level, textual form) replacing the default list, to focus a run;
// NORM_FUZZ_PRINT=1 prints every module before it is processed (to see what a
// `GEN:` input stands for).
//
//===----------------------------------------------------------------------===//

#include "norm/InitAllNorm.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

using namespace mlir;

/// Inputs longer than this are skipped (and not added to the corpus): long
/// inputs only slow the search down.
static constexpr size_t kMaxInputBytes = 16384;

/// Pipelines run on every input that verifies, each on its own copy. Names
/// that this build does not register (passes from other branches) are
/// dropped at start-up with a note.
static const char *const kDefaultPipelines[] = {
    "canonicalize",
    "norm-to-linalg",
    "norm-lower-cpu",
    "norm-lower-cpu{threads=4 vector-width=128 nontemporal-threshold=0}",
    "norm-forall-to-loops",
    "norm-forall-to-loops{threads=4}",
    "norm-cpu-pipeline",
    "norm-cpu-pipeline{lowering=linalg}",
    "norm-cpu-pipeline{threads=4 vector-width=512}",
    // TilingInterface through the transform dialect (tiling.mlir seeds).
    "transform-interpreter",
    "func.func(norm-raise)",
    "func.func(norm-fuse-residual)",
    "func.func(norm-fold-matmul-weights)",
    "func.func(norm-fuse-matmul)",
    "func.func(norm-vectorize-matmul)",
    ("norm-vectorize-matmul{threads=2 vector-width=256 tile-m=3 tile-n=5 "
     "block-n=7 block-k=3}"),
    "norm-legalize-reshapes",
    "norm-lower-gpu",
};

/// Prefix of the inputs that drive the module generator.
static constexpr llvm::StringLiteral kGeneratorPrefix = "GEN:";

//===----------------------------------------------------------------------===//
// Module generator
//===----------------------------------------------------------------------===//

namespace {
/// Writes a function holding one norm op (and sometimes an add feeding it)
/// from the fuzzer's bytes. Every choice stays within what the verifier
/// accepts, so that the bytes are spent on the lowerings, not on the parser.
class ModuleGenerator {
public:
  explicit ModuleGenerator(FuzzedDataProvider &data) : data(data) {}

  std::string generate();

private:
  template <typename T>
  T pick(std::initializer_list<T> choices) {
    size_t index = data.ConsumeIntegralInRange<size_t>(0, choices.size() - 1);
    return *(choices.begin() + index);
  }
  bool oneIn(int n) { return data.ConsumeIntegralInRange<int>(1, n) == 1; }

  static std::string tensorType(llvm::ArrayRef<int64_t> shape,
                                llvm::StringRef elementType);
  /// A static dim size, small ones and vector-length edges more often.
  int64_t staticDim() {
    return pick<int64_t>(
        {0, 1, 1, 2, 3, 4, 5, 7, 8, 8, 15, 16, 17, 31, 32, 33, 64, 100, 129});
  }
  /// `shape` (static) with some dims made dynamic: every operand type is
  /// such a view of one run-time shape, so that they agree.
  llvm::SmallVector<int64_t> hideDims(llvm::ArrayRef<int64_t> shape);
  /// One element literal of `elementType` (special values included).
  std::string element(llvm::StringRef elementType);
  /// A dense literal of `shape`: a splat or every element.
  std::string denseLiteral(llvm::ArrayRef<int64_t> shape,
                           llvm::StringRef elementType);
  /// Makes an operand: a function argument, or a constant when the shape is
  /// static and small. Returns its SSA name.
  std::string operand(llvm::ArrayRef<int64_t> shape,
                      llvm::StringRef elementType);

  FuzzedDataProvider &data;
  std::vector<std::string> arguments, argumentTypes, body;
};
} // namespace

std::string ModuleGenerator::tensorType(llvm::ArrayRef<int64_t> shape,
                                        llvm::StringRef elementType) {
  std::string text = "tensor<";
  for (int64_t dim : shape)
    text +=
        (ShapedType::isDynamic(dim) ? std::string("?") : std::to_string(dim)) +
        "x";
  return text + elementType.str() + ">";
}

llvm::SmallVector<int64_t>
ModuleGenerator::hideDims(llvm::ArrayRef<int64_t> shape) {
  llvm::SmallVector<int64_t> result(shape);
  for (int64_t &dim : result)
    if (oneIn(3))
      dim = ShapedType::kDynamic;
  return result;
}

std::string ModuleGenerator::element(llvm::StringRef elementType) {
  if (oneIn(8)) {
    // NaN, +inf, -inf as bit patterns.
    int which = data.ConsumeIntegralInRange<int>(0, 2);
    if (elementType == "f16")
      return which == 0 ? "0x7E00" : which == 1 ? "0x7C00" : "0xFC00";
    if (elementType == "bf16")
      return which == 0 ? "0x7FC0" : which == 1 ? "0x7F80" : "0xFF80";
    if (elementType == "f32")
      return which == 0   ? "0x7FC00000"
             : which == 1 ? "0x7F800000"
                          : "0xFF800000";
    return which == 0   ? "0x7FF8000000000000"
           : which == 1 ? "0x7FF0000000000000"
                        : "0xFFF0000000000000";
  }
  return pick<const char *>({"0.0", "1.0", "-1.0", "0.5", "2.0", "-3.25",
                             "1.0e+04", "1.0e-03", "6.0e+04", "-0.0",
                             "1.0e+30"});
}

std::string ModuleGenerator::denseLiteral(llvm::ArrayRef<int64_t> shape,
                                          llvm::StringRef elementType) {
  if (oneIn(2))
    return "dense<" + element(elementType) + ">";
  // Nested brackets, one level per dim.
  std::function<std::string(size_t)> level = [&](size_t d) -> std::string {
    if (d == shape.size())
      return element(elementType);
    std::string text = "[";
    for (int64_t i = 0; i < shape[d]; ++i)
      text += (i ? ", " : "") + level(d + 1);
    return text + "]";
  };
  return "dense<" + level(0) + ">";
}

std::string ModuleGenerator::operand(llvm::ArrayRef<int64_t> shape,
                                     llvm::StringRef elementType) {
  std::string type = tensorType(shape, elementType);
  int64_t elements = 1;
  bool isStatic = true;
  for (int64_t dim : shape) {
    isStatic &= !ShapedType::isDynamic(dim);
    if (isStatic)
      elements *= dim;
  }
  if (isStatic && elements <= 64 && oneIn(3)) {
    std::string name = "%c" + std::to_string(body.size());
    body.push_back(name + " = arith.constant " +
                   denseLiteral(shape, elementType) + " : " + type);
    return name;
  }
  std::string name = "%arg" + std::to_string(arguments.size());
  arguments.push_back(name);
  argumentTypes.push_back(type);
  return name;
}

std::string ModuleGenerator::generate() {
  enum Kind { LayerNorm, RMSNorm, DyT };
  Kind kind = pick<Kind>({LayerNorm, RMSNorm, DyT});
  int64_t rank = data.ConsumeIntegralInRange<int64_t>(1, 4);
  // The run-time shape; each operand type shows it with some dims dynamic.
  llvm::SmallVector<int64_t> runTimeShape;
  for (int64_t d = 0; d < rank; ++d)
    runTimeShape.push_back(staticDim());
  llvm::SmallVector<int64_t> shape = hideDims(runTimeShape);
  std::string xElement = pick<const char *>({"f16", "bf16", "f32", "f64"});
  int64_t axis = data.ConsumeIntegralInRange<int64_t>(-rank, rank - 1);
  llvm::ArrayRef<int64_t> normalizedShape =
      llvm::ArrayRef(runTimeShape).drop_front(axis < 0 ? axis + rank : axis);
  auto parameterElement = [&]() -> std::string {
    return oneIn(3) ? "f32" : xElement;
  };

  std::string xType = tensorType(shape, xElement);
  std::string x = operand(shape, xElement);
  std::vector<std::string> operandTypes{xType};
  if (oneIn(4)) {
    // An add in front: the form residual fusion looks for.
    std::string other = operand(shape, xElement);
    std::string sum = "%sum" + std::to_string(body.size());
    body.push_back(sum + " = arith.addf " + x + ", " + other + " : " + xType);
    x = sum;
  }
  std::string operands = x;
  auto addOperand = [&](llvm::StringRef keyword,
                        llvm::ArrayRef<int64_t> operandShape,
                        llvm::StringRef elementType) {
    operands +=
        " " + keyword.str() + "(" + operand(operandShape, elementType) + ")";
    operandTypes.push_back(tensorType(operandShape, elementType));
  };
  if (kind == DyT)
    addOperand("alpha",
               oneIn(2) ? llvm::SmallVector<int64_t>{}
                        : llvm::SmallVector<int64_t>{1},
               parameterElement());
  bool hasWeight = oneIn(2) ? true : oneIn(2);
  if (hasWeight) {
    llvm::SmallVector<int64_t> weightShape = hideDims(normalizedShape);
    if (kind == RMSNorm && oneIn(4))
      weightShape = oneIn(2) ? llvm::SmallVector<int64_t>{}
                             : llvm::SmallVector<int64_t>{1};
    addOperand("weight", weightShape, parameterElement());
  }
  if (kind != RMSNorm && oneIn(2))
    addOperand("bias", hideDims(normalizedShape), parameterElement());
  bool hasResidual = oneIn(3);
  if (hasResidual)
    addOperand("residual", hideDims(runTimeShape), xElement);

  std::vector<std::string> attributes;
  if (kind != DyT && oneIn(2))
    attributes.push_back(
        std::string("epsilon = ") +
        pick<const char *>({"0.0 : f32", "1.0e-05 : f32", "1.0e-06 : f64",
                            "-0.0 : f32", "1.0e+30 : f32", "1.0 : f64",
                            "1.0e-45 : f32"}));
  if (kind == RMSNorm && oneIn(2))
    attributes.push_back(
        std::string("epsilon_mode = #norm<epsilon_mode ") +
        pick<const char *>({"inside_sqrt", "outside_sqrt", "clamp"}) + ">");
  if (kind == RMSNorm && hasWeight && oneIn(2))
    attributes.push_back(std::string("weight_offset = ") +
                         pick<const char *>({"1.0 : f32", "-0.5 : f32",
                                             "0.0 : f32", "3.0e+38 : f32"}));
  if (axis != -1 || oneIn(2))
    attributes.push_back("axis = " + std::to_string(axis) + " : i64");
  if (oneIn(3)) {
    std::string computeType = pick<const char *>({"f32", "f64", "x"});
    attributes.push_back("compute_type = " +
                         (computeType == "x" ? xElement : computeType));
  }
  if (oneIn(3))
    attributes.push_back(std::string("cast_mode = #norm<cast_mode ") +
                         pick<const char *>({"final", "before_weight"}) + ">");

  const char *opName = kind == LayerNorm ? "norm.layer_norm"
                       : kind == RMSNorm ? "norm.rms_norm"
                                         : "norm.dyt";
  std::string results = hasResidual ? "%y, %s" : "%y";
  std::string resultTypes =
      hasResidual ? "(" + xType + ", " + xType + ")" : xType;
  std::string op = results + " = " + opName + " " + operands;
  if (!attributes.empty())
    op += " {" + llvm::join(attributes, ", ") + "}";
  op += " : (" + llvm::join(operandTypes, ", ") + ") -> " + resultTypes;
  body.push_back(op);
  body.push_back("return " + results + " : " +
                 (hasResidual ? xType + ", " + xType : xType));

  std::string text = "func.func @generated(";
  for (size_t i = 0; i < arguments.size(); ++i)
    text += (i ? ", " : "") + arguments[i] + ": " + argumentTypes[i];
  text += ") -> " + resultTypes + " {\n";
  for (const std::string &line : body)
    text += "  " + line + "\n";
  return text + "}\n";
}

//===----------------------------------------------------------------------===//
// Fuzz target
//===----------------------------------------------------------------------===//

namespace {
/// What the target keeps between inputs: the registry and the pipelines.
struct FuzzState {
  DialectRegistry registry;
  std::vector<std::string> pipelines;
  uint64_t inputs = 0, verified = 0, passRuns = 0, passSuccesses = 0;
  bool print = false;
};
} // namespace

static FuzzState &getState() {
  static FuzzState *state = new FuzzState();
  return *state;
}

/// Prints `message`, the pipeline and the module text, then aborts, so that
/// libFuzzer records the input as a crash.
[[noreturn]] static void reportBug(const std::string &message,
                                   llvm::StringRef pipeline,
                                   llvm::StringRef moduleText,
                                   llvm::StringRef diagnostics) {
  llvm::errs() << "norm-fuzz: BUG: " << message << "\n";
  if (!pipeline.empty())
    llvm::errs() << "pipeline: " << pipeline << "\n";
  if (!diagnostics.empty())
    llvm::errs() << "diagnostics:\n" << diagnostics;
  llvm::errs() << "input module:\n" << moduleText << "\n";
  llvm::errs().flush();
  std::abort();
}

/// Verifies the IR after every pass that succeeded (the pass manager's own
/// verifier is off), so that a pass producing invalid IR is told apart from
/// one that rejected its input.
namespace {
struct VerifyAfterPass : public PassInstrumentation {
  VerifyAfterPass(std::string &diagnostics, llvm::StringRef pipeline,
                  llvm::StringRef moduleText)
      : diagnostics(diagnostics), pipeline(pipeline), moduleText(moduleText) {}
  void runAfterPass(Pass *pass, Operation *op) override {
    size_t before = diagnostics.size();
    if (succeeded(verify(op)))
      return;
    reportBug(("pass '" + pass->getName() +
               "' succeeded but left IR that "
               "does not verify")
                  .str(),
              pipeline, moduleText,
              llvm::StringRef(diagnostics).substr(before));
  }
  std::string &diagnostics;
  llvm::StringRef pipeline, moduleText;
};
} // namespace

extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv) {
  registerAllPasses();
  norm::registerAllNormPasses();
  FuzzState &state = getState();
  registerAllDialects(state.registry);
  registerAllExtensions(state.registry);
  norm::registerAllNormDialects(state.registry);

  if (const char *env = std::getenv("NORM_FUZZ_PRINT"))
    state.print = llvm::StringRef(env) == "1";
  std::vector<std::string> candidates;
  if (const char *env = std::getenv("NORM_FUZZ_PIPELINES")) {
    llvm::SmallVector<llvm::StringRef> parts;
    llvm::StringRef(env).split(parts, ';', /*MaxSplit=*/-1,
                               /*KeepEmpty=*/false);
    for (llvm::StringRef part : parts)
      candidates.push_back(part.trim().str());
  } else {
    candidates.assign(std::begin(kDefaultPipelines),
                      std::end(kDefaultPipelines));
  }

  // Keep the pipelines that parse with the passes this build registers.
  MLIRContext context(state.registry, MLIRContext::Threading::DISABLED);
  for (const std::string &pipeline : candidates) {
    PassManager pm(&context);
    std::string error;
    llvm::raw_string_ostream os(error);
    if (failed(parsePassPipeline(pipeline, pm, os))) {
      llvm::errs() << "norm-fuzz: skipping '" << pipeline
                   << "' (not available in this build)\n";
      continue;
    }
    state.pipelines.push_back(pipeline);
  }
  llvm::errs() << "norm-fuzz: " << state.pipelines.size()
               << " pipelines per verified input\n";
  std::atexit([] {
    FuzzState &s = getState();
    if (s.inputs == 0) // The parent process of fork mode runs no input.
      return;
    llvm::errs() << "norm-fuzz: " << s.inputs << " inputs, " << s.verified
                 << " parsed and verified, " << s.passRuns << " pipeline runs, "
                 << s.passSuccesses << " succeeded\n";
  });
  return 0;
}

/// Prints `op` in the custom or the generic form.
static std::string printOp(Operation *op, bool generic) {
  std::string text;
  llvm::raw_string_ostream os(text);
  OpPrintingFlags flags;
  if (generic)
    flags.printGenericOpForm();
  op->print(os, flags);
  return text;
}

/// Parses `text` as a module (verifying it) in `context`.
static OwningOpRef<ModuleOp> parseModule(llvm::StringRef text,
                                         MLIRContext &context) {
  llvm::SourceMgr sourceMgr;
  // A copy: the parser may read the terminating null byte.
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, "<fuzz-input>"),
      llvm::SMLoc());
  return parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > kMaxInputBytes)
    return -1;
  FuzzState &state = getState();
  ++state.inputs;
  llvm::StringRef input(reinterpret_cast<const char *>(data), size);
  std::string generated;
  if (input.consume_front(kGeneratorPrefix)) {
    FuzzedDataProvider provider(input.bytes_begin(), input.size());
    generated = ModuleGenerator(provider).generate();
    input = generated;
  }
  if (state.print)
    llvm::errs() << "norm-fuzz: input:\n" << input << "\n";

  MLIRContext context(state.registry, MLIRContext::Threading::DISABLED);
  std::string diagnostics;
  unsigned errors = 0;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      ++errors;
    llvm::raw_string_ostream os(diagnostics);
    os << diag.getLocation() << ": " << diag.str() << "\n";
    return success();
  });

  OwningOpRef<ModuleOp> module = parseModule(input, context);
  if (!module)
    return 0;
  ++state.verified;

  // Round trip, custom and generic form: what verifies prints and parses
  // back, and printing is a fixed point. Each reparse gets a fresh context,
  // as `norm-opt | norm-opt` would: a context keeps the `dense_resource`
  // blobs it has parsed, and a second blob of the same key is renamed
  // (`key_1`) by design.
  std::string text = printOp(*module, /*generic=*/false);
  for (bool generic : {false, true}) {
    std::string printed = generic ? printOp(*module, true) : text;
    MLIRContext reparseContext(state.registry,
                               MLIRContext::Threading::DISABLED);
    std::string reparseDiagnostics;
    ScopedDiagnosticHandler reparseHandler(
        &reparseContext, [&](Diagnostic &diag) {
          llvm::raw_string_ostream os(reparseDiagnostics);
          os << diag.getLocation() << ": " << diag.str() << "\n";
          return success();
        });
    OwningOpRef<ModuleOp> reparsed = parseModule(printed, reparseContext);
    if (!reparsed)
      reportBug(std::string("the ") + (generic ? "generic" : "custom") +
                    " form of a verified module does not parse back",
                "", printed, reparseDiagnostics);
    std::string again = printOp(*reparsed, /*generic=*/false);
    if (again != text)
      reportBug(std::string("printing is not a fixed point through the ") +
                    (generic ? "generic" : "custom") + " form; reprinted:\n" +
                    again,
                "", text, "");
  }

  for (const std::string &pipeline : state.pipelines) {
    OwningOpRef<ModuleOp> copy = module->clone();
    PassManager pm(&context);
    pm.enableVerifier(false);
    diagnostics.clear();
    if (failed(parsePassPipeline(pipeline, pm, llvm::nulls())))
      continue;
    pm.addInstrumentation(
        std::make_unique<VerifyAfterPass>(diagnostics, pipeline, text));
    errors = 0;
    ++state.passRuns;
    if (succeeded(pm.run(*copy))) {
      ++state.passSuccesses;
      continue;
    }
    if (errors == 0)
      reportBug("the pipeline failed without an error diagnostic", pipeline,
                text, diagnostics);
  }
  return 0;
}
