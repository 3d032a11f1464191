//===- RaiseGradMatch.cpp - Roles of a decomposed norm gradient -----------===//
//
// Finds which LayerNorm, RMSNorm or DyT gradient a candidate dx computes:
// its leaves are given roles, each read through its own access, the
// expression must read nothing else, and the DESIGN 2b formula built from
// the roles must agree with it numerically (RaiseGradNumeric.cpp). Then the
// values of the block that compute the parameter gradients are found the
// same way.
//
//===----------------------------------------------------------------------===//

#include "RaiseGradInternal.h"

#include "norm/Dialect/Norm/Utils/FloatUtils.h"

#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace mlir::norm;
using namespace mlir::norm::raisegrad;

//===----------------------------------------------------------------------===//
// Roles
//===----------------------------------------------------------------------===//

AffineMap raisegrad::getParamAccess(RankedTensorType type, int64_t axis,
                                    ArrayRef<int64_t> frame, bool scalar,
                                    bool compatible) {
  MLIRContext *context = type.getContext();
  int64_t rank = frame.size();
  SmallVector<AffineExpr> results;
  AffineExpr zero = getAffineConstantExpr(0, context);
  if (scalar) {
    if (!llvm::all_of(type.getShape(), [](int64_t s) { return s == 1; }))
      return {};
    results.assign(type.getRank(), zero);
    return AffineMap::get(rank, 0, results, context);
  }
  int64_t numNormalized = rank - axis;
  int64_t lead = type.getRank() - numNormalized;
  if (lead < 0)
    return {};
  for (int64_t i = 0; i < type.getRank(); ++i) {
    if (i < lead) {
      if (type.getDimSize(i) != 1)
        return {};
      results.push_back(zero);
      continue;
    }
    int64_t size = type.getDimSize(i), frameSize = frame[axis + i - lead];
    if (size != frameSize &&
        !(compatible &&
          (ShapedType::isDynamic(size) || ShapedType::isDynamic(frameSize))))
      return {};
    results.push_back(getAffineDimExpr(axis + i - lead, context));
  }
  return AffineMap::get(rank, 0, results, context);
}

void raisegrad::collectNodes(TensorExpr *root,
                             SmallVectorImpl<TensorExpr *> &out,
                             function_ref<bool(TensorExpr *)> opaque) {
  llvm::SmallPtrSet<TensorExpr *, 32> seen;
  SmallVector<std::pair<TensorExpr *, unsigned>> stack{{root, 0}};
  seen.insert(root);
  while (!stack.empty()) {
    auto &[node, next] = stack.back();
    if (next < node->operands.size() && !(opaque && opaque(node))) {
      TensorExpr *operand = node->operands[next++];
      if (seen.insert(operand).second)
        stack.push_back({operand, 0});
      continue;
    }
    out.push_back(node);
    stack.pop_back();
  }
}

static bool containsNode(TensorExpr *e, TensorExpr *target) {
  SmallVector<TensorExpr *> nodes;
  collectNodes(e, nodes);
  return llvm::is_contained(nodes, target);
}

/// True for an element count that `m`'s gradient may take as (a factor of)
/// N: it counts normalized dims of dy or x, or dims whose static sizes are
/// the frame's, and its type holds the count exactly.
static bool isNormalizedCount(TensorExpr *count, const GradMatch &m,
                              ArrayRef<int64_t> frame) {
  uint64_t dims = count->reducedDims;
  if (!dims || (dims & ~m.normalizedMask))
    return false;
  bool ofInput = count->value == m.dyValue || count->value == m.xValue;
  auto type = dyn_cast<RankedTensorType>(count->value.getType());
  if (!type || type.getRank() != static_cast<int64_t>(frame.size()))
    return false;
  double n = 1.0;
  for (unsigned d = 0; d < frame.size(); ++d) {
    if (!(dims >> d & 1))
      continue;
    if (ShapedType::isDynamic(frame[d]) ||
        (!ofInput && type.getDimSize(d) != frame[d]))
      return false;
    n *= static_cast<double>(frame[d]);
  }
  return !isa<FloatType>(count->type) || roundToType(n, count->type) == n;
}

