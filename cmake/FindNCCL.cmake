# Finds NCCL's header and library. Looks in $NCCL_HOME, $CUDA_HOME and /usr/local/cuda, then the system.
# Defines NCCL_FOUND, NCCL::nccl (imported target) and NCCL_HEADER_VERSION (e.g. 22809).
find_path(NCCL_INCLUDE_DIR nccl.h
  HINTS ENV NCCL_HOME ENV CUDA_HOME /usr/local/cuda
  PATH_SUFFIXES include)
find_library(NCCL_LIBRARY NAMES nccl libnccl.so.2
  HINTS ENV NCCL_HOME ENV CUDA_HOME /usr/local/cuda
  PATH_SUFFIXES lib lib64)

if(NCCL_INCLUDE_DIR AND EXISTS "${NCCL_INCLUDE_DIR}/nccl.h")
  file(STRINGS "${NCCL_INCLUDE_DIR}/nccl.h" _nccl_version_line REGEX "^#define NCCL_VERSION_CODE +[0-9]+")
  string(REGEX MATCH "[0-9]+" NCCL_HEADER_VERSION "${_nccl_version_line}")
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(NCCL REQUIRED_VARS NCCL_LIBRARY NCCL_INCLUDE_DIR VERSION_VAR NCCL_HEADER_VERSION)

if(NCCL_FOUND AND NOT TARGET NCCL::nccl)
  add_library(NCCL::nccl UNKNOWN IMPORTED)
  set_target_properties(NCCL::nccl PROPERTIES
    IMPORTED_LOCATION "${NCCL_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${NCCL_INCLUDE_DIR}")
endif()
mark_as_advanced(NCCL_INCLUDE_DIR NCCL_LIBRARY)
