#!/usr/bin/env bash
# The README's "Run your own model" commands, run as written (the lines of
# the bash block between the run-your-own-model markers) in an empty
# directory whose build/ is this build: export a torchvision ResNet-18 with a
# batch dimension, convert, inspect, run on random and on given inputs,
# convert with a batch range and run at batch 4. Checks what the README says
# each step gives: the bundles, the summary's inputs and range, the output
# file. Exit 77 (skip) without torch/torchvision in /usr/bin/python3.
# usage: readme_commands.sh PYTHON REPO_ROOT BUILD_DIR
set -euo pipefail
py=$1 root=$2 build=$3
if ! /usr/bin/python3 -c 'import torch, torchvision' 2>/dev/null; then
  echo "SKIP: /usr/bin/python3 has no torch/torchvision (scripts/setup.sh installs them)"; exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ln -s "$build" "$tmp/build"
# The block's command lines, comments after them kept (bash drops them).
"$py" - "$root/README.md" "$tmp/commands.sh" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"<!-- run-your-own-model:begin -->\s*```bash\n(.*?)```\s*<!-- run-your-own-model:end -->", text, re.S)
if not m:
    sys.exit("README.md: no bash block between the run-your-own-model markers")
lines = [ln for ln in m.group(1).splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
open(sys.argv[2], "w").write("set -euxo pipefail\n" + "\n".join(lines) + "\n")
print(f"{len(lines)} commands from README.md")
PY
(cd "$tmp" && bash commands.sh) > "$tmp/out.txt" 2>&1 || { cat "$tmp/out.txt"; echo "FAIL: a README command failed"; exit 1; }
fail=0
check() {  # check DESCRIPTION COMMAND...: one expectation
  local what=$1; shift
  if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fail=1; fi
}
check "out/model.oinf and out8/model.oinf written" test -s "$tmp/out/model.oinf" -a -s "$tmp/out8/model.oinf"
check "res/output.npy written" test -s "$tmp/res/output.npy"
check "the summary names the input" grep -q "input.*'input'.*float32 \[1, 3, 224, 224\]" "$tmp/out.txt"
check "the summary says the batch N was set to 1, and how to give a range" \
  grep -q "symbolic batch dimension 'N' set to 1 (for other batches" "$tmp/out.txt"
check "the range conversion shows N∈1..8" grep -q "N∈1..8" "$tmp/out.txt"
check "no doubled '/' in the paths shown" bash -c "! grep -q 'out//' '$tmp/out.txt'"
check "oaax-run ran at batch 4" grep -q "batch 4" "$tmp/out.txt"
[ "$fail" = 0 ] || { echo "--- output ---"; cat "$tmp/out.txt"; }
exit $fail
