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
# The bridge on WORK_DIR/NAME.py must exit 2 with stderr matching `expected` and write no graph file.
function(refused name expected)
  execute_process(COMMAND ${PYTHON} ${SOURCE_DIR}/tools/torch_to_tapegrad.py ${WORK_DIR}/${name}.py ${WORK_DIR}/${name}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  if(NOT rc EQUAL 2 OR NOT stderr MATCHES "${expected}" OR EXISTS ${WORK_DIR}/${name}.json)
    message(FATAL_ERROR "${name}.py: exit ${rc} (expected 2, stderr matching '${expected}', no file written)\n${stderr}")
  endif()
  message("${name}.py: exit ${rc}\n${stderr}")
endfunction()
# An in-place op is refused, naming it: dead-code elimination would otherwise drop Y.add_(1), whose own result
# f does not use, and the graph file would be another function.
file(WRITE ${WORK_DIR}/in_place.py
     "import torch\n\n\ndef f(X):\n    Y = X * 2.0\n    Y.add_(1.0)\n    return Y.sum()\n\n\n"
     "def inputs():\n    return {\"X\": torch.ones(2, 2)}\n")
refused(in_place "^torch_to_tapegrad: node '[a-z_]+' \\(call_method add_\\): an in-place")
# `y += 1` traces as y = y + 1: an alias taken before keeps the old value in the trace, not in PyTorch. The
# trace's value is compared with f's, and the difference refused.
file(WRITE ${WORK_DIR}/alias.py
     "import torch\n\n\ndef f(X):\n    Y = X * 2.0\n    Z = Y\n    Y += 1.0\n    return Z.sum()\n\n\n"
     "def inputs():\n    return {\"X\": torch.ones(2, 2)}\n")
refused(alias "^torch_to_tapegrad: the traced graph gives 8.0 where f gives 12.0")
# PyTorch's functional forms pass arguments of their own when traced (F.relu inplace=False, F.softmax
# _stacklevel and dtype=None): they are taken, and the float64 gradients pass a double claim.
file(WRITE ${WORK_DIR}/functional.py
     "import torch\nimport torch.nn.functional as F\n\n\ndef f(X, W):\n"
     "    H = F.relu(X @ W)\n    return (F.softmax(H, dim=-1) * F.log_softmax(H, dim=1)).sum()\n\n\n"
     "def inputs():\n    g = torch.Generator().manual_seed(2)\n"
     "    return {\"X\": torch.randn(3, 2, generator=g), \"W\": torch.randn(2, 4, generator=g)}\n")
run(0 "functional.json \\(6 nodes\\)" ${PYTHON} ${SOURCE_DIR}/tools/torch_to_tapegrad.py ${WORK_DIR}/functional.py
    ${WORK_DIR}/functional)
run(0 "given vs reference tape +2 checks, all pass.*verdict: PASS" ${PROGRAM} check ${WORK_DIR}/functional.json
    --gradients ${WORK_DIR}/functional.float64.json --quiet)
