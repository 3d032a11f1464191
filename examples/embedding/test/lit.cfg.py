# An external lit suite on an installed norm-mlir: its RUN lines call
# `norm-opt` from NORM_MLIR_TOOLS_DIR (the bin/ folder of the install
# prefix; find_package(NormMLIR) sets a CMake variable of that name) and
# FileCheck from LLVM_TOOLS_DIR (default /usr/lib/llvm-22/bin):
#
#   NORM_MLIR_TOOLS_DIR=<prefix>/bin /usr/lib/llvm-22/bin/lit -sv examples/embedding/test
#
# Both may also be given as lit parameters (--param NORM_MLIR_TOOLS_DIR=...).
# Lit's scratch files go to NORM_EMBEDDING_LIT_OUT, else to
# <tmp>/norm-embedding-lit-<uid>, never into the source tree.
import os
import sys
import tempfile

import lit.formats


def setting(name, default=None):
    return lit_config.params.get(name, os.environ.get(name, default))


config.name = "norm-embedding"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = setting("NORM_EMBEDDING_LIT_OUT") or os.path.join(
    tempfile.gettempdir(), "norm-embedding-lit-%d" % os.getuid())

tools_dir = setting("NORM_MLIR_TOOLS_DIR")
if not tools_dir or not os.access(os.path.join(tools_dir, "norm-opt"), os.X_OK):
    lit_config.fatal(
        "NORM_MLIR_TOOLS_DIR must name the bin/ folder of an installed "
        "norm-mlir (with norm-opt); got %r" % tools_dir)
llvm_tools_dir = setting("LLVM_TOOLS_DIR", "/usr/lib/llvm-22/bin")
if not os.access(os.path.join(llvm_tools_dir, "FileCheck"), os.X_OK):
    lit_config.fatal("no FileCheck in LLVM_TOOLS_DIR=%r" % llvm_tools_dir)

# The installed norm-opt first, so that no other one on PATH is used.
config.environment["PATH"] = os.pathsep.join(
    [os.path.abspath(tools_dir), llvm_tools_dir,
     config.environment.get("PATH", os.environ.get("PATH", ""))])
config.substitutions.append(("%norm_mlir_tools_dir",
                             os.path.abspath(tools_dir)))
config.substitutions.append(("%python", sys.executable))
