#!/usr/bin/env bash
# META.json against the PGXN meta spec v1, as TAP: the spec's JSON schemas come with the
# pgxn_meta crate from crates.io (fetched with cargo, which needs the sparse index: cargo 1.68 or
# later; Debian 12's own cargo reads only the git index and cannot reach it), and python3's
# jsonschema validates (with python3's regex module for the spec's \p{...} patterns). Then what the schema cannot know: every extension's control file is in
# "provides" with its default version.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK=${TMPDIR:-/tmp}/meta_check.$$
mkdir -p "$WORK/src"
trap 'rm -rf "$WORK"' EXIT
echo "1..2"

schemas=""
version=$(cargo --version 2>/dev/null | sed -n 's/^cargo 1\.\([0-9]*\)\..*/\1/p')
if [[ -n "$version" ]] && ((version >= 68)); then
	printf '[package]\nname = "meta_check"\nversion = "0.0.0"\nedition = "2021"\n[dependencies]\npgxn_meta = "=0.7.0"\n' \
		>"$WORK/Cargo.toml"
	echo 'fn main() {}' >"$WORK/src/main.rs"
	if (cd "$WORK" && cargo fetch --quiet) >"$WORK/fetch.log" 2>&1; then
		schemas=$(cd "$WORK" && cargo metadata --format-version 1 2>/dev/null |
			/usr/bin/python3 -c 'import json,sys,os; m=json.load(sys.stdin); print(next(os.path.dirname(p["manifest_path"]) for p in m["packages"] if p["name"]=="pgxn_meta"))')/schema/v1
	fi
fi
if [[ -z "$schemas" || ! -f "$schemas/distribution.schema.json" ]]; then
	echo "ok 1 - META.json against the PGXN schema # SKIP no cargo >= 1.68 reaching crates.io (have: $(cargo --version 2>/dev/null || echo none))"
else
	/usr/bin/python3 - "$schemas" "$ROOT/META.json" <<'EOF'
import importlib, json, os, sys
import jsonschema
import regex

# The spec's patterns use \\p{...} classes (ECMA and Rust regexes have them, Python's re does
# not): the keyword implementations search with the regex module instead.
for module in ("jsonschema._keywords", "jsonschema._validators"):
    try:
        m = importlib.import_module(module)
    except ImportError:
        continue
    if hasattr(m, "re"):
        m.re = regex
Draft = jsonschema.Draft202012Validator

schema_dir, meta_path = sys.argv[1], sys.argv[2]
store = {}
for name in os.listdir(schema_dir):
    with open(os.path.join(schema_dir, name)) as f:
        s = json.load(f)
    store[s["$id"]] = s
root = store["https://pgxn.org/meta/v1/distribution.schema.json"]
with open(meta_path) as f:
    meta = json.load(f)
try:
    from referencing import Registry, Resource
    registry = Registry().with_resources((k, Resource.from_contents(v)) for k, v in store.items())
    validator = Draft(root, registry=registry)
except ImportError:
    resolver = jsonschema.RefResolver.from_schema(root, store=store)
    validator = Draft(root, resolver=resolver)
errors = sorted(validator.iter_errors(meta), key=lambda e: list(e.path))
for e in errors:
    print("# %s: %s" % ("/".join(map(str, e.path)) or "(top)", e.message))
print(("not ok" if errors else "ok") + " 1 - META.json validates against the PGXN meta spec v1 (pgxn_meta 0.7.0's schemas)")
EOF
fi

/usr/bin/python3 - "$ROOT" <<'EOF'
import glob, json, os, re, sys
root = sys.argv[1]
with open(os.path.join(root, "META.json")) as f:
    provides = json.load(f)["provides"]
problems = []
for control in sorted(glob.glob(os.path.join(root, "*.control"))):
    name = os.path.basename(control)[:-len(".control")]
    version = re.search(r"^default_version = '(.*)'", open(control).read(), re.M).group(1)
    if name not in provides:
        problems.append("%s is not in provides" % name)
    elif provides[name].get("version") != version:
        problems.append("%s: provides says %s, the control file %s" % (name, provides[name].get("version"), version))
    elif not os.path.exists(os.path.join(root, provides[name]["file"])):
        problems.append("%s: no file %s" % (name, provides[name]["file"]))
for p in problems:
    print("# " + p)
print(("not ok" if problems else "ok") + " 2 - every control file is in META.json's provides, with its default version and an existing file")
EOF
