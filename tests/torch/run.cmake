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
# Tensors of any rank, as people write them: two-head attention by view and transpose with batched @, a
# layer_norm with weight and bias, nn.Linear's 1-D bias (F.linear). The gradient files nest each input's
# gradient to its rank: b1's is a list of numbers. The float64 gradients pass a double claim, the float32 ones a
# float claim and not a double one.
file(WRITE ${WORK_DIR}/two_heads.py
     "import torch\nimport torch.nn.functional as F\n\n\ndef f(X, Wq, Wk, Wv, W1, b1, w, b):\n"
     "    T, H, d = 4, 2, 3\n"
     "    q = (X @ Wq).view(T, H, d).transpose(0, 1)\n"
     "    k = (X @ Wk).view(T, H, d).transpose(0, 1)\n"
     "    v = (X @ Wv).view(T, H, d).transpose(0, 1)\n"
     "    a = torch.softmax(q @ k.transpose(-2, -1) / 3 ** 0.5, dim=-1)\n"
     "    o = (a @ v).transpose(0, 1).contiguous().view(T, H * d)\n"
     "    return torch.tanh(F.linear(F.layer_norm(o, (H * d,), w, b), W1, b1)).mean()\n\n\n"
     "def inputs():\n    g = torch.Generator().manual_seed(3)\n"
     "    shapes = {\"X\": (4, 5), \"Wq\": (5, 6), \"Wk\": (5, 6), \"Wv\": (5, 6), \"W1\": (2, 6), \"b1\": (2,),\n"
     "              \"w\": (6,), \"b\": (6,)}\n"
     "    return {name: torch.randn(*shape, generator=g) for name, shape in shapes.items()}\n")
run(0 "two_heads.json \\(22 nodes\\)" ${PYTHON} ${SOURCE_DIR}/tools/torch_to_tapegrad.py ${WORK_DIR}/two_heads.py
    ${WORK_DIR}/two_heads)
file(READ ${WORK_DIR}/two_heads.float64.json two_heads_gradients)
if(NOT two_heads_gradients MATCHES "\"b1\": \\[\"-?[0-9]")
  message(FATAL_ERROR "two_heads.float64.json: b1's gradient is not written as a list of numbers (rank 1)")
endif()
run(0 "given vs reference tape +8 checks, all pass.*verdict: PASS" ${PROGRAM} check ${WORK_DIR}/two_heads.json
    --gradients ${WORK_DIR}/two_heads.float64.json --quiet)
run(1 "given vs reference tape +8 checks, 8 FAILED.*verdict: FAIL" ${PROGRAM} check ${WORK_DIR}/two_heads.json
    --gradients ${WORK_DIR}/two_heads.float32.json --quiet)
run(0 "given vs reference tape +8 checks, all pass.*verdict: PASS" ${PROGRAM} check ${WORK_DIR}/two_heads.json
    --gradients ${WORK_DIR}/two_heads.float32.json --claimed-precision float --quiet)
# The chapter's attention on (batch, heads, T, d) tensors; the whole sum is a sum over every dim (rank 0).
file(WRITE ${WORK_DIR}/four_d.py
     "import torch\n\n\ndef f(Q, K, V):\n"
     "    return (torch.softmax(Q @ K.transpose(-2, -1) / 3 ** 0.5, dim=-1) @ V).sum()\n\n\n"
     "def inputs():\n    g = torch.Generator().manual_seed(4)\n"
     "    return {name: torch.randn(2, 2, 4, 3, generator=g) for name in (\"Q\", \"K\", \"V\")}\n")
run(0 "four_d.json \\(6 nodes\\)" ${PYTHON} ${SOURCE_DIR}/tools/torch_to_tapegrad.py ${WORK_DIR}/four_d.py
    ${WORK_DIR}/four_d)
run(0 "given vs reference tape +3 checks, all pass.*verdict: PASS" ${PROGRAM} check ${WORK_DIR}/four_d.json
    --gradients ${WORK_DIR}/four_d.float64.json --quiet)
# torch's reductions without a dim: dim=() reduces every dim (rank 0), mean(dim=None, keepdim=True) keeps the
# rank with every size 1 (so softmax over dim 0 of the 1 x 3 sum with v is all ones), a dim on a rank-0 tensor
# leaves it rank 0. The value PyTorch computed is in the gradient file: the check compares it with the graph's.
file(WRITE ${WORK_DIR}/reductions.py
     "import torch\n\n\ndef f(X, v):\n"
     "    m = X.mean(dim=None, keepdim=True)\n"
     "    return (torch.softmax(m + v, dim=0) * X.sum(dim=()).sum(0)).sum()\n\n\n"
     "def inputs():\n    g = torch.Generator().manual_seed(5)\n"
     "    return {\"X\": torch.randn(2, 3, generator=g), \"v\": torch.randn(3, generator=g)}\n")
run(0 "reductions.json \\(7 nodes\\)" ${PYTHON} ${SOURCE_DIR}/tools/torch_to_tapegrad.py ${WORK_DIR}/reductions.py
    ${WORK_DIR}/reductions)
run(0 "tape vs given forward +1 check, +all pass.*given vs reference tape +2 checks, +all pass.*verdict: PASS" ${PROGRAM}
    check ${WORK_DIR}/reductions.json --gradients ${WORK_DIR}/reductions.float64.json --quiet)
# What graph files have no op for yet is refused naming the fx node: cross_entropy with integer targets.
file(WRITE ${WORK_DIR}/targets.py
     "import torch\nimport torch.nn.functional as F\n\n\ndef f(X):\n"
     "    return F.cross_entropy(X, torch.tensor([1, 0]))\n\n\n"
     "def inputs():\n    return {\"X\": torch.ones(2, 3)}\n")
refused(targets "^torch_to_tapegrad: node ")