bool raisegrad::readsOnlyRoles(TensorExpr *e, const GradMatch &m,
                               ArrayRef<TensorExpr *> extras,
                               ArrayRef<int64_t> frame) {
  SmallPtrSet<TensorExpr *, 8> roles(extras.begin(), extras.end());
  for (TensorExpr *role : {m.dy, m.x, m.mean, m.rstd, m.weight, m.alpha})
    if (role)
      roles.insert(role);
  SmallVector<TensorExpr *> nodes;
  collectNodes(e, nodes,
               [&](TensorExpr *node) { return roles.contains(node); });
  return llvm::all_of(nodes, [&](TensorExpr *node) {
    if (roles.contains(node))
      return true;
    switch (node->kind) {
    case Kind::Leaf:
    case Kind::Acc:
    // No gradient formula clamps, takes an absolute value or rounds outside
    // its roles; a clamp beyond the sampled magnitudes would pass the
    // numeric check.
    case Kind::Max:
    case Kind::Min:
    case Kind::Abs:
    case Kind::ReduceMax:
    case Kind::RoundEven:
    case Kind::FPToSI:
    case Kind::Floor:
    case Kind::Ceil:
    case Kind::Log2:
    case Kind::Exp2:
    case Kind::SelectEq:
      return false;
    case Kind::DimSize:
      return isNormalizedCount(node, m, frame);
    case Kind::Cast:
      // A rounding to a type narrower than dx's changes more than the op's
      // own rounding (bf16 in an f32 backward); conversions are otherwise
      // taken as exact.
      return getPrecision(node->type) >= getPrecision(m.dy->type);
    default:
      return true;
    }
  });
}

//===----------------------------------------------------------------------===//
// The matcher
//===----------------------------------------------------------------------===//

/// The leaves of `e` of the full frame read as is.
static void collectFullLeaves(TensorExpr *e, uint64_t fullMask,
                              SmallPtrSetImpl<TensorExpr *> &out) {
  SmallVector<TensorExpr *> nodes;
  collectNodes(e, nodes);
  for (TensorExpr *node : nodes)
    if (node->is(Kind::Leaf) && node->deps == fullMask)
      out.insert(node);
}

void GradMatcher::classify(ArrayRef<TensorExpr *> nodes, bool hasTanh) {
  uint64_t fullMask = (uint64_t(1) << rank) - 1;
  auto differentTensors = [&](TensorExpr *a, TensorExpr *b) {
    if (a == b || a->deps != fullMask || b->deps != fullMask)
      return false;
    SmallPtrSet<TensorExpr *, 4> la, lb;
    collectFullLeaves(a, fullMask, la);
    collectFullLeaves(b, fullMask, lb);
    return !la.empty() && !lb.empty() && la != lb;
  };
  anchors.clear();
  isCandidate = false;
  for (TensorExpr *node : nodes) {
    if (node->is(Kind::Sum)) {
      anchors.push_back(node);
      SmallVector<TensorExpr *> factors, pending{node->getOperand(0)};
      while (!pending.empty()) {
        TensorExpr *factor = pending.pop_back_val();
        if (factor->is(Kind::Mul))
          pending.append(factor->operands.begin(), factor->operands.end());
        else
          factors.push_back(factor);
      }
      for (size_t i = 0; i < factors.size() && !isCandidate; ++i)
        for (size_t j = i + 1; j < factors.size() && !isCandidate; ++j)
          isCandidate = differentTensors(factors[i], factors[j]);
    } else if (node->is(Kind::Tanh)) {
      anchors.push_back(node);
    } else if (node->is(Kind::Mul) && !isCandidate && hasTanh) {
      // DyT: tanh(alpha * v) (alpha a scalar tensor) times a tensor the
      // tanh does not read.
      for (unsigned i = 0; i < 2 && !isCandidate; ++i) {
        TensorExpr *t = node->getOperand(i), *other = node->getOperand(1 - i);
        SmallVector<TensorExpr *> inner;
        collectNodes(t, inner);
        for (TensorExpr *tanh : inner) {
          if (!tanh->is(Kind::Tanh) || !tanh->getOperand(0)->is(Kind::Mul))
            continue;
          TensorExpr *arg = tanh->getOperand(0);
          bool scalarAlpha = llvm::any_of(arg->operands, [](TensorExpr *a) {
            return a->is(Kind::Leaf) && a->deps == 0;
          });
          if (scalarAlpha && differentTensors(arg, other)) {
            isCandidate = true;
            break;
          }
        }
      }
    }
  }
  llvm::sort(anchors,
             [](TensorExpr *a, TensorExpr *b) { return a->id < b->id; });
}

