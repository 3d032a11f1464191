//===- exec_main.cpp - Driver of ahead-of-time GPU execution tests -*- C++
//-*-===//
//
// Linked with one compiled norm_exec.py suite (its `@main` renamed to
// `norm_main`) and norm_cuda_runtime. The suite prints every output with
// printMemrefF32/F64; this driver captures them instead and compares them
// with the float64 reference written at build time (write_refs.py), with
// the metric, bounds and NaN/inf rules of test/tools/normref.py
// (docs/Numerics.md#error-metric-and-bounds). `compare` below mirrors
// normref.compare, since the GPU machine has no Python;
// test/Integration/AOT/gpu-check-driver.test runs this driver on the CPU
// against the lit test's case list to keep the two in step.
//
//   <test> REFERENCE.ref
//
// prints one line per case, as norm_exec.py check does,
// `PASS: case_K: <description>; max err E (bound B)` or the same with
// `FAIL:` and indented reasons (a case whose output is missing fails), then
// `all N cases passed` (exit 0) or `M of N cases FAILED` (exit 1); exits 1
// with the runtime's message when no GPU can be used.
//
//===----------------------------------------------------------------------===//

#include "norm/Runtime/CudaRuntime.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

/// A printed (captured) output: its sizes and values widened to double.
struct Output {
  std::vector<int64_t> sizes;
  std::vector<double> values;
};

std::vector<Output> outputs;

/// An unranked memref as generated code passes it to printMemref.
struct UnrankedMemRef {
  int64_t rank;
  void *descriptor;
};

/// Copies a strided memref of rank `rank` into a dense vector.
template <typename T>
void capture(UnrankedMemRef *memref) {
  auto *words = static_cast<int64_t *>(memref->descriptor);
  T *aligned = reinterpret_cast<T *>(words[1]);
  int64_t offset = words[2];
  int64_t rank = memref->rank;
  const int64_t *sizes = words + 3;
  const int64_t *strides = words + 3 + rank;
  Output out;
  out.sizes.assign(sizes, sizes + rank);
  int64_t count = 1;
  for (int64_t d = 0; d < rank; ++d)
    count *= sizes[d];
  out.values.reserve(count > 0 ? count : 0);
  std::vector<int64_t> index(rank, 0);
  for (int64_t i = 0; i < count; ++i) {
    int64_t at = offset;
    for (int64_t d = 0; d < rank; ++d)
      at += index[d] * strides[d];
    out.values.push_back(static_cast<double>(aligned[at]));
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < sizes[d])
        break;
      index[d] = 0;
    }
  }
  outputs.push_back(std::move(out));
}

/// A reference output as written by write_refs.py.
struct Reference {
  int64_t caseIndex;
  std::string name;
  std::vector<int64_t> shape;
  std::vector<double> values;
};

struct Case {
  std::string description;
  double bound;
};

bool readAll(FILE *file, void *data, size_t bytes) {
  return std::fread(data, 1, bytes, file) == bytes;
}

template <typename T>
bool readValue(FILE *file, T &value) {
  return readAll(file, &value, sizeof(T));
}

bool readString(FILE *file, std::string &text) {
  int64_t length = 0;
  if (!readValue(file, length) || length < 0 || length > (1 << 20))
    return false;
  text.resize(length);
  return readAll(file, text.data(), length);
}

/// Reads the reference file: magic, cases (description, bound), outputs
/// (case, name, shape, values stored as f32 or f64).
bool readReferences(const char *path, std::vector<Case> &cases,
                    std::vector<Reference> &refs) {
  FILE *file = std::fopen(path, "rb");
  if (!file) {
    std::fprintf(stderr, "error: cannot open %s\n", path);
    return false;
  }
  char magic[8];
  int64_t numCases = 0, numOutputs = 0;
  bool ok = readAll(file, magic, 8) && !std::memcmp(magic, "NORMREF1", 8) &&
            readValue(file, numCases);
  for (int64_t i = 0; ok && i < numCases; ++i) {
    Case c;
    ok = readString(file, c.description) && readValue(file, c.bound);
    cases.push_back(c);
  }
  ok = ok && readValue(file, numOutputs);
  for (int64_t i = 0; ok && i < numOutputs; ++i) {
    Reference ref;
    int64_t rank = 0, elementBytes = 0;
    ok = readValue(file, ref.caseIndex) && readString(file, ref.name) &&
         readValue(file, rank) && rank >= 0 && rank < 16;
    int64_t count = 1;
    for (int64_t d = 0; ok && d < rank; ++d) {
      int64_t size = 0;
      ok = readValue(file, size);
      ref.shape.push_back(size);
      count *= size;
    }
    ok = ok && readValue(file, elementBytes) &&
         (elementBytes == 4 || elementBytes == 8);
    if (ok) {
      ref.values.resize(count);
      for (int64_t j = 0; ok && j < count; ++j) {
        if (elementBytes == 4) {
          float v;
          ok = readValue(file, v);
          ref.values[j] = v;
        } else {
          ok = readValue(file, ref.values[j]);
        }
      }
    }
    refs.push_back(std::move(ref));
  }
  std::fclose(file);
  if (!ok)
    std::fprintf(stderr, "error: %s is not a valid reference file\n", path);
  return ok;
}

