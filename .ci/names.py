#!/usr/bin/env python3
"""One name per concept: no two public types, traits or type aliases of the library share a
name (issue #40). A clash makes rustc print one by its full path in users' errors and makes
a `use` of the wrong one compile. Items marked `#[doc(hidden)]` (deprecated old paths, macro
support) are left out; so are items that are not `pub` (`pub(crate)` and narrower)."""
import collections
import pathlib
import re
import sys

SRC = pathlib.Path(__file__).resolve().parent.parent / "mcp-registry" / "src"
ITEM = re.compile(r"^\s*pub (?:struct|enum|trait|type|union) ([A-Za-z_][A-Za-z0-9_]*)")

found = collections.defaultdict(list)
for path in sorted(SRC.rglob("*.rs")):
    if path.relative_to(SRC).parts[0] == "macro_support":
        continue
    lines = path.read_text().splitlines()
    for number, line in enumerate(lines):
        match = ITEM.match(line)
        if not match:
            continue
        # The attributes and doc comments right above the item.
        above = []
        for previous in reversed(lines[:number]):
            stripped = previous.strip()
            if stripped.startswith(("#[", "///", "//!", ")]", "since", "note")) or stripped.endswith(","):
                above.append(stripped)
                continue
            break
        if any(a.startswith("#[doc(hidden)]") for a in above):
            continue
        found[match.group(1)].append(f"{path.relative_to(SRC.parent)}:{number + 1}")

clashes = {name: places for name, places in found.items() if len(places) > 1}

# The rendered docs, when given (`names.py target/doc/mcp_registry/all.html`): a type documented
# twice, such as a re-export inlined beside its definition, is a clash too.
if len(sys.argv) > 1:
    html = pathlib.Path(sys.argv[1]).read_text()
    kinds = ("structs", "enums", "unions", "traits", "types", "traitaliases")
    shown = collections.defaultdict(list)
    for kind, body in re.findall(r'<h3 id="([a-z-]+)">[^<]*</h3><ul class="all-items">(.*?)</ul>', html, re.S):
        if kind not in kinds:
            continue
        for path in re.findall(r'<a href="[^"]+">([^<]+)</a>', body):
            shown[path.split("::")[-1]].append(path)
    if not shown:
        print(f"{sys.argv[1]}: no documented types found (has rustdoc's page changed?)")
        sys.exit(1)
    for name, paths in shown.items():
        if len(paths) > 1:
            clashes.setdefault(name, [f"docs: {p}" for p in paths])
for name, places in sorted(clashes.items()):
    print(f"public name `{name}` is defined {len(places)} times: {', '.join(places)}")
if clashes:
    print("give each a name of its own (a deprecated, #[doc(hidden)] alias may keep an old path)")
    sys.exit(1)
print(f"{len(found)} public type, trait and alias names, each defined once")
