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
#   PREFIX/bin/c7x_fw, c7x_fw_mmalib, c7x_compute,
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
set_target_properties(c7x_compute c7x_fw c7x_fw_mmalib PROPERTIES INSTALL_RPATH "$ORIGIN/../lib")

install(TARGETS cstatic tidsp tidsp_shared EXPORT cstaticTargets
  RUNTIME DESTINATION bin
  ARCHIVE DESTINATION lib
  LIBRARY DESTINATION lib
  INCLUDES DESTINATION include)
install(DIRECTORY include/cstatic DESTINATION include)
install(TARGETS c7x_fw c7x_fw_mmalib c7x_compute c7x_arm_runtime
  RUNTIME DESTINATION bin
  LIBRARY DESTINATION lib)
install(FILES client/include/c7x_client.h DESTINATION include)

install(EXPORT cstaticTargets NAMESPACE cstatic:: DESTINATION ${CS_INSTALL_CMAKEDIR})
configure_package_config_file(cmake/cstaticConfig.cmake.in
  ${CMAKE_BINARY_DIR}/cstaticConfig.cmake
  INSTALL_DESTINATION ${CS_INSTALL_CMAKEDIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/cstaticConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${CMAKE_BINARY_DIR}/cstaticConfig.cmake
  ${CMAKE_BINARY_DIR}/cstaticConfigVersion.cmake
  cmake/cstaticAddModel.cmake
  DESTINATION ${CS_INSTALL_CMAKEDIR})

configure_file(cmake/cstatic.pc.in ${CMAKE_BINARY_DIR}/cstatic.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/cstatic.pc DESTINATION lib/pkgconfig)