/// The error of one output (normref.compare): max |y - ref| /
/// (|ref| + rms(ref)) over finite reference entries; NaN and infinities
/// must match exactly. Fills `why` for the worst entry or a mismatch.
double compare(const std::vector<double> &y, const std::vector<double> &ref,
               std::string &why) {
  char buffer[256];
  size_t nanMismatch = 0, infMismatch = 0, firstNan = 0, firstInf = 0;
  double sumSquares = 0.0;
  size_t finite = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    bool refNan = std::isnan(ref[i]), yNan = std::isnan(y[i]);
    if (refNan != yNan && !nanMismatch++)
      firstNan = i;
    if (!refNan && (std::isinf(ref[i]) || std::isinf(y[i])) && y[i] != ref[i] &&
        !infMismatch++)
      firstInf = i;
    if (std::isfinite(ref[i])) {
      sumSquares += ref[i] * ref[i];
      ++finite;
    }
  }
  if (nanMismatch) {
    std::snprintf(buffer, sizeof(buffer),
                  "NaN mismatch at %zu entries, first [%zu]: got %.9g, ref "
                  "%.9g",
                  nanMismatch, firstNan, y[firstNan], ref[firstNan]);
    why = buffer;
    return INFINITY;
  }
  if (infMismatch) {
    std::snprintf(buffer, sizeof(buffer),
                  "inf mismatch at %zu entries, first [%zu]: got %.9g, ref "
                  "%.9g",
                  infMismatch, firstInf, y[firstInf], ref[firstInf]);
    why = buffer;
    return INFINITY;
  }
  if (!finite)
    return 0.0;
  double rms = std::sqrt(sumSquares / finite);
  double worst = 0.0;
  size_t worstAt = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (!std::isfinite(ref[i]))
      continue;
    double d = std::fabs(y[i] - ref[i]);
    double den = std::fabs(ref[i]) + rms;
    double e = den > 0 ? d / den : (d == 0 ? 0.0 : INFINITY);
    if (e > worst || (std::isnan(e) && !std::isnan(worst))) {
      worst = std::isnan(e) ? INFINITY : e;
      worstAt = i;
    }
  }
  std::snprintf(buffer, sizeof(buffer), "worst [%zu]: got %.9g, ref %.9g",
                worstAt, y[worstAt], ref[worstAt]);
  why = buffer;
  return worst;
}

} // namespace

extern "C" {
void norm_main();

void _mlir_ciface_printMemrefF32(UnrankedMemRef *memref) {
  capture<float>(memref);
}

void _mlir_ciface_printMemrefF64(UnrankedMemRef *memref) {
  capture<double>(memref);
}
}

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s REFERENCE.ref\n", argv[0]);
    return 2;
  }
  std::vector<Case> cases;
  std::vector<Reference> refs;
  if (!readReferences(argv[1], cases, refs))
    return 2;
  char message[512];
  if (!normCudaAvailable(message, sizeof(message))) {
    std::fprintf(stderr, "norm_cuda_runtime: %s\n", message);
    return 1;
  }

  norm_main();

  std::vector<double> errors(cases.size(), 0.0);
  std::vector<std::vector<std::string>> notes(cases.size());
  if (outputs.size() != refs.size())
    std::printf("error: %zu printed tensors, expected %zu\n", outputs.size(),
                refs.size());
  for (size_t i = 0; i < refs.size(); ++i) {
    const Reference &ref = refs[i];
    size_t k = static_cast<size_t>(ref.caseIndex);
    if (k >= cases.size())
      continue;
    if (i >= outputs.size()) {
      errors[k] = INFINITY;
      notes[k].push_back(ref.name + ": not printed");
      continue;
    }
    const Output &out = outputs[i];
    if (out.sizes != ref.shape || out.values.size() != ref.values.size()) {
      errors[k] = INFINITY;
      notes[k].push_back(ref.name + ": printed shape differs from the "
                                    "reference");
      continue;
    }
    std::string why;
    double e = compare(out.values, ref.values, why);
    if (!(e <= cases[k].bound))
      notes[k].push_back(ref.name + ": err " + std::to_string(e) + ", " + why);
    errors[k] = std::max(errors[k], e);
  }
  size_t failed = 0;
  for (size_t k = 0; k < cases.size(); ++k) {
    bool ok = errors[k] <= cases[k].bound && notes[k].empty();
    failed += !ok;
    std::printf("%s: case_%zu: %s; max err %.3g (bound %.3g)\n",
                ok ? "PASS" : "FAIL", k, cases[k].description.c_str(),
                errors[k], cases[k].bound);
    for (const std::string &note : notes[k])
      std::printf("    %s\n", note.c_str());
  }
  if (outputs.size() != refs.size() && !failed)
    failed = 1;
  if (failed || cases.empty()) {
    std::printf("%zu of %zu cases FAILED\n", failed, cases.size());
    return 1;
  }
  std::printf("all %zu cases passed\n", cases.size());
  return 0;
}
