//===- NormAttrs.td - Norm dialect attributes --------------*- tablegen -*-===//
//
// Enum attributes and attribute constraints of the norm dialect.
//
//===----------------------------------------------------------------------===//

#ifndef NORM_DIALECT_NORM_IR_NORMATTRS_TD
#define NORM_DIALECT_NORM_IR_NORMATTRS_TD

include "norm/Dialect/Norm/IR/NormDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// EpsilonMode
//===----------------------------------------------------------------------===//

def Norm_EpsilonModeInsideSqrt : I32EnumAttrCase<"inside_sqrt", 0>;
def Norm_EpsilonModeOutsideSqrt : I32EnumAttrCase<"outside_sqrt", 1>;
def Norm_EpsilonModeClamp : I32EnumAttrCase<"clamp", 2>;

def Norm_EpsilonModeEnum : I32EnumAttr<"EpsilonMode",
    "where epsilon enters the RMS denominator",
    [Norm_EpsilonModeInsideSqrt, Norm_EpsilonModeOutsideSqrt,
     Norm_EpsilonModeClamp]> {
  let cppNamespace = "::mlir::norm";
  let genSpecializedAttr = 0;
}

/// `#norm<epsilon_mode inside_sqrt|outside_sqrt|clamp>`: `rsqrt(ms + eps)`,
/// `1 / (sqrt(ms) + eps)` or `1 / max(sqrt(ms), eps)`.
def Norm_EpsilonModeAttr
    : EnumAttr<Norm_Dialect, Norm_EpsilonModeEnum, "epsilon_mode"> {
  let assemblyFormat = "$value";
}

//===----------------------------------------------------------------------===//
// CastMode
//===----------------------------------------------------------------------===//

def Norm_CastModeFinal : I32EnumAttrCase<"final", 0>;
def Norm_CastModeBeforeWeight : I32EnumAttrCase<"before_weight", 1>;

def Norm_CastModeEnum : I32EnumAttr<"CastMode",
    "where the result is rounded to the input element type",
    [Norm_CastModeFinal, Norm_CastModeBeforeWeight]> {
  let cppNamespace = "::mlir::norm";
  let genSpecializedAttr = 0;
}

/// `#norm<cast_mode final|before_weight>`: round once at the end, or round
/// the normalized value before the weight is applied (Hugging Face LLaMA).
def Norm_CastModeAttr : EnumAttr<Norm_Dialect, Norm_CastModeEnum, "cast_mode"> {
  let assemblyFormat = "$value";
}

//===----------------------------------------------------------------------===//
// ScaleRounding
//===----------------------------------------------------------------------===//

def Norm_ScaleRoundingFloor : I32EnumAttrCase<"floor", 0>;
def Norm_ScaleRoundingUp : I32EnumAttrCase<"up", 1>;

def Norm_ScaleRoundingEnum : I32EnumAttr<"ScaleRounding",
    "how a power-of-two (UE8M0) group scale is chosen",
    [Norm_ScaleRoundingFloor, Norm_ScaleRoundingUp]> {
  let cppNamespace = "::mlir::norm";
  let genSpecializedAttr = 0;
}

/// `#norm<scale_rounding floor|up>`: OCP MX's `2^(floor(log2(amax)) - emax)`
/// or the smallest power of two `>= amax / QMAX`.
def Norm_ScaleRoundingAttr
    : EnumAttr<Norm_Dialect, Norm_ScaleRoundingEnum, "scale_rounding"> {
  let assemblyFormat = "$value";
}

//===----------------------------------------------------------------------===//
// ScaleLayout
//===----------------------------------------------------------------------===//

def Norm_ScaleLayoutRowMajor : I32EnumAttrCase<"row_major", 0>;
def Norm_ScaleLayoutSwizzled128x4 : I32EnumAttrCase<"swizzled_128x4", 1>;

def Norm_ScaleLayoutEnum : I32EnumAttr<"ScaleLayout",
    "the memory layout of block scales",
    [Norm_ScaleLayoutRowMajor, Norm_ScaleLayoutSwizzled128x4]> {
  let cppNamespace = "::mlir::norm";
  let genSpecializedAttr = 0;
}

/// `#norm<scale_layout row_major|swizzled_128x4>`: the scales shaped like
/// the input with the last dim `N / G`, or the flat tile layout of the
/// block-scaled matmuls (128 rows x 4 scales per 512-byte tile).
def Norm_ScaleLayoutAttr
    : EnumAttr<Norm_Dialect, Norm_ScaleLayoutEnum, "scale_layout"> {
  let assemblyFormat = "$value";
}

//===----------------------------------------------------------------------===//
// Attribute constraints
//===----------------------------------------------------------------------===//

/// An f32 or f64 FloatAttr; its value is read as an APFloat.
def Norm_EpsilonAttr : Attr<
    CPred<"::llvm::isa<::mlir::FloatAttr>($_self) && "
          "(::llvm::cast<::mlir::FloatAttr>($_self).getType().isF32() || "
          "::llvm::cast<::mlir::FloatAttr>($_self).getType().isF64())">,
    "32-bit or 64-bit float attribute"> {
  let storageType = "::mlir::FloatAttr";
  let returnType = "::llvm::APFloat";
  let convertFromStorage = "$_self.getValue()";
  let constBuilderCall = "$_builder.getFloatAttr($_builder.getF32Type(), $0)";
}

/// A floating-point type given as a TypeAttr (the arithmetic type).
def Norm_ComputeTypeAttr : TypeAttrOf<AnyFloat>;

#endif // NORM_DIALECT_NORM_IR_NORMATTRS_TD
