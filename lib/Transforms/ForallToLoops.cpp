//===- ForallToLoops.cpp - Loops from bufferized scf.forall ----*- C++ -*-===//
//
// norm-forall-to-loops: after bufferization, turns each scf.forall into
// scf.parallel or scf.for, and applies what norm-lower-cpu asked for with
// the dialect's loop attributes (docs/Passes.md#internal-attributes):
// non-temporal stores of aligned full vectors and a prefetch of the next
// row.
//
//===----------------------------------------------------------------------===//

#include "norm/Dialect/Norm/IR/NormDialect.h"
#include "norm/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace norm {
#define GEN_PASS_DEF_NORMFORALLTOLOOPSPASS
#include "norm/Transforms/Passes.h.inc"
} // namespace norm
} // namespace mlir

using namespace mlir;
using namespace mlir::norm;

/// Alignment (bytes) the non-temporal stores rely on.
static constexpr int64_t kNontemporalAlignment = 64;

/// Returns the full-vector, in-bounds, unmasked 1-D transfer_writes of
/// `loop` into rows of 2-D memrefs defined above the loop whose vector size
/// is a multiple of the alignment, i.e. the stores that become aligned
/// non-temporal stores when each row starts aligned. Elements narrower than
/// a byte (f4E2M1FN, packed later by norm-pack-fp4) keep regular stores.
static SmallVector<vector::TransferWriteOp>
getNontemporalCandidates(scf::ForallOp loop) {
  SmallVector<vector::TransferWriteOp> writes;
  loop->walk([&](vector::TransferWriteOp write) {
    auto memrefType = dyn_cast<MemRefType>(write.getBase().getType());
    auto subview = write.getBase().getDefiningOp<memref::SubViewOp>();
    VectorType vectorType = write.getVectorType();
    if (!memrefType || write.getMask() || vectorType.getRank() != 1 ||
        vectorType.getElementTypeBitWidth() % 8 != 0 ||
        !write.getPermutationMap().isMinorIdentity() ||
        !write.isDimInBounds(0) || !memrefType.isLastDimUnitStride() ||
        !subview || subview.getSourceType().getRank() != 2 ||
        loop->isAncestor(subview.getSource().getParentBlock()->getParentOp()))
      return;
    int64_t bytes =
        vectorType.getNumElements() * vectorType.getElementTypeBitWidth() / 8;
    if (bytes % kNontemporalAlignment == 0)
      writes.push_back(write);
  });
  return writes;
}

/// The minimum trip count `loop` carries in attribute `name`
/// (`norm.parallel_min_trips`, `norm.nontemporal_min_trips`) when it can be
/// honoured (a 1-D loop from 0 by 1), else 0.
static int64_t getMinTrips(scf::ForallOp loop, StringRef name) {
  auto trips = loop->getAttrOfType<IntegerAttr>(name);
  if (!trips || loop.getRank() != 1 ||
      getConstantIntValue(loop.getMixedLowerBound()[0]) != 0 ||
      getConstantIntValue(loop.getMixedStep()[0]) != 1)
    return 0;
  return trips.getInt();
}

/// i1 "`loop` (1-D, from 0 by 1) runs at least `minTrips` iterations",
/// built at the rewriter's insertion point.
static Value buildHasMinTrips(RewriterBase &rewriter, scf::ForallOp loop,
                              int64_t minTrips) {
  Location loc = loop.getLoc();
  Value trips = getValueOrCreateConstantIndexOp(rewriter, loc,
                                                loop.getMixedUpperBound()[0]);
  return arith::CmpIOp::create(
      rewriter, loc, arith::CmpIPredicate::uge, trips,
      arith::ConstantIndexOp::create(rewriter, loc, minTrips));
}

/// An i16 zero that LLVM cannot see as a constant: an empty inline asm
/// (constraint "=r,0": any general register, no instruction, on every
/// target) returning its operand.
static Value buildOpaqueZero(RewriterBase &rewriter, Location loc) {
  Value zero = arith::ConstantIntOp::create(rewriter, loc, 0, 16);
  return LLVM::InlineAsmOp::create(
             rewriter, loc, rewriter.getI16Type(), ValueRange{zero},
             /*asm_string=*/"", /*constraints=*/"=r,0",
             /*has_side_effects=*/false, /*is_align_stack=*/false,
             LLVM::tailcallkind::TailCallKind::None,
             /*asm_dialect=*/LLVM::AsmDialectAttr(),
             /*operand_attrs=*/ArrayAttr())
      .getResult(0);
}

