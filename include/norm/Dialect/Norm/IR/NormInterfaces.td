//===- NormInterfaces.td - Norm op interface ---------------*- tablegen -*-===//
//
// NormOpInterface: the uniform view of every normalization op that the
// op-agnostic passes and lowerings work on; NormGradOpInterface: the same for
// the gradient ops.
//
//===----------------------------------------------------------------------===//

#ifndef NORM_DIALECT_NORM_IR_NORMINTERFACES_TD
#define NORM_DIALECT_NORM_IR_NORMINTERFACES_TD

include "mlir/IR/OpBase.td"

/// The C++ type of a norm op's operands and results: a ranked tensor value.
defvar Norm_TensorValue = "::mlir::TypedValue<::mlir::RankedTensorType>";

def Norm_NormOpInterface : OpInterface<"NormOpInterface"> {
  let cppNamespace = "::mlir::norm";
  let description = [{
    Uniform access to the operands and attributes of `norm.layer_norm`,
    `norm.rms_norm` and `norm.dyt`. Operands an op does not take read as a
    null value and attributes it does not take read as their neutral value,
    so passes can treat all three ops alike.
  }];
  let methods = [
    InterfaceMethod<"Input tensor `x`.", Norm_TensorValue, "getX", (ins),
      [{ return $_op.getX(); }]>,
    InterfaceMethod<"The `alpha` operand (dyt only), else null.",
      Norm_TensorValue, "getAlpha", (ins),
      [{ return $_op.getAlpha(); }]>,
    InterfaceMethod<"The `weight` operand, or null.", Norm_TensorValue,
      "getWeight", (ins), [{ return $_op.getWeight(); }]>,
    InterfaceMethod<"The `bias` operand, or null.", Norm_TensorValue,
      "getBias", (ins), [{ return $_op.getBias(); }]>,
    InterfaceMethod<"The `residual` operand, or null.", Norm_TensorValue,
      "getResidual", (ins), [{ return $_op.getResidual(); }]>,
    InterfaceMethod<"The normalized result `y`.", Norm_TensorValue,
      "getY", (ins), [{ return $_op.getY(); }]>,
    InterfaceMethod<"The `residual_out` result (x + residual), or null.",
      Norm_TensorValue, "getResidualOut", (ins),
      [{ return $_op.getResidualOut(); }]>,
    InterfaceMethod<"True when the op returns its row statistics "
      "(`return_stats`).", "bool", "getReturnStatsFlag", (ins),
      [{ return $_op.getReturnStatsFlag(); }]>,
    InterfaceMethod<"The `mean` statistic result, or null.",
      Norm_TensorValue, "getMean", (ins), [{ return $_op.getMean(); }]>,
    InterfaceMethod<"The `rstd` statistic result, or null.",
      Norm_TensorValue, "getRstd", (ins), [{ return $_op.getRstd(); }]>,
    InterfaceMethod<"The number of results before the statistics (`y` and "
      "`residual_out`).", "unsigned", "getNumOutputs", (ins),
      [{ return $_op.getNumOutputs(); }]>,
    InterfaceMethod<"The number of statistics results.", "unsigned",
      "getNumStatsResults", (ins), [{ return $_op.getNumStatsResults(); }]>,
    InterfaceMethod<"The `axis` attribute as written (may be negative).",
      "int64_t", "getAxis", (ins),
      [{ return static_cast<int64_t>($_op.getAxis()); }]>,
    InterfaceMethod<"Epsilon (0 for ops without one).", "::llvm::APFloat",
      "getEpsilon", (ins), [{ return $_op.getEpsilon(); }]>,
    InterfaceMethod<"Where epsilon enters the denominator.",
      "::mlir::norm::EpsilonMode", "getEpsilonMode", (ins),
      [{ return $_op.getEpsilonMode(); }]>,
    InterfaceMethod<"Constant added to the weight in the compute type.",
      "::llvm::APFloat", "getWeightOffset", (ins),
      [{ return $_op.getWeightOffset(); }]>,
    InterfaceMethod<"Where the result is rounded to the input type.",
      "::mlir::norm::CastMode", "getCastMode", (ins),
      [{ return $_op.getCastMode(); }]>,
    InterfaceMethod<"The explicit `compute_type`, or null when defaulted.",
      "::mlir::Type", "getExplicitComputeType", (ins),
      [{
        if (auto attr = $_op.getComputeTypeAttr())
          return attr.getValue();
        return ::mlir::Type();
      }]>,
    InterfaceMethod<"True when the op computes mean and variance "
      "(layer_norm), false for a mean square (rms_norm) or no reduction.",
      "bool", "subtractsMean", (ins), [{ return $_op.kSubtractsMean; }]>,
    InterfaceMethod<"True when the op reduces over the normalized dims.",
      "bool", "hasReduction", (ins), [{ return $_op.kHasReduction; }]>
  ];

  let extraSharedClassDeclaration = [{
    /// The type of the statistics results: the leading dims of `x` in the
    /// compute type.
    ::mlir::RankedTensorType getStatsType() {
      return ::mlir::RankedTensorType::get(
          getInputType().getShape().take_front(getNormalizedDim()),
          getComputeElementType());
    }
    /// True when the op returns statistics that something uses.
    bool hasUsedStats() {
      for (unsigned i = 0, e = $_op.getNumStatsResults(); i < e; ++i)
        if (!$_op->getResult($_op.getNumOutputs() + i).use_empty())
          return true;
      return false;
    }
    /// Type of the input `x`.
    ::mlir::RankedTensorType getInputType() {
      return $_op.getX().getType();
    }
    /// First normalized dimension, in [0, rank).
    int64_t getNormalizedDim() {
      return ::mlir::norm::detail::getNormalizedDim($_op.getAxis(),
                                                    getInputType().getRank());
    }
    /// Number of normalized (trailing) dimensions.
    int64_t getNumNormalizedDims() {
      return getInputType().getRank() - getNormalizedDim();
    }
    /// The type arithmetic happens in: `compute_type`, or f32 for
    /// f16/bf16/f32 inputs and f64 for f64 inputs.
    ::mlir::Type getComputeElementType() {
      return ::mlir::norm::detail::getComputeElementType(
          $_op.getExplicitComputeType(), getInputType().getElementType());
    }
  }];
}

