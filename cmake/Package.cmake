# The Debian package (CPack): `cmake --build build --target package` writes
# build/inferscope_<version>_<arch>.deb with everything `cmake --install` installs, under /usr:
# the app, the CLI, the backend libraries, the desktop entry and icons, the bundled model and
# its license. Depends: is computed from the binaries' shared libraries (dpkg-shlibdeps).
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME inferscope)
set(CPACK_PACKAGE_VENDOR "Inferscope")
set(CPACK_PACKAGE_CONTACT "Inferscope developers <inferscope@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Run GGUF language models locally and see what every optimization does")
set(CPACK_PACKAGE_DESCRIPTION
    "A Qt desktop chat app and command-line tool for GGUF models (llama.cpp's format) on the CPU or Vulkan,\n"
    "with live charts of speed, memory and quality for quantization, KV-cache compression and caching.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The Vulkan backend runs on any Vulkan driver; Mesa's covers most GPUs and the CPU (lavapipe).
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "mesa-vulkan-drivers")
set(CPACK_STRIP_FILES ON)
# The default install component only: the CUDA backend (component `cuda`) links CUDA 13's
# cuBLAS, which no Debian package provides, so dpkg-shlibdeps could not compute its Depends.
set(CPACK_INSTALL_CMAKE_PROJECTS "${CMAKE_BINARY_DIR};${PROJECT_NAME};Unspecified;/")
include(CPack)