/// `value` (a bf16 or f16 vector) as the xor of its encodings with
/// `opaqueZero` (broadcast): the same bits, which LLVM no longer knows to
/// come from a conversion.
static Value hideConversion(RewriterBase &rewriter, Location loc, Value value,
                            Value opaqueZero) {
  auto type = cast<VectorType>(value.getType());
  VectorType intType = type.clone(rewriter.getI16Type());
  Value bits = arith::BitcastOp::create(rewriter, loc, intType, value);
  Value zeros = vector::BroadcastOp::create(rewriter, loc, intType, opaqueZero);
  Value hidden = arith::XOrIOp::create(rewriter, loc, bits, zeros);
  return arith::BitcastOp::create(rewriter, loc, type, hidden);
}

/// Versions `loop` on the alignment of the rows it writes: when every
/// written row starts on a kNontemporalAlignment boundary (the buffer and
/// the row pitch are aligned), a clone writes full vectors with aligned
/// non-temporal stores (no read for ownership); otherwise the original
/// loop runs with regular stores. The f16 truncations feeding those stores,
/// and with `nativeBF16` the bf16 ones, stay truncations whose result is
/// xor-ed with an opaque zero; other bf16 truncations become integer ops.
static void useNontemporalStores(RewriterBase &rewriter, scf::ForallOp loop,
                                 bool nativeBF16) {
  SmallVector<vector::TransferWriteOp> writes = getNontemporalCandidates(loop);
  if (writes.empty())
    return;
  Location loc = loop.getLoc();
  rewriter.setInsertionPoint(loop);
  Value alignment =
      arith::ConstantIndexOp::create(rewriter, loc, kNontemporalAlignment);
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value aligned;
  llvm::SmallDenseSet<Value> checked;
  for (vector::TransferWriteOp write : writes) {
    Value source =
        write.getBase().getDefiningOp<memref::SubViewOp>().getSource();
    if (!checked.insert(source).second)
      continue;
    int64_t elementBytes = write.getVectorType().getElementTypeBitWidth() / 8;
    Value bytes = arith::ConstantIndexOp::create(rewriter, loc, elementBytes);
    auto metadata =
        memref::ExtractStridedMetadataOp::create(rewriter, loc, source);
    Value pointer =
        memref::ExtractAlignedPointerAsIndexOp::create(rewriter, loc, source);
    Value start = arith::AddIOp::create(
        rewriter, loc, pointer,
        arith::MulIOp::create(rewriter, loc, metadata.getOffset(), bytes));
    Value pitch =
        arith::MulIOp::create(rewriter, loc, metadata.getStrides()[0], bytes);
    for (Value value : {start, pitch}) {
      Value isAligned = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::eq,
          arith::RemUIOp::create(rewriter, loc, value, alignment), zero);
      aligned = aligned
                    ? arith::AndIOp::create(rewriter, loc, aligned, isAligned)
                    : isAligned;
    }
  }

  // norm.nontemporal_min_trips: only loops of that many rows (dynamic row
  // counts; small calls keep their outputs in cache).
  if (int64_t minTrips = getMinTrips(
          loop, NormDialect::NontemporalMinTripsAttrHelper::getNameStr()))
    aligned = arith::AndIOp::create(rewriter, loc, aligned,
                                    buildHasMinTrips(rewriter, loop, minTrips));
  auto ifOp = scf::IfOp::create(rewriter, loc, TypeRange(), aligned,
                                /*withElseRegion=*/true);
  rewriter.setInsertionPointToStart(ifOp.thenBlock());
  IRMapping mapping;
  // The 16-bit float truncations these stores write: f16 ones, and bf16
  // ones with native bf16, stay and are hidden behind an opaque zero; other
  // bf16 ones become integer ops.
  auto getTruncation = [](vector::TransferWriteOp write) {
    auto truncation = write.getVector().getDefiningOp<arith::TruncFOp>();
    Type element =
        truncation ? getElementTypeOrSelf(truncation.getType()) : Type();
    return element && (element.isF16() || element.isBF16()) ? truncation
                                                            : nullptr;
  };
  auto isHidden = [&](arith::TruncFOp truncation) {
    return truncation &&
           (nativeBF16 || getElementTypeOrSelf(truncation.getType()).isF16());
  };
  Value opaqueZero;
  if (llvm::any_of(writes, [&](vector::TransferWriteOp write) {
        return isHidden(getTruncation(write));
      }))
    opaqueZero = buildOpaqueZero(rewriter, loc);
  auto alignedLoop = cast<scf::ForallOp>(rewriter.clone(*loop, mapping));
  for (StringRef name :
       {NormDialect::NontemporalStoresAttrHelper::getNameStr(),
        NormDialect::NontemporalMinTripsAttrHelper::getNameStr()}) {
    alignedLoop->removeAttr(name);
    loop->removeAttr(name);
  }
  rewriter.moveOpBefore(loop, ifOp.elseBlock()->getTerminator());
  SmallVector<Operation *> bf16Truncations;
  for (vector::TransferWriteOp write : writes) {
    auto cloned =
        cast<vector::TransferWriteOp>(mapping.lookup(write.getOperation()));
    rewriter.setInsertionPoint(cloned);
    Value value = cloned.getVector();
    arith::TruncFOp truncation = getTruncation(cloned);
    if (isHidden(truncation))
      value = hideConversion(rewriter, loc, value, opaqueZero);
    else if (truncation)
      bf16Truncations.push_back(truncation);
    rewriter.replaceOpWithNewOp<vector::StoreOp>(
        cloned, value, cloned.getBase(), cloned.getIndices(),
        /*nontemporal=*/true, llvm::MaybeAlign(kNontemporalAlignment));
  }
  // LLVM 22 turns a non-temporal store of a vector computed by
  // vcvtneps2bf16 (or, with AVX-512 FP16, vcvtps2phx) into a regular store
  // (with a read for ownership), whatever integer type it is bitcast to,
  // unless an integer op it cannot fold (the xor with an opaque zero: one
  // instruction per vector) hides where the value comes from. Without
  // native bf16, bf16 values are rounded with integer ops.
  if (!bf16Truncations.empty()) {
    RewritePatternSet patterns(loop.getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingOps);
    (void)applyOpPatternsGreedily(bf16Truncations, std::move(patterns), config);
  }
}

