// The i-quant grids (iq_grids.h) as one table of 32-bit words (iq_grid_words()), for the GPU
// decoders of the grid types: a buffer the Vulkan backend fills once per device
// (kernels/vulkan/shaders/types/iq_grid_values.glsl), a constant array of the CUDA kernels
// (kernels/cuda/iq_grids.cuh). Defines only: included by GLSL, C++ and CUDA.
// An 8-coordinate point (IQ2_*, IQ1_*) is two words, coordinate j in byte j % 4 of word j / 4
// (IQ1's stored plus one: 0, 1, 2); a 4-coordinate point (IQ3_*) is one word, coordinate j in
// byte j. Each grid starts at its word offset.
#ifndef IQ_GRID_LAYOUT_H
#define IQ_GRID_LAYOUT_H

#define IQ_GRID_IQ2XXS 0u     // 256 points of two words
#define IQ_GRID_IQ2XS 512u    // 512 points of two words
#define IQ_GRID_IQ2S 1536u    // 1024 points of two words
#define IQ_GRID_IQ1S 3584u    // 2048 points of two words
#define IQ_GRID_IQ3XXS 7680u  // 256 points of one word
#define IQ_GRID_IQ3S 7936u    // 512 points of one word
#define IQ_GRID_WORDS 8448u

#endif
