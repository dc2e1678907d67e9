# Weight decoding and the matmul family (engine/backend/vulkan/ops/vk_matmul.cpp): per weight
# type, matvec_<type> (few tokens), matvec_id_<type> (experts), their row-per-invocation
# layouts for CPU drivers matvec_rowwise_<type> / matvec_id_rowwise_<type> (subgroup ops),
# matmat_<type> (tiled, many tokens) and get_rows_<type> (embedding lookup).
foreach(type f32 f16 bf16 q8_0 q4_0 q4_1 q5_0 q5_1 q2_k q3_k q4_k q5_k q6_k iq4_nl tq1_0 tq2_0)
  string(TOUPPER ${type} define)
  inferscope_vulkan_shader(NAME matvec_${type} SOURCE matvec.comp DEFINES TYPE_${define}=1)
  inferscope_vulkan_shader(NAME matvec_id_${type} SOURCE matvec.comp DEFINES TYPE_${define}=1 MUL_MAT_ID=1)
  inferscope_vulkan_shader(NAME matvec_rowwise_${type} SOURCE matvec.comp DEFINES TYPE_${define}=1 ROWWISE=1)
  inferscope_vulkan_shader(NAME matvec_id_rowwise_${type} SOURCE matvec.comp
                           DEFINES TYPE_${define}=1 MUL_MAT_ID=1 ROWWISE=1)
  inferscope_vulkan_shader(NAME matmat_${type} SOURCE matmat.comp DEFINES TYPE_${define}=1)
  inferscope_vulkan_shader(NAME get_rows_${type} SOURCE get_rows.comp DEFINES TYPE_${define}=1)
endforeach()
# The int8 matvec of the 32-block types (matvec_q8.comp), in the same four layouts, each with
# integer dot-product instructions (_dot, devices with shaderIntegerDotProduct) and without.
foreach(type q8_0 q4_0 q4_1 q5_0 q5_1 iq4_nl)
  string(TOUPPER ${type} define)
  foreach(dot "" _dot)
    set(dot_define DOT_PRODUCT=0)
    if(dot)
      set(dot_define DOT_PRODUCT=1)
    endif()
    inferscope_vulkan_shader(NAME matvec_q8${dot}_${type} SOURCE matvec_q8.comp DEFINES TYPE_${define}=1 ${dot_define})
    inferscope_vulkan_shader(NAME matvec_q8${dot}_id_${type} SOURCE matvec_q8.comp
                             DEFINES TYPE_${define}=1 ${dot_define} MUL_MAT_ID=1)
    inferscope_vulkan_shader(NAME matvec_q8${dot}_rowwise_${type} SOURCE matvec_q8.comp
                             DEFINES TYPE_${define}=1 ${dot_define} ROWWISE=1)
    inferscope_vulkan_shader(NAME matvec_q8${dot}_id_rowwise_${type} SOURCE matvec_q8.comp
                             DEFINES TYPE_${define}=1 ${dot_define} MUL_MAT_ID=1 ROWWISE=1)
  endforeach()
endforeach()
