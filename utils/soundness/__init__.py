"""The differential soundness checker of norm-mlir's raising, folding and
fusion passes; utils/norm-soundness.py is its command line."""
