# Cross build for the board's host side: ARM64 Linux (the AM67A's
# Cortex-A53), with Debian's gcc-aarch64-linux-gnu; tests and programs run
# under qemu-user (qemu-user-static), which CMake's test driver calls for
# every unit test (CMAKE_CROSSCOMPILING_EMULATOR).
#
#   cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
#         -DCS_BUILD_COMPILER=OFF                       (what `make aarch64` does)
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CS_AARCH64_TRIPLE aarch64-linux-gnu)
set(CMAKE_C_COMPILER ${CS_AARCH64_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${CS_AARCH64_TRIPLE}-g++)
set(CMAKE_FIND_ROOT_PATH /usr/${CS_AARCH64_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
# -L: where qemu finds the aarch64 dynamic loader and C library.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64-static -L /usr/${CS_AARCH64_TRIPLE})
