# The scratch fixture of the test suite (see tests/support/scratch_dir.h).
#   MODE=prepare: an empty DIR for the run's TMPDIR.
#   MODE=check:   fails when an inferscope-test-* folder is left in DIR, naming what is inside.
if(MODE STREQUAL "prepare")
  file(REMOVE_RECURSE "${DIR}")
  file(MAKE_DIRECTORY "${DIR}")
elseif(MODE STREQUAL "check")
  file(GLOB left LIST_DIRECTORIES true "${DIR}/inferscope-test-*")
  if(left)
    file(GLOB_RECURSE inside LIST_DIRECTORIES true RELATIVE "${DIR}" "${DIR}/inferscope-test-*/*")
    list(APPEND left ${inside})
    list(JOIN left "\n  " inside_text)
    message(FATAL_ERROR "tests left scratch folders behind in ${DIR}:\n  ${inside_text}")
  endif()
  message(STATUS "no scratch folders left in ${DIR}")
else()
  message(FATAL_ERROR "MODE must be prepare or check")
endif()
