# What `cmake --install` puts beside the binary and the plugin (their install(TARGETS) rules are in cli/ and
# plugins/; any other installed target is packaged the same way), and the Debian package `cpack -G DEB` makes
# of it all. Included after the modules (the man page is made by running the built binary).
#
#   <prefix>/bin/nccl-autotune
#   <prefix>/<libdir>/libnccl-tuner-autotune.so           found by `run` (common/install_paths.cpp)
#   <prefix>/share/man/man1/nccl-autotune.1.gz            from --help (help2man)
#   <prefix>/share/bash-completion/completions/nccl-autotune
#   <prefix>/share/modulefiles/nccl-autotune/<version>.lua an Lmod modulefile that finds its prefix itself
#   <prefix>/share/doc/nccl-autotune/                     README.md, docs/, examples/nccl-autotune.default
#   <prefix>/lib/systemd/system/nccl-autotune-{metrics,verify}.{service,timer}   upkeep on timers
#   <prefix>/libexec/nccl-autotune/nccl-autotune-healthcheck  Slurm's HealthCheckProgram
#   <prefix>/share/nccl-autotune/{prometheus/alerts.yml,grafana/nccl-autotune.json}
set(AUTOTUNE_DOC_DIR ${CMAKE_INSTALL_DATADIR}/doc/nccl-autotune)

find_program(HELP2MAN_EXECUTABLE help2man)
find_program(GZIP_EXECUTABLE gzip)
if(HELP2MAN_EXECUTABLE AND GZIP_EXECUTABLE)
  set(_man_default ON)
else()
  set(_man_default OFF)
  message(STATUS "help2man not found (Debian: help2man): no man page is generated")
endif()
option(AUTOTUNE_MAN_PAGE "Generate and install the man page from --help (help2man)" ${_man_default})
if(AUTOTUNE_MAN_PAGE)
  if(NOT HELP2MAN_EXECUTABLE)
    message(FATAL_ERROR "AUTOTUNE_MAN_PAGE=ON needs help2man: install the Debian package 'help2man'")
  endif()
  set(_man ${PROJECT_BINARY_DIR}/man/nccl-autotune.1.gz)
  add_custom_command(OUTPUT ${_man}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/man
    COMMAND ${PROJECT_SOURCE_DIR}/packaging/man/make_man_page.sh $<TARGET_FILE:nccl-autotune> ${PROJECT_VERSION}
            ${PROJECT_SOURCE_DIR}/packaging/man/nccl-autotune.h2m ${_man}
    DEPENDS nccl-autotune ${PROJECT_SOURCE_DIR}/packaging/man/make_man_page.sh
            ${PROJECT_SOURCE_DIR}/packaging/man/nccl-autotune.h2m
    COMMENT "Generating the man page from nccl-autotune --help")
  add_custom_target(man ALL DEPENDS ${_man})
  install(FILES ${_man} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endif()

install(FILES ${PROJECT_SOURCE_DIR}/packaging/bash-completion/nccl-autotune
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
configure_file(${PROJECT_SOURCE_DIR}/packaging/lmod/nccl-autotune.lua.in
               ${PROJECT_BINARY_DIR}/packaging/modulefiles/nccl-autotune/${PROJECT_VERSION}.lua @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/packaging/modulefiles/nccl-autotune/${PROJECT_VERSION}.lua
        DESTINATION ${CMAKE_INSTALL_DATADIR}/modulefiles/nccl-autotune)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${AUTOTUNE_DOC_DIR})
# Operations (docs/operations.md): the units go where systemd looks for a package's (under the prefix, so
# that a --prefix install stays inside it; the Debian package's prefix is /usr).
foreach(unit nccl-autotune-metrics.service nccl-autotune-metrics.timer nccl-autotune-verify.service
             nccl-autotune-verify.timer)
  install(FILES ${PROJECT_SOURCE_DIR}/packaging/systemd/${unit} DESTINATION lib/systemd/system)
endforeach()
install(FILES ${PROJECT_SOURCE_DIR}/packaging/systemd/nccl-autotune.default DESTINATION ${AUTOTUNE_DOC_DIR}/examples)
install(PROGRAMS ${PROJECT_SOURCE_DIR}/packaging/slurm/nccl-autotune-healthcheck
        DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/nccl-autotune)
install(FILES ${PROJECT_SOURCE_DIR}/packaging/prometheus/alerts.yml
        DESTINATION ${CMAKE_INSTALL_DATADIR}/nccl-autotune/prometheus)
install(FILES ${PROJECT_SOURCE_DIR}/packaging/grafana/nccl-autotune.json
        DESTINATION ${CMAKE_INSTALL_DATADIR}/nccl-autotune/grafana)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${AUTOTUNE_DOC_DIR}/docs)

# The Debian package. Its Depends come from dpkg-shlibdeps over every binary and library in it (CUDA and NCCL,
# which are not Debian packages, are left out of them and named in Suggests). CPack adds an ldconfig call to
# postinst and postrm because the plugin lies in /usr/lib, where `NCCL_TUNER_PLUGIN=autotune` finds it.
set(AUTOTUNE_PACKAGE_MAINTAINER "nccl-autotune maintainers <nccl-autotune@localhost>"
    CACHE STRING "The Maintainer field of the Debian package (your site's contact)")
set(CPACK_GENERATOR "DEB")
set(CPACK_PACKAGE_NAME "nccl-autotune")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT ${AUTOTUNE_PACKAGE_MAINTAINER})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "tunes NVIDIA NCCL for one GPU cluster and runs jobs with the result")
# The long description; CPack puts the summary above it and indents its lines as Debian's control format asks.
string(CONCAT CPACK_DEBIAN_PACKAGE_DESCRIPTION
  "nccl-autotune probes a node, measures NCCL collectives across algorithms, protocols,\n"
  "channels and NIC settings, writes a profile of the rules that beat NCCL's own choice,\n"
  "and runs jobs under an NCCL tuner plugin that applies them (nccl-autotune run -- CMD).")
set(CPACK_DEBIAN_PACKAGE_SECTION "utils")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "libnccl2, lmod")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_STRIP_FILES ON)
include(CPack)
