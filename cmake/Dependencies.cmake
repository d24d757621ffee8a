# Every third-party dependency is found here, once. A missing required one stops configure and names the
# Debian package that provides it (scripts/install-deps.sh installs them all).

function(autotune_require found what package)
  if(NOT ${found})
    message(FATAL_ERROR "${what} not found: install the Debian package '${package}' "
                        "(scripts/install-deps.sh installs every dependency)")
  endif()
endfunction()

find_package(PkgConfig QUIET)
autotune_require(PKG_CONFIG_FOUND "pkg-config" "pkg-config")

# toml++: the profiles library compiles its implementation into one translation unit of its own
# (TOML_IMPLEMENTATION), so nothing links libtomlplusplus.so and the plugin carries the parser statically.
find_path(TOMLPP_INCLUDE_DIR toml++/toml.h)
autotune_require(TOMLPP_INCLUDE_DIR "toml++ (toml++/toml.h)" "libtomlplusplus-dev")
add_library(autotune_tomlpp INTERFACE)
target_include_directories(autotune_tomlpp SYSTEM INTERFACE ${TOMLPP_INCLUDE_DIR})
target_compile_definitions(autotune_tomlpp INTERFACE TOML_HEADER_ONLY=0 TOML_SHARED_LIB=0
  # toml++ 3.3 asserts (Debug builds) on some malformed input, e.g. a control character in a table header,
  # where Release builds report a clean parse error; bad input must get the same error in every build type.
  # (Object-like on purpose: CMake drops function-style definitions; TOML_ASSERT(x) becomes static_cast<void>(x).)
  "TOML_ASSERT=static_cast<void>")

# xxHash, header-only (XXH_INLINE_ALL): the compiled rules beside a profile carry an XXH3 digest of the
# profile's text, and the plugin checks it without linking anything new.
find_path(XXHASH_INCLUDE_DIR xxhash.h)
autotune_require(XXHASH_INCLUDE_DIR "xxHash (xxhash.h)" "libxxhash-dev")
add_library(autotune_xxhash INTERFACE)
target_include_directories(autotune_xxhash SYSTEM INTERFACE ${XXHASH_INCLUDE_DIR})

pkg_check_modules(HWLOC IMPORTED_TARGET hwloc>=2.0)
autotune_require(HWLOC_FOUND "hwloc >= 2" "libhwloc-dev")

find_path(IBVERBS_INCLUDE_DIR infiniband/verbs.h)
find_library(IBVERBS_LIBRARY ibverbs)
if(IBVERBS_INCLUDE_DIR AND IBVERBS_LIBRARY)
  set(IBVERBS_FOUND TRUE)
endif()
autotune_require(IBVERBS_FOUND "libibverbs" "libibverbs-dev")
add_library(autotune_ibverbs INTERFACE)
target_include_directories(autotune_ibverbs SYSTEM INTERFACE ${IBVERBS_INCLUDE_DIR})
target_link_libraries(autotune_ibverbs INTERFACE ${IBVERBS_LIBRARY})

find_package(pugixml QUIET)
autotune_require(pugixml_FOUND "pugixml" "libpugixml-dev")
find_package(nlohmann_json 3 QUIET)
autotune_require(nlohmann_json_FOUND "nlohmann-json" "nlohmann-json3-dev")
find_package(fmt QUIET)
autotune_require(fmt_FOUND "fmt" "libfmt-dev")
find_package(Boost 1.71 QUIET COMPONENTS program_options)
autotune_require(Boost_FOUND "Boost.Program_options" "libboost-program-options-dev")
find_package(Threads REQUIRED)

# MPI is optional: without it the runners run single-process only.
find_package(MPI QUIET COMPONENTS C)
if(MPI_C_FOUND)
  message(STATUS "MPI found: multi-process runs enabled")
else()
  message(STATUS "MPI not found (Debian: libopenmpi-dev): runs are single-process only")
endif()

# CUDA runtime and NCCL are optional for the build as a whole (a login node may lack them); when found, the
# NCCL runner is compiled and linked against them.
find_package(CUDAToolkit QUIET)
list(APPEND CMAKE_MODULE_PATH ${CMAKE_CURRENT_LIST_DIR})
find_package(NCCL QUIET)
option(AUTOTUNE_NCCL_RUNNER "Build the NCCL runner (measuring on GPUs) when CUDA and NCCL are found" ON)
if(NOT AUTOTUNE_NCCL_RUNNER)
  set(AUTOTUNE_WITH_NCCL OFF)
  message(STATUS "AUTOTUNE_NCCL_RUNNER=OFF: the NCCL runner is not built")
elseif(CUDAToolkit_FOUND AND NCCL_FOUND)
  set(AUTOTUNE_WITH_NCCL ON)
  message(STATUS "NCCL ${NCCL_HEADER_VERSION} and CUDA ${CUDAToolkit_VERSION} found: building the NCCL runner")
else()
  set(AUTOTUNE_WITH_NCCL OFF)
  message(STATUS "CUDA runtime or NCCL not found: the NCCL runner is not built (set NCCL_HOME / CUDA_HOME)")
endif()

if(AUTOTUNE_BUILD_TESTS)
  find_package(Catch2 2 QUIET)
  autotune_require(Catch2_FOUND "Catch2 v2" "catch2")
endif()
if(AUTOTUNE_BUILD_BENCH)
  find_package(benchmark QUIET)
  autotune_require(benchmark_FOUND "Google Benchmark" "libbenchmark-dev")
endif()

# autotune_module(NAME PUBLIC_LIBS... [PRIVATE PRIVATE_LIBS...]): one static library from every *.cpp in the
# calling folder. A module folder that has no sources yet becomes an interface library, so the tree always
# configures while modules land.
function(autotune_module name)
  cmake_parse_arguments(ARG "" "" "PUBLIC;PRIVATE" ${ARGN})
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  if(sources)
    add_library(${name} STATIC ${sources})
    target_link_libraries(${name} PUBLIC autotune_flags ${ARG_PUBLIC} PRIVATE ${ARG_PRIVATE})
  else()
    add_library(${name} INTERFACE)
    target_link_libraries(${name} INTERFACE autotune_flags ${ARG_PUBLIC})
  endif()
endfunction()
