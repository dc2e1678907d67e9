// Common preamble of every compute shader: extensions and the workgroup size as specialization constant 0 (the host picks it from the
// device's subgroup size; shaders must work for any power of two from 8 to 1024).
#ifndef HEADER_GLSL
#define HEADER_GLSL
#extension GL_EXT_control_flow_attributes : enable
layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 0) const uint WORKGROUP_SIZE = 64;
#endif