TensorExpr *GradMatcher::scaleOf(const GradMatch &m) {
  if (!m.normalizedInput || m.rstdDivisor == 1.0)
    return m.rstd;
  return builder.getBinary(Kind::Mul, m.rstd, constant(m.rstdDivisor, m.dy));
}

TensorExpr *GradMatcher::formula(const GradMatch &m) {
  TensorExprBuilder &b = builder;
  TensorExpr *weight = m.weight;
  if (weight && m.weightOffset != 0.0)
    weight = b.getBinary(Kind::Add, weight, constant(m.weightOffset, m.dy));
  TensorExpr *g = weight ? b.getBinary(Kind::Mul, m.dy, weight) : m.dy;
  TensorExpr *n = constant(count, m.dy);
  auto rowMean = [&](TensorExpr *e) {
    return b.getBinary(Kind::Div, b.getSum(e, m.normalizedMask), n);
  };
  switch (m.kind) {
  case GradKind::LayerNorm: {
    TensorExpr *xh =
        m.normalizedInput
            ? m.x
            : b.getBinary(Kind::Mul, b.getBinary(Kind::Sub, m.x, m.mean),
                          m.rstd);
    TensorExpr *inner = b.getBinary(
        Kind::Sub, b.getBinary(Kind::Sub, g, rowMean(g)),
        b.getBinary(Kind::Mul, xh, rowMean(b.getBinary(Kind::Mul, g, xh))));
    return b.getBinary(Kind::Mul, scaleOf(m), inner);
  }
  case GradKind::RMSNorm: {
    TensorExpr *xh =
        m.normalizedInput ? m.x : b.getBinary(Kind::Mul, m.x, m.rstd);
    TensorExpr *inner = b.getBinary(
        Kind::Sub, g,
        b.getBinary(Kind::Mul, xh, rowMean(b.getBinary(Kind::Mul, g, xh))));
    return b.getBinary(Kind::Mul, scaleOf(m), inner);
  }
  case GradKind::DyT: {
    TensorExpr *t =
        b.getUnary(Kind::Tanh, b.getBinary(Kind::Mul, m.alpha, m.x));
    TensorExpr *d = b.getBinary(Kind::Sub, constant(1.0, m.dy),
                                b.getBinary(Kind::Mul, t, t));
    return b.getBinary(Kind::Mul, b.getBinary(Kind::Mul, g, m.alpha), d);
  }
  }
  return nullptr;
}

bool GradMatcher::tryRoles(GradMatch &m) {
  m.dyValue = m.dy->is(Kind::Leaf) ? m.dy->value : fullValues.lookup(m.dy);
  m.xValue = m.x->is(Kind::Leaf) ? m.x->value : fullValues.lookup(m.x);
  TensorExpr *expected = formula(m);
  ArrayRef<int64_t> frame = builder.getFrameShape();
  for (const SmallVector<TensorExpr *, 2> &less : targets) {
    bool ok = true;
    for (auto &evaluator : evaluators)
      ok = ok && agree(*evaluator, root.expr, less, expected, points);
    // The numeric identity holds; the expression must also read nothing but
    // the roles, each through its access.
    if (ok && readsOnlyRoles(root.expr, m, less, frame)) {
      m.extras = less;
      return true;
    }
  }
  return false;
}

bool GradMatcher::isMaterializedSum(TensorExpr *e) {
  return e->is(Kind::Add) && fullValues.count(e) && isSumOfTensors(e);
}

