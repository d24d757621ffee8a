# The arrows between modules, as the build and DESIGN.md draw them, checked on every #include of first-party
# code: a module may include its own headers and those of the modules listed for it, nothing else. A
# wrong-way include fails this test with the file, the line and the arrow it breaks.
# Usage: cmake -DSOURCE_DIR=<repo> -P check_layers.cmake
cmake_minimum_required(VERSION 3.22)

# module -> the modules it may include (its own is always allowed, and so is "autotune/version.hpp", the
# version header the build generates).
set(allowed_common "")
set(allowed_nccl common)
set(allowed_profiles nccl common)
set(allowed_topology nccl common)
set(allowed_runners nccl common)
set(allowed_simulator runners topology nccl common)
set(allowed_mpi runners nccl common)
set(allowed_nccl_runner runners nccl common)
# The search engine measures through the Runner seam alone: no simulator, NCCL runner, check or calibration.
set(allowed_search runners profiles nccl common)
# The one place that knows both the simulator and the NCCL runner (through runners/modules).
set(allowed_measure simulator runners topology nccl common)
set(allowed_report search runners topology profiles nccl common)
set(allowed_nccl_tests search runners topology profiles nccl common)
set(allowed_plugins profiles nccl common)
set(allowed_explain simulator runners topology profiles nccl common)
set(allowed_launcher profiles topology nccl common)
set(allowed_check measure simulator runners topology nccl common)
set(allowed_calibrate check measure search simulator runners topology profiles nccl common)
# The store as metric families: reads what calibrate and profiles read (one reader per concept).
set(allowed_metrics calibrate search runners profiles nccl common)
set(allowed_cli metrics launcher explain calibrate check measure nccl_tests report search simulator runners topology
                profiles nccl common)
set(modules common nccl profiles topology runners simulator mpi nccl_runner search measure report nccl_tests
            plugins explain check calibrate launcher metrics cli)

set(violations 0)
foreach(module IN LISTS modules)
  file(GLOB_RECURSE files ${SOURCE_DIR}/${module}/*.cpp ${SOURCE_DIR}/${module}/*.hpp ${SOURCE_DIR}/${module}/*.h
       ${SOURCE_DIR}/${module}/*.c)
  set(ok ${module} autotune ${allowed_${module}})
  foreach(f IN LISTS files)
    file(STRINGS ${f} lines REGEX "^[ \t]*#[ \t]*include[ \t]+\"")
    file(STRINGS ${f} all_lines)
    foreach(line IN LISTS lines)
      string(REGEX MATCH "\"([a-z_]+)/" m "${line}")
      if(NOT m)
        continue()
      endif()
      set(target ${CMAKE_MATCH_1})
      if(NOT target IN_LIST modules AND NOT target STREQUAL "autotune")
        continue()  # a third-party path such as "toml++/..." is not ours
      endif()
      if(NOT target IN_LIST ok)
        list(FIND all_lines "${line}" at)
        math(EXPR at "${at} + 1")
        file(RELATIVE_PATH rel ${SOURCE_DIR} ${f})
        message("${rel}:${at}: ${module}/ may not include ${target}/ (${line}); allowed: ${allowed_${module}}")
        math(EXPR violations "${violations} + 1")
      endif()
    endforeach()
  endforeach()
endforeach()
if(violations GREATER 0)
  message(FATAL_ERROR "${violations} include(s) against the module arrows")
endif()
message("module arrows: every first-party #include goes the allowed way")
