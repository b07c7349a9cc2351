"""Checks oaaxvk-device-info's output on the machine's default Vulkan ICD.

Usage: check_device_info.py PATH/TO/oaaxvk-device-info

Runs the program twice (JSON, then --summary) and fails (exit 1, with the
reason) when the JSON does not parse, has no device, or a device lacks a
name, a subgroup size >= 1, a positive shared-memory limit or boolean
features, or when --summary does not name every device. Exit 77 (skipped)
when the program reports no Vulkan device (its own exit 77).
"""
import json
import os
import subprocess
import sys
import tempfile

FEATURES = [
    "storage_buffer_16bit_access", "uniform_and_storage_buffer_16bit_access", "storage_push_constant16",
    "shader_float16", "shader_int8", "storage_buffer_8bit_access", "shader_int16", "shader_int64",
    "shader_float64", "buffer_device_address", "timeline_semaphore", "synchronization2",
    "vulkan_memory_model", "subgroup_size_control", "compute_full_subgroups",
]


def run(args):
    """Runs the program; exits 77 when it reports no device, 1 on any other failure."""
    proc = subprocess.run(args, capture_output=True, text=True, timeout=50)
    if proc.returncode == 77:
        print("skipped: " + proc.stderr.strip())
        sys.exit(77)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(args)} exited {proc.returncode}: {proc.stderr.strip()}")
    return proc.stdout


def check_device(index, dev):
    """Returns the problems found in one device's JSON object."""
    problems = []
    where = f"device {index}"
    if not isinstance(dev.get("name"), str) or not dev["name"]:
        problems.append(f"{where}: empty or missing name")
    size = dev.get("subgroup", {}).get("size")
    if not isinstance(size, int) or size < 1:
        problems.append(f"{where}: subgroup size {size!r} is not >= 1")
    shared = dev.get("limits", {}).get("max_compute_shared_memory_bytes")
    if not isinstance(shared, int) or shared <= 0:
        problems.append(f"{where}: max_compute_shared_memory_bytes {shared!r} is not > 0")
    features = dev.get("features", {})
    for name in FEATURES:
        if not isinstance(features.get(name), bool):
            problems.append(f"{where}: feature {name} is {features.get(name)!r}, not a boolean")
    coop = dev.get("cooperative_matrix", {})
    for key in ("nv", "khr", "nv2"):
        if not isinstance(coop.get(key), bool):
            problems.append(f"{where}: cooperative_matrix.{key} is not a boolean")
    if not dev.get("memory_heaps"):
        problems.append(f"{where}: no memory heaps")
    return problems


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: check_device_info.py PATH/TO/oaaxvk-device-info")
    program = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        json_path = os.path.join(tmp, "device.json")
        stdout = run([program, "--device-json", json_path])
        data = json.loads(stdout)
        if not os.path.exists(json_path):
            sys.exit(f"--device-json {json_path} was not written")
        with open(json_path) as f:
            if json.load(f) != data:
                sys.exit("--device-json file differs from the JSON on stdout")
    devices = data.get("devices")
    if not isinstance(data.get("loader_api_version"), str) or not devices:
        sys.exit(f"no loader_api_version or no devices in {stdout[:200]!r}")
    problems = [p for i, dev in enumerate(devices) for p in check_device(i, dev)]
    summary = run([program, "--summary"])
    for i, dev in enumerate(devices):
        if dev.get("name") and dev["name"] not in summary:
            problems.append(f"--summary does not name device {i} ({dev['name']}): {summary!r}")
    if problems:
        sys.exit("\n".join(problems))
    print(f"ok: {len(devices)} device(s): " + ", ".join(d["name"] for d in devices))


if __name__ == "__main__":
    main()
