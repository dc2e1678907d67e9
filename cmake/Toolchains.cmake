# Detects the optional toolchains (Qt 6, Vulkan, CUDA). AUTO turns a feature on when its
# toolchain is present and off otherwise; ON makes a missing toolchain an error.

function(inferscope_resolve_feature var found description)
  if(${var} STREQUAL "AUTO")
    set(${var}_ENABLED ${found} PARENT_SCOPE)
    set(enabled ${found})
  elseif(${var})
    if(NOT ${found})
      message(FATAL_ERROR "${var}=ON but ${description} was not found")
    endif()
    set(${var}_ENABLED TRUE PARENT_SCOPE)
    set(enabled TRUE)
  else()
    set(${var}_ENABLED FALSE PARENT_SCOPE)
    set(enabled FALSE)
  endif()
  message(STATUS "Inferscope: ${description}: ${enabled}")
endfunction()

# The desktop app needs Qt 6 Widgets and QCustomPlot built for Qt 6 (Debian: qt6-base-dev,
# libqcustomplot-dev + libqcustomplot2.1-qt6).
set(_qt_found FALSE)
if(NOT INFERSCOPE_GUI STREQUAL "OFF")
  find_package(Qt6 QUIET COMPONENTS Widgets PrintSupport)  # QCustomPlot links PrintSupport
  find_package(QCustomPlotQt6 QUIET)
  if(Qt6_FOUND AND QCustomPlotQt6_FOUND)
    set(_qt_found TRUE)
  endif()
endif()
inferscope_resolve_feature(INFERSCOPE_GUI ${_qt_found} "Qt 6 Widgets and QCustomPlotQt6 (desktop app)")

set(_vulkan_found FALSE)
if(NOT INFERSCOPE_VULKAN STREQUAL "OFF")
  find_package(Vulkan QUIET COMPONENTS glslc)
  if(Vulkan_FOUND AND Vulkan_glslc_FOUND)
    set(_vulkan_found TRUE)
  endif()
endif()
inferscope_resolve_feature(INFERSCOPE_VULKAN ${_vulkan_found} "Vulkan SDK with glslc")

# CUDA: the toolkit's nvcc and cuBLAS (FindCUDAToolkit). Kernels are built as sm_90 machine code
# (the H200) plus compute_75 PTX, which any newer GPU compiles at load. Not in the sanitizer
# build: nvcc takes no -fsanitize, and the CUDA code needs a GPU to run anyway.
set(_cuda_found FALSE)
if(NOT INFERSCOPE_CUDA STREQUAL "OFF" AND NOT INFERSCOPE_SANITIZE)
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND AND TARGET CUDA::cublas AND CUDAToolkit_NVCC_EXECUTABLE)
    set(_cuda_found TRUE)
  endif()
endif()
inferscope_resolve_feature(INFERSCOPE_CUDA ${_cuda_found} "CUDA toolkit with nvcc and cuBLAS")
if(INFERSCOPE_CUDA_ENABLED)
  set(CMAKE_CUDA_COMPILER ${CUDAToolkit_NVCC_EXECUTABLE})
  set(CMAKE_CUDA_ARCHITECTURES "90-real;75-virtual")
  set(CMAKE_CUDA_STANDARD 17)
  enable_language(CUDA)
endif()
