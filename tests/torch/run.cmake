# ctest torch/bridge: tools/torch_to_tapegrad.py traces tools/examples/attention.py and writes PyTorch's
# gradients; then `tapegrad check --gradients` must pass the float64 ones under a double claim, fail the
# float32 ones under a double claim (exit 1, each input's digits shown) and pass them under a float claim.
# Called with -DPYTHON, -DPROGRAM (tapegrad), -DSOURCE_DIR and -DWORK_DIR.
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
set(out ${WORK_DIR}/attention)
function(run expected_rc expected_stdout)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  string(REPLACE ";" " " cmd "${ARGN}")
  if(NOT rc EQUAL expected_rc OR NOT stdout MATCHES "${expected_stdout}")
    message(FATAL_ERROR "${cmd}: exit ${rc} (expected ${expected_rc}), stdout should match '${expected_stdout}'\n"
                        "${stdout}\n${stderr}")
  endif()
  message("${cmd}: exit ${rc}\n${stdout}")
endfunction()
run(0 "attention.json \\(11 nodes\\)" ${PYTHON} ${SOURCE_DIR}/tools/torch_to_tapegrad.py
    ${SOURCE_DIR}/tools/examples/attention.py ${out})
run(0 "given vs reference tape +5 checks, all pass.*verdict: PASS" ${PROGRAM} check ${out}.json --gradients
    ${out}.float64.json --quiet)
run(1 "given vs reference tape +5 checks, 5 FAILED.*FAIL  given vs reference tape +Wq .*correct digits.*verdict: FAIL"
    ${PROGRAM} check ${out}.json --gradients ${out}.float32.json --quiet)
run(0 "given vs reference tape +5 checks, all pass.*verdict: PASS" ${PROGRAM} check ${out}.json --gradients
    ${out}.float32.json --claimed-precision float --quiet)
