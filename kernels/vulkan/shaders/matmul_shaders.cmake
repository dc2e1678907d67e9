# Weight decoding and the matmul family (engine/backend/vulkan/ops/vk_matmul.cpp): per weight
# type, matvec_<type> (few tokens), matvec_id_<type> (experts), their row-per-invocation
# layouts for CPU drivers matvec_rowwise_<type> / matvec_id_rowwise_<type> (subgroup ops),
# matmat_<type> (tiled, many tokens) and get_rows_<type> (embedding lookup).
foreach(type f32 f16 bf16 q8_0 q4_0 q4_1 q5_0 q5_1 q2_k q3_k q4_k q5_k q6_k iq4_nl iq4_xs iq1_s iq1_m iq2_xxs iq2_xs iq2_s iq3_xxs iq3_s
             mxfp4 tq1_0 tq2_0 f16_2of4)
  string(TOUPPER ${type} define)
  inferscope_vulkan_shader(NAME matvec_${type} SOURCE matvec.comp DEFINES TYPE_${define}=1)
  inferscope_vulkan_shader(NAME matvec_id_${type} SOURCE matvec.comp DEFINES TYPE_${define}=1 MUL_MAT_ID=1)
  inferscope_vulkan_shader(NAME matvec_rowwise_${type} SOURCE matvec.comp DEFINES TYPE_${define}=1 ROWWISE=1)
  inferscope_vulkan_shader(NAME matvec_id_rowwise_${type} SOURCE matvec.comp
                           DEFINES TYPE_${define}=1 MUL_MAT_ID=1 ROWWISE=1)
  inferscope_vulkan_shader(NAME matmat_${type} SOURCE matmat.comp DEFINES TYPE_${define}=1)
  inferscope_vulkan_shader(NAME get_rows_${type} SOURCE get_rows.comp DEFINES TYPE_${define}=1)
endforeach()
# The int8 matvec of the quantized types (matvec_q8.comp) in the same four layouts, and the
# quantization of its x (quantize_q8.comp): each portable (32-bit words, shifts and multiplies)
# and _native (integer dot-product instructions and 16-bit storage, for devices with
# shaderIntegerDotProduct and storageBuffer16BitAccess).
foreach(variant "" _native)
  set(variant_defines DOT_PRODUCT=0 STORAGE16=0)
  if(variant)
    set(variant_defines DOT_PRODUCT=1 STORAGE16=1)
  endif()
  inferscope_vulkan_shader(NAME quantize_q8${variant} SOURCE quantize_q8.comp DEFINES ${variant_defines})
  foreach(type q8_0 q4_0 q4_1 q5_0 q5_1 q2_k q3_k q4_k q5_k q6_k iq4_nl iq4_xs iq1_s iq1_m iq2_xxs iq2_xs iq2_s iq3_xxs
               iq3_s mxfp4 tq1_0 tq2_0)
    string(TOUPPER ${type} define)
    inferscope_vulkan_shader(NAME matvec_q8${variant}_${type} SOURCE matvec_q8.comp
                             DEFINES TYPE_${define}=1 ${variant_defines})
    inferscope_vulkan_shader(NAME matvec_q8${variant}_id_${type} SOURCE matvec_q8.comp
                             DEFINES TYPE_${define}=1 ${variant_defines} MUL_MAT_ID=1)
    inferscope_vulkan_shader(NAME matvec_q8${variant}_rowwise_${type} SOURCE matvec_q8.comp
                             DEFINES TYPE_${define}=1 ${variant_defines} ROWWISE=1)
    inferscope_vulkan_shader(NAME matvec_q8${variant}_id_rowwise_${type} SOURCE matvec_q8.comp
                             DEFINES TYPE_${define}=1 ${variant_defines} MUL_MAT_ID=1 ROWWISE=1)
  endforeach()
endforeach()
