#!/usr/bin/env python3
"""Turn kubernetes-validate's bundled JSON schemas into a kubeconform -schema-location tree (from the
project's shared launcher recipes).

kubernetes-validate (PyPI) ships kubernetes-json-schema/vX.Y.Z-local[-strict]/<kind>-<group>-<ver>.json,
but each file has "$id": "https://kubernetes.io/api/..." and "$ref": "/api/_definitions.json#/$defs/...",
which kubeconform resolves to https://kubernetes.io/... (unreachable) -> "could not find schema".
This drops every "$id" and makes the refs relative ("_definitions.json#/$defs/..."), so they resolve to
the sibling file on disk.

usage: prep-schemas.py WHEEL_OR_UNPACKED_DIR OUT_DIR [VERSION ...]   e.g. ... out v1.33.0
"""
import json, os, sys, zipfile

src, out, versions = sys.argv[1], sys.argv[2], sys.argv[3:]
PREFIX = "kubernetes_validate/kubernetes-json-schema/"

def fix(node):
    if isinstance(node, dict):
        node.pop("$id", None)
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("/api/_definitions.json"):
            node["$ref"] = ref[len("/api/"):]
        for v in node.values():
            fix(v)
    elif isinstance(node, list):
        for v in node:
            fix(v)

def entries():
    if zipfile.is_zipfile(src):
        z = zipfile.ZipFile(src)
        for n in z.namelist():
            if n.startswith(PREFIX) and n.endswith(".json"):
                yield n[len(PREFIX):], z.read(n)
    else:
        root = os.path.join(src, PREFIX)
        for d, _, fs in os.walk(root):
            for f in fs:
                if f.endswith(".json"):
                    p = os.path.join(d, f)
                    yield os.path.relpath(p, root), open(p, "rb").read()

n = 0
for rel, data in entries():
    vdir = rel.split("/")[0]                      # e.g. v1.33.0-local-strict
    if versions and not any(vdir.startswith(v + "-") for v in versions):
        continue
    doc = json.loads(data)
    fix(doc)
    dst = os.path.join(out, rel)
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    with open(dst, "w") as f:
        json.dump(doc, f)
    n += 1
print(f"wrote {n} schema files under {out}")
