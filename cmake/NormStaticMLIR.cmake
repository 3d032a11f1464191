#===- NormStaticMLIR.cmake - Link MLIR's static archives -----------------===#
#
# Debian's MLIR package exports every MLIR library twice: as the shared
# libMLIR.so (target MLIR) and as static archives (MLIRIR, MLIRCAPIIR, ...).
# Some static targets list the shared MLIR among their link dependencies
# (e.g. MLIRExecutionEngine), so linking them by target name would drag
# libMLIR.so into a library that already contains MLIR. The function below
# walks the dependency graph itself and returns the archive files only.
#
#===----------------------------------------------------------------------===#

# norm_collect_static_mlir_archives(<prefix> <target>...)
#
# Sets <prefix>_ARCHIVES to the archive files (generator expressions) of the
# given static MLIR targets and of every static target they depend on, and
# <prefix>_OTHER_LIBS to their other link dependencies (libLLVM.so, system
# libraries). The shared MLIR libraries are left out.
function(norm_collect_static_mlir_archives prefix)
  set(seen)
  set(archives)
  set(others)
  set(work ${ARGN})
  while(work)
    list(POP_FRONT work item)
    # Exported link interfaces wrap private dependencies in $<LINK_ONLY:...>.
    string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" item "${item}")
    if(item IN_LIST seen)
      continue()
    endif()
    list(APPEND seen "${item}")
    if(item STREQUAL "MLIR" OR item STREQUAL "MLIRExecutionEngineShared" OR
       item STREQUAL "MLIR-C")
      continue()
    endif()
    if(NOT TARGET "${item}")
      list(APPEND others "${item}")
      continue()
    endif()
    get_target_property(type "${item}" TYPE)
    if(type STREQUAL "STATIC_LIBRARY")
      list(APPEND archives "$<TARGET_FILE:${item}>")
    elseif(NOT type STREQUAL "INTERFACE_LIBRARY")
      list(APPEND others "${item}")
      continue()
    endif()
    get_target_property(deps "${item}" INTERFACE_LINK_LIBRARIES)
    if(deps)
      list(APPEND work ${deps})
    endif()
  endwhile()
  list(REMOVE_DUPLICATES others)
  set(${prefix}_ARCHIVES ${archives} PARENT_SCOPE)
  set(${prefix}_OTHER_LIBS ${others} PARENT_SCOPE)
endfunction()
