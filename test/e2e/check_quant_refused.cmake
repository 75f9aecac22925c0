# dlc refuses what it cannot do with a Keras-quantized model in one line,
# exit 1, naming the layer: a legacy .h5, a policy quantized from mixed_bfloat16.
# Usage: cmake -DDLC=dlc -DMODEL=FIXTURE_DIR -DOUT=TMPDIR -P this file
file(MAKE_DIRECTORY ${OUT})
function(expect_refusal pattern)
  execute_process(COMMAND ${DLC} ${ARGN} RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(STRIP "${err}" err)
  string(FIND "${err}" "\n" newline)
  if(NOT rc EQUAL 1 OR NOT newline EQUAL -1 OR NOT err MATCHES "${pattern}")
    message(FATAL_ERROR "dlc ${ARGN}: exit ${rc}, stderr:\n${err}\n"
                        "expected exit 1 and one line matching ${pattern}")
  endif()
  message(STATUS "ok: ${err}")
endfunction()
expect_refusal("^dlc: error: .*legacy.h5: layer 'dense' \\(Dense\\): quantized layers are read from .keras and .weights.h5 files only"
               inspect ${MODEL}/legacy.h5)
expect_refusal("^dlc: error: .*refused_int8_bf16.keras: layer 'dense_bf16' \\(Dense\\): quantized dtype policy 'int8' from 'mixed_bfloat16' is not supported \\(only from float32\\)$"
               inspect ${MODEL}/../refused_int8_bf16.keras)
