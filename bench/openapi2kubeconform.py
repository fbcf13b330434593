#!/usr/bin/env python3
"""Convert Kubernetes' api/openapi-spec/swagger.json into kubeconform's local schema layout.

Writes, for every definition with `x-kubernetes-group-version-kind`, one standalone JSON schema (all
`$ref`s resolved inline) per group/version/kind, named as kubeconform looks them up:

  <out>/v<VERSION>-standalone-strict/<kind><suffix>.json   (objects closed: additionalProperties false)
  <out>/v<VERSION>-standalone/<kind><suffix>.json

where <kind> is lower case and <suffix> is "-<first label of the group>-<version>" (for example
deployment-apps-v1.json, ingress-networking-v1.json) or "-<version>" for the core group
(service-v1.json). That is the layout kubeconform's default template expects, so kubeconform is run
with `-kubernetes-version <VERSION> -schema-location '<out>/{{ .NormalizedKubernetesVersion }}-standalone{{ .StrictSuffix }}/{{ .ResourceKind }}{{ .KindSuffix }}.json'`.

Like the published kubernetes-json-schema sets: int-or-string fields accept strings and integers,
resource quantities accept strings and numbers, and optional fields accept null. A recursive
definition (JSONSchemaProps) is cut at its second occurrence on a path and left open there.

Usage: python3 bench/openapi2kubeconform.py SWAGGER_JSON OUT_DIR VERSION   (VERSION like 1.36.3)
Standard library only.
"""

import json
import os
import sys

QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
REF_PREFIX = "#/definitions/"


def resolve(node, defs, stack, strict, memo):
    """Return a copy of `node` with every $ref inlined (memoised per definition when acyclic)."""
    if isinstance(node, list):
        return [resolve(x, defs, stack, strict, memo) for x in node]
    if not isinstance(node, dict):
        return node
    if isinstance(node.get("$ref"), str):
        name = node["$ref"][len(REF_PREFIX):] if node["$ref"].startswith(REF_PREFIX) else None
        if name is None or name not in defs:
            return {}
        if name in stack:
            return {}  # recursion: leave open
        key = (name, strict)
        base = memo.get(key)
        if base is None:
            base = resolve(defs[name], defs, stack + (name,), strict, memo)
            if not cycles_through(name, defs):
                memo[key] = base
        out = dict(base)
        for k, v in node.items():  # siblings of $ref, e.g. a description
            if k != "$ref" and k not in out:
                out[k] = v
        return out
    if node.get("format") == "int-or-string":
        out = {k: v for k, v in node.items() if k not in ("type", "format")}
        out["oneOf"] = [{"type": "string"}, {"type": "integer"}]
        return out
    out = {}
    for k, v in node.items():
        if k == "properties" and isinstance(v, dict):
            required = set(node.get("required", []))
            props = {}
            for pk, pv in v.items():
                r = resolve(pv, defs, stack, strict, memo)
                if pk not in required:
                    r = nullable(r)
                props[pk] = r
            out[k] = props
        elif k in ("description", "x-kubernetes-group-version-kind"):
            out[k] = v
        else:
            out[k] = resolve(v, defs, stack, strict, memo)
    if strict and "properties" in out and "additionalProperties" not in out:
        out["additionalProperties"] = False
    return out


_cycle_cache = {}


def cycles_through(name, defs):
    """True if definition `name` can reach itself through $refs (then it is not memoised)."""
    if name in _cycle_cache:
        return _cycle_cache[name]
    seen, todo = set(), [defs[name]]
    found = False
    while todo and not found:
        n = todo.pop()
        if isinstance(n, dict):
            ref = n.get("$ref", "")
            if isinstance(ref, str) and ref.startswith(REF_PREFIX):
                t = ref[len(REF_PREFIX):]
                if t == name:
                    found = True
                elif t not in seen and t in defs:
                    seen.add(t)
                    todo.append(defs[t])
            todo.extend(n.values())
        elif isinstance(n, list):
            todo.extend(n)
    _cycle_cache[name] = found
    return found


def nullable(schema):
    t = schema.get("type")
    if isinstance(t, str):
        schema = dict(schema)
        schema["type"] = [t, "null"]
    elif "oneOf" in schema and not any(o.get("type") == "null" for o in schema["oneOf"] if isinstance(o, dict)):
        schema = dict(schema)
        schema["oneOf"] = schema["oneOf"] + [{"type": "null"}]
    return schema


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    swagger, out_dir, version = sys.argv[1], sys.argv[2], sys.argv[3].lstrip("v")
    with open(swagger) as f:
        defs = json.load(f)["definitions"]
    defs = dict(defs)
    defs[QUANTITY] = {"oneOf": [{"type": "string"}, {"type": "number"}]}
    defs[INT_OR_STRING] = {"oneOf": [{"type": "string"}, {"type": "integer"}]}

    count = 0
    for strict, folder in ((True, "v%s-standalone-strict" % version), (False, "v%s-standalone" % version)):
        d = os.path.join(out_dir, folder)
        os.makedirs(d, exist_ok=True)
        memo = {}
        for name, schema in sorted(defs.items()):
            gvks = schema.get("x-kubernetes-group-version-kind")
            if not gvks:
                continue
            full = resolve(schema, defs, (name,), strict, memo)
            full["$schema"] = "http://json-schema.org/schema#"
            text = json.dumps(full, indent=2, sort_keys=True)
            for gvk in gvks:
                group = gvk.get("group", "")
                suffix = "-%s-%s" % (group.split(".")[0].lower(), gvk["version"].lower()) if group \
                    else "-%s" % gvk["version"].lower()
                fname = "%s%s.json" % (gvk["kind"].lower(), suffix)
                with open(os.path.join(d, fname), "w") as f:
                    f.write(text)
                count += 1
    print("openapi2kubeconform: wrote %d schema files under %s" % (count, out_dir))


if __name__ == "__main__":
    main()