bool GradMatcher::isSumOfTensors(TensorExpr *e) {
  uint64_t fullMask = (uint64_t(1) << rank) - 1;
  if (e->is(Kind::Leaf))
    return e->deps == fullMask && e->map == builder.getIdentityMap();
  if (!e->is(Kind::Add))
    return false;
  DenseMap<TensorExpr *, bool> &memo =
      sumOfTensorsMemo ? *sumOfTensorsMemo : localSumOfTensorsMemo;
  auto it = memo.find(e);
  if (it != memo.end())
    return it->second;
  bool result =
      isSumOfTensors(e->getOperand(0)) && isSumOfTensors(e->getOperand(1));
  memo[e] = result;
  return result;
}

TensorExpr *GradMatcher::splitAddedTerms(SmallVectorImpl<TensorExpr *> &added) {
  // The terms of the top-level sum that may be tensors added to dx as they
  // are (autograd accumulates x's gradient from every path, in any order:
  // the residual's dy, the gradients of later blocks): tensors read as is,
  // and sums of such tensors that the function materializes (taken whole).
  // The roles are looked for in the rest.
  TensorExpr *expr = root.expr;
  SmallVector<TensorExpr *> terms{expr}, coreTerms;
  while (!terms.empty()) {
    TensorExpr *term = terms.pop_back_val();
    if (term->is(Kind::Add) &&
        (term == expr || !fullValues.count(term) || !isSumOfTensors(term))) {
      terms.append(term->operands.begin(), term->operands.end());
      continue;
    }
    if (term != expr && isSumOfTensors(term))
      added.push_back(term);
    else
      coreTerms.push_back(term);
  }
  if (coreTerms.empty())
    return nullptr;
  TensorExpr *core = coreTerms.front();
  for (TensorExpr *term : ArrayRef(coreTerms).drop_front())
    core = builder.getBinary(Kind::Add, core, term);
  return core;
}

bool GradMatcher::collectCandidates(ArrayRef<TensorExpr *> nodes,
                                    TensorExpr *core, Candidates &c) {
  uint64_t fullMask = (uint64_t(1) << rank) - 1;
  AffineMap identity = builder.getIdentityMap();
  for (TensorExpr *node : nodes) {
    // A materialized sum of tensors of the frame (read whole, see match())
    // is one tensor for the roles: dy where autograd sums the gradients of
    // several users of the norm's output (the projections of one
    // normalized value), x where a backward graph recomputes a residual sum.
    if (node != core && isMaterializedSum(node)) {
      c.full.push_back(node);
      continue;
    }
    if (!node->is(Kind::Leaf) || !isa<RankedTensorType>(node->value.getType()))
      continue;
    if (node->deps == fullMask && node->map == identity)
      c.full.push_back(node);
    else if (node->deps == 0)
      c.scalars.push_back(node);
    else
      c.params.push_back(node);
  }
  // dy, x and the tensors added to dx as they are.
  if (c.full.size() > 6)
    return decline("it reads " + Twine(c.full.size()) +
                   " tensors of its shape; at most 6 are tried as dy, x and "
                   "tensors added to dx");
  if (c.full.empty())
    return false;
  // x may also be a value the expression computes (a residual sum, which a
  // backward graph may recompute): what the row sums or DyT's tanh are
  // taken of, a factor of a product summed (`Sum(v)`, `Sum(v * v)`,
  // autograd's `Sum(g * v)`), `tanh(a * v)`, a power of it (`pow(v, 1)`),
  // what a row value is taken from (LayerNorm's `v - mean`), if the
  // function materializes it.
  SmallVector<TensorExpr *> &inputs = c.inputs;
  inputs.assign(c.full.begin(), c.full.end());
  auto addInput = [&](TensorExpr *v) {
    if (v->deps != fullMask || v->containsSum || v->is(Kind::Const))
      return;
    for (TensorExpr *candidate :
         {v, v->is(Kind::Cast) ? v->getOperand(0) : nullptr})
      if (candidate && candidate->deps == fullMask &&
          fullValues.count(candidate) && !llvm::is_contained(inputs, candidate))
        inputs.push_back(candidate);
  };
  for (TensorExpr *node : nodes) {
    if (node->is(Kind::Sum)) {
      SmallVector<TensorExpr *> factors{node->getOperand(0)};
      while (!factors.empty()) {
        TensorExpr *factor = factors.pop_back_val();
        if (factor->is(Kind::Mul))
          factors.append(factor->operands.begin(), factor->operands.end());
        else
          addInput(factor);
      }
    } else if (node->is(Kind::Pow)) {
      addInput(node->getOperand(0));
    } else if (node->is(Kind::Sub) && node->getOperand(1)->deps != fullMask) {
      // LayerNorm's x - mean (the mean read per row).
      addInput(node->getOperand(0));
    } else if (node->is(Kind::Tanh) && node->getOperand(0)->is(Kind::Mul)) {
      addInput(node->getOperand(0)->getOperand(0));
      addInput(node->getOperand(0)->getOperand(1));
    }
  }
  if (inputs.size() < 2 || inputs.size() > 8)
    return decline(inputs.size() < 2
                       ? "it reads no tensor of its shape besides dy to take "
                         "as x"
                       : "more than 8 tensors of its shape could be x");
  return true;
}

