# Install rules and the CMake package: `cmake --install <build> --prefix <dir>` gives
#   bin/kgate, bin/kgate-defects                  the runners
#   lib/libkgate.a                                the gate library (static)
#   include/kgate/*.h                             the public API only (gates/ stays private)
#   lib/cmake/kgate/                              find_package(kgate CONFIG): kgate::kgate and
#                                                 kgate_add_runner()
#   share/doc/kgate/                              README.md, docs/*.md
# Everything under lib/cmake/kgate is relative to the prefix (PACKAGE_PREFIX_DIR), so the
# prefix can be moved or packaged. Included once from the top-level CMakeLists.txt, after the
# targets exist.
include(CMakePackageConfigHelpers)

set(KG_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/kgate"
    CACHE STRING "Where the kgate CMake package goes, relative to the prefix")

# The static library. Its PRIVATE dependencies (cjson, PkgConfig::LIBGIT2, CURL::libcurl,
# CUDA::cupti, CUDA::cuda_driver, CUDA::cublas) are exported as $<LINK_ONLY:...> by name;
# kgateConfig.cmake recreates those imported targets with find_dependency.
install(TARGETS kgate EXPORT kgateTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})

# A static library kgate links that is built here (not imported) must be installed and
# exported with it, or install(EXPORT) fails at configure time: follow LINK_LIBRARIES.
function(kg_install_linked_targets TGT)
  get_target_property(_libs ${TGT} LINK_LIBRARIES)
  foreach(_lib IN LISTS _libs)
    if(TARGET "${_lib}")
      get_target_property(_imp "${_lib}" IMPORTED)
      get_target_property(_real "${_lib}" ALIASED_TARGET)
      if(_real)
        set(_lib "${_real}")
      endif()
      get_property(_done GLOBAL PROPERTY KG_INSTALLED_${_lib})
      if(NOT _imp AND NOT _done)
        set_property(GLOBAL PROPERTY KG_INSTALLED_${_lib} TRUE)
        install(TARGETS ${_lib} EXPORT kgateTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
        kg_install_linked_targets(${_lib})
      endif()
    endif()
  endforeach()
endfunction()
kg_install_linked_targets(kgate)

# The runners need libcupti/libcublas from the CUDA toolkit, which is often not on the loader
# path: keep the link directories outside the build tree as RPATH (never the build dir).
set_target_properties(kgate_runner kgate_defects PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
install(TARGETS kgate_runner kgate_defects RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The defect runner's preflight fixtures (kernels/defects/preflight_defects.cu looks in
# <bindir>/../share/kgate/defects): the baseline and allowlist its defects drifted from.
install(FILES ${PROJECT_SOURCE_DIR}/tests/data/preflight_defects_baseline.json
              ${PROJECT_SOURCE_DIR}/tests/data/preflight_defects_allowlist.json
        DESTINATION ${CMAKE_INSTALL_DATADIR}/kgate/defects)

# Public headers only: include/kgate/ is the API; gates/*.h and kernels/*.h are internal.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/kgate/
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kgate
  FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp")

install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
# Globbed at install time, so a docs/*.md added later needs no change here.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/
  DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs
  FILES_MATCHING PATTERN "*.md")

install(EXPORT kgateTargets
  NAMESPACE kgate::
  FILE kgateTargets.cmake
  DESTINATION ${KG_INSTALL_CMAKEDIR})

# The toolkit kgate was compiled against is the minimum the config asks for.
set(KG_CUDA_MIN_VERSION "${CUDAToolkit_VERSION_MAJOR}.${CUDAToolkit_VERSION_MINOR}")
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/kgateConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/kgateConfig.cmake
  INSTALL_DESTINATION ${KG_INSTALL_CMAKEDIR}
  NO_SET_AND_CHECK_MACRO)
# From 1.0 on, a major version keeps the API (the release tags: vX moves across X.Y.Z,
# docs/production-ci.md "Versions and releases"), so any release of the same major that is not
# older than the one asked for is compatible.
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/cmake/kgateConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMajorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/cmake/kgateConfig.cmake
  ${PROJECT_BINARY_DIR}/cmake/kgateConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/kgateRunner.cmake
  DESTINATION ${KG_INSTALL_CMAKEDIR})
