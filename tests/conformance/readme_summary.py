#!/usr/bin/env python3
"""Rewrites the conformance section of README.md (between the markers
<!-- conformance-summary:begin --> and <!-- conformance-summary:end -->) from
the per-operator table that the runner writes into docs/conformance.md.

usage: readme_summary.py REPO_ROOT   (run by scripts/conformance.sh --table)
"""
import re
import sys


def main():
    root = sys.argv[1]
    doc = open(f"{root}/docs/conformance.md", encoding="utf-8").read()
    head = re.search(r"^Device: .*$", doc, re.M)
    rows = []
    for line in doc.splitlines():
        m = re.match(r"^\| ([A-Za-z0-9_]+) \| (\d+) \| (\d+) \| (\d+) \| (\d+) \| (\d+) \|$", line.strip())
        if m:
            rows.append((m.group(1), *(int(x) for x in m.groups()[1:])))
    if not rows or head is None:
        sys.exit("readme_summary.py: no per-operator table in docs/conformance.md")
    full = [r[0] for r in rows if r[2] == r[1]]
    part = [f"{r[0]} ({r[2]}/{r[1]})" for r in rows if 0 < r[2] < r[1]]
    none = [r[0] for r in rows if r[2] == 0]
    wrong = sum(r[4] for r in rows)
    out = [
        "<!-- conformance-summary:begin -->",
        head.group(0).replace("Device:", "Measured on") + f" Wrong answers: {wrong}.",
        "",
        "| status | operators |",
        "|---|---|",
        f"| all cases pass ({len(full)}) | {', '.join(full)} |",
        f"| some cases pass ({len(part)}) | {', '.join(part)} |",
        f"| rejected at conversion ({len(none)}) | {', '.join(none)} |",
        "",
        "Per-operator counts and every case's outcome: [docs/conformance.md](docs/conformance.md),",
        "`tests/conformance/expected.txt`.",
        "<!-- conformance-summary:end -->",
    ]
    readme = open(f"{root}/README.md", encoding="utf-8").read()
    begin, end = "<!-- conformance-summary:begin -->", "<!-- conformance-summary:end -->"
    if begin not in readme or end not in readme:
        sys.exit("readme_summary.py: README.md lacks the conformance-summary markers")
    pre, rest = readme.split(begin, 1)
    _, post = rest.split(end, 1)
    open(f"{root}/README.md", "w", encoding="utf-8").write(pre + "\n".join(out) + post)


if __name__ == "__main__":
    main()