std::optional<GradMatch> GradMatcher::match() {
  TensorExpr *expr = root.expr;
  uint64_t fullMask = (uint64_t(1) << rank) - 1;
  if (!expr || expr->deps != fullMask)
    return std::nullopt;

  Candidates c;
  TensorExpr *core = splitAddedTerms(c.added);
  if (!core)
    return std::nullopt;
  // A materialized sum of tensors in the rest (a residual stream value the
  // backward recomputes, x of a later block) is one tensor for the roles,
  // however many it sums.
  SmallVector<TensorExpr *> nodes;
  collectNodes(core, nodes, [&](TensorExpr *node) {
    return node != core && isMaterializedSum(node);
  });
  if (nodes.size() > 4096)
    return std::nullopt;

  // The normalized dims: those of the row sums (LayerNorm, RMSNorm), or
  // of a weight, or the last dim (DyT).
  bool sumsDiffer = false;
  for (TensorExpr *node : nodes) {
    c.hasTanh |= node->is(Kind::Tanh);
    if (node->is(Kind::Sum)) {
      sumsDiffer |= c.sumMask && c.sumMask != node->reducedDims;
      c.sumMask = node->reducedDims;
    }
  }
  classify(nodes, c.hasTanh);
  if (sumsDiffer) {
    decline("its row sums are over different dims");
    return std::nullopt;
  }
  if (!c.sumMask && !c.hasTanh)
    return std::nullopt;
  if (!collectCandidates(nodes, core, c))
    return std::nullopt;

  SmallVector<uint64_t, 2> masks;
  if (c.sumMask) {
    masks.push_back(c.sumMask);
  } else {
    for (TensorExpr *p : c.params)
      if (!llvm::is_contained(masks, p->deps))
        masks.push_back(p->deps);
    if (masks.empty())
      masks.push_back(uint64_t(1) << (rank - 1));
  }
  for (uint64_t mask : masks)
    if (std::optional<GradMatch> m = matchNormalizedDims(mask, c))
      return m;
  return std::nullopt;
}