/// Bytes of one cache line, the prefetch granularity.
static constexpr int64_t kCacheLineBytes = 64;

/// In the last row sweep of `loop` (its last top-level scf.for), prefetches
/// for every full-vector read of a row `%i` of a 2-D buffer defined above
/// the loop the same columns of row `%i + step` (clamped to the last row),
/// the row this thread reads next: one prefetch per cache line. A loop over
/// blocks of rows (its last top-level scf.for runs over the rows of the
/// block, one or a group at a time) has its last sweep in that row loop:
/// the reads of a row index computed in the row loop's body prefetch that
/// index + the row loop's step.
static void prefetchNextRow(RewriterBase &rewriter, scf::ForallOp loop) {
  if (loop.getRank() != 1)
    return;
  auto lastLoopIn = [](Block *block) {
    scf::ForOp last;
    for (Operation &op : *block)
      if (auto forOp = dyn_cast<scf::ForOp>(op))
        last = forOp;
    return last;
  };
  Block *body = loop.getBody();
  scf::ForOp lastSweep = lastLoopIn(body);
  if (!lastSweep)
    return;
  Value row = loop.getInductionVar(0);
  Block *rowBody = body;
  OpFoldResult step = loop.getMixedStep()[0];
  if (scf::ForOp inner = lastLoopIn(lastSweep.getBody())) {
    // Blocks of rows: the row index the inner sweep reads is defined in the
    // row loop's body (otherwise the loop is a sweep with inner loops, as
    // the groups of a quantization, and every read in it counts).
    vector::TransferReadOp first;
    inner->walk([&](vector::TransferReadOp read) {
      if (!first && read.getIndices().size() == 2)
        first = read;
    });
    if (first &&
        first.getIndices()[0].getParentBlock() == lastSweep.getBody()) {
      row = first.getIndices()[0];
      rowBody = lastSweep.getBody();
      step = lastSweep.getStep();
      lastSweep = inner;
    }
  }
  // The reads of `row` or, in a row loop, of any row index its body
  // computes (a group of rows).
  auto readsRowOfLoop = [&](Value index) {
    return index == row ||
           (rowBody != body && index.getParentBlock() == rowBody);
  };
  SmallVector<vector::TransferReadOp> reads;
  lastSweep->walk([&](vector::TransferReadOp read) {
    auto memrefType = dyn_cast<MemRefType>(read.getBase().getType());
    VectorType vectorType = read.getVectorType();
    if (!memrefType || memrefType.getRank() != 2 || read.getMask() ||
        vectorType.getRank() != 1 || !read.isDimInBounds(0) ||
        !memrefType.isLastDimUnitStride() ||
        !readsRowOfLoop(read.getIndices()[0]) ||
        loop->isAncestor(read.getBase().getParentBlock()->getParentOp()))
      return;
    reads.push_back(read);
  });
  if (reads.empty())
    return;

  Location loc = loop.getLoc();
  llvm::SmallDenseMap<std::pair<Value, Value>, Value> nextRows;
  for (vector::TransferReadOp read : reads) {
    Value base = read.getBase();
    Value rowIndex = read.getIndices()[0];
    Value &next = nextRows[{base, rowIndex}];
    if (!next) {
      // min(%i + step, rows - 1), computed once per buffer and row where
      // the row index is known (the top of the loop body, or after the
      // index).
      if (Operation *def = rowIndex.getDefiningOp())
        rewriter.setInsertionPointAfter(def);
      else
        rewriter.setInsertionPointToStart(rowBody);
      Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
      Value stepValue = getValueOrCreateConstantIndexOp(rewriter, loc, step);
      Value last = arith::SubIOp::create(
          rewriter, loc, memref::DimOp::create(rewriter, loc, base, 0), one);
      next = arith::MinSIOp::create(
          rewriter, loc,
          arith::AddIOp::create(rewriter, loc, rowIndex, stepValue), last);
    }
    VectorType vectorType = read.getVectorType();
    int64_t elementBytes =
        std::max<int64_t>(1, vectorType.getElementTypeBitWidth() / 8);
    int64_t bytes = vectorType.getNumElements() * elementBytes;
    int64_t lineElements = std::max<int64_t>(1, kCacheLineBytes / elementBytes);
    rewriter.setInsertionPoint(read);
    Value col = read.getIndices()[1];
    for (int64_t offset = 0; offset * elementBytes < bytes;
         offset += lineElements) {
      Value index = offset == 0
                        ? col
                        : arith::AddIOp::create(rewriter, loc, col,
                                                arith::ConstantIndexOp::create(
                                                    rewriter, loc, offset));
      memref::PrefetchOp::create(rewriter, loc, base, ValueRange{next, index},
                                 /*isWrite=*/false, /*localityHint=*/2,
                                 /*isDataCache=*/true);
    }
  }
}

