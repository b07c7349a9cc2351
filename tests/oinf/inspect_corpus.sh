#!/usr/bin/env bash
# oinf-inspect and verify_oinf.py reject every malformed file with exit 1 and
# a reason on stderr (never a crash: exit codes >= 128 fail the test).
# usage: inspect_corpus.sh OINF_INSPECT CORPUS_DIR PYTHON REPO_ROOT
set -uo pipefail
inspect=$1 dir=$2 py=$3 root=$4
fail=0 n=0
while IFS=$'\t' read -r file fragment; do
  case "$file" in ''|'#'*) continue ;; esac
  n=$((n + 1))
  err=$("$inspect" "$dir/$file" 2>&1 >/dev/null); rc=$?
  if [ $rc -ne 1 ] || [ -z "$err" ]; then echo "FAIL: oinf-inspect $file: exit $rc: $err"; fail=1; fi
  case "$err" in *"$fragment"*) ;; *) echo "FAIL: oinf-inspect $file: '$fragment' not in: $err"; fail=1 ;; esac
  perr=$("$py" "$root/tools/python/verify_oinf.py" "$dir/$file" 2>&1 >/dev/null); rc=$?
  if [ $rc -ne 1 ] || [ -z "$perr" ]; then echo "FAIL: verify_oinf.py $file: exit $rc: $perr"; fail=1; fi
done < "$dir/expected.tsv"
"$inspect" "$dir/valid_base.oinf" >/dev/null || { echo "FAIL: valid_base.oinf rejected"; fail=1; }
"$inspect" 2>/dev/null; [ $? -eq 2 ] || { echo "FAIL: oinf-inspect without arguments must exit 2"; fail=1; }
echo "$n malformed files checked"
exit $fail