std::optional<GradMatch> GradMatcher::matchNormalizedDims(uint64_t mask,
                                                          const Candidates &c) {
  uint64_t fullMask = (uint64_t(1) << rank) - 1;
  ArrayRef<int64_t> shape = builder.getFrameShape();
  // Trailing dims only, static.
  int64_t axis = rank;
  while (axis > 0 && (mask >> (axis - 1) & 1))
    --axis;
  if (axis == rank || mask != (fullMask & ~((uint64_t(1) << axis) - 1))) {
    decline("its row sums are not over trailing dims");
    return std::nullopt;
  }
  count = 1.0;
  SmallVector<int64_t> sizes;
  bool staticNormalized = true;
  for (int64_t d = 0; d < rank; ++d) {
    if (d >= axis) {
      staticNormalized &= !ShapedType::isDynamic(shape[d]);
      count *= static_cast<double>(shape[d]);
      sizes.push_back(shape[d]);
    } else {
      sizes.push_back(
          ShapedType::isDynamic(shape[d]) ? 3 : std::min<int64_t>(shape[d], 3));
    }
  }
  if (!staticNormalized || count == 0.0 || count > double(1 << 22)) {
    decline(!staticNormalized ? "the normalized dims are dynamic"
            : count == 0.0    ? "the normalized dims have no elements"
                              : "the rows have more than 2^22 elements");
    return std::nullopt;
  }
  decline("no assignment of its tensors to dy, x, the statistics and the "
          "parameters computes the LayerNorm, RMSNorm or DyT gradient of "
          "DESIGN 2b");
  points = getSamplePoints(sizes, axis, /*firstRow=*/false);
  for (uint64_t seed = 0; seed < kNumFillings; ++seed)
    evaluators[seed] = std::make_unique<NumericEvaluator>(sizes, seed);

  // Statistics: row values read as rows.
  rowValues.clear();
  for (const RowEntry &entry : rowEntries) {
    auto type = cast<RankedTensorType>(entry.value.getType());
    if ((entry.expr->deps & mask) == 0 && isRowValue(type, axis) &&
        entry.map == getRowMap(type, axis))
      rowValues.try_emplace(entry.expr, entry.value);
  }

  // The whole expression, or it less the tensors it adds as they are:
  // one of them, or all.
  targets.assign(1, {});
  for (TensorExpr *term : c.added)
    targets.push_back({term});
  if (c.added.size() > 1)
    targets.push_back(SmallVector<TensorExpr *, 2>(c.added));

  // Parameters: read through the parameter map.
  SmallVector<TensorExpr *> weights{nullptr}, alphas;
  for (TensorExpr *p : c.params)
    if (p->deps == mask && isParamRead(p, axis, /*scalar=*/false))
      weights.push_back(p);
  for (TensorExpr *s : c.scalars)
    if (isParamRead(s, axis, /*scalar=*/true))
      alphas.push_back(s);

  for (TensorExpr *dy : c.full) {
    for (TensorExpr *x : c.inputs) {
      if (x == dy)
        continue;
      // Statistics: those that do not depend on dy.
      SmallVector<TensorExpr *> rows;
      for (auto &[node, value] : rowValues)
        if (!containsNode(node, dy))
          rows.push_back(node);
      llvm::sort(rows,
                 [](TensorExpr *a, TensorExpr *b) { return a->id < b->id; });
      for (TensorExpr *weight : weights) {
        GradMatch m;
        m.dy = dy;
        m.x = x;
        m.weight = weight;
        m.axis = axis;
        m.normalizedMask = mask;
        if (tryKinds(m, c, rows, alphas))
          return m;
      }
    }
  }
  return std::nullopt;
}

bool GradMatcher::tryKinds(GradMatch &m, const Candidates &c,
                           ArrayRef<TensorExpr *> rows,
                           ArrayRef<TensorExpr *> alphas) {
  if (c.hasTanh) {
    m.kind = GradKind::DyT;
    for (TensorExpr *alpha : alphas) {
      m.alpha = alpha;
      if (tryRoles(m))
        return true;
    }
    m.alpha = nullptr;
  }
  if (!c.sumMask)
    return false;
  m.kind = GradKind::RMSNorm;
  // With a weight, also Gemma's `1 + w` (weight_offset 1).
  for (double offset : {0.0, 1.0}) {
    if (offset != 0.0 && !m.weight)
      continue;
    m.weightOffset = offset;
    for (TensorExpr *rstd : rows) {
      m.rstd = rstd;
      if (tryRoles(m))
        return true;
    }
  }
  m.weightOffset = 0.0;
  m.kind = GradKind::LayerNorm;
  for (TensorExpr *mean : rows)
    for (TensorExpr *rstd : rows) {
      if (mean == rstd)
        continue;
      m.mean = mean;
      m.rstd = rstd;
      if (tryRoles(m))
        return true;
    }
  // The normalized input as x: `(x - mean) * rstd` (LayerNorm) or
  // `x * rstd` (RMSNorm) that the forward saved and the backward
  // reads in place of x and the mean.
  m.mean = nullptr;
  m.normalizedInput = true;
  for (GradKind kind : {GradKind::LayerNorm, GradKind::RMSNorm})
    for (double divisor : {1.0, count}) {
      m.kind = kind;
      m.rstdDivisor = divisor;
      for (TensorExpr *rstd : rows) {
        m.rstd = rstd;
        if (tryRoles(m))
          return true;
      }
    }
  return false;
}

