# INFERSCOPE_SANITIZE=ON: the build of tests/sanitize.sh, with AddressSanitizer and
# UndefinedBehaviorSanitizer everywhere and every report fatal. It compiles at -O0 (two to three
# times faster than -O1, which keeps CI's sanitizer job short) except the kernels, whose SIMD
# loops stay at -O1 (kernels/CMakeLists.txt) so the tests that run whole models stay quick.
option(INFERSCOPE_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer (tests/sanitize.sh)" OFF)
if(INFERSCOPE_SANITIZE)
  add_compile_options(-O0 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all)
  add_link_options(-fsanitize=address,undefined)
endif()
