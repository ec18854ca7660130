# Install rules: `cmake --install build --prefix PREFIX` (and the Python
# wheel, whose package directory is such a prefix) gives
#
#   PREFIX/bin/cstatic                        the compiler CLI
#   PREFIX/lib/libtidsp.a, libtidsp.so*       the runtime, static and shared
#   PREFIX/include/cstatic/*.h                its headers
#   PREFIX/lib/cmake/cstatic/                 find_package(cstatic):
#                                             cstatic::runtime (static),
#                                             cstatic::runtime_shared,
#                                             cstatic::cstatic (the CLI),
#                                             cstatic_add_model()
#   PREFIX/lib/pkgconfig/cstatic.pc           pkg-config: the runtime
#   PREFIX/share/cstatic/runtime/             the runtime's sources, which
#                                             `compile --emit=runtime` copies
#   PREFIX/bin/c7x_fw, c7x_fw_mmalib, c7x_fw_tidl, c7x_compute,
#   PREFIX/lib/libc7x_arm_runtime.so, PREFIX/include/c7x_client.h
#                                             the C7x firmware emulator and
#                                             its host client
#
# The layout is fixed (lib, not lib64 or a multiarch directory): the CLI
# finds the runtime it builds models with relative to itself
# (compiler/cli/toolchain.c), as in the build tree.
include(CMakePackageConfigHelpers)

set(CS_INSTALL_CMAKEDIR lib/cmake/cstatic)

set_target_properties(tidsp PROPERTIES EXPORT_NAME runtime)
set_target_properties(tidsp_shared PROPERTIES EXPORT_NAME runtime_shared)
set_target_properties(c7x_compute c7x_fw c7x_fw_mmalib c7x_fw_tidl PROPERTIES INSTALL_RPATH "$ORIGIN/../lib")

install(TARGETS cstatic tidsp tidsp_shared EXPORT cstaticTargets
  RUNTIME DESTINATION bin
  ARCHIVE DESTINATION lib
  LIBRARY DESTINATION lib
  INCLUDES DESTINATION include)
install(DIRECTORY include/cstatic DESTINATION include)
install(DIRECTORY runtime/ DESTINATION share/cstatic/runtime FILES_MATCHING PATTERN "*.c" PATTERN "*.h")
install(TARGETS c7x_fw c7x_fw_mmalib c7x_fw_tidl c7x_compute c7x_arm_runtime
  RUNTIME DESTINATION bin
  LIBRARY DESTINATION lib)
install(FILES client/include/c7x_client.h DESTINATION include)

# The package files are written into the build tree at the paths they have
# in a prefix, so the build tree is a prefix for consumers too
# (`cstatic --prefix` prints either): build/lib/cmake/cstatic (with the
# build tree's targets) and build/lib/pkgconfig/cstatic.pc.
set(CS_BUILD_CMAKEDIR ${CMAKE_BINARY_DIR}/${CS_INSTALL_CMAKEDIR})
install(EXPORT cstaticTargets NAMESPACE cstatic:: DESTINATION ${CS_INSTALL_CMAKEDIR})
export(EXPORT cstaticTargets NAMESPACE cstatic:: FILE ${CS_BUILD_CMAKEDIR}/cstaticTargets.cmake)
configure_package_config_file(cmake/cstaticConfig.cmake.in
  ${CS_BUILD_CMAKEDIR}/cstaticConfig.cmake
  INSTALL_DESTINATION ${CS_INSTALL_CMAKEDIR})
write_basic_package_version_file(${CS_BUILD_CMAKEDIR}/cstaticConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
configure_file(cmake/cstaticAddModel.cmake ${CS_BUILD_CMAKEDIR}/cstaticAddModel.cmake COPYONLY)
install(FILES
  ${CS_BUILD_CMAKEDIR}/cstaticConfig.cmake
  ${CS_BUILD_CMAKEDIR}/cstaticConfigVersion.cmake
  cmake/cstaticAddModel.cmake
  DESTINATION ${CS_INSTALL_CMAKEDIR})

configure_file(cmake/cstatic.pc.in ${CMAKE_BINARY_DIR}/lib/pkgconfig/cstatic.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/lib/pkgconfig/cstatic.pc DESTINATION lib/pkgconfig)