//===----------------------------------------------------------------------===//
// Parameter gradients
//===----------------------------------------------------------------------===//

SmallVector<ParamGrad> raisegrad::findParamGrads(TensorExprBuilder &builder,
                                                 const GradMatch &m,
                                                 Operation *rootOp) {
  ArrayRef<int64_t> frame = builder.getFrameShape();
  int64_t rank = frame.size();
  uint64_t fullMask = (uint64_t(1) << rank) - 1;
  uint64_t leadingMask = fullMask & ~m.normalizedMask;
  TensorExprBuilder &b = builder;
  TensorExpr *xh = nullptr, *t = nullptr, *d = nullptr;
  if (m.normalizedInput)
    xh = m.x;
  else if (m.kind == GradKind::LayerNorm)
    xh = b.getBinary(Kind::Mul, b.getBinary(Kind::Sub, m.x, m.mean), m.rstd);
  else if (m.kind == GradKind::RMSNorm)
    xh = b.getBinary(Kind::Mul, m.x, m.rstd);
  else {
    t = b.getUnary(Kind::Tanh, b.getBinary(Kind::Mul, m.alpha, m.x));
    d = b.getBinary(Kind::Sub, b.getConst(1.0, m.dy->type),
                    b.getBinary(Kind::Mul, t, t));
  }
  SmallVector<TensorExpr *, 3> expected{
      b.getSum(b.getBinary(Kind::Mul, m.dy, xh ? xh : t), leadingMask),
      m.kind == GradKind::RMSNorm ? nullptr : b.getSum(m.dy, leadingMask),
      nullptr};
  if (m.kind == GradKind::DyT) {
    TensorExpr *g = m.weight ? b.getBinary(Kind::Mul, m.dy, m.weight) : m.dy;
    expected[2] = b.getSum(
        b.getBinary(Kind::Mul, b.getBinary(Kind::Mul, g, m.x), d), fullMask);
  }
  // Parameter gradients are checked at normalized coordinates of the first
  // row (their values do not depend on the leading coordinates), and must
  // read nothing but the roles too.
  SmallVector<int64_t> sizes;
  for (int64_t i = 0; i < rank; ++i)
    sizes.push_back(i < m.axis ? (ShapedType::isDynamic(frame[i])
                                      ? 3
                                      : std::min<int64_t>(frame[i], 3))
                               : frame[i]);
  SmallVector<SmallVector<int64_t>> points =
      getSamplePoints(sizes, m.axis, /*firstRow=*/true);
  SmallVector<NumericEvaluator> evaluators;
  for (uint64_t seed = kNumFillings; seed < 2 * kNumFillings; ++seed)
    evaluators.emplace_back(sizes, seed);
  SmallVector<ParamGrad> paramGrads;
  bool found3[3] = {false, false, false};
  // Last values first: of a sum and its reshape, the reshape.
  for (Operation &op : llvm::reverse(*rootOp->getBlock())) {
    if (&op == rootOp || op.getNumResults() != 1)
      continue;
    Value value = op.getResult(0);
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type || !isSupportedFloat(type.getElementType()))
      continue;
    for (unsigned index = 0; index < 3; ++index) {
      if (!expected[index] || found3[index])
        continue;
      AffineMap access = getParamAccess(type, m.axis, frame, index == 2);
      if (!access)
        continue;
      TensorExpr *e = builder.evaluate(value, access);
      if (!e || !e->containsSum)
        continue;
      if (!llvm::all_of(evaluators,
                        [&](NumericEvaluator &evaluator) {
                          return agree(evaluator, e, {}, expected[index],
                                       points);
                        }) ||
          !readsOnlyRoles(e, m, {}, frame))
        continue;
      paramGrads.push_back({value, index});
      found3[index] = true;
      break;
    }
  }
  return paramGrads;
}