/// Converts `loop` (1-D, from 0 by 1) into an scf.if on its trip count: an
/// scf.parallel from `minTrips` iterations on, an scf.for below, so that
/// small inputs do not pay for waking a thread team. Runs after
/// bufferization, where versioning a loop copies no data.
static LogicalResult convertWithMinTrips(RewriterBase &rewriter,
                                         scf::ForallOp loop, int64_t minTrips) {
  Location loc = loop.getLoc();
  rewriter.setInsertionPoint(loop);
  Value large = buildHasMinTrips(rewriter, loop, minTrips);
  auto ifOp = scf::IfOp::create(rewriter, loc, TypeRange{}, large,
                                /*withElseRegion=*/true);
  rewriter.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  auto parallel = cast<scf::ForallOp>(rewriter.clone(*loop));
  rewriter.setInsertionPoint(ifOp.elseBlock()->getTerminator());
  auto sequential = cast<scf::ForallOp>(rewriter.clone(*loop));
  rewriter.eraseOp(loop);
  rewriter.setInsertionPoint(parallel);
  if (failed(scf::forallToParallelLoop(rewriter, parallel)))
    return failure();
  rewriter.setInsertionPoint(sequential);
  return scf::forallToForLoop(rewriter, sequential);
}

namespace {

struct NormForallToLoopsPass
    : public norm::impl::NormForallToLoopsPassBase<NormForallToLoopsPass> {
  using NormForallToLoopsPassBase::NormForallToLoopsPassBase;
  void runOnOperation() override;
};

} // namespace

void NormForallToLoopsPass::runOnOperation() {
  if (threads < 1) {
    getOperation()->emitError(
        "norm-forall-to-loops: option 'threads' must be >= 1, got ")
        << unsigned(threads);
    return signalPassFailure();
  }
  IRRewriter rewriter(&getContext());
  SmallVector<scf::ForallOp> loops;
  getOperation()->walk([&](scf::ForallOp loop) { loops.push_back(loop); });
  for (scf::ForallOp loop : loops) {
    if (loop->getNumResults() != 0) {
      loop->emitError("norm-forall-to-loops expects bufferized loops");
      return signalPassFailure();
    }
  }
  for (scf::ForallOp loop : loops)
    if (loop->hasAttr(NormDialect::NontemporalStoresAttrHelper::getNameStr()))
      useNontemporalStores(rewriter, loop, nativeBF16);

  loops.clear();
  getOperation()->walk([&](scf::ForallOp loop) { loops.push_back(loop); });
  for (scf::ForallOp loop : loops) {
    if (!loop->hasAttr(NormDialect::PrefetchNextRowAttrHelper::getNameStr()))
      continue;
    loop->removeAttr(NormDialect::PrefetchNextRowAttrHelper::getNameStr());
    if (prefetch)
      prefetchNextRow(rewriter, loop);
  }
  for (scf::ForallOp loop : loops) {
    rewriter.setInsertionPoint(loop);
    bool sequential =
        threads <= 1 ||
        loop->hasAttr(NormDialect::SequentialAttrHelper::getNameStr());
    int64_t minTrips =
        sequential
            ? 0
            : getMinTrips(
                  loop, NormDialect::ParallelMinTripsAttrHelper::getNameStr());
    LogicalResult converted =
        sequential     ? scf::forallToForLoop(rewriter, loop)
        : minTrips > 1 ? convertWithMinTrips(rewriter, loop, minTrips)
                       : scf::forallToParallelLoop(rewriter, loop);
    if (failed(converted)) {
      loop->emitError("failed to convert scf.forall");
      return signalPassFailure();
    }
  }
}
