#!/bin/sh
# Regenerates the keystone option catalog from the keystone installed with Debian's python3
# (package python3-keystone): every option oslo.config accepts in keystone.conf, per section,
# with its deprecated-for-removal flag and the deprecated names it is still read under.
#
#   guests/keystone/catalogs/generate.sh            # writes catalogs/<release>.json
#   guests/keystone/catalogs/generate.sh OUTPUT     # writes OUTPUT instead
#
# The release is named from keystone's major version (22 -> 2022.2 "Zed", 23 -> 2023.1, ...).
# The namespaces are those of keystone's config-generator/keystone.conf. Fails when the
# generator or a namespace is missing.
set -eu

PYTHON=${KEYSTONE_CATALOG_PYTHON:-/usr/bin/python3}
GENERATOR=${KEYSTONE_CATALOG_GENERATOR:-/usr/bin/oslo-config-generator}
HERE=$(cd "$(dirname "$0")" && pwd)

for tool in "$PYTHON" "$GENERATOR"; do
    if [ ! -x "$tool" ]; then
        echo "generate.sh: $tool is missing (install python3-keystone: apt-get install python3-keystone)" >&2
        exit 1
    fi
done

RAW=$(mktemp)
trap 'rm -f "$RAW"' EXIT

"$PYTHON" "$GENERATOR" --format json \
    --namespace keystone \
    --namespace oslo.cache \
    --namespace oslo.log \
    --namespace oslo.messaging \
    --namespace oslo.policy \
    --namespace oslo.db \
    --namespace oslo.middleware \
    --namespace osprofiler \
    --output-file "$RAW"

"$PYTHON" - "$RAW" "$HERE" "${1:-}" <<'PY'
import json
import sys
from importlib import metadata

raw_path, here, output = sys.argv[1], sys.argv[2], sys.argv[3]
with open(raw_path) as f:
    raw = json.load(f)


def section_name(group):
    # oslo.config reads section names lowercased, except DEFAULT.
    return group if group == "DEFAULT" else group.lower()


def dest(name):
    return name.replace("-", "_")


sections = {}


def section(name):
    return sections.setdefault(name, {"options": {}, "deprecated_names": {}})


for group, body in raw["options"].items():
    current = section_name(group)
    for opt in body["opts"]:
        section(current)["options"][opt["dest"]] = bool(opt["deprecated_for_removal"])
for group, body in raw["options"].items():
    current = section_name(group)
    for opt in body["opts"]:
        for old in opt["deprecated_opts"]:
            old_section = section_name(old.get("group") or group)
            old_name = dest(old.get("name") or opt["dest"])
            if (old_section, old_name) == (current, opt["dest"]):
                continue
            if old_name in section(old_section)["options"]:
                continue
            replacements = section(old_section)["deprecated_names"].setdefault(old_name, [])
            replacement = "[%s] %s" % (current, opt["dest"])
            if replacement not in replacements:
                replacements.append(replacement)
                replacements.sort()

version = metadata.version("keystone")
major = int(version.split(".")[0])
release = "%d.%d" % (2012 + (major - 1) // 2, 2 if major % 2 == 0 else 1)
packages = ["keystone", "oslo.config", "oslo.cache", "oslo.log", "oslo.messaging",
            "oslo.policy", "oslo.db", "oslo.middleware", "osprofiler"]
catalog = {
    "service": "keystone",
    "release": release,
    "generated_from": {p: metadata.version(p) for p in packages},
    "sections": sections,
}
path = output or "%s/%s.json" % (here, release)
with open(path, "w") as f:
    json.dump(catalog, f, indent=2, sort_keys=True)
    f.write("\n")
print("generate.sh: wrote %s (keystone %s, release %s, %d sections)"
      % (path, version, release, len(sections)), file=sys.stderr)
PY