def Norm_NormGradOpInterface : OpInterface<"NormGradOpInterface"> {
  let cppNamespace = "::mlir::norm";
  let description = [{
    Uniform access to the operands, attributes and results of
    `norm.layer_norm_grad`, `norm.rms_norm_grad` and `norm.dyt_grad`, as
    `NormOpInterface` gives for the forward ops. Operands and results an op
    does not have read as a null value and attributes it does not take as
    their neutral value, so lowerings can treat all three ops alike.
  }];
  let methods = [
    InterfaceMethod<"The upstream gradient `dy`, of x's type.",
      Norm_TensorValue, "getDy", (ins), [{ return $_op.getDy(); }]>,
    InterfaceMethod<"The forward's (normalized) input `x`.", Norm_TensorValue,
      "getX", (ins), [{ return $_op.getX(); }]>,
    InterfaceMethod<"The forward's `mean` statistic (layer_norm_grad), or "
      "null.", Norm_TensorValue, "getMean", (ins),
      [{
        if constexpr (::mlir::norm::detail::HasGetMean<ConcreteOp>::value)
          return $_op.getMean();
        else
          return {};
      }]>,
    InterfaceMethod<"The forward's `rstd` statistic (layer_norm_grad, "
      "rms_norm_grad), or null.", Norm_TensorValue, "getRstd", (ins),
      [{
        if constexpr (::mlir::norm::detail::HasGetRstd<ConcreteOp>::value)
          return $_op.getRstd();
        else
          return {};
      }]>,
    InterfaceMethod<"The `alpha` operand (dyt_grad), or null.",
      Norm_TensorValue, "getAlpha", (ins),
      [{
        if constexpr (::mlir::norm::detail::HasGetAlpha<ConcreteOp>::value)
          return $_op.getAlpha();
        else
          return {};
      }]>,
    InterfaceMethod<"The `weight` operand, or null.", Norm_TensorValue,
      "getWeight", (ins), [{ return $_op.getWeight(); }]>,
    InterfaceMethod<"True when the forward had a bias (`has_bias`): `dbias` "
      "is returned.", "bool", "getHasBiasFlag", (ins),
      [{ return $_op.getHasBiasFlag(); }]>,
    InterfaceMethod<"The gradient `dx` with respect to `x`.", Norm_TensorValue,
      "getDx", (ins), [{ return $_op.getDx(); }]>,
    InterfaceMethod<"`dweight` (iff `weight`), or null.", Norm_TensorValue,
      "getDweight", (ins), [{ return $_op.getDweight(); }]>,
    InterfaceMethod<"`dbias` (iff `has_bias`), or null.", Norm_TensorValue,
      "getDbias", (ins), [{ return $_op.getDbias(); }]>,
    InterfaceMethod<"`dalpha` (dyt_grad), or null.", Norm_TensorValue,
      "getDalpha", (ins),
      [{
        if constexpr (::mlir::norm::detail::HasGetDalpha<ConcreteOp>::value)
          return $_op.getDalpha();
        else
          return {};
      }]>,
    InterfaceMethod<"The `axis` attribute as written (may be negative).",
      "int64_t", "getAxis", (ins),
      [{ return static_cast<int64_t>($_op.getAxis()); }]>,
    InterfaceMethod<"Constant added to the weight in the compute type "
      "(rms_norm_grad's `weight_offset`, else 0).", "double",
      "getWeightOffsetValue", (ins),
      [{
        if constexpr (::mlir::norm::detail::HasGetWeightOffset<
                          ConcreteOp>::value)
          return $_op.getWeightOffsetAttr().getValueAsDouble();
        else
          return 0.0;
      }]>,
    InterfaceMethod<"The explicit `compute_type`, or null when defaulted.",
      "::mlir::Type", "getExplicitComputeType", (ins),
      [{
        if (auto attr = $_op.getComputeTypeAttr())
          return attr.getValue();
        return ::mlir::Type();
      }]>
  ];

  let extraClassDeclaration = [{
    /// Type of the input `x`.
    ::mlir::RankedTensorType getInputType() {
      return getX().getType();
    }
    /// First normalized dimension, in [0, rank).
    int64_t getNormalizedDim() {
      return ::mlir::norm::detail::getNormalizedDim(getAxis(),
                                                    getInputType().getRank());
    }
    /// Number of normalized (trailing) dimensions.
    int64_t getNumNormalizedDims() {
      return getInputType().getRank() - getNormalizedDim();
    }
    /// The type arithmetic happens in: `compute_type`, or f32 for
    /// f16/bf16/f32 inputs and f64 for f64 inputs.
    ::mlir::Type getComputeElementType() {
      return ::mlir::norm::detail::getComputeElementType(
          getExplicitComputeType(), getInputType().getElementType());
    }
    /// True for layer_norm_grad: x is centered by the forward's mean.
    bool subtractsMean() { return static_cast<bool>(getMean()); }
  }];
}

#endif // NORM_DIALECT_NORM_IR_NORMINTERFACES_TD
