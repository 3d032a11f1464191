# -*- Python -*-
# lit configuration of the norm-mlir regression tests.

import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "NORM"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.norm_obj_root, "test")
config.excludes = ["Inputs", "Unit", "CMakeLists.txt", "lit.cfg.py",
                   "lit.site.cfg.py", "tools"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))

# The sanitizer build (NORM_ENABLE_SANITIZERS): `asan`, for the tests that
# would take too long there (e.g. Soundness/).
if config.norm_sanitizers.upper() in ("ON", "1", "TRUE", "YES"):
    config.available_features.add("asan")

config.substitutions.append(("%shlibext", config.llvm_shlib_ext))
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%norm_src_root", config.norm_src_root))
config.substitutions.append(("%mlir_lib_dir", config.mlir_lib_dir))
config.substitutions.append(
    ("%mlir_runner_utils",
     os.path.join(config.mlir_lib_dir, "libmlir_runner_utils.so")))
config.substitutions.append(
    ("%mlir_c_runner_utils",
     os.path.join(config.mlir_lib_dir, "libmlir_c_runner_utils.so")))

config.substitutions.append(
    ("%norm_tools", os.path.join(config.norm_src_root, "test", "tools")))
config.substitutions.append(
    ("%norm_cuda_runtime",
     os.path.join(config.norm_obj_root, "lib",
                  "libnorm_cuda_runtime" + config.llvm_shlib_ext)))

# The OpenMP runtime that norm-cpu-pipeline{threads>1} output needs (the one
# norm::findOpenMPRuntime() picks for the JIT).
for omp in ("/usr/lib/llvm-22/lib/libomp.so",
            "/usr/lib/x86_64-linux-gnu/libomp.so.5"):
    if os.path.exists(omp):
        config.available_features.add("openmp")
        config.substitutions.append(("%omp_runtime", omp))
        config.substitutions.append(("%omp_dir", os.path.dirname(omp)))
        break

# MPICH (Debian's mpich, libmpich-dev) for the MPI execution tests of
# norm-spmd-pipeline: its mpirun and the library the lowered calls bind to.
import shutil
mpich = "/usr/lib/x86_64-linux-gnu/libmpich.so"
mpirun = shutil.which("mpirun")
if mpirun and os.path.exists(mpich):
    config.available_features.add("mpi")
    config.substitutions.append(("%mpich_lib", mpich))
    config.substitutions.append(("%mpirun", mpirun))

# The CUDA toolkit norm-gpu-pipeline uses by default ($CUDA_HOME, else
# /usr/local/cuda): compile-only GPU tests need its ptxas and libdevice.
cuda_toolkit = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
ptxas = os.path.join(cuda_toolkit, "bin", "ptxas")
libdevice = os.path.join(cuda_toolkit, "nvvm", "libdevice", "libdevice.10.bc")
if os.access(ptxas, os.X_OK) and os.path.exists(libdevice):
    config.available_features.add("cuda-toolkit")
config.substitutions.append(("%ptxas", ptxas))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP",
                                     "CUDA_HOME"])
llvm_config.use_default_substitutions()

llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.norm_tools_dir, append_path=True)

tool_dirs = [config.norm_tools_dir, config.llvm_tools_dir]
tools = ["norm-opt", "norm-bench", "mlir-runner", "mlir-opt", "mlir-translate",
         "split-file"]
llvm_config.add_tool_substitutions(tools, tool_dirs)
